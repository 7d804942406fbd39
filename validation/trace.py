"""Per-CTA hardware traces of the canonical GEMM, and what they say about the block scheduler.

Collect (GPU; validation/kernels/gemm_trace.py):

    wavetune trace --configs wave-study --N 4096 --K 4096 --M 256:8192:256 \\
        --reps 2 --out validation/data/h200/traces/trace_4096.npz

For every (config, M, rep) it stores one int32 array, CTAs x (smid, start_ns, end_ns, cycles) with times
from the launch's first CTA start (packed on disk: save_trace_arrays), and in a JSON sidecar the traced and
untraced kernel times (CUDA events, L2 flushed before each launch as in validation/profiler.py) and NVML's SM
clock (read between launches, so not the clock inside the kernel: that is cycles / ns of the trace). Analysis (CPU):
`launch_stats` reduces one trace to the figures the simulator makes claims about (waves, how synchronous
each wave starts, CTA time by wave, spread of SM speed).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

from validation.profiler import L2_FLUSHES
from wavetune.config import LaunchConfig

COLUMNS = ("smid", "start_ns", "end_ns", "cycles")
STEPS_PREFIX = "steps/"   # per-step arrays share the trace file under this key prefix (`wavetune trace --steps`)
# On disk each per-CTA trace is stored column by column as values that repeat from CTA to CTA (smid, start minus the
# previous CTA's start, duration in ns, cycles minus that duration), LZMA-compressed: about half the bytes of the plain
# rows under the .npz's zip deflate (the H200 traces: 36 -> 21 MB), which keeps the repository small enough to travel
# to the GPU machine. The file stays an .npz (np.load reads it); PACKED_KEY names the format.
PACKED_KEY = "__format__"
PACKED_FORMAT = "cta-columns-delta-v1"


def pack_cta_trace(a: np.ndarray) -> np.ndarray:
    """CTAs x COLUMNS int32 -> the stored 4 x CTAs int32 (lossless; unpack_cta_trace inverts it)."""
    a = np.asarray(a, dtype=np.int64)
    dur = a[:, 2] - a[:, 1]
    return np.stack([a[:, 0], np.diff(a[:, 1], prepend=0), dur, a[:, 3] - dur]).astype(np.int32)


def unpack_cta_trace(p: np.ndarray) -> np.ndarray:
    p = np.asarray(p, dtype=np.int64)
    start = np.cumsum(p[1])
    dur = p[2]
    return np.stack([p[0], start, start + dur, p[3] + dur], axis=1).astype(np.int32)


def save_trace_arrays(out: str | Path, arrays: dict[str, np.ndarray]) -> None:
    """A trace file: per-CTA traces (keys without STEPS_PREFIX) packed, per-step arrays as they are, LZMA zip."""
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_LZMA) as zf:
        for key, a in {PACKED_KEY: np.array(PACKED_FORMAT), **arrays}.items():
            if key != PACKED_KEY and not key.startswith(STEPS_PREFIX):
                if a.ndim != 2 or a.shape[1] != len(COLUMNS):
                    raise ValueError(f"trace {key!r} has shape {a.shape}; expected (CTAs, {len(COLUMNS)}) = {COLUMNS}")
                a = pack_cta_trace(a)
            with zf.open(key + ".npy", "w") as f:
                np.lib.format.write_array(f, np.asarray(a), allow_pickle=False)


def trace_key(cfg_key: str, M: int, rep: int) -> str:
    return f"{cfg_key}/M{M}/r{rep}"


def parse_range(text: str) -> list[int]:
    """'256:8192:256' -> [256, 512, ..., 8192] (inclusive); '64,128' -> [64, 128]."""
    try:
        if ":" in text:
            lo, hi, step = (int(x) for x in text.split(":"))
            out = list(range(lo, hi + 1, step)) if step > 0 else []
        else:
            out = [int(x) for x in text.split(",")]
    except ValueError:
        out = []
    if not out or min(out) < 1:
        raise ValueError(f"--M {text!r}: expected LO:HI:STEP (inclusive, STEP > 0) or a comma list of positive "
                         f"integers, e.g. 256:8192:256 or 64,128")
    return out


# ============================================================================ collection (GPU)


def collect(configs: list[LaunchConfig], N: int, K: int, Ms: list[int], reps: int, out: Path,
            timing_reps: int = 10, log=print, record_steps: bool = False, l2_flush: str = "write") -> None:
    """Traces of every (config, M) into `out` (+ its .json sidecar); with record_steps also, per traced launch, the SM
    cycles each CTA's K steps took (CTAs x K steps, int32; the first counts from the CTA's start), in the same file
    under STEPS_PREFIX + the launch's key (load_trace_file reads them). l2_flush: how the L2 is emptied before each
    launch (validation.profiler.L2_FLUSHES; the sidecar records it when not the default write)."""
    import torch

    from validation.kernels.gemm import gemm, grid_size
    from validation.kernels.gemm_trace import gemm_traced
    from validation.profiler import _Bench, _Clock

    bench = _Bench("cuda", l2_flush)
    clock = _Clock("cuda")
    gen = torch.Generator(device="cuda").manual_seed(0)
    a_all = torch.randn((max(Ms), K), device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn((K, N), device="cuda", generator=gen).to(torch.bfloat16)
    arrays: dict[str, np.ndarray] = {}
    meta: dict[str, dict] = {}

    def timed(fn) -> float:
        st = [torch.cuda.Event(enable_timing=True) for _ in range(timing_reps)]
        en = [torch.cuda.Event(enable_timing=True) for _ in range(timing_reps)]
        for s, e in zip(st, en):
            bench.flush()
            s.record()
            fn()
            e.record()
        torch.cuda.synchronize()
        return float(np.median([s.elapsed_time(e) for s, e in zip(st, en)]))

    t0 = time.perf_counter()
    failed: dict[str, str] = {}
    for cfg in configs:
        try:
            for M in Ms:
                a = a_all[:M]
                c = torch.empty((M, N), device="cuda", dtype=torch.bfloat16)
                gemm(a, b, cfg, c)
                steps = (torch.zeros((grid_size(M, N, cfg), -(-K // cfg.BLOCK_K)), device="cuda", dtype=torch.int64)
                         if record_steps else None)
                _, tr = gemm_traced(a, b, cfg, c, steps=steps)
                torch.cuda.synchronize()
                ms_plain = timed(lambda: gemm(a, b, cfg, c))
                ms_traced = timed(lambda: gemm_traced(a, b, cfg, c, tr, steps))
                for r in range(reps):
                    bench.flush()
                    gemm_traced(a, b, cfg, c, tr, steps)
                    torch.cuda.synchronize()
                    t = tr.cpu().numpy()
                    base = t[:, 1].min()
                    key = trace_key(cfg.key, M, r)
                    arrays[key] = np.stack(
                        [t[:, 0], t[:, 1] - base, t[:, 2] - base, t[:, 4] - t[:, 3]], axis=1).astype(np.int32)
                    if steps is not None:   # cycles of each K step (the first from the CTA's start)
                        arrays[STEPS_PREFIX + key] = np.diff(steps.cpu().numpy(), axis=1, prepend=t[:, 3:4]).astype(
                            np.int32)
                meta[f"{cfg.key}/M{M}"] = {"ms": ms_plain, "ms_traced": ms_traced, "sm_clock_mhz": clock.sm_mhz()}
        except Exception as e:  # a config that cannot compile or launch: keep the others' traces, name it
            failed[cfg.key] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
            log(f"{cfg.key}: skipped ({failed[cfg.key]})")
            continue
        log(f"{cfg.key}: {len(Ms)} M traced ({time.perf_counter() - t0:.0f} s)")
    out.parent.mkdir(parents=True, exist_ok=True)
    save_trace_arrays(out, arrays)
    out.with_suffix(".json").write_text(json.dumps({
        "N": N, "K": K, "Ms": Ms, "reps": reps, "columns": COLUMNS, "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__, "triton": __import__("triton").__version__, "launches": meta,
        **({"steps": f"per-step cycles under keys {STEPS_PREFIX}<launch>"} if record_steps else {}),
        **({"l2_flush": l2_flush} if l2_flush != "write" else {}),
        **({"failed": failed} if failed else {})}, indent=1))


# ============================================================================ analysis (CPU)
def load_trace_file(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict]:
    """(per-CTA traces by trace_key, per-step arrays by trace_key, sidecar metadata) of a collected trace file. The
    per-step arrays (`wavetune trace --steps`; empty without it) are CTAs x K steps, the cycles of each step (the first
    from the CTA's start)."""
    path = Path(path)
    side = path.with_suffix(".json")
    if not path.exists() or not side.exists():
        raise FileNotFoundError(f"{path}: a trace needs the .npz and its .json sidecar (`wavetune trace` "
                                f"writes both)")
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(side.read_text())
    fmt = str(arrays.pop(PACKED_KEY, "plain"))
    if fmt not in ("plain", PACKED_FORMAT):
        raise ValueError(f"{path}: trace format {fmt!r} is not one this version reads ({PACKED_FORMAT!r} or plain "
                         f"rows); read it with the wavetune that wrote it")
    steps = {k[len(STEPS_PREFIX):]: a for k, a in arrays.items() if k.startswith(STEPS_PREFIX)}
    arrays = {k: a for k, a in arrays.items() if not k.startswith(STEPS_PREFIX)}
    if fmt == PACKED_FORMAT:
        arrays = {k: unpack_cta_trace(a) for k, a in arrays.items()}
    for k, a in arrays.items():
        if a.ndim != 2 or a.shape[1] != len(COLUMNS):
            raise ValueError(f"{path}: trace {k!r} has shape {a.shape}; expected (CTAs, {len(COLUMNS)}) = {COLUMNS}")
    return arrays, steps, meta


def load_traces(path: str | Path) -> tuple[dict[str, np.ndarray], dict]:
    """(per-CTA traces by trace_key, sidecar metadata) of a collected trace file."""
    arrays, _, meta = load_trace_file(path)
    return arrays, meta


def generations(sm: np.ndarray, start: np.ndarray, slots: int) -> np.ndarray:
    """Per CTA: its rank among the CTAs its SM ran (by start time) // slots, i.e. the SM-local wave it
    belongs to. Unlike the launch-order wave (index // capacity) this follows what each SM really did."""
    gen = np.empty(len(sm), dtype=np.int64)
    order = np.lexsort((start, sm))
    s_sorted = sm[order]
    first = np.r_[0, np.flatnonzero(np.diff(s_sorted)) + 1]
    rank = np.arange(len(sm)) - np.repeat(first, np.diff(np.r_[first, len(sm)]))
    gen[order] = rank // slots
    return gen


def launch_stats(sm, start_s, end_s, slots: int, sm_count: int, cycles=None) -> dict:
    """What one launch's per-CTA trace says (times in seconds): SM-local waves, CTA time per wave, how
    far apart the last wave's CTAs start (desynchronisation), SM-to-SM spread of CTA time, in-kernel clock."""
    sm = np.asarray(sm, dtype=np.int64)
    start_s, end_s = np.asarray(start_s, float), np.asarray(end_s, float)
    dur = end_s - start_s
    gen = generations(sm, start_s, slots)
    n_gen = int(gen.max()) + 1
    later = _later_full_waves(gen, sm_count, slots)
    last = gen == n_gen - 1
    out = {"grid": int(len(sm)), "span_s": float(end_s.max() - start_s.min()), "sm_waves": n_gen,
           "cta_s_first_wave": float(np.median(dur[gen == 0])),
           "cta_s_later_full_waves": float(np.median(dur[later])) if later.any() else None,
           "cta_s_last_wave": float(np.median(dur[last])) if n_gen > 1 else None,
           "last_wave_start_spread_s": float(np.percentile(start_s[last], 90) - np.percentile(start_s[last], 10))
           if n_gen > 1 else 0.0,
           # how early the first slots free for the next wave: the earliest 5% of first-wave CTAs' ends, in
           # median first-wave CTA times (1.0: the first wave ends in step)
           "first_wave_end_p05_over_cta_time": float(np.percentile(end_s[gen == 0] - start_s.min(), 5)
                                                     / np.median(dur[gen == 0])) if n_gen > 1 else None}
    if n_gen == 1:
        out["cta_s_by_ctas_on_sm"] = cta_time_by_ctas_on_sm(sm, dur, sm_count)
    if later.any():
        per_sm = _per_sm_cta_time(sm, dur, later, sm_count)
        out["sm_cta_time_cv"] = float(np.nanstd(per_sm) / np.nanmean(per_sm))
    if cycles is not None:
        hz = np.asarray(cycles, float) / np.maximum(dur, 1e-12)
        out["clock_hz_first_wave"] = float(np.median(hz[gen == 0]))
        out["clock_hz_last_wave"] = float(np.median(hz[last]))
    return out


def max_ctas_on_sm(sm, start, end) -> int:
    """The most CTAs any SM ran at once in a trace: the occupancy the traced kernel really had (the tracing code
    can cost registers, and so a CTA per SM, where a config is register-bound)."""
    sm, start, end = (np.asarray(x) for x in (sm, start, end))
    t = np.concatenate([start, end])
    step = np.concatenate([np.ones(len(start), np.int64), -np.ones(len(end), np.int64)])
    order = np.lexsort((step, t, np.concatenate([sm, sm])))   # per SM by time, an end before a start at a tie
    s_sorted, running = np.concatenate([sm, sm])[order], np.cumsum(step[order])
    first = np.r_[0, np.flatnonzero(np.diff(s_sorted)) + 1]
    base = np.repeat(np.r_[0, running[first[1:] - 1]], np.diff(np.r_[first, len(order)]))
    return int((running - base).max())


def cta_time_by_ctas_on_sm(sm: np.ndarray, dur: np.ndarray, sm_count: int) -> dict[str, float]:
    """A launch of one wave: median CTA time (s) on the SMs that hold n CTAs, by n ("1", "2", ...). Where a
    partial wave leaves some SMs one CTA more than others, the ratio of neighbouring entries is the per-SM
    cost of co-residence in that launch, with the chip's load the same for both."""
    count = np.bincount(sm, minlength=sm_count)[sm]
    return {str(n): float(np.median(dur[count == n])) for n in np.unique(count)}


def _later_full_waves(gen: np.ndarray, sm_count: int, slots: int) -> np.ndarray:
    """Mask of the CTAs in SM-local waves after the first that (almost) every slot ran."""
    full = [g for g in range(1, int(gen.max()) + 1) if np.sum(gen == g) >= 0.99 * sm_count * slots]
    return np.isin(gen, full)


def _per_sm_cta_time(sm: np.ndarray, dur: np.ndarray, mask: np.ndarray, sm_count: int) -> np.ndarray:
    """Per SM id: mean duration of its CTAs under `mask` (NaN for an SM that ran none)."""
    total = np.bincount(sm[mask], weights=dur[mask], minlength=sm_count)
    count = np.bincount(sm[mask], minlength=sm_count)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / count, np.nan)


