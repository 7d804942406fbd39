"""Resource usage of the canonical Triton GEMM (registers/thread, spills, shared memory per CTA).

Public API::

    from wavesim.resources import KernelResources, gemm_resources
    r = gemm_resources(LaunchConfig(128, 128, 64, 8, 4, 4), "sm_90", "bf16")
    r.regs_per_thread, r.spills, r.smem_bytes, r.num_warps, r.source   # 217, 0, 131072, 4, "table"

Sources, in the order ``source="auto"`` tries them:

1. ``"table"``: the committed tables ``wavesim/resources/data/gemm_triton-<ver>_<arch>_<dtype>.json``, built
   by ``python3 -m wavesim.resources.build_tables`` with the oracle for Triton 3.6.0 (the H200 image's
   version) over the 186 configs of ``tuner.space.load_space("broad+wave-study+grouping")``; then the wide tables
   ``..._wide.json.gz`` (``build_tables --wide``; sm_90 bf16 and fp16; sm_80, sm_86, sm_89, sm_100 and sm_120 bf16 serving fp16): every
   config of the blind sets' grid (``tuner.space.wide_space``: tiles 16..256, 1-16 warps, 1-6 stages), at any GROUP_M
   where each build's sample showed GROUP_M to change no resource (on sm_80 and sm_120: none but of a kernel that
   spills), so that a machine without triton simulates those configs as compiled.
2. ``"oracle"`` from the on-disk cache (``$WAVETUNE_CACHE_DIR`` or ``~/.cache/wavetune``), no compile.
3. ``"oracle"``: compile for the target on this CPU (needs triton; ~0.3-1 s per config, then cached).
4. ``"estimate"``: the analytical formula of :mod:`wavesim.resources.estimate` (no triton needed).

A config that does not compile for the target raises :class:`CompileFailure` with the compiler's reason,
from the table and the oracle alike: it is a result to record as invalid, never a silent zero. (None of the
shipped tables has one: Triton 3.6 compiles every config for every shipped arch, bf16 on sm_70/75 included,
where ``tl.dot`` lowers to FMA instead of tensor cores and spills heavily; an out-of-range target such as
sm_30 gives ``PTXASError``.) ``smem_bytes`` is the dynamic shared memory Triton requests
(``metadata.shared``), which is what the H200 records call ``shared_bytes`` and what Triton's launcher
checks against the opt-in limit ("out of resource: shared memory, Required: ..."). The driver's reserved
1 KB/CTA (sm_80+, ``reservedSharedMemPerBlock``) is not in it; hwspecs.occupancy adds it. The tables also
keep the cubin's static ``SHARED`` (``static_smem_bytes``: 1024 on sm_90/100/120, 0 on sm_70-89), which
ptxas does not report as user shared memory (``ptxas -v`` prints no smem line for these kernels); it
appears to be that same reservation materialised in the cubin, so do not add it a second time.

Other specialization classes of the problem (``M == 1``, sizes not divisible by 16) compile to different
code: pass ``problem=`` (see :func:`gemm_resources`); the GEMM model does for N and K
(wavesim.kernels.gemm.specialization_problem).
"""

from __future__ import annotations

import functools
import gzip
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from wavetune.config import LaunchConfig

from .oracle import OracleUnavailable, check_dtype, parse_arch

__all__ = ["KernelResources", "CompileFailure", "gemm_resources", "table_archs", "load_table", "clear_caches",
           "SOURCES", "TABLE_TRITON_VERSION"]

DATA_DIR = Path(__file__).parent / "data"
# The Triton version the committed tables were built with (pyproject's dev extra and the H200 image pin it).
TABLE_TRITON_VERSION = "3.6.0"
SOURCES = ("auto", "table", "oracle", "estimate")


@dataclass(frozen=True)
class KernelResources:
    """Per-CTA resources of one compiled kernel: what occupancy needs."""

    regs_per_thread: int
    spills: int          # 32-bit words of local memory per thread (Triton's n_spills = LOCAL_SIZE_BYTES // 4)
    smem_bytes: int      # dynamic shared memory per CTA (Triton's metadata.shared)
    num_warps: int
    source: str          # "oracle", "table" or "estimate"
    load_rounds: int = 1  # dependent global-load rounds per K step (oracle.sync_load_rounds; 1 where not compiled)
    loop_instructions: int = 0  # instructions each warp issues per pass of the main loop (oracle.main_loop; 0: unknown)
    loop_mmas: int = 0   # tensor-core instructions in that pass (HMMA, HGMMA): how many K steps it holds


