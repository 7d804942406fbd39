"""Kernel model of the canonical Triton GEMM (validation/kernels/gemm.py) for the wavesim engines.

A launch is G = ceil(M/BM) * ceil(N/BN) CTAs that all do the same work (edge tiles are masked, not
shortened), each running L = ceil(K/BK) K steps. Per CTA the model gives the engines (wavesim.engine):

  t_math  = 2*BM*BN*BK / (SM tensor peak * efficiency)      one K step's math at the SM's whole rate
  t_l2    = (BM+BN)*BK*elem / (L2->SM bytes per clock * clock)  one K step's operand loads into the SM
  t_share = max(t_math, t_l2)                               SM-shared work per step (math and loads overlap)
  t_lat   = (avg load latency + t_l2 + t_math) / (num_stages - 1)   a CTA alone needs at least this per step:
            num_stages - 1 smem stages are in flight, and a stage is refilled only after its MMA is done
  compute_s = L * t_share;  solo_frac = t_share / max(t_share, t_lat)
  fixed_s   = one DRAM latency to fill the pipeline + CTA overhead + the C tile's store
  dram_bytes = DRAM traffic of the launch / G: A, B and C once when A and B fit in the L2 share, else
            what each wave of co-resident CTAs touches in the grouped launch order (GROUP_M rows share B)

The efficiency is the wgmma one when the compiler can use Hopper's warpgroup MMA (sm_90+, BLOCK_M >= 64,
num_warps a multiple of 4) and the mma.sync one otherwise. Occupancy (CTAs/SM) comes from real resource
numbers (wavesim.resources) through hwspecs.occupancy. Every free parameter is a field of GemmParams,
with its prior and source in wavesim/data/gemm_priors.toml; `wavetune calibrate` fits them.

Everything is vectorised over shapes so a config's whole shape sweep is one numpy pass.
"""

from __future__ import annotations

import functools
import math
import tomllib
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

import hwspecs
from hwspecs import GPUSpec
from wavetune.config import DTYPE_BYTES, GemmProblem, LaunchConfig

PRIORS_PATH = Path(__file__).resolve().parent.parent / "data" / "gemm_priors.toml"
# The tensor-rate key of each operand dtype (fp32 operands go through tf32 tensor cores in tl.dot).
TENSOR_DTYPE = {"bf16": "bf16", "fp16": "fp16", "fp32": "tf32"}


@dataclass(frozen=True)
class GemmParams:
    """Free parameters of the model; see wavesim/data/gemm_priors.toml for their meaning and sources."""

    mma_efficiency: float
    wgmma_n_half: float
    mma_v2_efficiency: float
    l2_bytes_per_clock_per_sm: float
    l2_latency_cycles: float
    dram_latency_cycles: float
    dram_efficiency: float
    k_step_overhead_cycles: float
    cta_overhead_cycles: float
    launch_overhead_s: float
    l2_fit_fraction: float

    @classmethod
    def priors(cls) -> "GemmParams":
        return _priors()

    def to_dict(self) -> dict[str, float]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str = "calibration") -> "GemmParams":
        names = [f.name for f in fields(cls)]
        unknown = sorted(set(d) - set(names))
        if unknown:
            raise ValueError(f"{where}: unknown parameter(s) {unknown}; known: {names}")
        base = _priors().to_dict()
        for k, v in d.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise ValueError(f"{where}: parameter {k!r} must be a finite number >= 0, got {v!r}")
            base[k] = float(v)
        return cls(**base)


@functools.cache
def _priors() -> GemmParams:
    with PRIORS_PATH.open("rb") as f:
        raw = tomllib.load(f)
    return GemmParams(**{f.name: float(raw[f.name]["value"]) for f in fields(GemmParams)})