def sm_relative_time(sm, start_s, end_s, slots: int, sm_count: int) -> np.ndarray:
    """Per SM (index = SM id): mean CTA time in the full waves after the first, over the median of SMs
    (NaN for an SM that ran none). Systematic SM-to-SM differences show the chip's topology."""
    sm = np.asarray(sm, dtype=np.int64)
    dur = np.asarray(end_s, float) - np.asarray(start_s, float)
    gen = generations(sm, np.asarray(start_s, float), slots)
    out = _per_sm_cta_time(sm, dur, _later_full_waves(gen, sm_count, slots), sm_count)
    return out / np.nanmedian(out) if np.isfinite(out).any() else out


def hardware_result(arr: np.ndarray, sm_count: int, slots: int):
    """A collected trace (COLUMNS, ns) as a wavesim SimResult (engine 'hardware'), for the same plots."""
    from wavesim.result import SimResult, Trace

    sm = arr[:, 0].astype(np.int64)
    if sm.max() >= sm_count:
        raise ValueError(f"trace names SM {sm.max()} but the GPU spec has {sm_count} SMs: wrong --gpu?")
    start, end = arr[:, 1] * 1e-9, arr[:, 2] * 1e-9
    busy = np.zeros(sm_count)
    np.add.at(busy, sm, end - start)
    return SimResult.build(span_s=float(end.max()), launch_overhead_s=0.0, grid=len(sm), sm_count=sm_count,
                           slots_per_sm=slots, per_sm_busy_s=busy / slots, trace=Trace(sm, start, end),
                           engine="hardware")