class CompileFailure(ValueError):
    """The config does not compile for this target; ``reason`` is the compiler's message."""

    def __init__(self, config: LaunchConfig, arch: str, dtype: str, reason: str):
        self.config, self.arch, self.dtype, self.reason = config, arch, dtype, reason
        super().__init__(f"gemm {config.key} does not compile for {arch} {dtype}: {reason}")


def _validate(arch: str, dtype: str) -> None:
    parse_arch(arch)   # ValueError naming the expected form ('sm_90', hwspecs' arch.name)
    check_dtype(dtype)


WIDE = "_wide"   # suffix of a wide table: the blind sets' grid (tuner.space.wide_space), one GROUP_M


@functools.lru_cache(maxsize=None)
def _table_doc(arch: str, dtype: str, suffix: str) -> dict[str, Any] | None:
    p = DATA_DIR / f"gemm_triton-{TABLE_TRITON_VERSION}_{arch}_{dtype}{suffix}.json"
    if p.exists():
        return json.loads(p.read_text())
    gz = p.with_suffix(".json.gz")
    return json.loads(gzip.decompress(gz.read_bytes())) if gz.exists() else None


def load_table(arch: str, dtype: str, spec: str = "") -> dict[str, dict[str, Any]] | None:
    """The committed table's records by config key, or None when no table ships for (arch, dtype, spec)."""
    doc = _table_doc(arch, dtype, spec)
    return None if doc is None else doc["records"]


def wide_record(config: LaunchConfig, arch: str, dtype: str) -> dict[str, Any] | None:
    """The config's record in the wide table of (arch, dtype), or of another dtype whose build found this one to
    compile alike (``serves_dtypes``), if one ships: by its own key, or by its tile, warps and stages at the table's
    GROUP_M where the build found GROUP_M to change no resource (``group_m_invariant``; ``"unless_spilling"``: none
    of a kernel that does not spill), each with the sample it compiled to check it."""
    others = (_table_doc(arch, d, WIDE) for d in ("bf16", "fp16", "fp32") if d != dtype)
    doc = _table_doc(arch, dtype, WIDE) or next((d for d in others if d and dtype in d.get("serves_dtypes", ())), None)
    if doc is None:
        return None
    rec = doc["records"].get(config.key)
    if rec is None and doc.get("group_m_invariant"):
        rec = doc["records"].get(replace(config, GROUP_M=doc["group_m"]).key)
        if rec is not None and doc["group_m_invariant"] == "unless_spilling" and rec.get("spills"):
            return None
    return rec


def table_archs() -> list[tuple[str, str]]:
    """(arch, dtype) pairs that have a committed table (of the default, 16-divisible specialization)."""
    out = []
    for p in sorted(DATA_DIR.glob(f"gemm_triton-{TABLE_TRITON_VERSION}_*.json")):
        if "_spec" in p.stem:   # (wide tables are .json.gz: not globbed)
            continue
        arch, dtype = p.stem.split("_", 2)[2].rsplit("_", 1)
        out.append((arch, dtype))
    return out


def _from_record(rec: dict[str, Any], config: LaunchConfig, arch: str, dtype: str, source: str) -> KernelResources:
    if rec.get("status") != "ok":
        raise CompileFailure(config, arch, dtype, rec.get("reason", "unknown compile error"))
    return KernelResources(int(rec["regs_per_thread"]), int(rec["spills"]), int(rec["smem_bytes"]),
                           int(rec.get("num_warps", config.num_warps)), source, int(rec.get("load_rounds", 1)),
                           int(rec.get("loop_instructions", 0)), int(rec.get("loop_mmas", 0)))


def _canonical_arch(arch: str) -> str:
    kind, cc = parse_arch(arch)
    return f"sm_{cc}" if kind == "cuda" else arch


