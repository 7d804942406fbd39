"""`wavetune tune`, `wavetune select`, `wavetune export` and `wavetune tune-eval` (see tuner/README.md)."""

from __future__ import annotations

import json
import sys
import time


def _parse_problem(obj: dict, table, lineno: int, source: str):
    from wavetune.config import GemmProblem

    where = f"{source}:{lineno}"
    kernel = obj.get("kernel", table.kernel)
    if kernel != table.kernel:
        raise ValueError(f"{where}: kernel {kernel!r} but the table is for {table.kernel!r}")
    gpu = obj.get("gpu", table.gpu)
    if gpu != table.gpu:
        raise ValueError(f"{where}: gpu {gpu!r} but the table is for {table.gpu!r}")
    if "config" in obj:
        raise ValueError(f"{where}: a select input has no 'config' (that is what select adds)")
    p = GemmProblem.from_record({"dtype": table.dtype, **obj}, where)
    if p.dtype != table.dtype:
        raise ValueError(f"{where}: dtype {p.dtype!r} but the table is for {table.dtype!r}")
    return p


def cmd_tune(args) -> int:
    import hwspecs
    from validation.shapesets import load_shapes

    from .sampling import Domain
    from .space import load_space
    from .tune import build_table, make_source

    spec = hwspecs.load_gpu(args.gpu)
    configs = load_space(args.configs)
    if (args.source is None) == (not args.measurements):
        raise ValueError("give exactly one of --source sim or --measurements FILE...")
    shapes = load_shapes(args.shapes, args.dtype) if args.shapes else None
    kind = "measurements" if args.measurements else args.source
    src = make_source(kind, spec, gpu_id=spec.id, dtype=args.dtype, calibration=args.calibration,
                      measurements=args.measurements, prior=not args.no_prior, problems=shapes)
    domain = Domain.of_problems(shapes, args.dtype) if (shapes and kind == "sim") else None
    table = build_table(configs, src, spec, gpu_id=spec.id, kernel=args.kernel, dtype=args.dtype, domain=domain,
                        form=args.form, fallback=not args.no_fallback)
    table.save(args.out)
    st = table.stats
    fb = " (+ simulator-only fallback for unmeasured layers)" if table.fallback_macros else ""
    print(f"wrote {args.out}: {len(table.macros)} macro configs{fb}, {table.space_size} candidates "
          f"({len(table.unfit)} do not fit), {st['points_sampled']} points sampled "
          f"({st['fraction_sampled']:.2e} of exhaustive over the domain), {st['tune_s']:.1f} s", file=sys.stderr)
    return 0


def cmd_select(args) -> int:
    from wavesim.kernels.gemm import alignment_note
    from wavetune.records import BadLine, dumps, iter_jsonl, open_in, open_out

    from .table import DualTable

    table = DualTable.load(args.table)
    src = args.input or "<stdin>"
    n_bad = 0
    with open_in(args.input) as fin, open_out(args.output) as fout:
        for lineno, obj in iter_jsonl(fin, src):
            if isinstance(obj, BadLine):
                fout.write(dumps({"line": lineno, "error": obj.error}) + "\n")
                n_bad += 1
                continue
            try:
                p = _parse_problem(obj, table, lineno, src)
                t0 = time.perf_counter_ns()
                cfg = table.select_mnk(p.M, p.N, p.K)
                dt = (time.perf_counter_ns() - t0) / 1e3
            except ValueError as e:
                fout.write(dumps({**obj, "line": lineno, "error": str(e)}) + "\n")
                n_bad += 1
                continue
            note = alignment_note(p.N, p.K)
            fout.write(dumps({**obj, "config": cfg.to_dict(), "decision_us": round(dt, 3),
                              **({"note": note} if note else {})}) + "\n")
    if n_bad:
        print(f"wavetune select: {n_bad} line(s) could not be decided (error records written in place)", file=sys.stderr)
    return 1 if (n_bad and args.strict) else 0


def cmd_export(args) -> int:
    from validation.shapesets import load_shapes

    from .export import export_vllm
    from .table import DualTable

    table = DualTable.load(args.table)
    if args.format != "vllm":
        raise ValueError(f"export format {args.format!r}: only 'vllm' (also read by SGLang)")
    shapes = load_shapes(args.shapes, table.dtype)
    paths = export_vllm(table, shapes, args.out, device_name=args.device_name, m_values=args.m_values)
    for p in paths:
        print(p)
    return 0


