"""Subcommands of the validation package: profile (needs a GPU, or the interpreter for tests)."""

from __future__ import annotations

import argparse


def _profile(args: argparse.Namespace) -> int:
    from tuner.space import load_space
    from validation.profiler import ProfileOptions, run_profile
    from validation.shapesets import load_shapes

    if args.kernel != "gemm":
        raise ValueError(f"--kernel {args.kernel!r}: only 'gemm' can be profiled so far")
    shapes = load_shapes(args.shapes, args.dtype)
    if args.shard:
        i, n = (int(x) for x in args.shard.split("/"))
        if not 0 <= i < n:
            raise ValueError(f"--shard {args.shard}: expected I/N with 0 <= I < N")
        shapes = shapes[i::n]
    configs = load_space(args.configs)
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise ValueError("no CUDA GPU is visible: profiling needs one (use --device cpu with "
                             "TRITON_INTERPRET=1 only to test the profiler itself)")
    opts = ProfileOptions(gpu=args.gpu, dtype=args.dtype, budget_s=args.budget_s, max_reps=args.max_reps,
                          target_ms=args.target_ms, with_cublas=not args.no_cublas,
                          retry_failed=args.retry_failed, device=args.device, compile_workers=args.jobs)
    run_profile(shapes, configs, args.out, opts)
    return 0


def register(sub) -> None:
    p = sub.add_parser("profile", help="measure Triton GEMM configs on the local GPU into a JSONL file",
                       description="Measure every (shape, config) missing from --out; resumes after a kill.")
    p.add_argument("--kernel", default="gemm")
    p.add_argument("--gpu", required=True, help="hwspecs id written into each record, e.g. h200")
    p.add_argument("--shapes", required=True,
                   help="MxNxK list (comma-separated), a JSONL file of {M,N,K}, or named sets joined by '+': llm, m-sweep, k-sweep")
    p.add_argument("--configs", required=True,
                   help="JSONL file of config objects, or named spaces joined by '+': broad, wave-study, grouping, default")
    p.add_argument("--out", required=True, help="JSONL file; records are appended, existing ones are skipped")
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--budget-s", type=float, default=None, help="stop cleanly after this many seconds")
    p.add_argument("--target-ms", type=float, default=25.0, help="kernel time to spend timing each record")
    p.add_argument("--max-reps", type=int, default=50)
    p.add_argument("--jobs", type=int, default=0, help="parallel compile processes (0: one per core, at most 16)")
    p.add_argument("--no-cublas", action="store_true", help="do not time torch.matmul for each shape")
    p.add_argument("--retry-failed", action="store_true", help="measure again the records whose status is not ok")
    p.add_argument("--shard", default=None, help="I/N: measure only shapes I, I+N, I+2N ... (one process per GPU)")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                   help="cpu: run under TRITON_INTERPRET=1 (tests of the profiler only)")
    p.set_defaults(func=_profile)


if __name__ == "__main__":  # `python3 -m validation.cli profile ...`: the profiler alone, for GPU machines
    import sys

    _parser = argparse.ArgumentParser(prog="python3 -m validation.cli")
    register(_parser.add_subparsers(dest="command", required=True))
    _args = _parser.parse_args()
    sys.exit(_args.func(_args))