@functools.lru_cache(maxsize=65536)
def _resolve(config: LaunchConfig, arch: str, dtype: str, source: str,
             problem: tuple[int, int, int] | None) -> KernelResources:
    from . import oracle

    spec = oracle._problem_tag(problem)
    if source in ("auto", "table"):
        table = load_table(arch, dtype, spec)
        if table is not None and config.key in table:
            return _from_record(table[config.key], config, arch, dtype, "table")
        wide = None if spec else wide_record(config, arch, dtype)
        if wide is not None:
            return _from_record(wide, config, arch, dtype, "table")
        if source == "table":
            where = (f"no table ships for this (arch, dtype{', ' + spec if spec else ''}); shipped: " + ", ".join(f"{a}/{d}" for a, d in table_archs())
                     if table is None else f"config {config.key} is not in the table's space")
            raise LookupError(f"gemm {config.key} {arch} {dtype}: {where}. Use source='oracle' (needs triton) "
                              f"or source='estimate', or add it with python3 -m wavesim.resources.build_tables")
    if source in ("auto", "oracle"):
        if source == "auto":
            rec = oracle.cached_record(config, arch, dtype, problem if spec else None)
            if rec is not None:
                return _from_record(rec, config, arch, dtype, "oracle")
        try:
            rec = oracle.oracle_record(config, arch, dtype, problem=problem if spec else None)
            return _from_record(rec, config, arch, dtype, "oracle")
        except OracleUnavailable:
            if source == "oracle":
                raise
    from .estimate import estimate_resources

    return estimate_resources(config, arch, dtype)


def _problem_key(problem) -> tuple[int, int, int] | None:
    """None for the default specialization (every size divisible by 16), else the (M, N, K) to compile."""
    if problem is None:
        return None
    M, N, K = (problem.M, problem.N, problem.K) if hasattr(problem, "M") else problem
    from .oracle import _problem_tag

    # Canonical representative of the specialization class, so the memo and disk cache are per class.
    return None if not _problem_tag((M, N, K)) else tuple(1 if v == 1 else (16 if v % 16 == 0 else 17)
                                                           for v in (M, N, K))


def gemm_resources(config: LaunchConfig, arch: str, dtype: str, *, source: str = "auto",
                   problem=None) -> KernelResources:
    """Registers/thread, spills, shared memory and warps of the canonical Triton GEMM for ``config``.

    ``arch``: an arch name like ``"sm_90"`` (``hwspecs.load_gpu("h200").arch.name``); ``"sm_90a"`` is read
    as ``"sm_90"``. ``dtype``: ``"bf16"``, ``"fp16"`` or ``"fp32"`` (tf32 dot). ``source``: ``"auto"``
    (table, then cached oracle, then oracle if triton imports, then estimate), or force one of ``"table"``,
    ``"oracle"``, ``"estimate"``. Results are memoised in-process (``clear_caches()`` resets).
    ``problem``: optional ``GemmProblem`` or ``(M, N, K)``. Only its specialization class matters (Triton
    specializes each size on ``== 1`` and ``% 16 == 0``); ``None`` or a 16-divisible problem is the default
    class the tables hold. Another class (``M == 1``, decode; N or K not a multiple of 16) uses its ``_spec``
    table where one ships (sm_90 bf16/fp16: ``_spec1DD``, ``_specDxD``, ``_specDDx``, ``_specDxx``), else the
    oracle; the estimate ignores it.
    Raises ValueError for an unknown arch/dtype/source, CompileFailure for a config that does not compile.
    """
    if isinstance(config, LaunchConfig) and (problem is None or isinstance(problem, tuple)):
        hit = _FRONT.get((config, arch, dtype, source, problem))
        if hit is not None:
            return hit
    if source not in SOURCES:
        raise ValueError(f"source={source!r}: use one of {SOURCES}")
    if not isinstance(config, LaunchConfig):
        raise TypeError(f"config must be a wavetune.config.LaunchConfig, got {type(config).__name__} "
                        f"(LaunchConfig.from_dict / from_key build one)")
    _validate(arch, dtype)
    out = _resolve(config, _canonical_arch(arch), dtype, source, _problem_key(problem))
    if problem is None or isinstance(problem, tuple):
        if len(_FRONT) > 65536:
            _FRONT.clear()
        _FRONT[(config, arch, dtype, source, problem)] = out
    return out


# Front memo keyed by the call's own arguments (skips validation on repeated calls: ~0.5 us vs ~2 us).
_FRONT: dict = {}


def clear_caches() -> None:
    """Forget memoised lookups and loaded tables (tests; after rebuilding a table)."""
    _FRONT.clear()
    _resolve.cache_clear()
    _table_doc.cache_clear()
