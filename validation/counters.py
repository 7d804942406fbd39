"""Hardware counters of the canonical GEMM, read by Nsight Compute: DRAM bytes, L2 traffic and hit rate, per launch.

A kernel time cannot say where its bytes come from; the simulator's traffic model (wavesim/kernels/gemm.py:
``_dram_bytes_total``, the L2 pool, the concurrent readers) makes claims about exactly that. This module runs
the canonical GEMM (validation/kernels/gemm.py) under ``ncu`` and keeps, per launch, the counters that test
those claims. The clocks are left alone (``--clock-control none``) and every cache is flushed before each
replay (``--cache-control all``, as the profiler flushes the L2 before each timed launch).

Collect (a GPU and ``ncu`` on the PATH):

    python3 -m validation.counters collect --configs FILE_OR_SPACE --shapes 4096x4096,1024x4096 \\
        --M 768,8192 --out validation/data/h200/counters/NAME.jsonl

writes one JSON object per launch: the problem, the config, ``counters`` (metric -> value, in ncu's units:
bytes, sectors, ns, percent, cycles per second) and ``env``. Metrics this ncu does not know are left out and
named in the log (``--query-metrics`` decides), so one list serves several ncu versions.

    python3 -m validation.counters probe --out F      (GPU: the L2 request coalescer probe, lrc_probe.py)
    python3 -m validation.counters report FILES       (anywhere: each GEMM launch beside the traffic model)

What the H200's counters showed (session 15, NOTES.md): the simulator's DRAM traffic within 0.89-1.18x of the
measured bytes (p10-p90); the L2 request coalescer merging 7-58% of the read sectors before the L2 slices, only
within a GPC (a TPC's two SMs always, a GPC's SMs when in step), by launch order and wave.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wavetune.config import LaunchConfig

# What each metric tests (ncu's Hopper names; base name + rollup):
METRICS = (
    "gpu__time_duration.sum",                              # the launch's time (ns), under ncu's replay
    "sm__cycles_elapsed.avg.per_second",                   # the SM clock during the launch
    "dram__bytes_read.sum",                                # DRAM traffic: the model's _dram_bytes_total
    "dram__bytes_write.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum",              # L2 read sectors the SMs asked for (32 B each)
    "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",   # ... of them hits
    "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum",  # ... and misses
    "lts__t_requests_srcunit_tex_op_read.sum",             # L2 read requests (the request overhead's unit)
    "lts__t_sectors_srcunit_ltcfabric.sum",                # sectors moved between the two L2 partitions
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",  # tensor pipe busy
    # the L2 request coalescer (LRC): read sectors eligible for coalescing, coalesced by the hardware, and sent
    # on between the L2 and the crossbar / to the GPCs (session 15: where the order-dependent merging happens)
    "lrc__request_sectors_op_read_coalescable.sum",
    "lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum",
    "lrc__lts2lrc_sectors_op_read.sum",
    "lrc__lrc2xbar_sectors_op_read.sum",
    "lrc__xbar2gpc_sectors_op_read.sum",
    # the delivery side, which sees every sector (merged or not): crossbar to the SMs' L1, and the coalescer's busy
    "l1tex__m_xbar2l1tex_read_bytes.sum.pct_of_peak_sustained_elapsed",
    "lrc__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "lrc__lrc2xbar_cycles_stalled.sum",
)
# A launch's time and clock alone: one ncu pass (no replay), for timing launches that back-to-back profiling cannot rank
# (session 25: large launches held at the power cap differ by up to 25% between profiler passes).
TIME_METRICS = ("gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second")
KERNEL_NAMES = ("gemm_kernel", "lrc_probe_kernel")   # what ncu profiles (validation/kernels/)
GPC_LAYOUT = Path(__file__).resolve().parent / "data" / "h200" / "gpc_layout.json"
PROBE_PATTERNS = ("own", "chip", "gpc", "across_gpc", "tpc", "across_tpc")


# ============================================================================ cases
def parse_shapes(text: str) -> list[tuple[int, int]]:
    """'4096x4096,1024x4096' -> [(4096, 4096), (1024, 4096)] as (N, K)."""
    out = []
    for part in text.split(","):
        try:
            n, k = (int(x) for x in part.lower().split("x"))
        except ValueError:
            n = k = 0
        if n < 1 or k < 1:
            raise ValueError(f"--shapes {text!r}: expected NxK pairs of positive integers, comma separated, "
                             f"e.g. 4096x4096,1024x4096")
        out.append((n, k))
    return out


def make_cases(configs: list[LaunchConfig], shapes: list[tuple[int, int]], Ms: list[int]) -> list[dict]:
    return [{"M": M, "N": N, "K": K, "config": cfg.to_dict()} for N, K in shapes for cfg in configs for M in Ms]


def read_cases(path: Path) -> list[dict]:
    """GEMM cases of a JSONL file, one {M, N, K, config} per line (as make_cases writes them), checked before any GPU
    work: a bad line is named with the way to fix it."""
    out = []
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            c = json.loads(line)
            case = {"M": int(c["M"]), "N": int(c["N"]), "K": int(c["K"]),
                    "config": LaunchConfig.from_dict(c["config"]).to_dict()}
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path}:{n}: not a case ({type(e).__name__}: {e}); each line is "
                             '{"M": .., "N": .., "K": .., "config": {"BLOCK_M": .., ...}}') from None
        if min(case["M"], case["N"], case["K"]) < 1:
            raise ValueError(f"{path}:{n}: M, N and K must be positive")
        out.append(case)
    if not out:
        raise ValueError(f"{path}: no cases")
    return out


def probe_groups(pattern: str, gpcs: list[list[int]], sm_count: int) -> list[int]:
    """Which SMs read the same bytes in the coalescer probe (validation/kernels/lrc_probe.py): a group id per SM.
    own: nobody shares; chip: everybody; gpc: the SMs of a GPC; across_gpc: one SM of each GPC (the same rank in
    each GPC's list); tpc: the two SMs of a TPC (SM ids 2t, 2t+1: the GPC lists pair them so); across_tpc: two SMs
    of the same rank in neighbouring GPCs (GPC 0 with 1, 2 with 3, ...). `gpcs`: lists of SM ids, as
    `python3 -m validation.probe --gpcs` writes them."""
    if pattern not in PROBE_PATTERNS:
        raise ValueError(f"unknown probe pattern {pattern!r}; choose one of {PROBE_PATTERNS}")
    gpc_of, rank_of = {}, {}
    for g, sms in enumerate(gpcs):
        for r, sm in enumerate(sms):
            gpc_of[sm], rank_of[sm] = g, r
    if sorted(gpc_of) != list(range(sm_count)):
        raise ValueError(f"the GPC layout does not cover SMs 0..{sm_count - 1} exactly once; run "
                         f"`python3 -m validation.probe --gpcs` on this GPU")
    out = []
    for sm in range(sm_count):
        g, r = gpc_of[sm], rank_of[sm]
        paired = (g ^ 1) < len(gpcs) and r < len(gpcs[g ^ 1])   # the neighbouring GPC has an SM of this rank
        out.append({"own": sm, "chip": 0, "gpc": g, "across_gpc": r, "tpc": sm // 2,
                    "across_tpc": (g // 2) * sm_count + r if paired else sm_count * sm_count + sm}[pattern])
    return out


def probe_delays(groups: list[int], delay_cycles: int) -> list[int]:
    """Each SM's start delay: its rank among its group's SMs (by SM id) x delay_cycles."""
    seen: dict[int, int] = {}
    out = []
    for g in groups:
        out.append(seen.get(g, 0) * delay_cycles)
        seen[g] = seen.get(g, 0) + 1
    return out


def probe_cases(delays=(0, 500, 2000, 8000), steps: int = 512, region_tiles: int = 32) -> list[dict]:
    """The probe's launches: every pattern with no stagger, the sharing ones also staggered by `delays`."""
    out = []
    for pattern in PROBE_PATTERNS:
        for d in (delays if pattern != "own" else (0,)):
            out.append({"kernel": "lrc_probe", "pattern": pattern, "delay_cycles": d, "steps": steps,
                        "region_tiles": region_tiles, "resident_per_sm": 8})   # exactly one working CTA per SM
    return out


# (working CTAs/SM, stages, tile columns, resident CTAs/SM): requests in flight per SM from 64 to 2048, with
# full-line (64 bf16) and half-line (32) rows; 128x64x32 s3 lost its merging at 4 CTAs/SM (1280 half-line and line
# requests in flight per SM). Resident: as many as fit (smem 26 KB at 3 stages of 64 columns, 42 KB at 5), so the
# dispatch lands them evenly and the idle ones pin the count of working ones.
LOAD_POINTS = ((1, 2, 64, 8), (1, 3, 64, 8), (2, 3, 64, 8), (4, 3, 64, 8), (4, 5, 64, 5), (8, 3, 64, 8),
               (2, 3, 32, 8), (4, 3, 32, 8), (4, 5, 32, 8), (8, 3, 32, 8), (8, 5, 32, 8))


def probe_load_cases(patterns=("gpc", "tpc"), steps: int = 512, region_tiles: int = 32) -> list[dict]:
    """The probe under load: the coalescer's merging as more requests are in flight (LOAD_POINTS)."""
    return [{"kernel": "lrc_probe", "pattern": p, "delay_cycles": 0, "steps": steps, "region_tiles": region_tiles,
             "ctas_per_sm": k, "num_stages": s, "cols": cols, "resident_per_sm": res}
            for p in patterns for k, s, cols, res in LOAD_POINTS]


# ============================================================================ ncu output
def base_metric(name: str) -> str:
    """'dram__bytes_read.sum' -> 'dram__bytes_read' (what --query-metrics lists)."""
    return name.split(".", 1)[0]


def known_metrics(query_output: str) -> set[str]:
    """Base metric names in the output of `ncu --query-metrics` (the first word of each line)."""
    return {line.split()[0] for line in query_output.splitlines() if line.strip() and "__" in line.split()[0]}


def parse_raw_csv(text: str) -> list[dict[str, str]]:
    """Rows of `ncu --csv --page raw`: a header, a units row, then one row per profiled kernel (ncu's own
    log lines, starting with '==', are skipped)."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("==")]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    if len(rows) < 2:
        return []
    head = rows[0]
    body = rows[2:] if rows[1] and rows[1][0] == "" else rows[1:]   # the units row has no ID
    return [dict(zip(head, r)) for r in body if len(r) == len(head)]


def to_number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


# ============================================================================ GPU side
def _run_probe_case(c: dict) -> None:
    import torch

    from validation.kernels.lrc_probe import TILE_COLS, grid_bytes, run_probe

    S = torch.cuda.get_device_properties(0).multi_processor_count
    groups = probe_groups(c["pattern"], json.loads(GPC_LAYOUT.read_text())["gpcs"], S)
    ids = {g: i for i, g in enumerate(sorted(set(groups)))}
    dense = [ids[g] for g in groups]
    k, cols, resident = c.get("ctas_per_sm", 1), c.get("cols", TILE_COLS), c.get("resident_per_sm")
    buf = torch.randn(grid_bytes(c["region_tiles"], len(ids) * (resident or k)) // 2, device="cuda").to(torch.bfloat16)
    w = torch.randn((cols, 16), device="cuda").to(torch.bfloat16)
    g_t = torch.tensor(dense, device="cuda", dtype=torch.int32)
    d_t = torch.tensor(probe_delays(groups, c["delay_cycles"]), device="cuda", dtype=torch.int32)
    out = torch.empty((S * (resident or k), 64 * 16), device="cuda", dtype=torch.float32)
    run_probe(buf, w, g_t, d_t, out, c["steps"], c["region_tiles"], S, k, c.get("num_stages", 3), cols, resident)


def workload(cases_path: str) -> None:
    """Run each case once, in file order (what ncu profiles): a GEMM, or a coalescer probe launch (`kernel`
    'lrc_probe'); GEMM inputs are reused across configs."""
    import torch

    from validation.kernels.gemm import gemm

    cases = [json.loads(x) for x in Path(cases_path).read_text().splitlines() if x.strip()]
    gen = torch.Generator(device="cuda").manual_seed(0)
    mats: dict = {}
    for c in cases:
        if c.get("kernel") == "lrc_probe":
            _run_probe_case(c)
            torch.cuda.synchronize()
            continue
        M, N, K = c["M"], c["N"], c["K"]
        if ("a", M, K) not in mats:
            mats[("a", M, K)] = torch.randn((M, K), device="cuda", generator=gen).to(torch.bfloat16)
        if ("b", K, N) not in mats:
            mats[("b", K, N)] = torch.randn((K, N), device="cuda", generator=gen).to(torch.bfloat16)
        gemm(mats[("a", M, K)], mats[("b", K, N)], LaunchConfig.from_dict(c["config"]))
        torch.cuda.synchronize()


def collect(cases: list[dict], out: Path, metrics=METRICS, ncu: str = "ncu", log=print) -> list[dict]:
    """Profile every case under ncu; append one record per case to `out` (JSONL) and return them."""
    from wavetune.records import is_gzip

    if out.exists() and is_gzip(out):
        raise ValueError(f"{out} is gzip-compressed: new records cannot be appended to it; write to a new file "
                         f"(and compress it after)")
    exe = shutil.which(ncu)
    if exe is None:
        raise ValueError(f"{ncu!r} is not on the PATH: counters need Nsight Compute (and a GPU); the timing "
                         f"profiler (`wavetune profile`) does not")
    q = subprocess.run([exe, "--query-metrics", "--chip", "gh100"], capture_output=True, text=True)
    known = known_metrics(q.stdout)
    use = [m for m in metrics if base_metric(m) in known] if known else list(metrics)
    dropped = [m for m in metrics if m not in use]
    if dropped:
        log(f"counters: this ncu does not know {dropped}; left out")
    with tempfile.TemporaryDirectory() as tmp:
        cases_file = Path(tmp) / "cases.jsonl"
        cases_file.write_text("".join(json.dumps(c) + "\n" for c in cases))
        log_file = Path(tmp) / "ncu.csv"
        cmd = [exe, "--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none",
               "--cache-control", "all", "--kernel-name", "regex:^(" + "|".join(KERNEL_NAMES) + ")$",
               "--metrics", ",".join(use), "--log-file", str(log_file),
               sys.executable, "-m", "validation.counters", "workload", str(cases_file)]
        t0 = time.perf_counter()
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            raise RuntimeError(f"ncu failed ({run.returncode}): {run.stderr[-2000:] or run.stdout[-2000:]}")
        rows = parse_raw_csv(log_file.read_text())
    if len(rows) != len(cases):
        raise RuntimeError(f"ncu profiled {len(rows)} launches of {KERNEL_NAMES} for {len(cases)} cases; the "
                           f"records would not line up, so none are written")
    import torch
    import triton

    env = {"gpu_name": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
           "ncu": (subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
                   or [""])[-1]}
    records = []
    for c, r in zip(cases, rows):
        counters = {m: to_number(r[m]) for m in use if m in r}
        records.append({"schema": 1, "kind": "counters", "kernel": "gemm", "gpu": "h200", "dtype": "bf16", **c,
                        "grid": int(to_number(r.get("Grid Size", "0").split(",")[0].strip("()")) or 0)
                        if r.get("Grid Size") else None, "counters": counters, "env": env})
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as f:
        for rec in records:
            f.write(json.dumps(rec) + "\n")
    log(f"counters: {len(records)} launches in {time.perf_counter() - t0:.0f} s -> {out}")
    return records


# ============================================================================ analysis (CPU)
def load_counters(paths, kernel: str | None = "gemm") -> list[dict]:
    """Counter records (``kind`` 'counters') of JSONL files, gzip-compressed or not: those of `kernel` ('gemm',
    'lrc_probe'; None: all)."""
    from wavetune.records import read_jsonl_file

    out = []
    for p in paths:
        for n, r in enumerate(read_jsonl_file(p), 1):
            if r.get("kind") != "counters" or "counters" not in r:
                raise ValueError(f"{p}: record {n} is not a counters record (kind {r.get('kind')!r}); timing records "
                                 f"go to `wavetune validate`, counters to this module")
            if kernel is None or r.get("kernel", "gemm") == kernel:
                out.append(r)
    return out


def loaded_sectors(r: dict) -> float:
    """32-B sectors the working CTAs of a record load: a GEMM's grid x K steps x its A and B tiles, a probe's
    working CTAs x steps x one bf16 tile (validation/kernels/lrc_probe.py)."""
    if r.get("kernel") == "lrc_probe":
        from validation.kernels.lrc_probe import TILE_COLS, TILE_ROWS

        working = r["grid"] // r.get("resident_per_sm", 1) * r.get("ctas_per_sm", 1)
        return working * r["steps"] * TILE_ROWS * r.get("cols", TILE_COLS) * 2 / 32
    c = r["config"]
    return r["grid"] * -(-r["K"] // c["BLOCK_K"]) * (c["BLOCK_M"] + c["BLOCK_N"]) * c["BLOCK_K"] * 2 / 32


def merged_share(r: dict) -> float:
    """Share of the loaded read sectors the L2 request coalescer merged (its own counter)."""
    return r["counters"]["lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum"] / loaded_sectors(r)


def launch_figures(r: dict, spec, params) -> dict:
    """One launch's counters beside the simulator's claims: DRAM bytes (read + written) over the model's
    launch traffic, L2 read sectors over the bytes the CTAs load (< 1: requests merged before the L2 slices),
    the L2 hit rate, and the waves (CTAs / resident capacity)."""
    import numpy as np

    from wavesim.kernels.gemm import GemmBatch, _dram_bytes_total

    cfg = LaunchConfig.from_dict(r["config"])
    k = r["counters"]
    b = GemmBatch.build(spec, r.get("dtype", "bf16"), *(np.array([float(r[x])]) for x in "MNK"), [cfg])
    grid = int(b.grid[0])
    dram = k.get("dram__bytes_read.sum", float("nan")) + k.get("dram__bytes_write.sum", 0.0)  # nan: a --time-only record
    hit, miss = (k.get(f"lts__t_sectors_srcunit_tex_op_read_lookup_{x}.sum") for x in ("hit", "miss"))
    return {"config": cfg.key, "M": r["M"], "N": r["N"], "K": r["K"], "grid": grid,
            "waves": grid / max(int(b.resident[0]), 1), "us": k.get("gpu__time_duration.sum", float("nan")) / 1e3,
            "dram_over_model": dram / float(_dram_bytes_total(b, 2, b.grid, params.l2_fit_fraction)[0]),
            "l2_sectors_over_loaded": k.get("lts__t_sectors_srcunit_tex_op_read.sum", float("nan")) / loaded_sectors(r),
            "l2_hit_rate": hit / (hit + miss) if hit is not None and miss else float("nan"),
            "l2_busy_pct": k.get("lts__throughput.avg.pct_of_peak_sustained_elapsed", float("nan"))}


def report(paths, gpu: str = "h200", calibration: str = "auto") -> list[dict]:
    """Print and return launch_figures for every record of `paths`."""
    import hwspecs
    from wavesim.calibration import load_calibration
    from wavesim.kernels.gemm import GemmParams

    spec = hwspecs.load_gpu(gpu)
    params = GemmParams.priors() if calibration == "none" else load_calibration(calibration, gpu)
    rows = [launch_figures(r, spec, params) for r in load_counters(paths)]
    print(f"{'config':24s} {'N':>5s} {'K':>5s} {'M':>5s} {'waves':>5s} {'us':>7s} {'DRAM/model':>10s} "
          f"{'L2 sectors/loaded':>17s} {'L2 hit':>6s} {'L2 busy%':>8s}")
    for x in rows:
        print(f"{x['config']:24s} {x['N']:5d} {x['K']:5d} {x['M']:5d} {x['waves']:5.1f} {x['us']:7.1f} "
              f"{x['dram_over_model']:10.2f} {x['l2_sectors_over_loaded']:17.3f} {x['l2_hit_rate']:6.3f} "
              f"{x['l2_busy_pct']:8.1f}")
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m validation.counters", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="profile configs x shapes x M (or a file's cases) under ncu into a JSONL file")
    c.add_argument("--configs", help="config space names (tuner/space.py), '+'-joined, or a JSONL file")
    c.add_argument("--shapes", help="NxK pairs, comma separated")
    c.add_argument("--M", help="lo:hi:step (inclusive) or a comma list")
    c.add_argument("--cases", type=Path, help="instead of --configs/--shapes/--M: a JSONL file of {M, N, K, config}")
    c.add_argument("--time-only", action="store_true",
                   help=f"only {', '.join(TIME_METRICS)}: one ncu pass per launch instead of several")
    c.add_argument("--out", type=Path, required=True)
    w = sub.add_parser("workload", help="(run by collect and probe under ncu) each case's launch once")
    w.add_argument("cases")
    pr = sub.add_parser("probe", help="profile the L2 request coalescer probe (who shares, how staggered) under ncu")
    pr.add_argument("--out", type=Path, required=True)
    pr.add_argument("--load", action="store_true", help="instead: more CTAs/SM and stages (requests in flight)")
    r = sub.add_parser("report", help="each launch's counters beside the simulator's traffic model (no GPU)")
    r.add_argument("files", nargs="+")
    r.add_argument("--gpu", default="h200")
    r.add_argument("--calibration", default="auto", help="auto (shipped), a file, or none")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "workload":
            workload(a.cases)
        elif a.cmd == "report":
            report(a.files, a.gpu, a.calibration)
        elif a.cmd == "probe":
            collect(probe_load_cases() if a.load else probe_cases(), a.out)
        else:
            metrics = TIME_METRICS if a.time_only else METRICS
            if a.cases is not None:
                if a.configs or a.shapes or a.M:
                    raise ValueError("give either --cases or --configs/--shapes/--M, not both")
                collect(read_cases(a.cases), a.out, metrics)
            elif not (a.configs and a.shapes and a.M):
                raise ValueError("give --configs, --shapes and --M (or --cases FILE)")
            else:
                from tuner.space import load_space
                from validation.trace import parse_range

                collect(make_cases(load_space(a.configs), parse_shapes(a.shapes), parse_range(a.M)), a.out, metrics)
    except (ValueError, OSError) as e:
        print(f"validation.counters {a.cmd}: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
