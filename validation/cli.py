"""Subcommands of the validation package: profile (needs a GPU, or the interpreter for tests); validate
and staircase (offline: recorded measurements against the simulator and a tuner table)."""

from __future__ import annotations

import argparse

from validation.profiler import L2_FLUSHES


def _profile(args: argparse.Namespace) -> int:
    from tuner.space import load_space
    from validation.profiler import ProfileOptions, run_profile, unstable_records
    from validation.shapesets import load_shapes

    if args.kernel != "gemm":
        raise ValueError(f"--kernel {args.kernel!r}: only 'gemm' can be profiled so far")
    if args.retime_unstable and not (args.shapes or args.configs):
        shapes, configs = unstable_records(args.out, args.dtype)
    elif not (args.shapes and args.configs):
        raise ValueError("--shapes and --configs are needed (only --retime-unstable alone takes them from --out)")
    else:
        shapes, configs = load_shapes(args.shapes, args.dtype), load_space(args.configs)
    if args.shard:
        i, n = (int(x) for x in args.shard.split("/"))
        if not 0 <= i < n:
            raise ValueError(f"--shard {args.shard}: expected I/N with 0 <= I < N")
        shapes = shapes[i::n]
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise ValueError("no CUDA GPU is visible: profiling needs one (use --device cpu with "
                             "TRITON_INTERPRET=1 only to test the profiler itself)")
    opts = ProfileOptions(gpu=args.gpu, dtype=args.dtype, budget_s=args.budget_s, max_reps=args.max_reps,
                          target_ms=args.target_ms, with_cublas=not args.no_cublas,
                          retry_failed=args.retry_failed, retime_unstable=args.retime_unstable,
                          device=args.device, compile_workers=args.jobs, seed=args.order_seed,
                          l2_flush=args.l2_flush)
    run_profile(shapes, configs, args.out, opts)
    return 0


def _validate(args: argparse.Namespace) -> int:
    import json
    import sys

    from validation.report import must_show_checks, write_report
    from validation.suite import validate

    cal = None if args.calibration in (None, "none") else args.calibration
    lo, hi = (int(x) for x in args.m_range.split(":"))
    log = (lambda s: None) if args.quiet else (lambda s: print(s, file=sys.stderr))
    result = validate(args.gpu, args.measurements, calibration=cal, table=args.table, folds=args.folds,
                      m_range=(lo, hi), dtype=args.dtype, min_configs=args.min_configs, log=log, repeat=args.repeat)
    result["command"] = " ".join(
        ["wavetune validate --gpu", args.gpu, "--measurements", *args.measurements, "--calibration",
         str(args.calibration), *(["--table", args.table] if args.table else []),
         *(["--repeat", *args.repeat] if args.repeat else []),
         *(["--dtype", args.dtype] if args.dtype != "bf16" else []), "--folds", str(args.folds),
         "--m-range", args.m_range, "--report", args.report])
    md = write_report(result, args.report)
    a = result["aggregates"]
    brief = {k: {v: {m: a[k][v].get(m) for m in ("shapes", "regret_geomean", "regret_worst", "tau_median",
                                                   "top1_rate", "top5_rate", "cublas_ratio_geomean")}
                 for v in a[k] if isinstance(a[k][v], dict)} for k in a}
    if args.json:
        print(json.dumps({"report": str(md), "aggregates": brief, "must_show": must_show_checks(result)}, indent=1))
    else:
        for sub_name in ("all", "M16-8192"):
            for v, x in brief[sub_name].items():
                if x.get("shapes") and v in ("table", "repeat"):
                    print(f"{sub_name:9s} {v:10s} shapes {x['shapes']:3d}  regret geomean {x['regret_geomean']:.4f} "
                          f"worst {x['regret_worst']:.3f}")
                elif x.get("shapes"):
                    print(f"{sub_name:9s} {v:10s} shapes {x['shapes']:3d}  regret geomean {x['regret_geomean']:.4f} "
                          f"worst {x['regret_worst']:.3f}  tau {x['tau_median'] if x['tau_median'] is not None else float('nan'):.3f}"
                          f"  top1 {x['top1_rate'] if x['top1_rate'] is not None else float('nan'):.0%}")
        print(f"report: {md}")
    return 0


