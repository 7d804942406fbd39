"""Build the committed resource tables: ``python3 -m wavesim.resources.build_tables --arch sm_90 --dtype bf16``.

Each (arch, dtype) gives ``wavesim/resources/data/gemm_triton-<version>_<arch>_<dtype>.json`` holding one
oracle record per config of the space (default ``broad+wave-study+grouping``, 186 configs), failures
included with their reason. Compiles go through the on-disk oracle cache, so an interrupted run resumes.

``--wide`` builds ``..._<arch>_<dtype>_wide.json.gz`` instead: every config of ``tuner.space.wide_space`` (the blind
sets' grid at GROUP_M 8), so that a machine without triton reads the compiled resources of any config of that grid,
and checks on a sample compiled at every other GROUP_M of the grid whether GROUP_M changes any resource; the table
serves other GROUP_M values only where none did (``group_m_invariant``; ``"unless_spilling"`` where only spilling
kernels did: then for the kernels that do not spill), and other dtypes (``--serve-dtype fp16``)
only where the sample compiled in them matched (``serves_dtypes``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

from wavesim.resources import WIDE
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


# GROUP_M values a wide table's sample is compiled at (the blind sets' draw, make_blind_set.GROUPS) and the share of
# the wide space in that sample (every SAMPLE_EVERY-th config)
WIDE_GROUP_M = (1, 2, 4, 16, 32)
SAMPLE_EVERY = 25


def _compile_all(todo: list, jobs: int, label: str, log) -> dict[str, dict]:
    t0 = time.time()
    recs = {}
    with ProcessPoolExecutor(jobs) if jobs > 1 else nullcontext(SimpleNamespace(map=map)) as ex:
        for i, rec in enumerate(ex.map(_one, todo), 1):
            recs[rec["config"]] = rec
            if i % 10 == 0:
                print(f"[{label}] {i}/{len(todo)} {time.time() - t0:.0f}s", file=log, flush=True)
    return recs


def _table_fields(rec: dict) -> dict:
    return {f: rec[f] for f in TABLE_FIELDS if f in rec}


def _differing(records: dict[str, dict], todo: list, table_key, jobs: int, label: str, log) -> list[str]:
    """Compile ``todo`` and return the keys whose table fields differ from ``records[table_key(key)]``."""
    recs = _compile_all(todo, jobs, label, log)
    return sorted(k for k, r in recs.items() if _table_fields(r) != _table_fields(records[table_key(k)]))


def sample_checks(arch: str, dtype: str, records: dict[str, dict], configs: list[LaunchConfig], group_m: int,
                  serve_dtypes: tuple[str, ...] = (), *, jobs: int = 1, log=sys.stderr) -> dict:
    """Compile every SAMPLE_EVERY-th config at each of WIDE_GROUP_M, and in each of ``serve_dtypes``, and compare
    each with its record: the keys (and dtypes) whose resources differ."""
    sample = configs[::SAMPLE_EVERY]
    todo = [(replace(c, GROUP_M=g).key, arch, dtype, None) for c in sample for g in WIDE_GROUP_M if g != group_m]
    at_group_m = lambda k: replace(LaunchConfig.from_key(k), GROUP_M=group_m).key  # noqa: E731
    out = {"group_m_check": {"sample": len(sample), "group_m": list(WIDE_GROUP_M), "compiled": len(todo),
                             "differ": _differing(records, todo, at_group_m, jobs, f"{arch} {dtype} GROUP_M", log)}}
    for other in serve_dtypes:
        todo = [(c.key, arch, other, None) for c in sample]
        out[f"{other}_check"] = {"sample": len(sample), "compiled": len(todo),
                                 "differ": _differing(records, todo, lambda k: k, jobs, f"{arch} {other}", log)}
    return out


def build_table(arch: str, dtype: str, configs: list[LaunchConfig], *, jobs: int = 1, space: str = "",
                out_dir: Path = DATA_DIR, problem: tuple[int, int, int] | None = None, log=sys.stderr,
                wide: bool = False, serve_dtypes: tuple[str, ...] = ()) -> Path:
    from wavesim.resources.oracle import _problem_tag, check_dtype, parse_arch, triton_version

    check_dtype(dtype)
    parse_arch(arch)
    version = triton_version()
    if version is None:
        raise SystemExit("build_tables needs triton (pip install triton==3.6.0)")
    spec = _problem_tag(problem)
    todo = [(c.key, arch, dtype, problem if spec else None) for c in configs]
    t0 = time.time()
    recs = _compile_all(todo, jobs, f"{arch} {dtype}", log)
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
                         + (f" --problem {','.join(map(str, problem))}" if spec else "") + (" --wide" if wide else "")),
        "n_ok": sum(r["status"] == "ok" for r in recs.values()),
        "n_error": sum(r["status"] != "ok" for r in recs.values()),
        "records": {k: _table_fields(recs[k]) for k in sorted(recs)},
    }
    if wide:
        (group_m,) = {c.GROUP_M for c in configs}
        checks = sample_checks(arch, dtype, table["records"], configs, group_m, serve_dtypes, jobs=jobs, log=log)
        differ = checks["group_m_check"]["differ"]
        # where GROUP_M changed only kernels that spill (pathological: 10-100x slower), it serves the others
        spilling = all(table["records"][replace(LaunchConfig.from_key(k), GROUP_M=group_m).key].get("spills")
                       for k in differ)
        table.update(checks, group_m=group_m,
                     group_m_invariant=True if not differ else "unless_spilling" if spilling else False,
                     serves_dtypes=[d for d in serve_dtypes if not checks[f"{d}_check"]["differ"]])
        table["generated_by"] += "".join(f" --serve-dtype {d}" for d in serve_dtypes)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = table_path(arch, dtype, version, out_dir, spec + (WIDE if wide else ""))
    text = json.dumps(table, indent=1, sort_keys=True) + "\n"
    if wide:   # 2,836 records: gzip keeps them at 30 KB instead of 780 (mtime 0: the same bytes every build)
        path = path.with_suffix(".json.gz")
        path.write_bytes(gzip.compress(text.encode(), mtime=0))
    else:
        path.write_text(text)
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
    ap.add_argument("--wide", action="store_true", help="the wide table: tuner.space.wide_space (--space is ignored) "
                    "and the GROUP_M check")
    ap.add_argument("--serve-dtype", action="append", default=[], help="with --wide: a dtype the table also serves "
                    "where a sample compiled in it matches (repeatable; fp16 compiles like bf16 on every shipped table)")
    ap.add_argument("--jobs", type=int, default=1, help="parallel compile processes (default 1)")
    ap.add_argument("--out-dir", type=Path, default=DATA_DIR)
    ap.add_argument("--json", action="store_true", help="print the written paths as JSON")
    a = ap.parse_args(argv)
    from tuner.space import load_space, wide_space

    configs = wide_space() if a.wide else load_space(a.space)
    if a.wide and a.problem:
        ap.error("--wide builds the default specialization only (no --problem)")
    problem = tuple(int(x) for x in a.problem.split(",")) if a.problem else None
    if problem is not None and len(problem) != 3:
        ap.error("--problem takes M,N,K")
    paths = [str(build_table(arch, dt, configs, jobs=a.jobs, space="wide" if a.wide else a.space, out_dir=a.out_dir,
                             problem=problem, wide=a.wide, serve_dtypes=tuple(a.serve_dtype)))
             for arch in a.arch for dt in a.dtype]
    print(json.dumps(paths) if a.json else "\n".join(paths))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
