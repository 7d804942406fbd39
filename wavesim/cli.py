"""Subcommands of wavesim: simulate (one launch, readable), sweep (configs x shapes to CSV/Parquet),
calibrate (fit the model's free parameters to measurements)."""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import numpy as np


def _load(args):
    import hwspecs
    from wavesim.calibration import load_calibration

    spec = hwspecs.load_gpu(args.gpu)
    return spec, load_calibration(args.calibration, spec.id)


def _parse_config(text: str):
    from wavetune.config import LaunchConfig

    text = text.strip()
    if text.startswith("{"):
        return LaunchConfig.from_dict(json.loads(text), "--config")
    return LaunchConfig.from_key(text)


# --------------------------------------------------------------------------------------------- simulate
def _cmd_simulate(args: argparse.Namespace) -> int:
    from wavesim.engine import run
    from wavesim.kernels.gemm import ConfigDoesNotFit, GemmModel, alignment_note, config_occupancy
    from wavetune.config import GemmProblem

    spec, params = _load(args)
    problem = GemmProblem(args.M, args.N, args.K, args.dtype)
    cfg = _parse_config(args.config)
    model = GemmModel()
    occ, res = config_occupancy(spec, cfg, args.dtype, args.N, args.K)
    try:
        wl = model.workload(spec, problem, cfg, params)
    except ConfigDoesNotFit as e:
        raise ValueError(f"{e}. Pick a smaller tile or fewer stages (`wavetune specs occupancy` explains the limits)") from None
    desync = "expected (closed form)" if wl.desync_rate > 0 else "none"
    if wl.desync_rate > 0 and (args.engine in ("fast", "reference") or args.jitter_cv > 0):
        # the event engines keep waves in lockstep, or with jitter de-synchronise them themselves
        wl = replace(wl, desync_rate=0.0)
        desync = "from jitter (event engine)" if args.jitter_cv > 0 else "none (event engine: lockstep)"
    t0 = time.perf_counter()
    r = run(wl, engine=args.engine, jitter_cv=args.jitter_cv, seed=args.seed, trace=bool(args.timeline))
    wall = time.perf_counter() - t0
    summary = {
        "gpu": spec.id, "dtype": args.dtype, "M": args.M, "N": args.N, "K": args.K, "config": cfg.to_dict(),
        "calibration": args.calibration or "none (specs and priors)", "engine": r.engine,
        "grid_ctas": r.grid, "k_steps": model.inner_loop(problem, cfg), "ctas_per_sm": r.ctas_per_sm,
        "occupancy_limiter": occ.limiter, "regs_per_thread": res.regs_per_thread, "smem_bytes": res.smem_bytes,
        "resources_source": res.source, "waves": r.waves, "last_wave_fill": round(r.last_wave_fill, 4),
        "sim_ms": r.makespan_s * 1e3, "wave_desync": desync, "tail_utilization": round(r.tail_utilization, 4),
        "tflops": problem.flops / r.makespan_s / 1e12, "solo_frac": float(wl.solo_frac[0]),
        "per_sm_busy_ms": {"min": float(r.per_sm_busy_s.min() * 1e3), "max": float(r.per_sm_busy_s.max() * 1e3)},
        "engine_wall_s": wall,
    }
    if note := alignment_note(args.N, args.K):
        summary["note"] = note
    if args.timeline:
        from wavesim.plots import plot_timeline

        plot_timeline(r, args.timeline, title=f"{spec.name} {problem.M}x{problem.N}x{problem.K} {cfg.key}")
        summary["timeline_png"] = args.timeline
    if args.json:
        print(json.dumps(summary))
        return 0
    print(f"{spec.name}  {args.dtype}  M={args.M} N={args.N} K={args.K}  config {cfg.key}")
    print(f"  grid {r.grid} CTAs x {summary['k_steps']} K steps; {r.ctas_per_sm} CTA(s)/SM "
          f"(limited by {occ.limiter}: {res.regs_per_thread} regs/thread, {res.smem_bytes} B smem, from {res.source})")
    print(f"  waves {r.waves} (last wave {r.last_wave_fill:.0%} full), tail utilisation {r.tail_utilization:.1%}")
    print(f"  simulated time {r.makespan_s * 1e3:.4f} ms = {summary['tflops']:.1f} TFLOP/s  "
          f"[{r.engine} engine, {summary['calibration']}; wave de-synchronisation: {desync}]")
    if args.timeline:
        print(f"  timeline: {args.timeline}")
    if "note" in summary:
        print(f"  note: {summary['note']}")
    return 0


