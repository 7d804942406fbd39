"""What one SM's co-resident CTAs cost each other with the L2 out of the way (session 27).

In a real launch the chip-wide L2 limit and the SM side cannot be told apart. Here every program of the traced kernel
computes the same output tile (validation/kernels/gemm_trace.py, `programs` with C of one tile): 132 x k CTAs, k per
SM, all reading the same few lines at the same K step from a warm L2 (no flush: A and B stay resident), so the L2
serves next to nothing while each SM runs k CTAs' math, loads and loop. Per config and k the report gives the median CTA time, its in-kernel
clock (%clock64 over %globaltimer) and its time per K step, beside the model (the shipped calibration): its SM-shared
work of k CTAs per K step (the model counts cycles of the boost clock, so its cycles are its time and the two are
compared in time), and its CTA time for this launch with the L2 and DRAM taken out (its SM side alone).

On the H200 the model's SM side is right on average (CTA time over measured: median 1.04 over 699 broad launches, 1.03
over 178 unseen) but wrong per tile by up to a third (p10 0.88, p90 1.32): 64x64x64 s4 at 3 CTAs/SM x1.14 in shared
work, 128x64x32 at 4 x0.76; and the hardware's K step grows as lone latency + k x share, where the model overlaps them.

Collect (GPU): `python3 -m validation.sm_side collect --out FILE [--configs SPACE]` (one JSON line per (config, k),
written as it goes). Report (CPU): `python3 -m validation.sm_side report FILE [--calibration auto|FILE|none]`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from wavetune.config import LaunchConfig

# The staircase study's tiles (1 to 8 CTAs/SM on the H200) and the K loop they run (L = K / BLOCK_K steps).
CONFIGS = ("128x256x64_g8_w8_s3", "128x128x64_g8_w4_s3", "64x128x64_g8_w4_s3", "64x64x64_g8_w4_s4",
           "128x64x32_g8_w4_s3", "32x64x64_g8_w4_s3", "64x64x32_g8_w4_s2")
K_DEPTH = 4096
REPS = 5


def collect(out: Path, configs: list[LaunchConfig] | None = None, reps: int = REPS, log=print) -> None:
    """Every config (default CONFIGS) at 1..max CTAs/SM; a config that cannot compile or launch is logged and skipped."""
    import torch

    from validation.kernels.gemm_trace import gemm_traced, local_gpu_spec, random_operands, warm_trace_medians
    from wavesim.kernels.gemm import config_occupancy

    spec = local_gpu_spec()
    gen = torch.Generator(device="cuda").manual_seed(0)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as f:
        for cfg in configs or [LaunchConfig.from_key(k) for k in CONFIGS]:
            key = cfg.key
            M, N, K = cfg.BLOCK_M, cfg.BLOCK_N, K_DEPTH
            a, b, c = random_operands(M, N, K, gen)
            try:
                slots = config_occupancy(spec, cfg, "bf16", N, K)[0].ctas_per_sm
                gemm_traced(a, b, cfg, c, programs=spec.sm_count)   # compiles: a config that cannot is skipped
            except Exception as e:  # noqa: BLE001  (a config the compiler or the card refuses: keep the others)
                log(f"{key}: skipped ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"[:300])
                continue
            for k in range(1, slots + 1):
                grid = spec.sm_count * k
                rec = {"config": key, "K": K, "ctas_per_sm": k, "grid": grid,
                       **warm_trace_medians(a, b, cfg, c, grid, reps), "time": time.strftime("%Y-%m-%dT%H:%M:%S")}
                f.write(json.dumps(rec) + "\n")
                f.flush()
                log(f"{key} {k}/SM: CTA {rec['cta_ns'] / 1e3:.1f} us, {rec['cta_cycles'] / (K // cfg.BLOCK_K):.0f} "
                    f"cycles per K step at {rec['cta_cycles'] / rec['cta_ns']:.2f} GHz")


def load_records(path: str | Path) -> list[dict]:
    from wavetune.records import read_probe_records

    return read_probe_records(path, ("config", "K", "ctas_per_sm", "cta_ns", "cta_cycles", "span_ns", "max_ctas_on_an_sm"), "python3 -m validation.sm_side collect --out FILE")


def report_rows(path: str | Path, calibration: str | None = "auto", gpu: str = "h200") -> list[dict]:
    """Per record: measured cycles and time per K step and the clock; the model's SM-shared work of the SM's k CTAs per
    K step (k x its per-CTA SM share: the model counts cycles of the boost clock, so that is its time); and the model's
    whole launch of these 132 x k CTAs as the probe runs it (the closed form with every load an L2 hit, no DRAM bytes
    and no L2 pool limit: its SM side alone, latency, queueing and chip-load slowdown included) against the CTA time."""
    import dataclasses

    import hwspecs
    from wavesim.calibration import load_calibration
    from wavesim.engine import run_uniform_batch
    from wavesim.kernels.gemm import GemmBatch, GemmParams, workload_arrays

    spec = hwspecs.load_gpu(gpu)
    params = load_calibration(calibration, spec.id) or GemmParams.priors()
    # every load of the probe hits the L2: price DRAM waits at the L2 latency
    l2_only = dataclasses.replace(params, dram_latency_cycles=params.l2_latency_cycles)
    rows = []
    for r in load_records(path):
        cfg = LaunchConfig.from_key(r["config"])
        L = -(-r["K"] // cfg.BLOCK_K)
        one = np.array([1.0])
        w = workload_arrays(GemmBatch.build(spec, "bf16", one * cfg.BLOCK_M, one * cfg.BLOCK_N, one * r["K"], [cfg]),
                            l2_only)
        k = r["ctas_per_sm"]
        shared_s = k * float(w["compute_s"][0]) / L
        w.pop("grid")
        launch = run_uniform_batch(np.array([spec.sm_count * k]), **{
            **w, "slots_per_sm": w["slots_per_sm"].astype(np.int64), "dram_bytes": 0.0, "l2_bytes": 0.0})
        measured = r["cta_cycles"] / L
        rows.append({**r, "clock_ghz": r["cta_cycles"] / r["cta_ns"], "step_cycles": measured,
                     "step_ns": r["cta_ns"] / L, "model_shared_cycles": shared_s * spec.boost_clock_hz,
                     "model_shared_ns": shared_s * 1e9, "model_over_measured_time": shared_s * 1e9 / (r["cta_ns"] / L),
                     "model_cta_ns": float(launch.span_s[0]) * 1e9})
    return rows


def full_sm_ratios(rows: list[dict]) -> np.ndarray:
    """Per config, model over measured (time) at its most CTAs per SM."""
    top: dict[str, dict] = {}
    for r in rows:
        if r["config"] not in top or r["ctas_per_sm"] > top[r["config"]]["ctas_per_sm"]:
            top[r["config"]] = r
    return np.array([r["model_over_measured_time"] for r in top.values()])


def main(argv: list[str] | None = None) -> int:
    from validation.probe_cli import collect_or_explain

    ap = argparse.ArgumentParser(prog="python3 -m validation.sm_side", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="trace every config at 1..max CTAs per SM on one tile (needs an NVIDIA GPU)")
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--configs", help="config space names (tuner/space.py), '+'-joined, or a JSONL file (default: the "
                                     "staircase study's seven tiles)")
    c.add_argument("--reps", type=int, default=REPS)
    r = sub.add_parser("report", help="measured cycles per K step beside the model's")
    r.add_argument("file")
    r.add_argument("--calibration", default="auto", help="auto (shipped), a file, or none (priors)")
    r.add_argument("--gpu", default="h200")
    a = ap.parse_args(argv)
    if a.cmd == "collect":
        from tuner.space import load_space

        return collect_or_explain("validation.sm_side", lambda: collect(a.out, load_space(a.configs) if a.configs else None, a.reps))
    try:
        rows = report_rows(a.file, None if a.calibration == "none" else a.calibration, a.gpu)
    except (ValueError, FileNotFoundError) as e:
        print(f"validation.sm_side: {e}", file=sys.stderr)
        return 2
    for x in rows:
        print(f"{x['config']:22s} {x['ctas_per_sm']}/SM (busiest SM {x['max_ctas_on_an_sm']}): CTA {x['cta_ns'] / 1e3:6.1f} us,"
              f" K step {x['step_ns']:5.0f} ns = {x['step_cycles']:5.0f} cycles at {x['clock_ghz']:.2f} GHz; the model's "
              f"SM-shared work of {x['ctas_per_sm']} CTAs {x['model_shared_ns']:5.0f} ns (x{x['model_over_measured_time']:.2f});"
              f" its CTA {x['model_cta_ns'] / 1e3:6.1f} us (x{x['model_cta_ns'] / x['cta_ns']:.2f})")
    full = full_sm_ratios(rows)
    print(f"{len(full)} configs at a full SM (their most CTAs per SM): model SM share over measured (time) median "
          f"{np.median(full):.2f}, p10 {np.percentile(full, 10):.2f}, p90 {np.percentile(full, 90):.2f}")
    cta = np.array([x["model_cta_ns"] / x["cta_ns"] for x in rows])
    print(f"{len(rows)} launches: the model's CTA time (its SM side alone) over measured median {np.median(cta):.2f}, "
          f"p10 {np.percentile(cta, 10):.2f}, p90 {np.percentile(cta, 90):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