def traced_launches(trace_files, spec):
    """Every traced launch of the files, in key order: (file, its arrays by key, its sidecar, key, config, M,
    CTAs/SM on `spec`)."""
    from wavesim.kernels.gemm import config_occupancy

    for f in trace_files:
        arrays, meta = load_traces(f)
        for key in sorted(arrays):
            cfg_key, m_txt, _ = key.split("/")
            cfg = LaunchConfig.from_key(cfg_key)
            yield f, arrays, meta, key, cfg, int(m_txt[1:]), config_occupancy(spec, cfg, "bf16")[0].ctas_per_sm


def compare(trace_files, gpu: str, params=None) -> list[dict]:
    """Per traced launch: the hardware's launch_stats and the simulator's (closed form, with `params`)."""
    import hwspecs
    from wavesim.engine import run
    from wavesim.kernels.gemm import GemmModel
    from wavetune.config import GemmProblem

    spec = hwspecs.load_gpu(gpu)
    model = GemmModel()
    rows = []
    for f, arrays, meta, key, cfg, M, slots in traced_launches(trace_files, spec):
        if not key.endswith("/r0"):
            continue
        N, K = meta["N"], meta["K"]
        launch = key.rsplit("/", 1)[0]
        a = arrays[key].astype(np.int64)
        traced_slots = max_ctas_on_sm(a[:, 0], a[:, 1], a[:, 2])
        # the hardware's SM-local waves at the occupancy the traced kernel had (see max_ctas_on_sm)
        hw = launch_stats(a[:, 0], a[:, 1] * 1e-9, a[:, 2] * 1e-9, min(slots, traced_slots), spec.sm_count,
                          cycles=a[:, 3])
        r = run(model.workload(spec, GemmProblem(M, N, K), cfg, params), trace=True)
        sim = launch_stats(r.trace.sm, r.trace.start_s, r.trace.end_s, slots, spec.sm_count)
        reps = [arrays[k] for k in arrays if k.startswith(f"{launch}/")]
        rows.append({"config": cfg.key, "ctas_per_sm": slots, "traced_ctas_per_sm": traced_slots, "M": M, "N": N,
                     "K": K, "file": str(f),
                     "ms_untraced": meta["launches"][launch]["ms"],
                     "ms_traced": meta["launches"][launch]["ms_traced"],
                     "span_s_reps": [float((r_[:, 2].max() - r_[:, 1].min()) * 1e-9) for r_ in reps],
                     "hardware": hw, "simulated": sim})
    return rows