# --------------------------------------------------------------------------------------------- sweep
def sweep_rows(spec, params, configs, shapes, dtype: str, progress: bool = False):
    """Simulated time of every (config, shape): one vectorised pass per config. Yields row dicts."""
    from tqdm import tqdm

    from wavesim.kernels.gemm import GemmBatch, alignment_note, config_occupancy, simulate_batch

    arr = np.array([(p.M, p.N, p.K) for p in shapes], dtype=np.float64)
    notes = [alignment_note(p.N, p.K) for p in shapes]
    for cfg in tqdm(configs, desc="configs", unit="cfg", disable=not progress, file=sys.stderr):
        base = {"gpu": spec.id, "dtype": dtype, **{k: v for k, v in cfg.to_dict().items()}}
        # a shape whose N or K is not a multiple of 16 gets another kernel, with its own occupancy
        occ = [config_occupancy(spec, cfg, dtype, p.N, p.K)[0] for p in shapes]
        fits = np.array([o.ctas_per_sm > 0 for o in occ], dtype=bool)
        sim = {}
        if fits.any():
            b = GemmBatch.build(spec, dtype, arr[fits, 0], arr[fits, 1], arr[fits, 2], [cfg] * int(fits.sum()))
            r = simulate_batch(b, params)
            sim = dict(zip(np.flatnonzero(fits).tolist(), zip(r.waves.tolist(), (r.makespan_s * 1e3).tolist(),
                                                              r.tail_utilization.tolist())))
        for i, (p, o, note) in enumerate(zip(shapes, occ, notes)):
            if i not in sim:
                yield {**base, "M": p.M, "N": p.N, "K": p.K, "ctas_per_sm": 0, "waves": None, "sim_ms": None,
                       "sim_error": o.reason, "sim_note": note}
                continue
            w, t, u = sim[i]
            yield {**base, "M": p.M, "N": p.N, "K": p.K, "ctas_per_sm": o.ctas_per_sm, "waves": int(w),
                   "sim_ms": t, "tail_utilization": u, "sim_error": None, "sim_note": note}


def _cmd_sweep(args: argparse.Namespace) -> int:
    from tuner.space import load_space
    from validation.shapesets import load_shapes

    spec, params = _load(args)
    configs = load_space(args.configs)
    shapes = load_shapes(args.shapes, args.dtype)
    t0 = time.perf_counter()
    rows = list(sweep_rows(spec, params, configs, shapes, args.dtype, progress=not args.quiet))
    dt = time.perf_counter() - t0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix == ".parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise ValueError("writing Parquet needs pyarrow (pip install pyarrow, or the dev extra); "
                             "or give an --out ending in .csv") from None
        pq.write_table(pa.Table.from_pylist(rows), out)
    else:
        with out.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]) + (["sim_error"] if "sim_error" not in rows[0] else []),
                               extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
    if args.staircase:
        _staircase_png(args.staircase, rows, spec)
    print(f"{len(rows)} records ({len(configs)} configs x {len(shapes)} shapes) in {dt:.2f} s "
          f"= {len(rows) / dt:,.0f} records/s -> {out}", file=sys.stderr)
    return 0


def _staircase_png(path: str, rows: list[dict], spec) -> None:
    """Latency vs M per config (for shape sets that vary M at fixed N, K)."""
    from wavesim.plots import plot_staircase

    by: dict[str, list[tuple[int, float]]] = {}
    for r in rows:
        if r["sim_ms"] is not None:
            key = f"{r['BLOCK_M']}x{r['BLOCK_N']}x{r['BLOCK_K']} w{r['num_warps']} s{r['num_stages']} ({r['ctas_per_sm']}/SM)"
            by.setdefault(key, []).append((r["M"], r["sim_ms"]))
    ms = sorted({m for v in by.values() for m, _ in v})
    series = {k: [dict(v).get(m, np.nan) for m in ms] for k, v in list(by.items())[:12]}
    plot_staircase(ms, series, path, xlabel="M", ylabel="simulated ms", title=f"{spec.name}: latency vs M")


# --------------------------------------------------------------------------------------------- calibrate
def _parse_nk(values: Sequence[str], flag: str) -> set[tuple[int, int]]:
    out = set()
    for v in values:
        parts = v.lower().split("x")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise SystemExit(f"{flag}: {v!r} is not NxK (two positive integers, e.g. 4096x4096)")
        out.add((int(parts[0]), int(parts[1])))
    return out


