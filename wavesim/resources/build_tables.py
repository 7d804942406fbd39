"""Build the committed resource tables: ``python3 -m wavesim.resources.build_tables --arch sm_90 --dtype bf16``.

Each (arch, dtype) gives ``wavesim/resources/data/gemm_triton-<version>_<arch>_<dtype>.json`` holding one
oracle record per config of the space (default ``broad+wave-study+grouping``, 186 configs), failures
included with their reason. Compiles go through the on-disk oracle cache, so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from wavetune.config import LaunchConfig

DATA_DIR = Path(__file__).parent / "data"
DEFAULT_SPACE = "broad+wave-study+grouping"
KERNEL = "gemm"
# Fields of an oracle record that go into the committed table (compile_s is timing noise, left out).
TABLE_FIELDS = ("status", "reason", "regs_per_thread", "spills", "local_bytes", "stack_bytes", "smem_bytes",
                "static_smem_bytes", "num_warps", "load_rounds", "loop_instructions", "loop_mmas", "vgprs", "agprs",
                "lds_bytes")


def table_path(arch: str, dtype: str, version: str, data_dir: Path = DATA_DIR, spec: str = "") -> Path:
    """``spec`` is oracle._problem_tag of the problem ('' for 16-divisible sizes, '_spec1DD' for M == 1)."""
    return data_dir / f"{KERNEL}_triton-{version}_{arch}_{dtype}{spec}.json"


def _one(args):
    key, arch, dtype, problem = args
    from wavesim.resources.oracle import oracle_record

    return oracle_record(LaunchConfig.from_key(key), arch, dtype, problem=problem)


def build_table(arch: str, dtype: str, configs: list[LaunchConfig], *, jobs: int = 1, space: str = "",
                out_dir: Path = DATA_DIR, problem: tuple[int, int, int] | None = None, log=sys.stderr) -> Path:
    from wavesim.resources.oracle import _problem_tag, check_dtype, parse_arch, triton_version

    check_dtype(dtype)
    parse_arch(arch)
    version = triton_version()
    if version is None:
        raise SystemExit("build_tables needs triton (pip install triton==3.6.0)")
    spec = _problem_tag(problem)
    todo = [(c.key, arch, dtype, problem if spec else None) for c in configs]
    t0 = time.time()
    recs = {}
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as ex:
            results = ex.map(_one, todo)
            for i, rec in enumerate(results, 1):
                recs[rec["config"]] = rec
                if i % 10 == 0:
                    print(f"[{arch} {dtype}] {i}/{len(todo)} {time.time() - t0:.0f}s", file=log, flush=True)
    else:
        for i, t in enumerate(todo, 1):
            rec = _one(t)
            recs[rec["config"]] = rec
            if i % 10 == 0:
                print(f"[{arch} {dtype}] {i}/{len(todo)} {time.time() - t0:.0f}s", file=log, flush=True)
    table = {
        "kernel": "validation/kernels/gemm.py::gemm_kernel",
        "triton": version,
        "arch": arch,
        "dtype": dtype,
        "space": space,
        "specialization": (f"problem {list(problem)}: tag {spec!r}" if spec else
                           "all sizes and strides divisible by 16 (any 16-aligned problem)"),
        "source": ("oracle: triton.compile for GPUTarget with the JIT's own specialization (16-divisible "
                   "sizes/strides, unit strides as constexpr 1), regs/spills from the cubin via Triton's "
                   "cuobjdump --dump-resource-usage (spills = LOCAL bytes // 4, as Triton's driver), "
                   "smem = metadata.shared; see wavesim/resources/oracle.py"),
        "generated_by": (f"python3 -m wavesim.resources.build_tables --arch {arch} --dtype {dtype}"
                         + (f" --problem {','.join(map(str, problem))}" if spec else "")),
        "n_ok": sum(r["status"] == "ok" for r in recs.values()),
        "n_error": sum(r["status"] != "ok" for r in recs.values()),
        "records": {k: {f: recs[k][f] for f in TABLE_FIELDS if f in recs[k]} for k in sorted(recs)},
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    path = table_path(arch, dtype, version, out_dir, spec)
    path.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"[{arch} {dtype}] wrote {path} ({table['n_ok']} ok, {table['n_error']} errors, "
          f"{time.time() - t0:.0f}s)", file=log, flush=True)
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m wavesim.resources.build_tables", description=__doc__)
    ap.add_argument("--arch", action="append", required=True, help="e.g. sm_90 (repeatable)")
    ap.add_argument("--dtype", action="append", required=True, help="bf16, fp16 or fp32 (repeatable)")
    ap.add_argument("--space", default=DEFAULT_SPACE, help=f"config space for tuner.space.load_space "
                                                          f"(default {DEFAULT_SPACE})")
    ap.add_argument("--problem", default=None, help="M,N,K whose specialization to compile (default: any "
                    "16-divisible problem). M=1 (decode) gives the '_spec1DD' tables")
    ap.add_argument("--jobs", type=int, default=1, help="parallel compile processes (default 1)")
    ap.add_argument("--out-dir", type=Path, default=DATA_DIR)
    ap.add_argument("--json", action="store_true", help="print the written paths as JSON")
    a = ap.parse_args(argv)
    from tuner.space import load_space

    configs = load_space(a.space)
    problem = tuple(int(x) for x in a.problem.split(",")) if a.problem else None
    if problem is not None and len(problem) != 3:
        ap.error("--problem takes M,N,K")
    paths = [str(build_table(arch, dt, configs, jobs=a.jobs, space=a.space, out_dir=a.out_dir, problem=problem))
             for arch in a.arch for dt in a.dtype]
    print(json.dumps(paths) if a.json else "\n".join(paths))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