def cmd_eval(args) -> int:
    from .evaluate import EvalContext, evaluate, format_rows

    ctx = EvalContext.load(args.measurements, args.gpu, args.configs)
    options = {"wavetune-meas": {"extra": tuple(args.extra)}} if args.extra else None
    rows = evaluate(ctx, args.strategies.split(","), options=options)
    print(json.dumps(rows, indent=1) if args.json else format_rows(rows))
    return 0


def register(sub) -> None:
    from .baselines import STRATEGIES
    from .model import FORMS

    p = sub.add_parser("tune", help="fit a WaveTune dual table from the simulator or from measurements")
    p.add_argument("--gpu", required=True, help="GPU id (wavetune specs list)")
    p.add_argument("--kernel", default="gemm", choices=["gemm"])
    p.add_argument("--configs", default="broad+wave-study+grouping",
                   help="CONFIGS.jsonl (one config object per line: exactly these candidates) or a named space")
    p.add_argument("--source", choices=["sim"], default=None, help="sample the simulator")
    p.add_argument("--measurements", nargs="+", default=None, metavar="FILE", help="sample these measurement files")
    p.add_argument("--shapes", default=None,
                   help="sim: the shape domain to sample (default: a generic N x K grid); measurements: "
                        "restrict the fit to these measured shapes (named set, JSONL or MxNxK list)")
    p.add_argument("--dtype", default="bf16")
    p.add_argument("--calibration", default="auto",
                   help="simulator parameters: auto (default: the GPU's shipped calibration, "
                        "wavesim/data/calibration/, or specs and priors where none ships), none, or a JSON file")
    p.add_argument("--form", default="per-wave", choices=FORMS, help="WaveModel form")
    p.add_argument("--no-prior", action="store_true", help="measurements only, no simulator prior (not advised)")
    p.add_argument("--no-fallback", action="store_true",
                   help="with --measurements: serve unmeasured (N, K) layers from the measured fit too, instead of "
                        "a simulator-only fallback fitted alongside (not advised: it extrapolates worse)")
    p.add_argument("--out", required=True, help="TABLE.json to write")
    p.set_defaults(func=cmd_tune)

    p = sub.add_parser("select", help="pick a config per problem from a dual table (JSONL in, JSONL out)")
    p.add_argument("--table", required=True)
    p.add_argument("--input", default=None, help="PROBLEMS.jsonl (default stdin)")
    p.add_argument("--output", default=None, help="OUT.jsonl (default stdout)")
    p.add_argument("--strict", action="store_true", help="exit 1 if any line had an error (as `wavetune predict`)")
    p.set_defaults(func=cmd_select)

    p = sub.add_parser("export", help="export a dual table as per-(N, K) JSON configs for vLLM / SGLang")
    p.add_argument("--table", required=True)
    p.add_argument("--format", default="vllm", choices=["vllm"])
    p.add_argument("--shapes", required=True, help="shapes whose (N, K) pairs to export (named set, JSONL, MxNxK list)")
    p.add_argument("--m-values", default=None, type=lambda s: [int(x) for x in s.split(",")],
                   help="comma list of M keys (default: vLLM's batch sizes 1..4096 plus the shapes' M)")
    p.add_argument("--device-name", default=None, help="device name in the file name (default from the GPU spec)")
    p.add_argument("--out", required=True, help="output directory")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("tune-eval", help="k-fold-by-layer regret of WaveTune tables and baselines on measurements")
    p.add_argument("--measurements", nargs="+", default=["validation/data/h200/gemm/llm.jsonl"])
    p.add_argument("--gpu", default="h200")
    p.add_argument("--configs", default="broad+wave-study+grouping")
    p.add_argument("--strategies", default=",".join(STRATEGIES), help=f"comma list of {sorted(STRATEGIES)}")
    p.add_argument("--extra", nargs="+", default=None, metavar="FILE",
                   help="more measurement files for wavetune-meas to train on (held-out layers' (N, K) left out)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_eval)