def _cmd_calibrate(args: argparse.Namespace) -> int:
    import hwspecs
    from validation.measurements import dedupe_latest, load_measurements
    from wavesim.calibration import build_dataset, dataset_hash, desync_start, fit, save_calibration, simulate_ms
    from wavesim.kernels.gemm import GemmParams

    if args.desync_nk and not args.desync_sweeps:
        raise SystemExit("--desync-nk picks layers of --desync-sweeps: give the sweep files too, or leave it out")
    spec = hwspecs.load_gpu(args.gpu)
    ms = dedupe_latest(load_measurements(args.measurements, gpu=spec.id))
    holdout = _parse_nk(args.holdout_nk or [], "--holdout-nk")
    ds = build_dataset(spec, ms, args.dtype, keep=lambda s: (s[1], s[2]) not in holdout)
    start, desync = GemmParams.priors(), None
    if args.desync_sweeps:
        passes = [dedupe_latest(load_measurements(f.split(","), gpu=spec.id)) for f in args.desync_sweeps]
        layers = _parse_nk(args.desync_nk, "--desync-nk") if args.desync_nk else None
        start, desync = desync_start(spec, passes, start, args.dtype, layers)
    params, report = fit(spec, ds, start=start, temperature=args.temperature)
    if desync is not None:
        report["desync_start"] = {"files": [str(f) for f in args.desync_sweeps], "layers": args.desync_nk, **desync}
    err = np.abs(simulate_ms(ds, params) / ds.ms - 1)
    report.update(measurement_files=[str(p) for p in args.measurements], data_sha256_16=dataset_hash(args.measurements),
                  holdout_nk=sorted(f"{n}x{k}" for n, k in holdout),
                  train_median_abs_error=float(np.median(err)))
    save_calibration(args.out, spec.id, params, report, args.dtype)
    print(f"calibrated {spec.id} on {report['records']} records / {report['shapes']} shapes in "
          f"{report['seconds']} s; median |error| {report['train_median_abs_error']:.1%} -> {args.out}", file=sys.stderr)
    for k, v in params.to_dict().items():
        print(f"  {k:28s} {v:.6g}", file=sys.stderr)
    return 0


def register(sub) -> None:
    p = sub.add_parser("simulate", help="simulate one GEMM launch and print a readable summary")
    p.add_argument("--gpu", required=True)
    p.add_argument("--M", type=int, required=True)
    p.add_argument("--N", type=int, required=True)
    p.add_argument("--K", type=int, required=True)
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--config", required=True, help="key like 128x128x64_g8_w4_s3, or a JSON config object")
    p.add_argument("--engine", default="auto", choices=["auto", "reference", "fast", "closed_form"])
    p.add_argument("--jitter-cv", type=float, default=0.0, help="per-CTA time jitter (coefficient of variation)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--calibration", default=None, help="'auto', a calibration file, or omitted for specs alone")
    p.add_argument("--timeline", default=None, help="write a PNG timeline of CTAs on SMs")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_simulate)

    p = sub.add_parser("sweep", help="simulate configs x shapes into a CSV or Parquet file")
    p.add_argument("--gpu", required=True)
    p.add_argument("--configs", default="broad", help="named spaces joined by '+' or a JSONL file of configs")
    p.add_argument("--shapes", default="llm", help="named sets joined by '+', a JSONL file, or MxNxK list")
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--calibration", default=None)
    p.add_argument("--out", required=True, help="output file: .csv or .parquet")
    p.add_argument("--staircase", default=None, help="also write a latency-vs-M PNG (first 12 configs)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_sweep)

    p = sub.add_parser("calibrate", help="fit the simulator's free parameters to measurements")
    p.add_argument("--gpu", required=True)
    p.add_argument("--measurements", nargs="+", required=True, help="measurement JSONL files (validation/measurements.py)")
    p.add_argument("--out", required=True, help="calibration JSON to write")
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--holdout-nk", nargs="*", default=None, metavar="NxK",
                   help="leave out every shape with these (N, K), e.g. 4096x14336, to validate on them")
    p.add_argument("--temperature", type=float, default=0.15,
                   help="weight of slower configs: exp(-log(t/t_best)/temperature)")
    p.add_argument("--desync-sweeps", nargs="+", default=None, metavar="PASS.jsonl",
                   help="measure the start's de-synchronisation rates on the M sweeps of these files (one per "
                        "measured pass; a pass split over files: joined by ',') with the model as it is, instead of the priors': for judging a change to the "
                        "model's form with a calibration whose records hold no sweep (--holdout-nk)")
    p.add_argument("--desync-nk", nargs="+", default=None, metavar="NxK",
                   help="use only these layers' sweeps of --desync-sweeps (files that hold several layers' sweeps, "
                        "e.g. validation/data/h200/cleanflush/six_cleanflush_pass*)")
    p.set_defaults(func=_cmd_calibrate)