def _staircase(args: argparse.Namespace) -> int:
    import json

    from validation.staircase import desync_fit_text, run_staircase

    cal = None if args.calibration in (None, "none") else args.calibration
    nk = None
    if args.nk:
        try:
            nk = tuple(int(x) for x in args.nk.lower().split("x"))
        except ValueError:
            nk = ()
        if len(nk) != 2:
            raise ValueError(f"--nk {args.nk!r}: expected NxK, e.g. 4096x4096")
    st = run_staircase(args.gpu, args.measurements, args.out, calibration=cal, dtype=args.dtype,
                       repeat_paths=args.repeat or (), more_pass_paths=args.more_passes or (), nk=nk)
    if args.json:
        print(json.dumps({"out": args.out, "summary": st["summary"], "calibration": st["calibration"]}, indent=1))
    else:
        for c in st["configs"]:
            k = c["calibrated"]
            print(f"{c['config']:22s} {c['ctas_per_sm']} CTA/SM  measured steps {c['measured_steps_M']}  "
                  f"missed {k['missed_M']}  spurious {k['spurious_M']}  err {k['median_err_scaled']:.1%}")
        for name, s in st["summary"].items():
            print(f"{name}: {s['hit']}/{s['measured_steps']} steps predicted, {s['spurious']} spurious, worst median "
                  f"error {s['median_err_scaled_worst_config']:.1%}")
            if "repeat" in s:
                r = s["repeat"]
                print(f"  against two passes: {r['reproducible_steps'] - r['missed_reproducible']}/"
                      f"{r['reproducible_steps']} reproducible steps predicted, {r['spurious_in_neither_pass']} "
                      f"predicted jumps in neither pass (the hardware: {r['hardware_one_pass_only']} steps in one "
                      f"pass only)")
                ja, ref, sp = r["jump_agreement"], r["group_m_reference"], r["single_pass"]
                print(f"  against one pass (mean over {sp['passes']}): the simulator {sp['simulator']['spurious']:g} "
                      f"spurious + {sp['simulator']['missed']:g} missed; another pass as the prediction "
                      f"{sp['other_pass']['spurious']:.3g} + {sp['other_pass']['missed']:.3g} (by pair: "
                      + ", ".join(f"{k}: {v}" for k, v in sp["pairs"].items()) + ")")
                if sp["passes"] > 2:
                    mo = sp["mean_of_other_passes"]
                    print(f"  the mean of the other {sp['passes'] - 1} passes as the prediction: "
                          f"{mo['spurious']:g} spurious + {mo['missed']:g} missed")
                    print(f"  over all {sp['passes']} passes: {sp['steps_in_every_pass'] - sp['missed_of_them']}/"
                          f"{sp['steps_in_every_pass']} steps every pass shows predicted, "
                          f"{sp['predicted_in_no_pass']} predicted jumps in no pass")
                if ja["wave_boundaries"]:
                    print(f"  jump size at {ja['wave_boundaries']} wave boundaries: simulated vs measured "
                          f"{ja['simulated_vs_measured']['median']:.1%} median, the hardware's two passes "
                          f"{ja['hardware_pass_to_pass']['median']:.1%}")
                if ref:
                    print(f"  yardstick, a GROUP_M sibling's measured curve as the prediction: "
                          f"{ref['sibling_spurious_per_config']:.2f} jumps in neither pass / "
                          f"{ref['sibling_missed_per_config']:.2f} missed per config; the simulator on the same "
                          f"{ref['configs']} configs {ref['simulator_spurious_per_config']:.2f} / "
                          f"{ref['simulator_missed_per_config']:.2f}")
        for fit in st.get("desync_fit") or []:
            print(f"wave de-synchronisation at {fit['occupancy']}: the simulator uses {desync_fit_text(fit, 'model_')}, "
                  f"this sweep's steps imply {desync_fit_text(fit)} ({fit['points']} later wave boundaries, "
                  f"{fit['sweeps']} configs)")
        print(f"plots and staircase.json in {args.out}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("profile", help="measure Triton GEMM configs on the local GPU into a JSONL file",
                       description="Measure every (shape, config) missing from --out; resumes after a kill.")
    p.add_argument("--kernel", default="gemm")
    p.add_argument("--gpu", required=True, help="hwspecs id written into each record, e.g. h200")
    p.add_argument("--shapes", default=None,
                   help="MxNxK list (comma-separated), a JSONL file of {M,N,K}, or named sets joined by '+': llm, m-sweep, k-sweep")
    p.add_argument("--configs", default=None,
                   help="JSONL file of config objects, or named spaces joined by '+': broad, wave-study, dense-study, grouping, default")
    p.add_argument("--out", required=True, help="JSONL file; records are appended, existing ones are skipped")
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--budget-s", type=float, default=None, help="stop cleanly after this many seconds")
    p.add_argument("--target-ms", type=float, default=25.0, help="kernel time to spend timing each record")
    p.add_argument("--max-reps", type=int, default=50)
    p.add_argument("--jobs", type=int, default=0, help="parallel compile processes (0: one per core, at most 16)")
    p.add_argument("--no-cublas", action="store_true", help="do not time torch.matmul for each shape")
    p.add_argument("--retry-failed", action="store_true", help="measure again the records whose status is not ok")
    p.add_argument("--retime-unstable", action="store_true",
                   help="time again the ok records whose repeats spread more than validation.profiler.UNSTABLE_SPREAD "
                        "(without --shapes/--configs: the shapes and configs of those records of --out)")
    p.add_argument("--shard", default=None, help="I/N: measure only shapes I, I+N, I+2N ... (one process per GPU)")
    p.add_argument("--order-seed", type=int, default=0,
                   help="seed of the measurement order (shapes, and configs within a shape, are shuffled by it): give "
                        "each pass of a sweep its own, so that the clock state a launch inherits from the launches "
                        "before it differs between passes instead of repeating as a 'reproducible' step")
    p.add_argument("--l2-flush", default="write", choices=L2_FLUSHES,
                   help="how the L2 is emptied before each timed launch: write (zero a 512 MiB buffer, as Triton's "
                        "do_bench does; the committed records but the cleanflush ones) leaves dirty lines that slow "
                        "short launches by 4-7 us on the H200; read evicts with clean lines "
                        "(validation/scripts/flush_probe.py). Recorded as l2_flush when not write")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                   help="cpu: run under TRITON_INTERPRET=1 (tests of the profiler only)")
    p.set_defaults(func=_profile)

    p = sub.add_parser("validate", help="score the simulator (and a tuner table) against recorded measurements",
                       description="Per shape: regret of the simulated optimum, Kendall tau, top-k, latency error, "
                                   "speedup over the default config, ratio to cuBLAS; staircase agreement on the M "
                                   "sweep; a markdown report with PNG plots and summary.json. No GPU needed.")
    p.add_argument("--gpu", required=True)
    p.add_argument("--measurements", nargs="+", required=True, help="measurement JSONL files")
    p.add_argument("--calibration", default="cv",
                   help="cv (k-fold by (N, K) layer, refit per fold; default), auto (shipped), a file, or none")
    p.add_argument("--table", default=None, help="a tuner DualTable JSON to score as well")
    p.add_argument("--repeat", nargs="+", default=None,
                   help="another measured pass of the same shapes and configs: its picks, scored on --measurements, "
                        "are the measurement-noise floor of the regret (the 'repeat' rows)")
    p.add_argument("--report", required=True, help="output directory for REPORT.md, summary.json and PNGs")
    p.add_argument("--folds", type=int, default=4)
    p.add_argument("--m-range", default="1:16384", help="LO:HI, the M of the shapes to score")
    p.add_argument("--min-configs", type=int, default=20, help="score shapes with at least this many measured configs")
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--json", action="store_true", help="print the aggregates and checks as JSON")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=_validate)

    p = sub.add_parser("staircase", help="latency-vs-M staircases: measured steps against the simulator's",
                       description="On an M sweep: per config CTAs/SM, measured and predicted steps (>15%% jumps), "
                                   "missed and spurious ones, median error after one scale per config; PNG plots.")
    p.add_argument("--gpu", required=True)
    p.add_argument("--measurements", nargs="+", required=True, help="JSONL files holding an M sweep")
    p.add_argument("--repeat", nargs="+", default=None,
                   help="JSONL files with a second pass of the same sweep: reproducibility figures")
    p.add_argument("--more-passes", nargs="+", default=None, metavar="FILE",
                   help="further passes of the sweep, one file each (with --repeat): the one-pass yardstick "
                        "averages over all passes")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--calibration", default="auto", help="auto (shipped), a file, or none")
    p.add_argument("--nk", default=None, metavar="NxK",
                   help="the layer to analyse where the files sweep several (default: the first they hold)")
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_staircase)


if __name__ == "__main__":  # `python3 -m validation.cli profile ...`: the profiler alone, for GPU machines
    import sys

    _parser = argparse.ArgumentParser(prog="python3 -m validation.cli")
    register(_parser.add_subparsers(dest="command", required=True))
    _args = _parser.parse_args()
    sys.exit(_args.func(_args))
