"""Wave-aware sparse sampling: where to place the anchor problems of each macro config.

For a macro config with cap = SMs x reference CTAs/SM tiles per wave, band w holds grids
G in [(w-1)*cap + 1, w*cap]. Inside a band latency is bilinear in (G, L), so two G values per band
(its first and its last tile count) and a few L values determine the band's four coefficients.
Bands are sampled on a roughly geometric ladder (1, 2, 3, 4, 6, 8, 12, 16, ...) up to the largest band
of the domain; the bands in between are interpolated and those past the last are extrapolated by the
WaveModel (tuner.model).

A target tile count G is realised for each N of the domain as M = rows * BLOCK_M with
rows = ceil(G / ceil(N / BLOCK_N)) (first tile count) or floor(...) (last), so the anchors are real
GEMM problems that any source (simulator or measurements) can time. `snap_to_measured` moves anchors
to the nearest measured problem (same N and K, nearest G) when the source is a measurement file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from wavetune.config import GemmProblem

from .mapping import SIMULATED_BELOW_M, MacroGroup


def wave_ladder(w_max: int) -> list[int]:
    """1, 2, 3, 4, 6, 8, 12, 16, 24, ... <= w_max, and w_max itself."""
    out, v = [], 1
    while v <= w_max:
        out.append(v)
        v = v + 1 if v < 4 else (v * 3 // 2 if (v & (v - 1)) == 0 else (v // 3) * 4)
    if out[-1] != w_max:
        out.append(w_max)
    return out


@dataclass(frozen=True)
class Domain:
    """The shapes a table is built for: (N, K) pairs and the largest M (every smaller M is covered)."""

    NK: tuple[tuple[int, int], ...]
    M_max: int = 16384
    dtype: str = "bf16"

    @classmethod
    def product(cls, Ns, Ks, M_max: int = 16384, dtype: str = "bf16") -> "Domain":
        return cls(tuple((n, k) for n in Ns for k in Ks), M_max, dtype)

    @classmethod
    def of_problems(cls, problems, dtype: str | None = None) -> "Domain":
        problems = list(problems)
        if not problems:
            raise ValueError("no shapes to build a domain from")
        nk = tuple(sorted({(p.N, p.K) for p in problems}))
        return cls(nk, max(p.M for p in problems), dtype or problems[0].dtype)

    def size(self) -> int:
        """Number of problems in the dense domain (every M in 1..M_max for every (N, K))."""
        return self.M_max * len(self.NK)

    def to_dict(self) -> dict:
        return {"NK": [list(x) for x in self.NK], "M_max": self.M_max, "dtype": self.dtype}


# A generic domain (powers of two and round LLM-like widths) that contains none of the LLM layers of
# validation/shapesets.py: the simulator-only table is fitted here, so every LLM shape it is scored on
# is unseen.
GENERIC_DOMAIN = Domain.product((1024, 3072, 8192, 24576), (1024, 4096, 12288))


def anchors_for_group(group: MacroGroup, domain: Domain) -> list[GemmProblem]:
    """Anchor problems of one macro group: first and last tile counts of each wave band on the ladder,
    for every N and K of the domain (K values give the L values)."""
    bm, bn = group.macro
    cap = group.cap
    out: dict[GemmProblem, None] = {}
    for N, K in domain.NK:
        npn = math.ceil(N / bn)
        rows_max = math.ceil(domain.M_max / bm)
        w_max = math.ceil(rows_max * npn / cap)
        for w in wave_ladder(w_max):
            g_first, g_last = (w - 1) * cap + 1, w * cap
            targets = [(g_first, g_last)]
            if w == 1:  # more G points inside the first wave: few-CTA grids are latency/bandwidth bound
                targets = [(1, cap // 8), (cap // 8 + 1, cap // 2), (cap // 2 + 1, cap)]
            for rows in {r for gf, gl in targets for r in (max(1, math.ceil(gf / npn)), gl // npn)}:
                if 1 <= rows <= rows_max:
                    out[GemmProblem(rows * bm, N, K, domain.dtype)] = None
        # the small-M regime: a single partial row of tiles (M < BLOCK_M, decode-like shapes) from M = 16 on; below,
        # the table asks the simulator (DualTable.select_mnk: the wrapped copies of A's rows cost more the smaller M
        # is, at the same G), and M = 1 is the other regime (m1_anchors): Triton compiles it to another kernel
        out[GemmProblem(min(SIMULATED_BELOW_M, bm), N, K, domain.dtype)] = None
    return list(out)


def m1_anchors(domain: Domain) -> list[GemmProblem]:
    """Anchors of the M == 1 regime (Triton specializes M == 1: a different compiled kernel, measured up to
    4x slower than M == 16 for BLOCK_M = 128): M = 1 at each (N, K) of the domain and at N/2 and 2N."""
    out: dict[GemmProblem, None] = {}
    for N, K in domain.NK:
        for n in (N // 2, N, 2 * N):
            if n >= 1:
                out[GemmProblem(1, n, K, domain.dtype)] = None
    return list(out)


def snap_to_measured(anchors: list[GemmProblem], group: MacroGroup, measured: list[GemmProblem],
                     budget: int | None = None) -> list[GemmProblem]:
    """Each anchor -> the measured problem nearest in (log G, log L, log N) of this macro (the same (N, K)
    when that pair was measured); ties go to the smaller problem."""
    if not measured:
        return []
    coords = [(p, group.coords(p)) for p in measured]
    out: dict[GemmProblem, None] = {}
    for a in anchors:
        ca = group.coords(a)
        best = min(coords, key=lambda pc: (abs(math.log(pc[1].G / ca.G)) + abs(math.log(pc[1].L / ca.L))
                                           + abs(math.log(pc[0].N / a.N)) + abs(math.log(pc[0].M / a.M)) * 1e-3,
                                           pc[0]))
        out[best[0]] = None
    if budget is None:
        return list(out)
    # at most `budget` problems per (N, K), spread evenly over the snapped M values (smallest and largest kept)
    by_nk: dict[tuple[int, int], list[GemmProblem]] = {}
    for p in sorted(out):
        by_nk.setdefault((p.N, p.K), []).append(p)
    kept = []
    for ps in by_nk.values():
        idx = sorted({int(round(i)) for i in np.linspace(0, len(ps) - 1, min(budget, len(ps)))})
        kept.extend(ps[i] for i in idx)
    return kept
