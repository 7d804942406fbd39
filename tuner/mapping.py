"""Unified mapping: (problem, config, GPU) -> physical coordinates (G, L, w), and the macro/micro split.

Physical coordinates of one launch of the canonical Triton GEMM:

    G = ceil(M / BLOCK_M) * ceil(N / BLOCK_N)        CTAs in the grid
    L = ceil(K / BLOCK_K)                            inner-loop (K-step) iterations per CTA
    w = ceil(G / (SMs * CTAs per SM))                waves; CTAs/SM from hwspecs.occupancy with real
                                                     resource numbers (wavesim.kernels.gemm.config_occupancy)

`physical_coords(problem, cfg, spec)` gives these for a full config. Any other tile kernel maps the same
way (grouped GEMM: G sums the tiles of all groups; attention: G = batch*heads*ceil(seq_q/BLOCK_M), L =
ceil(seq_k/BLOCK_N)), which is what makes the tables below kernel-agnostic.

Macro / micro split
-------------------
macro = (BLOCK_M, BLOCK_N): the output tile. It alone sets the grid G, hence the wave structure.
micro = (BLOCK_K, GROUP_M, num_warps, num_stages): the K step, launch order and pipeline. They change
        the slope of latency inside a wave (per-step cost) and, through registers and shared memory,
        the CTAs/SM; they never change G.

Two consequences decided here (and used by the sampler and the DualTable):

* L is defined per *macro* with a reference K step, `L = ceil(K / REF_BLOCK_K)` (REF_BLOCK_K = 64).
  BLOCK_K is micro, and the stage-II table is indexed by (w, L bucket) *before* the micro config is
  known, so L cannot depend on it. A full config's true L is ceil(K/BLOCK_K) = L_ref * 64/BLOCK_K up to
  rounding: a per-micro constant factor that the per-macro latency envelope absorbs into its slope.
* w is defined per macro with a reference occupancy: the lowest CTAs/SM over the macro's micro configs in
  the candidate space (`MacroGroup.ref_ctas_per_sm`). The occupancy of one macro spreads widely with its
  micros (16x32 tiles: 9-16 CTAs/SM; 64x64: 2-8; 128x128: 1-2), so the macro's wave bands are a coordinate
  system, not the exact staircase of every micro config; the bilinear fit per band and the band-to-band
  extrapolation absorb the difference. With the lowest occupancy the first band ends where the first micro
  fills the chip, so no micro's first step falls inside it (with the lower median, macro 64x64's first band
  spanned 660 tiles, two and a half waves of 64x64x128_s3).

Evidence for the split (H200, bf16, validation/data/h200/gemm/llm.jsonl: 96 shapes x 182 configs,
17 macros, 8 to 19 micros each). Per shape, in log time:

    picking the median macro (with its best micro) instead of the best macro costs   1.79x (geo-mean)
    picking the median micro of the best macro instead of its best micro costs       1.24x (geo-mean)

So the macro choice carries most of the spread (it decides the waves), and the micro choice given the
right macro is the smaller, second-order correction the stage-II lookup makes. Reproduce with:

    python3 -m tuner.mapping --evidence validation/data/h200/gemm/llm.jsonl
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, NamedTuple

import numpy as np

from hwspecs import GPUSpec
from wavetune.config import GemmProblem, LaunchConfig

REF_BLOCK_K = 64
# Below this M (and above 1) a launch is one row of tiles for every BLOCK_M (tl.dot's blocks are >= 16), so G and L
# cannot tell its M from 16's, while the BLOCK_M / M wrapped copies of each row of A cost more the smaller M is
# (wavesim.kernels.gemm.wrapped_row_share): tables leave those shapes to the simulator (DualTable.select_mnk).
SIMULATED_BELOW_M = 16
# Wave band index used by the tables: the wave count itself. Splitting the first wave into sub-bands at
# G = cap/8 and cap/2 was tried (small tiles hold up to 2112 CTAs in one wave) and made held-out regret
# worse (k-fold by layer, H200: sim table 1.066 -> 1.084 geo-mean, worst 1.32 -> 2.27; measured table
# 1.040 -> 1.058, worst 1.23 -> 1.90): three more bilinears per macro fitted on fewer points each.


def band_of(G: int, cap: int) -> int:
    """Wave band index of a grid of G tiles: w = ceil(G / cap)."""
    return -(-G // cap)


class Coords(NamedTuple):
    G: int
    L: int
    w: int


class Macro(NamedTuple):
    BLOCK_M: int
    BLOCK_N: int

    @property
    def key(self) -> str:
        return f"{self.BLOCK_M}x{self.BLOCK_N}"


class Micro(NamedTuple):
    BLOCK_K: int
    GROUP_M: int
    num_warps: int
    num_stages: int

    @property
    def key(self) -> str:
        return f"k{self.BLOCK_K}_g{self.GROUP_M}_w{self.num_warps}_s{self.num_stages}"


def macro_of(cfg: LaunchConfig) -> Macro:
    return Macro(cfg.BLOCK_M, cfg.BLOCK_N)


def micro_of(cfg: LaunchConfig) -> Micro:
    return Micro(cfg.BLOCK_K, cfg.GROUP_M, cfg.num_warps, cfg.num_stages)


def combine(macro: Macro, micro: Micro) -> LaunchConfig:
    return LaunchConfig(macro.BLOCK_M, macro.BLOCK_N, micro.BLOCK_K, micro.GROUP_M, micro.num_warps, micro.num_stages)


def ctas_per_sm(spec: GPUSpec, cfg: LaunchConfig, dtype: str) -> int:
    from wavesim.kernels.gemm import config_occupancy

    return int(config_occupancy(spec, cfg, dtype)[0].ctas_per_sm)


def physical_coords(problem: GemmProblem, cfg: LaunchConfig, spec: GPUSpec) -> Coords:
    """(G, L, w) of a full config; raises ValueError if the config cannot launch on the GPU."""
    occ = ctas_per_sm(spec, cfg, problem.dtype)
    if occ == 0:
        raise ValueError(f"config {cfg.key} does not fit on {spec.name} ({problem.dtype})")
    G = math.ceil(problem.M / cfg.BLOCK_M) * math.ceil(problem.N / cfg.BLOCK_N)
    L = math.ceil(problem.K / cfg.BLOCK_K)
    return Coords(G, L, math.ceil(G / (spec.sm_count * occ)))


@dataclass(frozen=True)
class MacroGroup:
    """One macro config, its micro configs (those that can launch) and its reference occupancy."""

    macro: Macro
    micros: tuple[Micro, ...]
    micro_ctas_per_sm: tuple[int, ...]
    sm_count: int

    @property
    def ref_ctas_per_sm(self) -> int:
        # the lowest: every micro's first wave boundary then falls on or after the band's, so no band holds a
        # step of the micros that fill an SM first (a higher reference smeared them: tuner/README.md)
        return min(self.micro_ctas_per_sm)

    @property
    def cap(self) -> int:
        """CTAs per wave of the macro: SMs x reference CTAs/SM."""
        return self.sm_count * self.ref_ctas_per_sm

    @property
    def configs(self) -> list[LaunchConfig]:
        return [combine(self.macro, u) for u in self.micros]

    def coords(self, problem: GemmProblem) -> Coords:
        G = math.ceil(problem.M / self.macro.BLOCK_M) * math.ceil(problem.N / self.macro.BLOCK_N)
        return Coords(G, math.ceil(problem.K / REF_BLOCK_K), -(-G // self.cap))


@dataclass(frozen=True)
class Unfit:
    """A candidate config that cannot launch on the GPU: recorded with the reason, never dropped silently."""

    config: LaunchConfig
    reason: str


def group_space(configs: Iterable[LaunchConfig], spec: GPUSpec, dtype: str) -> tuple[list[MacroGroup], list[Unfit]]:
    """Split a config space into macro groups (sorted, deterministic) and the configs that do not fit."""
    from wavesim.kernels.gemm import config_occupancy

    by: dict[Macro, list[tuple[Micro, int]]] = {}
    unfit: list[Unfit] = []
    for c in dict.fromkeys(configs):
        occ = config_occupancy(spec, c, dtype)[0]
        if occ.ctas_per_sm == 0:
            unfit.append(Unfit(c, str(occ.reason)))
            continue
        by.setdefault(macro_of(c), []).append((micro_of(c), int(occ.ctas_per_sm)))
    groups = []
    for m in sorted(by):
        items = sorted(by[m])
        groups.append(MacroGroup(m, tuple(u for u, _ in items), tuple(o for _, o in items), spec.sm_count))
    return groups, unfit


def split_evidence(paths: list[str], gpu: str = "h200") -> dict[str, float]:
    """Geo-mean cost (over shapes) of a median macro vs the best, and of a median micro within the best macro."""
    from validation.measurements import dedupe_latest, load_measurements

    by: dict[GemmProblem, dict[LaunchConfig, float]] = {}
    for m in dedupe_latest(load_measurements(paths, gpu=gpu)):
        if m.ok:
            by.setdefault(m.problem, {})[m.config] = math.log(m.ms)
    mac, mic = [], []
    for d in by.values():
        best = min(d.values())
        per: dict[Macro, list[float]] = {}
        for c, v in d.items():
            per.setdefault(macro_of(c), []).append(v)
        bm = min(per, key=lambda k: (min(per[k]), k))
        mac.append(float(np.median([min(v) for v in per.values()])) - best)
        mic.append(float(np.median(per[bm])) - best)
    return {"shapes": len(by), "median_macro_cost_geomean": math.exp(float(np.mean(mac))),
            "median_micro_in_best_macro_cost_geomean": math.exp(float(np.mean(mic)))}


if __name__ == "__main__":  # pragma: no cover
    import argparse
    import json

    ap = argparse.ArgumentParser(description="macro/micro split evidence on measurements")
    ap.add_argument("--evidence", nargs="+", required=True)
    ap.add_argument("--gpu", default="h200")
    a = ap.parse_args()
    print(json.dumps(split_evidence(a.evidence, a.gpu), indent=1))