@dataclass(frozen=True)
class Launch:
    """What the model derives for one config on a set of shapes (arrays over shapes)."""

    config: LaunchConfig
    ctas_per_sm: int
    occupancy: Any            # hwspecs.Occupancy
    grid: np.ndarray          # G
    k_steps: np.ndarray       # L
    compute_s: np.ndarray
    solo_frac: np.ndarray
    dram_bytes: np.ndarray    # per CTA
    fixed_s: np.ndarray
    dram_Bps: float
    launch_overhead_s: float
    sm_count: int

    @property
    def waves(self) -> np.ndarray:
        return -(-self.grid // (self.sm_count * max(self.ctas_per_sm, 1)))


class ConfigDoesNotFit(ValueError):
    """The config cannot launch on the GPU (occupancy 0); the message names the violated limit."""


def _arch_order(arch: str) -> int:
    return int(arch.split("_")[1]) if arch.startswith("sm_") else 0


def uses_wgmma(spec: GPUSpec, cfg: LaunchConfig) -> bool:
    # Triton lowers tl.dot to Hopper's warpgroup MMA when a warpgroup (4 warps) can own >= 64 rows.
    return _arch_order(spec.arch.name) >= 90 and cfg.BLOCK_M >= 64 and cfg.num_warps % 4 == 0


def mma_efficiency(spec: GPUSpec, cfg: LaunchConfig, p: GemmParams) -> float:
    """Fraction of the SM's tensor peak the mainloop's MMA instructions reach.

    wgmma: each warpgroup issues m64nNk16 instructions over its own N columns (Triton puts warpgroups
    along M first, then splits N); an instruction's fixed issue cost weighs less the wider N is, so the
    rate is mma_efficiency * N / (N + wgmma_n_half). mma.sync (pre-Hopper path): mma_v2_efficiency."""
    if not uses_wgmma(spec, cfg):
        return p.mma_v2_efficiency
    warpgroups = cfg.num_warps // 4
    along_n = max(1, warpgroups // max(1, cfg.BLOCK_M // 64))
    n = cfg.BLOCK_N / along_n
    return p.mma_efficiency * n / (n + p.wgmma_n_half)


@functools.lru_cache(maxsize=65536)
def config_occupancy(spec: GPUSpec, cfg: LaunchConfig, dtype: str):
    """(Occupancy, KernelResources) of a config on a GPU; occupancy 0 means it cannot launch."""
    from wavesim.resources import gemm_resources

    res = gemm_resources(cfg, spec.arch.name, dtype)
    occ = hwspecs.occupancy(spec, num_warps=res.num_warps, regs_per_thread=res.regs_per_thread,
                            smem_bytes=res.smem_bytes)
    return occ, res


def _dram_bytes_total(M, N, K, cfg: LaunchConfig, elem: int, grid, resident: int, l2_bytes: float,
                      fit: float) -> np.ndarray:
    """DRAM traffic of the whole launch (bytes), vectorised over shapes."""
    unique = (M * K + K * N + M * N) * elem
    npm = -(-M // cfg.BLOCK_M)
    npn = -(-N // cfg.BLOCK_N)
    # W co-resident CTAs in grouped order: inside one group of GROUP_M row-tiles they cover
    # min(GROUP_M, W) rows and ceil(W / GROUP_M) columns; past a group, whole rows of npn tiles.
    W = np.minimum(grid, resident)
    gm = np.minimum(cfg.GROUP_M, npm)
    in_group = W <= gm * npn
    rows = np.where(in_group, np.minimum(gm, W), np.ceil(W / npn))
    cols = np.where(in_group, np.minimum(np.ceil(W / gm), npn), npn)
    per_wave = (rows * cfg.BLOCK_M * K + cols * cfg.BLOCK_N * K) * elem
    streamed = per_wave * (grid / W) + M * N * elem
    fits = (M * K + K * N) * elem <= fit * l2_bytes
    return np.where(fits, unique, np.maximum(unique, streamed))


def gemm_launch(spec: GPUSpec, cfg: LaunchConfig, M, N, K, dtype: str = "bf16",
                params: GemmParams | None = None) -> Launch:
    """The model's per-CTA quantities for one config over arrays of shapes (M, N, K broadcast)."""
    p = params or _priors()
    M, N, K = (np.asarray(x, dtype=np.float64) for x in (M, N, K))
    occ, _ = config_occupancy(spec, cfg, dtype)
    if occ.ctas_per_sm == 0:
        raise ConfigDoesNotFit(f"config {cfg.key} does not fit on {spec.name}: {occ.reason}")
    elem = DTYPE_BYTES[dtype]
    clock = spec.boost_clock_hz
    bm, bn, bk = cfg.BLOCK_M, cfg.BLOCK_N, cfg.BLOCK_K
    grid = np.ceil(M / bm) * np.ceil(N / bn)
    L = np.ceil(K / bk)
    sm_peak = spec.tensor_flops_per_clock_per_sm[TENSOR_DTYPE[dtype]] * clock
    t_math = 2.0 * bm * bn * bk / (sm_peak * mma_efficiency(spec, cfg, p))
    step_bytes = (bm + bn) * bk * elem
    t_l2 = step_bytes / (p.l2_bytes_per_clock_per_sm * clock)
    t_share = max(t_math, t_l2) + p.k_step_overhead_cycles / clock

    resident = spec.sm_count * occ.ctas_per_sm
    dram_total = _dram_bytes_total(M, N, K, cfg, elem, grid, resident, spec.l2_bytes, p.l2_fit_fraction)
    l2_total = grid * L * step_bytes
    miss = np.clip(dram_total / np.maximum(l2_total, 1.0), 0.0, 1.0)
    lat_cycles = miss * p.dram_latency_cycles + (1.0 - miss) * p.l2_latency_cycles
    # A smem stage is refilled only after the MMA that read it is done, so each of the num_stages - 1
    # stages in flight cycles through load latency + transfer + math (Little's law on the buffers).
    t_lat = (lat_cycles / clock + t_l2 + t_math) / max(cfg.num_stages - 1, 1)
    solo = t_share / np.maximum(t_share, t_lat)
    store_s = bm * bn * elem / (p.l2_bytes_per_clock_per_sm * clock)
    fixed = (p.dram_latency_cycles + p.cta_overhead_cycles) / clock + store_s
    shape = np.broadcast(M, N, K).shape
    return Launch(config=cfg, ctas_per_sm=occ.ctas_per_sm, occupancy=occ, grid=grid.astype(np.int64),
                  k_steps=L.astype(np.int64), compute_s=np.broadcast_to(L * t_share, shape),
                  solo_frac=np.broadcast_to(solo, shape), dram_bytes=dram_total / grid,
                  fixed_s=np.broadcast_to(np.float64(fixed), shape),
                  dram_Bps=spec.dram_bandwidth_bytes_per_s * p.dram_efficiency,
                  launch_overhead_s=p.launch_overhead_s, sm_count=spec.sm_count)


def workload(launch: Launch, index: int = 0):
    """The engines' Workload for shape `index` of a Launch (all CTAs identical)."""
    from wavesim.engine import Workload

    g = int(np.ravel(launch.grid)[index])
    pick = lambda a: float(np.ravel(a)[index])  # noqa: E731
    return Workload(compute_s=np.full(g, pick(launch.compute_s)), solo_frac=pick(launch.solo_frac),
                    dram_bytes=pick(launch.dram_bytes), mem_cap_Bps=launch.dram_Bps, fixed_s=pick(launch.fixed_s),
                    sm_count=launch.sm_count, slots_per_sm=launch.ctas_per_sm, dram_Bps=launch.dram_Bps,
                    launch_overhead_s=launch.launch_overhead_s)


def simulate_config(spec: GPUSpec, cfg: LaunchConfig, M, N, K, dtype: str = "bf16",
                    params: GemmParams | None = None):
    """Makespans (seconds) and waves of one config over arrays of shapes, by the exact closed form."""
    from wavesim.engine import run_uniform_batch

    ln = gemm_launch(spec, cfg, M, N, K, dtype, params)
    out = run_uniform_batch(ln.grid, sm_count=ln.sm_count, slots_per_sm=ln.ctas_per_sm, compute_s=ln.compute_s,
                            solo_frac=ln.solo_frac, dram_bytes=ln.dram_bytes, mem_cap_Bps=ln.dram_Bps,
                            fixed_s=ln.fixed_s, dram_Bps=ln.dram_Bps, launch_overhead_s=ln.launch_overhead_s)
    return out.makespan_s, out.waves, ln


def with_params(params: GemmParams, **changes: float) -> GemmParams:
    return replace(params, **changes)


class GemmModel:
    """The `KernelModel` of the canonical Triton GEMM: problem + config -> CTAs (Workload) and L."""

    name = "gemm"

    def grid(self, problem: GemmProblem, cfg: LaunchConfig) -> int:
        return math.ceil(problem.M / cfg.BLOCK_M) * math.ceil(problem.N / cfg.BLOCK_N)

    def inner_loop(self, problem: GemmProblem, cfg: LaunchConfig) -> int:
        return math.ceil(problem.K / cfg.BLOCK_K)

    def launch(self, spec: GPUSpec, problem: GemmProblem, cfg: LaunchConfig, params: GemmParams | None = None) -> Launch:
        return gemm_launch(spec, cfg, problem.M, problem.N, problem.K, problem.dtype, params)

    def workload(self, spec: GPUSpec, problem: GemmProblem, cfg: LaunchConfig, params: GemmParams | None = None):
        return workload(self.launch(spec, problem, cfg, params))
