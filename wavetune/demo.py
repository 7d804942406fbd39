"""`wavetune demo`: the main job end to end on an embedded default (the H200, bf16, the LLM layer shapes).

1. the GPU's sourced spec and the occupancy of the config space (real resource numbers);
2. a WaveTune dual table fitted on the simulator alone (specs and priors by default, so that its scores on
   the shipped measurements are out of sample: the shipped calibration was fitted on them. On held-out LLM
   layers a table on the priors scores 1.032, one on a simulator calibrated on the other layers 1.024,
   tuner/README.md);
3. a config per LLM shape chosen from the table in microseconds;
4. where measurements of that GPU ship (validation/data/<gpu>/), the measured time of each choice against
   the measured best, the default config and cuBLAS: what the choice is worth on the real card.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "validation" / "data"


def _measured(gpu: str, dtype: str):
    """{(M, N, K): {config key: ms}} and {(M, N, K): cuBLAS ms} from the shipped files, if any."""
    from validation.measurements import dedupe_latest, load_measurements

    files = sorted((DATA / gpu / "gemm").glob("*.jsonl")) + sorted((DATA / gpu / "holdout").glob("*.jsonl"))
    triton: dict = {}
    cublas: dict = {}
    if not files:
        return triton, cublas
    for m in dedupe_latest(load_measurements(files, gpu=gpu, backend=None)):
        if not m.ok or m.problem.dtype != dtype:
            continue
        s = (m.problem.M, m.problem.N, m.problem.K)
        if m.backend == "cublas":
            cublas[s] = m.ms
        else:
            triton.setdefault(s, {})[m.config.key] = m.ms
    return triton, cublas


def run_demo(gpu: str = "h200", dtype: str = "bf16", calibration: str = "none", configs: str = "broad+wave-study+grouping",
             shapes: str = "llm", out=print) -> dict:
    import hwspecs
    from tuner.space import DEFAULT_CONFIG, load_space
    from tuner.tune import build_table, make_source
    from validation.shapesets import load_shapes
    from wavesim.calibration import load_calibration
    from wavesim.kernels.gemm import config_occupancy

    spec = hwspecs.load_gpu(gpu)
    space = load_space(configs)
    occ = [config_occupancy(spec, c, dtype)[0].ctas_per_sm for c in space]
    cal = calibration if load_calibration(calibration, spec.id) is not None else "none"
    out(f"GPU {spec.name} ({spec.id}): {spec.sm_count} SMs at {spec.boost_clock_hz / 1e6:.0f} MHz, "
        f"L2 {spec.l2_bytes / 2**20:.0f} MiB, DRAM {spec.dram_bandwidth_bytes_per_s / 1e12:.2f} TB/s, "
        f"{dtype} tensor peak {spec.peak_tensor_flops(dtype) / 1e12:.0f} TFLOP/s "
        f"({len(spec.sources)} values, each with its source: wavetune specs show {spec.id})")
    out(f"config space: {len(space)} Triton GEMM configs; CTAs/SM from compiled registers and shared memory: "
        + ", ".join(f"{k}/SM x{occ.count(k)}" for k in sorted(set(occ))) + " (0 = cannot launch)")

    t0 = time.perf_counter()
    table = build_table(space, make_source("sim", spec, gpu_id=spec.id, dtype=dtype, calibration=cal), spec,
                        gpu_id=spec.id, dtype=dtype)
    t_tune = time.perf_counter() - t0
    out(f"dual table fitted on the simulator ({'calibration ' + cal if cal != 'none' else 'specs and priors only'}) "
        f"in {t_tune:.1f} s")

    triton, cublas = _measured(spec.id, dtype)
    problems = load_shapes(shapes, dtype)
    rows, regrets, vs_default, vs_cublas, decisions = [], [], [], [], []
    for p in problems:
        t = time.perf_counter_ns()
        cfg = table.select(p)
        decisions.append((time.perf_counter_ns() - t) / 1e3)
        meas = triton.get((p.M, p.N, p.K), {})
        row = {"M": p.M, "N": p.N, "K": p.K, "config": cfg.key}
        if cfg.key in meas:
            best = min(meas.values())
            row["regret"] = meas[cfg.key] / best
            regrets.append(row["regret"])
            if DEFAULT_CONFIG.key in meas:
                row["default_x"] = meas[DEFAULT_CONFIG.key] / meas[cfg.key]
                vs_default.append(row["default_x"])
            if (p.M, p.N, p.K) in cublas:
                row["cublas_x"] = meas[cfg.key] / cublas[(p.M, p.N, p.K)]
                vs_cublas.append(row["cublas_x"])
        rows.append(row)

    out("")
    out(f"{'M':>6} {'N':>6} {'K':>6}  {'chosen config':24s} {'measured/best':>13} {'default/chosen':>14} {'chosen/cuBLAS':>13}")
    for r in rows:
        f = lambda k: f"{r[k]:.3f}" if k in r else "-"  # noqa: E731
        out(f"{r['M']:>6} {r['N']:>6} {r['K']:>6}  {r['config']:24s} {f('regret'):>13} {f('default_x'):>14} {f('cublas_x'):>13}")
    gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")  # noqa: E731
    summary = {"shapes": len(rows), "measured_shapes": len(regrets), "regret_geomean": gm(regrets),
               "regret_worst": max(regrets, default=float("nan")), "speedup_vs_default_geomean": gm(vs_default),
               "vs_cublas_geomean": gm(vs_cublas), "decision_us_median": statistics.median(decisions),
               "tune_s": t_tune}
    out("")
    out(f"median decision {summary['decision_us_median']:.1f} us per shape (no simulator call, no benchmarking)")
    if regrets:
        out(f"on the {len(regrets)} shapes measured on a real {spec.name}: measured time of the choice / measured best "
            f"= {summary['regret_geomean']:.3f} geomean (worst {summary['regret_worst']:.2f}); "
            f"{summary['speedup_vs_default_geomean']:.2f}x faster than the default config "
            f"{DEFAULT_CONFIG.key}; {summary['vs_cublas_geomean']:.2f}x cuBLAS time")
        out("(the table never saw these shapes: it is fitted on a generic domain of N and K; the shipped calibration "
            "was fitted on them, so with --calibration auto they are in-sample)" if cal == "none" else
            "(these shapes were also used to calibrate the shipped simulator; `wavetune validate` scores held-out ones)")
    else:
        out(f"no measurements of {spec.id} ship with wavetune: choices are the simulator's (see `wavetune profile`)")
    return summary


def _cmd_demo(args: argparse.Namespace) -> int:
    run_demo(args.gpu, args.dtype, args.calibration, args.configs, args.shapes)
    return 0


def register(sub) -> None:
    p = sub.add_parser("demo", help="the main job on a default: choose configs for LLM GEMMs on the H200 and "
                                    "check them against the shipped H200 measurements")
    p.add_argument("--gpu", default="h200")
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--calibration", default="none",
                   help="the simulator the table is fitted on: none (specs and priors: the scores stay out of "
                        "sample), auto (the shipped calibration, fitted on the scored shapes), a file")
    p.add_argument("--configs", default="broad+wave-study+grouping")
    p.add_argument("--shapes", default="llm")
    p.set_defaults(func=_cmd_demo)