def _median_of(rows, side, num, den=None):
    vals = [r[side][num] / (r[side][den] if den else 1.0) for r in rows
            if r[side].get(num) is not None and (den is None or r[side].get(den))]
    return float(np.median(vals)) if vals else None


def summarize(rows: list[dict]) -> list[dict]:
    """Per layer (N, K) and CTAs/SM: medians over the traced launches of what tells the hardware's
    scheduler apart."""
    out = []
    for N, K, k in sorted({(r["N"], r["K"], r["ctas_per_sm"]) for r in rows}):
        sel = [r for r in rows if (r["N"], r["K"], r["ctas_per_sm"]) == (N, K, k)]
        multi = [r for r in sel if r["hardware"]["sm_waves"] > 2]
        row = {"N": N, "K": K, "ctas_per_sm": k, "configs": sorted({r["config"] for r in sel}), "launches": len(sel),
               "traced_over_untraced": float(np.median([r["ms_traced"] / r["ms_untraced"] for r in sel]))}
        for side in ("hardware", "simulated"):
            row[side] = {
                "later_over_first_wave_cta_time": _median_of(multi, side, "cta_s_later_full_waves", "cta_s_first_wave"),
                "last_over_later_wave_cta_time": _median_of(multi, side, "cta_s_last_wave", "cta_s_later_full_waves"),
                "last_wave_start_spread_over_cta_time": _median_of(multi, side, "last_wave_start_spread_s",
                                                                    "cta_s_later_full_waves"),
                "sm_cta_time_cv": _median_of(multi, side, "sm_cta_time_cv")}
        row["hardware"]["clock_mhz_first_wave"] = _median_of(sel, "hardware", "clock_hz_first_wave") / 1e6
        row["hardware"]["clock_mhz_last_wave"] = _median_of(multi, "hardware", "clock_hz_last_wave") / 1e6 \
            if multi else None
        out.append(row)
    return out


def first_wave_coresidence(rows: list[dict]) -> list[dict]:
    """Per layer and config, over its one-wave launches (compare() rows): the per-SM cost of one more CTA
    (median CTA time on the SMs holding the most CTAs over those holding one fewer, same launch; medians
    over the launches where both kinds of SM exist) and the chip-wide growth (the CTA time on SMs holding
    one CTA in the launch with the most CTAs of those that have such SMs, over that in the one with the
    fewest), hardware and simulated."""
    out = []
    for N, K, cfg in sorted({(r["N"], r["K"], r["config"]) for r in rows}):
        sel = sorted((r for r in rows if (r["N"], r["K"], r["config"]) == (N, K, cfg)
                      and "cta_s_by_ctas_on_sm" in r["hardware"]), key=lambda r: r["M"])
        if not sel:
            continue
        row = {"N": N, "K": K, "config": cfg, "ctas_per_sm": sel[0]["ctas_per_sm"], "launches": len(sel),
               "M": [r["M"] for r in sel]}
        for side in ("hardware", "simulated"):
            by = [r[side]["cta_s_by_ctas_on_sm"] for r in sel]
            steps = [t[str(n)] / t[str(n - 1)] for t in by if (n := max(map(int, t))) > 1 and str(n - 1) in t]
            ones = [t["1"] for t in by if "1" in t]
            row[side] = {"one_more_cta_on_sm": float(np.median(steps)) if steps else None,
                         "launches_with_both": len(steps),
                         "one_per_sm_growth": ones[-1] / ones[0] if len(ones) > 1 else None}
        out.append(row)
    return out


