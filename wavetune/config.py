"""Launch configs and problems: immutable, hashable values that key caches, tables and records."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping, Sequence

# Element sizes of the dtypes the GEMM supports (operands and output use the same dtype).
DTYPE_BYTES: dict[str, int] = {"fp16": 2, "bf16": 2, "fp32": 4}


def _require_int(d: Mapping[str, Any], key: str, where: str) -> int:
    if key not in d:
        raise ValueError(f"{where}: missing key {key!r}")
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"{where}: {key!r} must be an integer, got {v!r}")
    return v


def _is_pow2(x: int) -> bool:
    return x > 0 and (x & (x - 1)) == 0


@dataclass(frozen=True, order=True)
class LaunchConfig:
    """One launch config of the canonical Triton GEMM (the tutorial's meta-parameters).

    BLOCK_M/N/K and GROUP_M are constexprs of the kernel; num_warps and num_stages are compile options.
    Macro part (sets the grid and occupancy): BLOCK_M, BLOCK_N. Everything else is micro (see tuner/space.py).
    """

    BLOCK_M: int
    BLOCK_N: int
    BLOCK_K: int
    GROUP_M: int = 8
    num_warps: int = 4
    num_stages: int = 3

    def __post_init__(self) -> None:
        for name in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps"):
            v = getattr(self, name)
            if not _is_pow2(v):
                raise ValueError(f"config {name}={v!r}: must be a positive power of two (Triton block shapes are)")
        if self.BLOCK_M < 16 or self.BLOCK_N < 16 or self.BLOCK_K < 16:
            raise ValueError(f"config {self.key}: tl.dot needs every block dimension >= 16")
        if self.GROUP_M < 1:
            raise ValueError(f"config GROUP_M={self.GROUP_M!r}: must be >= 1")
        if self.num_stages < 1:
            raise ValueError(f"config num_stages={self.num_stages!r}: must be >= 1")

    @property
    def key(self) -> str:
        """Short stable name, e.g. '128x128x64_g8_w4_s3'."""
        return (f"{self.BLOCK_M}x{self.BLOCK_N}x{self.BLOCK_K}_g{self.GROUP_M}"
                f"_w{self.num_warps}_s{self.num_stages}")

    @property
    def threads(self) -> int:
        # Triton uses 32-thread warps on NVIDIA; on AMD a "warp" is a 64-lane wavefront (see hwspecs.occupancy).
        return self.num_warps * 32

    def to_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "config") -> "LaunchConfig":
        if not isinstance(d, Mapping):
            raise ValueError(f"{where}: expected an object with BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages")
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(names)}")
        kw = {n: _require_int(d, n, where) for n in ("BLOCK_M", "BLOCK_N", "BLOCK_K")}
        for n, default in (("GROUP_M", 8), ("num_warps", 4), ("num_stages", 3)):
            kw[n] = _require_int(d, n, where) if n in d else default
        try:
            return cls(**kw)
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None

    @classmethod
    def from_key(cls, key: str) -> "LaunchConfig":
        try:
            tile, g, w, s = key.split("_")
            bm, bn, bk = (int(x) for x in tile.split("x"))
            return cls(bm, bn, bk, int(g[1:]), int(w[1:]), int(s[1:]))
        except (ValueError, IndexError):
            raise ValueError(f"bad config key {key!r}: expected like '128x128x64_g8_w4_s3'") from None

    def to_triton(self):
        """A `triton.Config` with the same meta-parameters (needs triton)."""
        import triton

        return triton.Config(
            {"BLOCK_M": self.BLOCK_M, "BLOCK_N": self.BLOCK_N, "BLOCK_K": self.BLOCK_K, "GROUP_M": self.GROUP_M},
            num_warps=self.num_warps, num_stages=self.num_stages)

    @classmethod
    def from_triton(cls, cfg) -> "LaunchConfig":
        kw = dict(cfg.kwargs)
        return cls(kw["BLOCK_M"], kw["BLOCK_N"], kw["BLOCK_K"], kw.get("GROUP_M", 8), cfg.num_warps, cfg.num_stages)


@dataclass(frozen=True, order=True)
class GemmProblem:
    """C[M,N] = A[M,K] @ B[K,N]; A row-major MxK, B row-major KxN, C in the input dtype."""

    M: int
    N: int
    K: int
    dtype: str = "bf16"

    def __post_init__(self) -> None:
        for name in ("M", "N", "K"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"problem {name}={v!r}: must be a positive integer")
        if not isinstance(self.dtype, str) or self.dtype not in DTYPE_BYTES:
            raise ValueError(f"problem dtype={self.dtype!r}: unknown; supported: {sorted(DTYPE_BYTES)}")

    @property
    def flops(self) -> int:
        return 2 * self.M * self.N * self.K

    @property
    def elem_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @classmethod
    def from_record(cls, rec: Mapping[str, Any], where: str = "record") -> "GemmProblem":
        kw = {n: _require_int(rec, n, where) for n in ("M", "N", "K")}
        dtype = rec.get("dtype", "bf16")
        try:
            return cls(**kw, dtype=dtype)
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None

    def to_record(self) -> dict[str, Any]:
        return {"dtype": self.dtype, "M": self.M, "N": self.N, "K": self.K}


# Ties: measured, the larger GROUP_M is the better default: over the broad space at GROUP_M 1 / 8 / 32 on two layers
# (validation/data/h200/fresh14/groupm_study.jsonl) the time against GROUP_M 8 is a median 1.14 / 1 / 0.95 for wide
# tiles, 1.09 / 1 / 0.98 square, 1.03 / 1 / 0.98 tall. So among equal predictions, pick the largest GROUP_M (then the
# first listed).
TIE_RTOL = 1e-9
# The simulator prices GROUP_M through the L2 coalescer (wavesim/kernels/gpc_share.py) with a median |log error| of
# the sibling time ratio of 1.6% on the H200's clean sweeps (NOTES.md session 29, GC2), so siblings it puts within 2% of
# the fastest it cannot tell apart: among those the larger GROUP_M is the better bet (the prior above; NOTES.md
# session 30, GC2T: chosen before any score).
GROUP_M_TIE_RTOL = 0.02
SIBLING_FIELDS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages")


def group_m_sibling_key(cfg) -> tuple:
    """What configs that differ only in GROUP_M share (tile, warps, stages); fields an object lacks (the tuner's micro
    configs have no tile) count as None."""
    return tuple(getattr(cfg, f, None) for f in SIBLING_FIELDS)


def fastest(times, configs: Sequence[LaunchConfig] | None = None, group_m_rtol: float = GROUP_M_TIE_RTOL) -> int:
    """Index of the smallest of `times`; among times within TIE_RTOL of it, and the fastest's GROUP_M siblings within
    `group_m_rtol` of it, the config with the largest GROUP_M (then the first). Without configs, the first smallest."""
    import numpy as np

    t = np.asarray(times, dtype=np.float64)
    best = int(np.argmin(t))
    if configs is None:
        return best
    family = group_m_sibling_key(configs[best])
    tied = [i for i in range(len(t)) if t[i] <= t[best] * (1.0 + TIE_RTOL)
            or (t[i] <= t[best] * (1.0 + group_m_rtol) and group_m_sibling_key(configs[i]) == family)]
    return int(max(tied, key=lambda i: (configs[i].GROUP_M, -i)))