def first_wave_ends(rows: list[dict]) -> list[dict]:
    """Per layer and config, over its launches of 2+ SM-local waves (compare() rows): the median of
    first_wave_end_p05_over_cta_time, hardware and simulated (the engines keep the first wave in step: 1.0), and
    the traced kernel's occupancy where it differs from the model's."""
    out = []
    for N, K, cfg in sorted({(r["N"], r["K"], r["config"]) for r in rows}):
        sel = [r for r in rows if (r["N"], r["K"], r["config"]) == (N, K, cfg)
               and r["hardware"]["first_wave_end_p05_over_cta_time"] is not None]
        if not sel:
            continue
        out.append({"N": N, "K": K, "config": cfg, "ctas_per_sm": sel[0]["ctas_per_sm"],
                    "traced_ctas_per_sm": min(r["traced_ctas_per_sm"] for r in sel), "launches": len(sel),
                    **{side: _median_of(sel, side, "first_wave_end_p05_over_cta_time")
                       for side in ("hardware", "simulated")}})
    return out


def _ranges(ids) -> str:
    """[32, 33, 34, 40] -> '32-34, 40'."""
    ids = sorted(int(i) for i in ids)
    out, start = [], None
    for i, x in enumerate(ids):
        if start is None:
            start = x
        if i + 1 == len(ids) or ids[i + 1] != x + 1:
            out.append(f"{start}" if start == x else f"{start}-{x}")
            start = None
    return ", ".join(out) or "none"


def sm_classes(rel: np.ndarray, fast: float = 0.9, slow: float = 1.04) -> dict:
    """SMs whose relative CTA time (sm_relative_time) is below `fast` or above `slow`."""
    return {"fast": np.flatnonzero(rel < fast).tolist(), "slow": np.flatnonzero(rel > slow).tolist()}


def tail_ratio(sm, start_s, end_s, slots: int) -> float:
    """Median time of a launch's last SM-local wave's CTAs over that of its full waves (the first counts
    when there is no other)."""
    sm, start_s = np.asarray(sm, dtype=np.int64), np.asarray(start_s, float)
    dur = np.asarray(end_s, float) - start_s
    gen = generations(sm, start_s, slots)
    last = int(gen.max())
    full = (gen >= 1) & (gen < last) if last >= 2 else gen == 0
    return float(np.median(dur[gen == last]) / np.median(dur[full]))


def load_slowdown_from_traces(trace_files, gpu: str, params=None) -> dict:
    """The chip-load slowdown kappa (wavesim.engine) the traces imply, with everything else as `params`.

    Taken from the launches whose CTAs stay in lockstep (1-2 CTAs/SM) and end in a tail of at most one
    CTA per SM after one or more full waves: the hardware runs those tail CTAs faster than its full-wave
    CTAs (a lighter chip), and kappa is the value whose simulated tail/full-wave CTA time ratios best match
    the measured ones (least squares of the log ratios, over every traced launch)."""
    from dataclasses import replace

    from scipy.optimize import minimize_scalar

    import hwspecs
    from wavesim.engine import run
    from wavesim.kernels.gemm import GemmModel
    from wavetune.config import GemmProblem

    spec = hwspecs.load_gpu(gpu)
    model = GemmModel()
    hw, wls = [], []
    for _, arrays, meta, key, cfg, M, slots in traced_launches(trace_files, spec):
        wl = model.workload(spec, GemmProblem(M, meta["N"], meta["K"]), cfg, params)
        tail = wl.grid % wl.capacity
        if slots > 2 or wl.grid < wl.capacity or not 0 < tail <= spec.sm_count:
            continue
        a = arrays[key].astype(np.int64)
        hw.append(tail_ratio(a[:, 0], a[:, 1] * 1e-9, a[:, 2] * 1e-9, slots))
        wls.append(replace(wl, desync_rate=0.0))
    if not wls:
        raise ValueError("no traced launch of 1-2 CTAs/SM ends in a tail of at most one CTA per SM after a full "
                         "wave: trace M values past the first wave boundary")
    log_hw = np.log(hw)

    def sim_log_ratios(kappa: float) -> np.ndarray:
        out = []
        for wl in wls:
            r = run(replace(wl, load_slowdown=kappa), trace=True)
            out.append(tail_ratio(r.trace.sm, r.trace.start_s, r.trace.end_s, wl.slots_per_sm))
        return np.log(out)

    best = minimize_scalar(lambda k: float(np.sum((sim_log_ratios(k) - log_hw) ** 2)), bounds=(0.0, 2.0),
                           method="bounded", options={"xatol": 1e-3})
    kappa = float(best.x)
    resid = lambda k: float(np.median(np.abs(sim_log_ratios(k) - log_hw)))  # noqa: E731
    return {"load_slowdown": kappa, "launches": len(wls), "hardware_tail_over_full_median": float(np.median(hw)),
            "median_abs_log_error": resid(kappa), "median_abs_log_error_without": resid(0.0)}


def write_report(trace_files, gpu: str, out_dir, params=None, calibration_label: str = "none",
                 gpc_layout: str | Path | None = None) -> dict:
    """TRACES.md, traces.json and PNGs (hardware vs simulated timelines, CTA time per SM) in out_dir;
    `gpc_layout`: a file of `python3 -m validation.probe --gpcs`, to name the GPCs of the SMs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import hwspecs
    from wavesim.engine import run
    from wavesim.kernels.gemm import GemmModel
    from wavesim.plots import plot_timeline, save_png
    from wavetune.config import GemmProblem

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    spec = hwspecs.load_gpu(gpu)
    gpcs = json.loads(Path(gpc_layout).read_text())["gpcs"] if gpc_layout else None
    rows = compare(trace_files, gpu, params)
    summary = summarize(rows)
    arrays = {}
    for f in trace_files:
        arrays.update({(k, str(f)): v for k, v in load_traces(f)[0].items()})
    layers = sorted({(r["N"], r["K"]) for r in rows})
    # timelines (first layer): per CTAs/SM, the largest traced launch of 3-5 SM-local waves, hw and simulated
    plots = []
    for k in sorted({r["ctas_per_sm"] for r in rows}):
        cand = [r for r in rows if r["ctas_per_sm"] == k and (r["N"], r["K"]) == layers[0]
                and 3 <= r["hardware"]["sm_waves"] <= 5]
        if not cand:
            continue
        r = max(cand, key=lambda r: (r["hardware"]["sm_waves"] - r["M"] * 1e-9, r["M"]))
        cfg = LaunchConfig.from_key(r["config"])
        a = arrays[(trace_key(r["config"], r["M"], 0), r["file"])]
        name = f"timeline_{k}cta_{r['config']}_M{r['M']}"
        plot_timeline(hardware_result(a, spec.sm_count, k), out_dir / f"{name}_hw.png", max_sms=24,
                      title=f"H/W {r['config']} M={r['M']} ({k} CTA/SM): first 24 SMs, coloured by launch-order wave")
        sim = run(GemmModel().workload(spec, GemmProblem(r["M"], r["N"], r["K"]), cfg, params), trace=True)
        plot_timeline(sim, out_dir / f"{name}_sim.png", max_sms=24,
                      title=f"simulated {r['config']} M={r['M']}: first 24 SMs")
        plots.append((k, r["config"], r["M"], name))
    # CTA time per SM id at the largest M of each config, one plot per layer, with the SM classes
    classes = []
    for N, K in layers:
        fig, ax = plt.subplots(figsize=(10, 4.4), dpi=110)
        for cfg_key in sorted({r["config"] for r in rows if (r["N"], r["K"]) == (N, K)}):
            r = max((r for r in rows if r["config"] == cfg_key and (r["N"], r["K"]) == (N, K)), key=lambda r: r["M"])
            a = arrays[(trace_key(cfg_key, r["M"], 0), r["file"])].astype(np.int64)
            rel = sm_relative_time(a[:, 0], a[:, 1] * 1e-9, a[:, 2] * 1e-9, r["ctas_per_sm"], spec.sm_count)
            ax.plot(np.arange(spec.sm_count), rel, ".-", lw=0.6, ms=3, label=f"{cfg_key} ({r['ctas_per_sm']}/SM)")
            classes.append({"N": N, "K": K, "config": cfg_key, "M": r["M"], **sm_classes(rel)})
        if gpcs:
            lo = ax.get_ylim()[0]
            for g, members in enumerate(gpcs):
                ax.scatter(members, [lo] * len(members), marker="s", s=9, color=plt.get_cmap("tab20")(g % 20))
        ax.set_xlabel("SM id (%smid)" + ("; squares: GPC (colour), from the cluster probe" if gpcs else ""))
        ax.set_ylabel("CTA time / median SM's")
        ax.set_title(f"N={N}, K={K}: CTA time per SM in the full waves after the first, largest traced M")
        ax.legend(fontsize=6, ncol=2)
        fig.tight_layout()
        save_png(fig, out_dir / f"sm_cta_time_{N}x{K}.png")
        plt.close(fig)
    try:
        load = load_slowdown_from_traces(trace_files, gpu, params)
    except ValueError:
        load = None  # no traced launch ends in a light tail
    first = first_wave_coresidence(rows)
    ends = first_wave_ends(rows)
    (out_dir / "traces.json").write_text(json.dumps({"gpu": gpu, "calibration": calibration_label,
                                                      "gpcs": gpcs, "summary": summary, "sm_classes": classes,
                                                      "load_slowdown": load, "first_waves": first,
                                                      "first_wave_ends": ends, "launches": rows}, indent=1))
    _write_markdown(out_dir / "TRACES.md", gpu, calibration_label, trace_files, summary, rows, plots, classes,
                    layers, gpcs, load, first, ends)
    return {"summary": summary, "launches": rows, "sm_classes": classes, "load_slowdown": load,
            "first_waves": first, "first_wave_ends": ends}


def load_slowdown_line(load: dict) -> str:
    return (f"chip-load slowdown: in {load['launches']} launches of 1-2 CTAs/SM ending in a light tail the tail "
            f"CTAs take a median {load['hardware_tail_over_full_median']:.3f} of a full-wave CTA's time; the "
            f"load_slowdown that matches them best is {load['load_slowdown']:.3f} (median |log error| "
            f"{load['median_abs_log_error_without']:.3f} without, {load['median_abs_log_error']:.3f} with it)")


def _hw_sim(row: dict, key: str, fmt) -> str:
    """'hardware / simulated' of one figure of a report row."""
    return f"{fmt(row['hardware'][key])} / {fmt(row['simulated'][key])}"


def _fmt(x, spec=".2f"):
    return "-" if x is None else format(x, spec)


def _write_markdown(path, gpu, calibration_label, trace_files, summary, rows, plots, classes, layers, gpcs,
                    load=None, first=(), ends=()):
    lines = ["# Per-CTA hardware traces against the simulator", "",
             f"GPU `{gpu}`; traces: {', '.join(f'`{f}`' for f in trace_files)}; simulator calibration: "
             f"{calibration_label}. Regenerate: `wavetune trace-report --gpu {gpu} --traces ... --out DIR`.", "",
             "Per layer and CTAs/SM, medians over the launches with more than two SM-local waves (an SM-local "
             "wave is a CTA's rank among the CTAs its SM ran, divided by CTAs/SM):", "",
             "| N x K | CTAs/SM | launches | side | later / first wave CTA time | last / later wave CTA time | "
             "last wave start spread / CTA time | SM-to-SM CV of CTA time | in-kernel clock, first / last wave (MHz) |",
             "|---|---:|---:|---|---:|---:|---:|---:|---|"]
    for s in summary:
        for side in ("hardware", "simulated"):
            v = s[side]
            clk = (f"{_fmt(v.get('clock_mhz_first_wave'), '.0f')} / {_fmt(v.get('clock_mhz_last_wave'), '.0f')}"
                   if side == "hardware" else "boost clock")
            lines.append(f"| {s['N']} x {s['K']} | {s['ctas_per_sm']} | {s['launches']} | {side} | "
                         f"{_fmt(v['later_over_first_wave_cta_time'])} | {_fmt(v['last_over_later_wave_cta_time'])} | "
                         f"{_fmt(v['last_wave_start_spread_over_cta_time'])} | {_fmt(v['sm_cta_time_cv'], '.3f')} | {clk} |")
    lines += ["", f"Tracing cost: traced / untraced kernel time, median over launches: "
                  f"{float(np.median([r['ms_traced'] / r['ms_untraced'] for r in rows])):.3f}.", "",
              "## CTA time per SM", "",
              "SMs whose CTAs take < 0.9x (fast) or > 1.04x (slow) the median SM's time in the full waves after the "
              "first, at each config's largest traced M" + (" (GPC sizes from the cluster probe: "
                                                             f"{[len(g) for g in gpcs]})" if gpcs else "") + ":", "",
              "| N x K | config | M | fast SMs | slow SMs |", "|---|---|---:|---|---|"]
    for c in classes:
        lines.append(f"| {c['N']} x {c['K']} | {c['config']} | {c['M']} | {len(c['fast'])}: {_ranges(c['fast'])} | "
                     f"{len(c['slow'])}: {_ranges(c['slow'])} |")
    lines += [""] + [f"![CTA time per SM, N={N} K={K}](sm_cta_time_{N}x{K}.png)" for N, K in layers] + [""]
    for k, cfg, M, name in plots:
        lines += [f"**{cfg}, M = {M}, N x K = {layers[0][0]} x {layers[0][1]} ({k} CTAs/SM)**: hardware, then "
                  "simulated", "", f"![hardware]({name}_hw.png)", f"![simulated]({name}_sim.png)", ""]
    if load:
        lines += [f"**{load_slowdown_line(load)}** (validation.trace.load_slowdown_from_traces; the simulator's "
                  "load_slowdown, wavesim.engine).", ""]
    if first:
        lines += ["## Partial first waves: the cost of co-residence per SM and chip-wide", "",
                  "Launches of one wave. *One more CTA on an SM*: in one launch, the median CTA time on the SMs "
                  "holding the most CTAs over that on the SMs holding one fewer (same chip load; median over the "
                  "launches with both). *One-per-SM growth*: the CTA time on SMs holding one CTA, in the heaviest "
                  "launch that has such SMs over the lightest (what the chip's load alone adds).", "",
                  "| N x K | config | CTAs/SM | M traced | one more CTA on an SM (hw / sim, launches) | "
                  "one-per-SM growth (hw / sim) |", "|---|---|---:|---|---|---|"]
        for f in first:
            pair = lambda key: _hw_sim(f, key, lambda x: _fmt(x, ".3f"))  # noqa: E731
            lines.append(f"| {f['N']} x {f['K']} | {f['config']} | {f['ctas_per_sm']} | {f['M'][0]}..{f['M'][-1]} | "
                         f"{pair('one_more_cta_on_sm')} ({f['hardware']['launches_with_both']}) | "
                         f"{pair('one_per_sm_growth')} |")
        lines.append("")
    if ends:
        lines += ["## How early the first wave frees its slots", "",
                  "Launches of 2+ SM-local waves: the earliest 5% of the first wave's CTAs end at this fraction of the "
                  "median first-wave CTA time (median over launches; the simulator's engines keep the first wave in "
                  "step, 1.0, and price the streaming-in as the expected de-synchronisation, wavesim/engine/desync.py). "
                  "Where the traced kernel ran fewer CTAs per SM than the model's plain kernel (the tracing code "
                  "costs registers), the hardware side uses the traced occupancy.", "",
                  "| N x K | config | CTAs/SM (model / traced) | launches | first-wave earliest 5% end (hw / sim) |",
                  "|---|---|---|---:|---|"]
        for e in ends:
            lines.append(f"| {e['N']} x {e['K']} | {e['config']} | {e['ctas_per_sm']} / {e['traced_ctas_per_sm']} | "
                         f"{e['launches']} | {_fmt(e['hardware'])} / {_fmt(e['simulated'])} |")
        lines.append("")
    lines += ["## Every traced launch", "",
              "| N x K | config | CTAs/SM | M | SM waves (hw / sim) | span us (hw / sim) | first-wave CTA us (hw / sim) | "
              "later-wave CTA us (hw / sim) | last-wave start spread us (hw) |",
              "|---|---|---:|---:|---|---|---|---|---:|"]
    us = lambda x: _fmt(None if x is None else x * 1e6, ".1f")  # noqa: E731
    for r in rows:
        pair = lambda key, f=us: _hw_sim(r, key, f)  # noqa: E731
        lines.append(f"| {r['N']} x {r['K']} | {r['config']} | {r['ctas_per_sm']} | {r['M']} | {pair('sm_waves', str)} | "
                     f"{pair('span_s')} | {pair('cta_s_first_wave')} | {pair('cta_s_later_full_waves')} | "
                     f"{us(r['hardware']['last_wave_start_spread_s'])} |")
    Path(path).write_text("\n".join(lines) + "\n")


def register(sub) -> None:
    """`wavetune trace` (collect on a GPU) and `wavetune trace-report` (offline)."""
    c = sub.add_parser("trace", help="record per-CTA traces (SM, start, end, cycles) of the GEMM on the local GPU",
                       description="Runs validation/kernels/gemm_trace.py for configs x M; writes OUT (.npz) and "
                                   "its .json sidecar (kernel times traced and untraced, SM clock).")
    c.add_argument("--configs", required=True,
                   help="config space names (tuner/space.py), '+'-joined, or a JSONL file of configs")
    c.add_argument("--N", type=int, required=True)
    c.add_argument("--K", type=int, required=True)
    c.add_argument("--M", required=True, help="lo:hi:step (inclusive) or a comma list")
    c.add_argument("--reps", type=int, default=2, help="traced launches kept per (config, M)")
    c.add_argument("--out", type=Path, required=True, help="the .npz to write")
    c.add_argument("--steps", action="store_true",
                   help="also record the SM cycles of every K step of each CTA (in OUT, read by validation.step_trace)")
    c.add_argument("--l2-flush", default="write", choices=L2_FLUSHES,
                   help="how the L2 is emptied before each launch, as `wavetune profile --l2-flush` (read: a clean "
                        "eviction; write, the default of every committed trace before session 27, leaves dirty lines)")
    c.set_defaults(func=_collect_cmd)
    r = sub.add_parser("trace-report", help="hardware per-CTA traces against the simulator's (no GPU needed)",
                       description="Per CTAs/SM: SM-local waves, CTA time by wave, desynchronisation, SM-to-SM "
                                   "spread, in-kernel clock; TRACES.md, traces.json and PNG timelines.")
    r.add_argument("--gpu", required=True)
    r.add_argument("--traces", nargs="+", required=True, help=".npz files written by `wavetune trace`")
    r.add_argument("--calibration", default="auto", help="auto (shipped), a file, or none")
    r.add_argument("--gpc-layout", default=None, help="a file of `python3 -m validation.probe --gpcs` (names GPCs)")
    r.add_argument("--out", required=True, help="output directory")
    r.set_defaults(func=_report_cmd)


def _collect_cmd(a) -> int:
    from tuner.space import load_space

    configs, Ms = load_space(a.configs), parse_range(a.M)  # bad input fails before any GPU work
    try:
        import torch
    except ImportError:
        raise ValueError("wavetune trace runs kernels: install the 'gpu' extra (torch, triton) on a machine "
                         "with an NVIDIA GPU; `wavetune trace-report` reads its files anywhere") from None
    if not torch.cuda.is_available():
        raise ValueError("no CUDA GPU is visible: `wavetune trace` needs one (sm_70+; %globaltimer and %smid "
                         "are PTX special registers); `wavetune trace-report` reads its files anywhere")
    collect(configs, a.N, a.K, Ms, a.reps, a.out, record_steps=a.steps, l2_flush=a.l2_flush)
    return 0


def _report_cmd(a) -> int:
    from wavesim.calibration import load_calibration

    params = None if a.calibration == "none" else load_calibration(a.calibration, a.gpu)
    label = "none (specs and priors)" if params is None else f"`{a.calibration}`"
    out = write_report(a.traces, a.gpu, a.out, params, label, a.gpc_layout)
    for s in out["summary"]:
        h = s["hardware"]
        print(f"{s['N']}x{s['K']}, {s['ctas_per_sm']} CTA/SM: later/first wave CTA time {_fmt(h['later_over_first_wave_cta_time'])}, "
              f"last-wave start spread / CTA time {_fmt(h['last_wave_start_spread_over_cta_time'])}, "
              f"SM-to-SM CV {_fmt(h['sm_cta_time_cv'], '.3f')}")
    if out["load_slowdown"]:
        print(load_slowdown_line(out["load_slowdown"]))
    for f in out["first_waves"]:
        h, m = f["hardware"], f["simulated"]
        print(f"{f['N']}x{f['K']} {f['config']} first waves: one more CTA on an SM "
              f"{_fmt(h['one_more_cta_on_sm'], '.3f')} hw / {_fmt(m['one_more_cta_on_sm'], '.3f')} sim; one-per-SM "
              f"growth {_fmt(h['one_per_sm_growth'], '.3f')} hw / {_fmt(m['one_per_sm_growth'], '.3f')} sim")
    for e in out["first_wave_ends"]:
        traced = "" if e["traced_ctas_per_sm"] == e["ctas_per_sm"] else f" (traced kernel: {e['traced_ctas_per_sm']}/SM)"
        print(f"{e['N']}x{e['K']} {e['config']} ({e['ctas_per_sm']}/SM{traced}): the first wave's earliest 5% end at "
              f"{_fmt(e['hardware'])} of its median CTA time (sim {_fmt(e['simulated'])})")
    print(f"TRACES.md, traces.json and plots in {a.out}")
    return 0


if __name__ == "__main__":  # `python3 -m validation.trace trace ...` on a GPU machine
    _parser = argparse.ArgumentParser(prog="python3 -m validation.trace")
    register(_parser.add_subparsers(dest="command", required=True))
    _args = _parser.parse_args()
    sys.exit(_args.func(_args))
