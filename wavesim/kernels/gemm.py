"""Kernel model of the canonical Triton GEMM (validation/kernels/gemm.py) for the wavesim engines.

A launch is G = ceil(M/BM) * ceil(N/BN) CTAs that all do the same work (edge tiles wrap their loads onto
the matrix and mask only their stores, so they are not shortened), each running L = ceil(K/BK) K steps.
Per CTA the model gives the engines (wavesim.engine):

  t_math  = 2*BM*BN*BK * copies / (SM tensor peak * efficiency)  one K step's math at the SM's whole rate; copies > 1
            where an mma.sync tile has more warps than 16 x 8 slices and they recompute its MMAs (mma_v2_copies)
  t_port  = port_bytes / (L2 B/clk/SM * port ratio * clock)  one K step's operand loads through the SM's fill port
  port_bytes = ((BM+BN)*BK*elem + h * requests) * line / (line + h): the loads' bytes plus h bytes
            (l2_request_overhead_bytes) per L2 request, a row segment of up to a cache line (`line`, hwspecs
            arch cache_line_bytes); a whole line costs its own bytes, a half line (a BK = 32 bf16 row) more per
            byte (measured: validation/l2_requests.py)
  t_share = max(t_math, t_port, t_frag) + t_loop              SM-shared work per step (math and loads overlap); for
            mma.sync on Hopper, t_math at mma_v2_sm_efficiency instead of the warps' own mma_v2_efficiency, and t_frag
            the warps' fragment reads at the shared-memory rate: co-resident CTAs hide each other's issue latency
            (variant MS1); for wgmma, t_frag its instructions' operand reads from shared memory (variant WS1)
  t_loop  = loop instructions per K step x warps / (sub-partitions x 1 instruction a clock): every warp issues the
            compiled loop body (read from the SASS: wavesim.resources' loop_instructions, over the K steps ptxas
            unrolled into it) and that issue adds to the step on Hopper (variant IS2), less the tensor-core
            instructions, whose issue t_math holds (variant IS3); the fitted k_step_overhead_cycles
            where the loop is unknown (no triton, AMD) or the GPU is older
            + tf32_b_element_cycles * BK*BN                    where tf32 wgmma needs B's tile copied transposed,
                                                               one element per lane (WGMMA_TRANSPOSABLE_DTYPES)
  t_lat   = (avg load latency x rounds + t_port + chi * t_math [+ the tf32 B copy]) / min(num_stages - 1, L)
            (rounds: the compiled loop's dependent global-load rounds, > 1 only where it stages its tiles through
            registers, as one stage does: wavesim.resources' load_rounds, read from the SASS; variant LR1)
            + BLOCK_K / 16 * k16 chain
            (BLOCK_K / 8 for tf32: MMA_K_BYTES), and at least t_math x sub-partitions / warps for a CTA of
            fewer warps than the SM has sub-partitions (a warp uses its own sub-partition's tensor core), and at
            least t_smem for an mma.sync kernel (sm_80+, no wgmma): its step's tile stores into shared memory and
            its warps' fragment reads out of it (ldmatrix; A read once per warp column of Triton's warp grid, B once
            per warp row: mma_v2_warps) through the SM's shared-memory port (hwspecs smem_bytes_per_clock), which
            decides a lone CTA of many warps on a small tile (a 16 x 64 tile's 16 warps read 5x its bytes)
            a CTA alone needs at least this per step: num_stages - 1 smem stages are in flight, and a stage
            is refilled only after its MMA is done (chi, mma_in_load_chain: the share of that MMA the chain
            waits for; the next loads go out while the current MMA runs; all of it at num_stages = 1, whose
            loads are synchronous); and a step's MMAs accumulate one
            k16 slice after another, a dependent chain that no stage hides (wgmma_k16_chain_cycles,
            mma_v2_k16_chain_cycles).
            The load latency is DRAM's for the share of reads that wait on DRAM: the launch's miss share
            times the CTAs of a wave that read each tile at the same K step (they all wait on its first
            miss), capped at 1; L2's for the rest. DRAM's grows with the DRAM load rho (what the wave's CTAs
            would stream at the unloaded latency, over the DRAM capacity, at most DRAM_LOAD_CAP):
            x (1 + dram_queueing * rho / (1 - rho)), a queue (validation/dram_queueing.py, from the memory
            probe); lone CTAs that stream B near the DRAM cap wait longer per K step than light ones
  t_lat  += wrapped_row_share * concurrent CTAs * BM*BK*elem / (single_row_l2_fraction * the L2 pool): the kernel
            wraps A's rows (offs_am % M), so for M < BM every CTA loads BM / M copies of each of M rows in every K
            step, and every co-resident CTA requests the same lines. The hottest line's requests set the pace: the
            share is the copies beyond the first, (BM / M - 1) / (BM - 1) of M = 1's (1 at M = 1, 0 from M = BM on;
            measured at M = 1 against M = 16, up to 3x slower tall tiles and wide grids there; the carry to
            1 < M < BM checked on decode batch sizes M = 2..12 that were never fitted: validation/single_row.py)
  masked  = (num_stages - 1) * (BM+BN)*BK*elem / shared-memory B/clk (hwspecs arch smem_bytes_per_clock): the
            pipelined loop's masked stage copies, zero-fill cp.async that still store into shared memory
            (masked_copies_s); only min(num_stages - 1, L) real loads are ever in flight (t_lat's divisor)
  compute_s = L * t_share + masked;  solo_frac = compute_s / (L * max(t_share, t_lat) + masked)
  l2_bytes  = L * (port_bytes - tile bytes x e x (1 - s)) from the chip-wide L2 pool of sm_count * L2 B/clk/SM *
            clock: the L2 request coalescer serves the tile reads that CTAs of one GPC share once, s being the first
            wave's per-GPC distinct share in the grouped launch order (wavesim/kernels/gpc_share.py; hwspecs
            sms_per_gpc, none merged where it is unknown) and e its measured efficiency (l2_coalescing_one_wave,
            l2_coalescing_later_waves: Nsight Compute counters, not fitted); the request overhead is not merged.
            When every SM is busy the pool is the limit; in a partial wave an SM holding more CTAs draws more of it, up
            to its port (port ratio x its even share). With the prior ratio 1.0 the port is never looser
            than the pool, and the model is the per-SM one; calibration raises the ratio on the H200.
  fixed_s   = one DRAM latency to fill the pipeline + CTA overhead + the C tile's store
  dram_bytes = DRAM traffic of the launch / G: A and B read once when they fit in the L2 share, else
            what each wave of co-resident CTAs touches in the grouped launch order (GROUP_M rows share B);
            C written only where the L2 share cannot hold it beside A and B (the L2 writes back; what it
            holds leaves after the kernel); inflated for short contiguous segments (a tile row of B is only
            BN elements long)
  desync_rate: the expected de-synchronisation of later waves (wavesim/engine/desync.py): at 3+ CTAs/SM
            desync_rate x (n x solo_frac) ** desync_contention_exponent (the more the n CTAs oversubscribe their
            SM, the faster they fall out of step), desync_rate_two_ctas at 2 (co-resident pairs drift apart more
            slowly), none at 1
  load_slowdown: kappa of the engines' chip-load rule (wavesim.engine): a phase in which a fraction u of the
            chip's SM math is in use runs its SM-side work 1 + kappa u slower (tails on a light chip run faster)
  unaligned: where N or K is not a multiple of 16 Triton compiles another kernel (TRITON_DIVISIBILITY below): its
            own resources (occupancy, spills), no stage in flight (t_lat's divisor 1), and per K step
            unaligned_a_element_cycles per element of A's tile per lane of the warp schedulers the CTA's warps
            occupy plus spill_word_cycles per spilled word added to t_lat, and unaligned_b_element_cycles SM
            cycles per element of B's tile (stored transposed) added to t_share (validation/unaligned.py)
  narrow:   an operand tile of less than 4 bytes a thread (cp.async's smallest copy) is loaded synchronously in the
            16-divisible kernel too: no stage in flight (t_lat's divisor 1; variant SL1, NOTES.md session 35)
  sm_queueing: on. A K step is a latency wait and then SM work, so co-resident CTAs collide at the SM
            before it is full (wavesim/engine/queueing.py): the first wave's cost rises smoothly with the
            CTAs per SM, as measured, instead of flat then linear

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
from dataclasses import asdict, dataclass, fields
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
    mma_v2_sm_efficiency: float
    l2_bytes_per_clock_per_sm: float
    l2_latency_cycles: float
    dram_latency_cycles: float
    dram_queueing: float
    dram_efficiency: float
    dram_segment_half_bytes: float
    k_step_overhead_cycles: float
    mma_in_load_chain: float
    wgmma_k16_chain_cycles: float
    mma_v2_k16_chain_cycles: float
    cta_overhead_cycles: float
    launch_overhead_s: float
    l2_fit_fraction: float
    l2_port_ratio: float
    single_row_l2_fraction: float
    l2_request_overhead_bytes: float
    desync_rate: float
    desync_contention_exponent: float
    desync_rate_two_ctas: float
    load_slowdown: float
    unaligned_a_element_cycles: float
    unaligned_b_element_cycles: float
    spill_word_cycles: float
    tf32_b_element_cycles: float
    l2_coalescing_one_wave: float
    l2_coalescing_later_waves: float

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
        if "desync_rate" in d and "desync_contention_exponent" not in d:
            # a calibration from before session 13 fitted desync_rate as one rate for every load: keep its meaning
            base["desync_contention_exponent"] = 0.0
        return cls(**base)


# Triton specializes every integer argument on divisibility by 16 (tt.divisibility = 16: wavesim/resources/oracle.py).
# The GEMM passes K as A's row stride and N as B's and C's, so where one is not a multiple of 16 the compiler cannot
# prove that operand's rows aligned: it loads them two bytes at a time and synchronously (LDG.E.U16 + STS.U16 instead
# of cp.async, so no software pipeline; C is stored the same way), with up to 255 registers and spills (sm_90 SASS of
# validation/kernels/gemm.py, compiled offline). Measured on the H200 (validation/data/h200/fresh14/, N = 5000,
# K = 3000): 3.6-7.5x cuBLAS's time where 16-divisible layers take 1.0-1.3x, and the stages change nothing; with A alone
# unaligned (K = 3000, N = 8192) 1.8-2.3x, with B and C alone (N = 5000 or 4104: 8-divisible is not enough) 2.9-7.2x
# (fresh14/unaligned_study.jsonl). The model prices that kernel with its own resources (GemmBatch.build) and costs
# (workload_arrays: unaligned_*_element_cycles, spill_word_cycles), more coarsely than the 16-divisible one (its picks:
# regret 1.21 on never-fitted unaligned layers (fresh22), ~1.03 on 16-divisible ones); `alignment_note` says so, with the
# padding that avoids it.
TRITON_DIVISIBILITY = 16


def unaligned_strides(N: int, K: int) -> tuple[str, ...]:
    """The sizes among K (A's row stride) and N (B's and C's) that Triton cannot specialize as 16-divisible."""
    return tuple(name for name, v in (("K", K), ("N", N)) if v % TRITON_DIVISIBILITY)


def alignment_note(N: int, K: int) -> str | None:
    """None for 16-divisible shapes; else what Triton does with them, how coarsely the model prices that, and the
    padding that avoids it."""
    bad = unaligned_strides(N, K)
    if not bad:
        return None
    sizes = {"K": K, "N": N}
    what = " and ".join(f"{n} = {sizes[n]}" for n in bad)
    pad = ", ".join(f"{n} = {-(-sizes[n] // TRITON_DIVISIBILITY) * TRITON_DIVISIBILITY}" for n in bad)
    verb = "is not a multiple" if len(bad) == 1 else "are not multiples"
    return (f"{what} {verb} of {TRITON_DIVISIBILITY}: Triton compiles this shape with 2-byte loads and no async "
            f"pipeline (the H200 ran such shapes at 1.8-7.5x cuBLAS's time, aligned ones at 1.0-1.3x); the "
            f"simulator models that kernel, more coarsely than the {TRITON_DIVISIBILITY}-divisible one (H200: pick "
            f"regret 1.2 on never-fitted unaligned layers, 1.03 on aligned ones). Pad to {pad} to get the faster "
            f"kernel")


@functools.cache
def _priors() -> GemmParams:
    with PRIORS_PATH.open("rb") as f:
        raw = tomllib.load(f)
    return GemmParams(**{f.name: float(raw[f.name]["value"]) for f in fields(GemmParams)})


class ConfigDoesNotFit(ValueError):
    """The config cannot launch on the GPU (occupancy 0); the message names the violated limit."""


def _arch_order(arch: str) -> int:
    return int(arch.split("_")[1]) if arch.startswith("sm_") else 0


# Hopper's warpgroup MMA (wgmma) exists from compute capability 9.0 (PTX ISA, wgmma.mma_async: sm_90a); each of its
# instructions computes 64 rows (shape m64nNk16) with N from 8 to 256.
WGMMA_MIN_ARCH = 90
WGMMA_M = 64
WGMMA_MIN_N = 8


def uses_wgmma(spec: GPUSpec, cfg: LaunchConfig) -> bool:
    """Whether the mainloop runs at the warpgroup-MMA rate: Triton lowers tl.dot to Hopper's wgmma when a
    warpgroup (4 warps) can own >= 64 rows, for every operand dtype (the compiled sm_90 TTGIR of all 186 configs
    of the tuning space, bf16 and fp32: MMA version 3 exactly where this rule says). fp32 operands then run tf32
    wgmma, whose B must be K-major in shared memory (transposed_b)."""
    return _arch_order(spec.arch.name) >= WGMMA_MIN_ARCH and cfg.BLOCK_M >= WGMMA_M and cfg.num_warps % 4 == 0


# wgmma reads a transposed (N-major) B from shared memory for 16-bit operands only (PTX ISA, wgmma.mma_async: the
# imm-trans-b operand is valid for .f16 / .bf16 alone). The GEMM's B is N-major (row-major K x N), so for other
# operand types Triton copies B's tile into K-major shared memory one 4-byte element per lane (LDGSTS.E instead of
# the 16-byte cp.async A gets: BK x BN single-element copies per K step in the sm_90 fp32 SASS of every wgmma config).
WGMMA_TRANSPOSABLE_DTYPES = frozenset({"bf16", "fp16"})
# Bytes of K per MMA instruction (m16n8k16 / wgmma k16 for 16-bit operands, m16n8k8 / k8 for tf32: PTX ISA): a
# K step's accumulation chain is BLOCK_K x element bytes / 32 dependent instructions.
MMA_K_BYTES = 32


# Rows x columns of the accumulator one m16n8k16 instruction computes: a warp's smallest share of the tile (PTX ISA).
MMA_V2_WARP_TILE = (16, 8)


def mma_v2_warps(cfg: LaunchConfig) -> tuple[int, int]:
    """Triton's warp grid (along M, along N) of an mma_v2 tile, as the sm_90 TTGIR of Triton 3.6 lays it out
    (warpsPerCTA of #nvidia_mma, versionMajor 2; tests/test_resources.py checks it against compiled kernels):
    warps double along M while the tile has at least as many 16-row slices per warp as 8-column ones, else along N,
    each side up to its slices; warps past both sides' slices go along M and hold copies of the same fragments."""
    rows, cols = MMA_V2_WARP_TILE
    m_slices, n_slices = cfg.BLOCK_M // rows, cfg.BLOCK_N // cols
    wm = wn = 1
    while wm * wn < cfg.num_warps:
        if (m_slices // wm >= n_slices // wn and wm < m_slices) or wn >= n_slices:
            wm *= 2
        else:
            wn *= 2
    return wm, wn


def mma_v2_smem_read_elements(cfg: LaunchConfig) -> float:
    """Elements of A and B one K column of an mma_v2 CTA's warps read from shared memory (ldmatrix): each warp its
    max(16, BM / wm) rows of A and max(8, BN / wn) columns of B, so A is read wn times and B wm times (more where
    warps hold copies of fragments)."""
    wm, wn = mma_v2_warps(cfg)
    rows, cols = MMA_V2_WARP_TILE
    return wn * max(cfg.BLOCK_M, rows * wm) + wm * max(cfg.BLOCK_N, cols * wn)


def mma_v2_copies(cfg: LaunchConfig) -> float:
    """How many times an mma_v2 CTA's warps compute each of its MMAs: warps past the tile's 16 x 8 slices hold copies
    of fragments (mma_v2_warps) and issue the same instructions (16 x 64 on 16 warps: 2 x 8 warps, 64 m16n8k16 per
    K step of 64 where the tile has 32, in the compiled PTX)."""
    wm, wn = mma_v2_warps(cfg)
    rows, cols = MMA_V2_WARP_TILE
    return max(cfg.BLOCK_M, rows * wm) * max(cfg.BLOCK_N, cols * wn) / (cfg.BLOCK_M * cfg.BLOCK_N)


def mmas_per_step(spec: GPUSpec, cfg: LaunchConfig, dtype: str) -> float:
    """Tensor-core instructions one warp issues per K step: a warpgroup's wgmma (64 rows each, N up to 256 in one)
    over its rows, or a warp's m16n8 mma.sync over its share of the tile's slices and their copies; x the K slices."""
    k_slices = cfg.BLOCK_K * DTYPE_BYTES[dtype] / MMA_K_BYTES
    if uses_wgmma(spec, cfg):
        along_m, _ = wgmma_warpgroups(cfg)
        return max(1.0, cfg.BLOCK_M / along_m / WGMMA_M) * k_slices
    rows, cols = MMA_V2_WARP_TILE
    return cfg.BLOCK_M / rows * cfg.BLOCK_N / cols * mma_v2_copies(cfg) / cfg.num_warps * k_slices


def loop_instructions_per_step(spec: GPUSpec, cfg: LaunchConfig, dtype: str, res) -> float:
    """Instructions each warp issues per K step: the compiled main loop's length over the K steps ptxas unrolled into
    it (its tensor-core instructions over one step's); 0 where the loop is unknown or its MMAs are not the m16n8 /
    wgmma ones counted here (before sm_80)."""
    if not res.loop_instructions or not res.loop_mmas or not has_cp_async(spec):
        return 0.0
    return res.loop_instructions / max(1, round(res.loop_mmas / mmas_per_step(spec, cfg, dtype)))


def loop_issue_per_step(spec: GPUSpec, cfg: LaunchConfig, dtype: str, res) -> float:
    """Instructions each warp issues per K step besides its tensor-core ones, whose issue t_math already holds
    (variant IS3); 0 where the loop is unknown."""
    per_step = loop_instructions_per_step(spec, cfg, dtype, res)
    return max(0.0, per_step - mmas_per_step(spec, cfg, dtype)) if per_step else 0.0


def wgmma_warpgroups(cfg: LaunchConfig) -> tuple[int, int]:
    """Triton's warpgroup grid (along M, along N): warpgroups go along M first, one per 64 rows, then split N."""
    warpgroups, rows = cfg.num_warps // 4, max(1, cfg.BLOCK_M // WGMMA_M)
    return max(1, min(warpgroups, rows)), max(1, warpgroups // rows)


def wgmma_width(cfg: LaunchConfig) -> float:
    """Columns per warpgroup instruction."""
    return cfg.BLOCK_N / wgmma_warpgroups(cfg)[1]


def specialization_problem(spec: GPUSpec, N, K) -> tuple[int, int, int] | None:
    """A representative (M, N, K) of the Triton specialization a launch of this shape gets, for gemm_resources:
    None for the 16-divisible kernel (and on AMD, where the unaligned kernel is not measured), else sizes that
    keep N's and K's divisibility by 16 (17 stands for any other; M is no stride, so it does not matter)."""
    if spec.arch.vendor != "nvidia" or not unaligned_strides(int(N), int(K)):
        return None
    return (TRITON_DIVISIBILITY, *(TRITON_DIVISIBILITY + (v % TRITON_DIVISIBILITY > 0) for v in (int(N), int(K))))


def config_occupancy(spec: GPUSpec, cfg: LaunchConfig, dtype: str, N: int | None = None, K: int | None = None):
    """(Occupancy, KernelResources) of a config on a GPU; occupancy 0 means it cannot launch. Given the shape's N
    and K, those of the kernel Triton compiles for it: N or K not a multiple of 16 gives another kernel
    (single-buffered, more registers, sometimes spills)."""
    return _occupancy(spec, cfg, dtype, None if N is None or K is None else specialization_problem(spec, N, K))


@functools.lru_cache(maxsize=65536)
def _occupancy(spec: GPUSpec, cfg: LaunchConfig, dtype: str, problem: tuple[int, int, int] | None):
    from wavesim.resources import gemm_resources

    res = gemm_resources(cfg, spec.arch.name, dtype, problem=problem)
    occ = hwspecs.occupancy(spec, num_warps=res.num_warps, regs_per_thread=res.regs_per_thread,
                            smem_bytes=res.smem_bytes)
    return occ, res


@dataclass(frozen=True, eq=False)
class GemmBatch:
    """Records (shape, config) of one GPU and dtype as arrays: everything the model needs that does not
    depend on its parameters, computed once (occupancy, grid, steps, tile geometry). Calibration
    evaluates the same batch under thousands of parameter sets; predict builds one per input file."""

    spec: GPUSpec
    dtype: str
    M: np.ndarray
    N: np.ndarray
    K: np.ndarray
    bm: np.ndarray
    bn: np.ndarray
    bk: np.ndarray
    group_m: np.ndarray
    stages: np.ndarray
    wgmma: np.ndarray       # bool: Hopper warpgroup MMA path
    wg_width: np.ndarray    # columns per warpgroup instruction
    ctas_per_sm: np.ndarray
    threads: np.ndarray     # threads per CTA
    unaligned_a: np.ndarray  # bool: K not a multiple of 16, A's rows are loaded two bytes at a time (NVIDIA)
    unaligned_b: np.ndarray  # bool: N not a multiple of 16, B's rows are
    spills: np.ndarray      # 32-bit words of local memory per thread of the kernel this shape gets
    transposed_b: np.ndarray  # bool: wgmma cannot read B N-major, so B's tile is copied one element per lane
    smem_reads: np.ndarray  # elements an mma.sync CTA's warps read from shared memory per K column (sm_80+ NVIDIA;
    #                         0 elsewhere: wgmma's operand reads are counted apart, in workload_arrays)
    mma_copies: np.ndarray  # times an mma.sync CTA's warps compute each MMA (mma_v2_copies; 1 where smem_reads is 0)
    load_rounds: np.ndarray  # dependent global-load rounds per K step of the compiled loop (KernelResources)
    loop_instructions: np.ndarray  # instructions each warp issues per K step besides its MMAs (loop_issue_per_step;
    #                                0: unknown)

    @classmethod
    def build(cls, spec: GPUSpec, dtype: str, M, N, K, configs: list[LaunchConfig]) -> "GemmBatch":
        """Arrays over records; a config that cannot launch raises ConfigDoesNotFit naming the limit. Each record
        gets the resources of the kernel Triton compiles for its shape (specialization_problem)."""
        M, N, K = (np.asarray(x, dtype=np.float64) for x in (M, N, K))
        nvidia = spec.arch.vendor == "nvidia"
        ua = nvidia & (np.mod(K, TRITON_DIVISIBILITY) > 0)
        ub = nvidia & (np.mod(N, TRITON_DIVISIBILITY) > 0)
        # one representative problem per alignment class (the resources depend on the class only)
        rep = {(a, b_): specialization_problem(spec, 17 if b_ else 16, 17 if a else 16)
               for a, b_ in {(False, False), *zip(ua.tolist(), ub.tolist())}}
        keys = list(zip(configs, ua.tolist(), ub.tolist()))
        uniq = {k: _occupancy(spec, k[0], dtype, rep[k[1:]]) for k in set(keys)}
        for (c, a, b_), (occ, _) in uniq.items():
            if occ.ctas_per_sm == 0:
                odd = " and ".join(n for n, u in (("K", a), ("N", b_)) if u)
                kernel = f" (its kernel for {odd} not a multiple of {TRITON_DIVISIBILITY})" if odd else ""
                raise ConfigDoesNotFit(f"config {c.key} does not fit on {spec.name}{kernel}: {occ.reason}")
        loop = {k: loop_issue_per_step(spec, k[0], dtype, res) for k, (_, res) in uniq.items()}
        col = lambda f: np.array([f(c) for c in configs], dtype=np.float64)  # noqa: E731
        wgmma = np.array([uses_wgmma(spec, c) for c in configs], dtype=bool)
        mma_v2 = ~wgmma & has_cp_async(spec)
        return cls(spec, dtype, M, N, K,
                   bm=col(lambda c: c.BLOCK_M), bn=col(lambda c: c.BLOCK_N), bk=col(lambda c: c.BLOCK_K),
                   group_m=col(lambda c: c.GROUP_M), stages=col(lambda c: c.num_stages),
                   wgmma=wgmma, wg_width=col(wgmma_width),
                   ctas_per_sm=np.array([uniq[k][0].ctas_per_sm for k in keys], dtype=np.float64),
                   threads=col(lambda c: spec.arch.warp_size * c.num_warps), unaligned_a=ua, unaligned_b=ub,
                   spills=np.array([uniq[k][1].spills for k in keys], dtype=np.float64),
                   transposed_b=wgmma & (dtype not in WGMMA_TRANSPOSABLE_DTYPES),
                   smem_reads=np.where(mma_v2, col(mma_v2_smem_read_elements), 0.0),
                   mma_copies=np.where(mma_v2, col(mma_v2_copies), 1.0),
                   load_rounds=np.array([uniq[k][1].load_rounds for k in keys], dtype=np.float64),
                   loop_instructions=np.array([loop[k] for k in keys], dtype=np.float64))

    @property
    def grid(self) -> np.ndarray:
        return np.ceil(self.M / self.bm) * np.ceil(self.N / self.bn)

    @property
    def k_steps(self) -> np.ndarray:
        return np.ceil(self.K / self.bk)

    @property
    def resident(self) -> np.ndarray:
        """CTAs running at once in a full wave (or the whole grid when it is smaller)."""
        return np.minimum(self.grid, self.spec.sm_count * self.ctas_per_sm)

    @property
    def waves(self) -> np.ndarray:
        return np.ceil(self.grid / (self.spec.sm_count * self.ctas_per_sm))

    @functools.cached_property
    def gpc_share(self) -> np.ndarray:
        """s of wavesim/kernels/gpc_share.py: the share of the first wave's tile reads that one GPC's CTAs do not
        share; 1 (nothing merged) where hwspecs knows no GPC size. Parameter-free, so counted once per batch."""
        scope = self.spec.sms_per_gpc
        if scope is None:
            return np.ones(self.M.shape)
        from wavesim.kernels.gpc_share import distinct_shares

        return distinct_shares(self.gpc_share_keys, self.spec.sm_count, scope)

    @property
    def gpc_share_keys(self) -> np.ndarray:
        """What s depends on, per record: (tile rows, tile columns, GROUP_M, CTAs/SM, BM, BN)."""
        return np.stack([np.ceil(self.M / self.bm), np.ceil(self.N / self.bn), self.group_m, self.ctas_per_sm,
                         self.bm, self.bn], axis=-1)


def _wave_footprint(b: GemmBatch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(W, rows, cols): the W co-resident CTAs of a wave in grouped launch order cover `rows` tile rows of A
    and `cols` tile columns of B. Inside one group of GROUP_M row-tiles they cover min(GROUP_M, W) rows and
    ceil(W / GROUP_M) columns; past a group, whole rows of npn tiles."""
    W = b.resident
    return (W, *grouped_footprint(np.ceil(b.M / b.bm), np.ceil(b.N / b.bn), b.group_m, W))


def grouped_footprint(npm, npn, group_m, W) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols): the tile rows of A and tile columns of B that W consecutive CTAs of the grouped launch order
    cover on a grid of npm x npn tiles (arrays broadcast)."""
    gm = np.minimum(group_m, npm)
    in_group = W <= gm * npn
    rows = np.where(in_group, np.minimum(gm, W), np.ceil(W / npn))
    cols = np.where(in_group, np.minimum(np.ceil(W / gm), npn), npn)
    return rows, cols


def concurrent_readers(b: GemmBatch) -> np.ndarray:
    """How many CTAs of a wave read each tile of A or B (bytes-weighted mean, >= 1): each of the W CTAs
    reads BM rows of A and BN columns of B per K step, the wave's distinct tiles are rows x BM + cols x BN."""
    W, rows, cols = _wave_footprint(b)
    return W * (b.bm + b.bn) / (rows * b.bm + cols * b.bn)


def _dram_bytes_total(b: GemmBatch, elem: int, grid, fit: float) -> np.ndarray:
    """DRAM traffic of each whole launch during the launch (bytes): A and B once when they fit in the L2
    share (fit x L2), else what the waves stream; plus the part of C the L2 share cannot hold beside them. The
    L2 is write-back, so a C that fits is written to DRAM after the kernel (Nsight Compute on the H200,
    validation/data/h200/counters/counters_waves.jsonl: N = 4096, K = 1024 writes 0 of C's 6.3 MB at M = 768
    and 29 of its 50 MB at M = 6144; counting all of C put the model at 1.4-2.1x the measured bytes there)."""
    M, N, K = b.M, b.N, b.K
    cap = fit * b.spec.l2_bytes
    ab = (M * K + K * N) * elem
    W, rows, cols = _wave_footprint(b)
    per_wave = (rows * b.bm * K + cols * b.bn * K) * elem
    reads = np.where(ab <= cap, ab, np.maximum(ab, per_wave * (grid / W)))
    c_written = np.maximum(0.0, M * N * elem - (cap - np.minimum(ab, cap)))
    return reads + c_written


def _dram_access_factor(b: GemmBatch, elem: int, seg_half: float) -> np.ndarray:
    """DRAM time per useful byte relative to a long stream: a tile row is a contiguous segment of
    BK (A) or BN (B, C) elements, and a segment of s bytes costs as much as s + seg_half bytes of a
    stream (activation and burst granularity). Weighted by each matrix's share of the unique bytes."""
    a, bb, c = b.M * b.K, b.K * b.N, b.M * b.N
    seg_k, seg_n = b.bk * elem, b.bn * elem
    return (a * (1 + seg_half / seg_k) + (bb + c) * (1 + seg_half / seg_n)) / (a + bb + c)


def wrapped_row_share(M, BM):
    """The share of M = 1's same-row cost a launch with M rows pays: the kernel wraps A's rows (offs_am % M), so a
    BM-row tile holds BM / M copies of each row, and the copies beyond the first are what the hottest line is asked
    for again; 1 at M = 1, 0 from M = BM on (validation/single_row.py)."""
    BM = np.asarray(BM, dtype=np.float64)
    return np.maximum(BM / np.asarray(M, dtype=np.float64) - 1.0, 0.0) / np.maximum(BM - 1.0, 1.0)


def l2_requests_per_k_step(bm, bn, bk, elem: int, line: int):
    """L2 requests of one K step's operand loads: one per contiguous row segment of up to a cache line (A: BM
    rows of BK elements, B: BK rows of BN elements)."""
    return bm * np.ceil(bk * elem / line) + bk * np.ceil(bn * elem / line)


def _l2_cost_bytes(b: GemmBatch, elem: int, step_bytes: np.ndarray, overhead: float):
    """(tile part, request part) of a K step's loads as the L2 port and pool see them: its bytes plus `overhead`
    bytes per request, scaled so that a whole cache line costs its own bytes (l2_bytes_per_clock_per_sm keeps meaning
    bytes of whole-line traffic; only rows shorter than a line cost more per byte). Bytes alone where the arch has no
    sourced line. The coalescer merges tile bytes, not the requests' overhead (NOTES.md session 29: merging both
    over-credits BK = 16 tiles, whose cost is requests)."""
    line = b.spec.arch.cache_line_bytes
    if line is None:
        return step_bytes, np.zeros(np.shape(step_bytes))
    requests = l2_requests_per_k_step(b.bm, b.bn, b.bk, elem, line)
    scale = line / (line + overhead)
    return step_bytes * scale, overhead * requests * scale


# cp.async (asynchronous global-to-shared copies, the pipelined loop's loads) exists from compute capability 8.0
# (CUDA C++ Programming Guide, Asynchronous Data Copies).
CP_ASYNC_MIN_ARCH = 80


def has_cp_async(spec: GPUSpec) -> bool:
    """Whether the GPU's pipelined loads are cp.async (NVIDIA sm_80+; AMD arch names order as 0)."""
    return _arch_order(spec.arch.name) >= CP_ASYNC_MIN_ARCH

# cp.async copies 4, 8 or 16 bytes (PTX ISA, cp.async cp-size)
CP_ASYNC_MIN_BYTES = 4

# Warp instructions a sub-partition's scheduler issues per clock: "a multiprocessor issues one instruction per warp over
# one clock cycle for four warps at a time" (CUDA C++ Programming Guide, Performance Guidelines, Multiprocessor Level:
# compute capability 5.x and later; its four warps are the four sub-partitions, hwspecs subpartitions_per_sm).
WARP_ISSUE_PER_CLOCK = 1

# rho at which the loaded DRAM latency stops growing; past it the engines' DRAM bandwidth pool is the limit.
# Measured: near the DRAM's capacity the H200's DRAM latency saturates at 1.62 x unloaded, which the queue with
# q = 0.066-0.073 reaches at rho = 0.895-0.904 (validation/dram_queueing.py on validation/data/h200/memory_probe.json
# and dram_load_probe.json).
DRAM_LOAD_CAP = 0.9

# The de-synchronisation rates (GemmParams fields) and the occupancies they apply to (desync_rate_field).
DESYNC_RATE_FIELDS = {"desync_rate": "3+ CTAs/SM", "desync_rate_two_ctas": "2 CTAs/SM"}
DESYNC_LOAD_MIN_CTAS = 3   # desync_rate, scaled by the SM load, applies from this many CTAs/SM


def masked_copies_s(b: GemmBatch, step_bytes: np.ndarray, unaligned: np.ndarray) -> np.ndarray:
    """Seconds of SM work per CTA for the pipelined loop's masked stage copies. Triton issues each stage's loads
    predicated on its K step being < L (the prologue num_stages - 1 steps ahead, then one per iteration), so a CTA
    issues L + num_stages - 1 stage copies of which num_stages - 1 are masked; on sm_80+ they are cp.async with
    src-size 0 (selp(16, 0, pred) in the PTX of every config), zero-fill copies that still store a whole stage into
    shared memory, and the loop's final cp.async.wait_group 0 waits on them. Charged at the arch's shared-memory
    rate (no fitted cost); none for the unaligned kernel (unpipelined loads) or where the arch has no sourced rate
    or no cp.async. Noise at long K loops, 3-5% per extra stage at L <= 8 (H200: NOTES session 19)."""
    rate = b.spec.arch.smem_bytes_per_clock
    if rate is None or not has_cp_async(b.spec):
        return np.zeros(b.stages.shape)
    copies = np.where(unaligned, 0, np.maximum(b.stages - 1, 0))
    return copies * step_bytes / (rate * b.spec.boost_clock_hz)


def desync_rate_field(ctas_per_sm: int) -> str | None:
    """The GemmParams field of the de-synchronisation rate at this occupancy (wavesim/engine/desync.py): pairs of
    co-resident CTAs drift apart more slowly than 3+; one CTA per SM stays in step (None)."""
    return ("desync_rate" if ctas_per_sm >= DESYNC_LOAD_MIN_CTAS else "desync_rate_two_ctas" if ctas_per_sm == 2
            else None)


def desync_rates(ctas_per_sm: np.ndarray, solo_frac: np.ndarray, p: GemmParams) -> np.ndarray:
    """Each record's de-synchronisation rate by its occupancy (desync_rate_field's rule, 0 where it is None).
    At 3+ CTAs/SM it grows with the SM's load n x solo_frac (the lone CTAs' worth of SM work the n co-resident
    CTAs ask for): desync_rate x load ** desync_contention_exponent. CTAs that queue for a full SM fall out of
    step; CTAs that mostly wait on their loads stay in it (H200 dense study, validation/data/h200/dense/:
    per-config rates 0.2-0.7 at loads 1.0-1.4, 1.3-5 at loads 1.8-2.4; wavesim/data/gemm_priors.toml)."""
    k = np.asarray(ctas_per_sm)
    load = k * np.asarray(solo_frac, dtype=np.float64)
    out = np.zeros(k.shape)
    for occ in np.unique(k):
        field = desync_rate_field(int(occ))
        sel = k == occ
        if field == "desync_rate":
            out[sel] = p.desync_rate * load[sel] ** p.desync_contention_exponent
        elif field:
            out[sel] = getattr(p, field)
    return out


def workload_arrays(b: GemmBatch, p: GemmParams) -> dict[str, np.ndarray]:
    """The engines' per-CTA parameters of every record (see the module docstring for the formulas)."""
    spec = b.spec
    elem = DTYPE_BYTES[b.dtype]
    clock = spec.boost_clock_hz
    grid, L = b.grid, b.k_steps
    sm_peak = spec.tensor_flops_per_clock_per_sm[TENSOR_DTYPE[b.dtype]] * clock
    eff = np.where(b.wgmma, p.mma_efficiency * b.wg_width / (b.wg_width + p.wgmma_n_half), p.mma_v2_efficiency)
    t_math = 2.0 * b.bm * b.bn * b.bk * b.mma_copies / (sm_peak * eff)
    step_bytes = (b.bm + b.bn) * b.bk * elem
    tile_cost, request_cost = _l2_cost_bytes(b, elem, step_bytes, p.l2_request_overhead_bytes)
    port_bytes = tile_cost + request_cost
    # The chip-wide pool serves the tile bytes that one GPC's CTAs share once, at the coalescer's measured efficiency
    # (later waves' CTAs are dealt less in step: their own e); the SM's port still moves every byte.
    coalesced = np.where(b.waves <= 1, p.l2_coalescing_one_wave, p.l2_coalescing_later_waves) * (1.0 - b.gpc_share)
    pool_bytes = tile_cost * (1.0 - coalesced) + request_cost
    l2_Bps = p.l2_bytes_per_clock_per_sm * clock   # the chip-wide L2 pool, per SM
    t_port = port_bytes / (l2_Bps * p.l2_port_ratio)  # one K step's loads through the SM's own fill port
    dram_total = _dram_bytes_total(b, elem, grid, p.l2_fit_fraction)
    # The CTAs of a wave read each tile at about the same K step: the first read misses to DRAM and the
    # others wait for the same line, so the share of reads that pay DRAM latency is the miss share times
    # the tile's concurrent readers (capped at all of them).
    miss = np.clip(dram_total / np.maximum(grid * L * step_bytes, 1.0), 0.0, 1.0)
    dram_wait = np.minimum(1.0, miss * concurrent_readers(b))
    k16_chain = np.where(b.wgmma, p.wgmma_k16_chain_cycles, p.mma_v2_k16_chain_cycles)
    single_row_Bps = p.single_row_l2_fraction * l2_Bps * spec.sm_count
    # The kernel of a shape with N or K not a multiple of 16 loads that operand two bytes at a time, synchronously:
    # no stage is in flight ahead of the MMA, and each K step waits on those loads and on the spilled registers. A's
    # elements are stored to shared memory as they come: a latency per element of its tile per lane of the SM
    # sub-partitions the CTA's warps use (an 8-warp CTA is no faster per element than a 4-warp one). B's are stored
    # transposed (STS.U16 into a K-major layout: sm_90 SASS), which costs the SM's shared-memory stores, work its
    # co-resident CTAs queue for: SM cycles per element of B's tile in t_share below (validation/unaligned.py; counted
    # in the CTA's own chain as well, it fits the held-out layers worse: NOTES session 17).
    unaligned = b.unaligned_a | b.unaligned_b
    # An operand tile that gives each thread less than cp.async's smallest copy is loaded synchronously too (LDG.E.U16
    # + STS.U16 in the sm_90 SASS of the 16-divisible kernel: A of 16 x 128 x 16 on 16 warps), so its K steps wait on
    # those loads with no stage in flight.
    narrow = has_cp_async(spec) & (np.minimum(b.bm, b.bn) * b.bk * elem < CP_ASYNC_MIN_BYTES * b.threads)
    # Only the loads of real K steps are ever in flight: min(num_stages - 1, L) of them (the rest are masked, below).
    in_flight = np.where(unaligned | narrow, 1.0, np.maximum(np.minimum(b.stages - 1, L), 1))
    lanes = np.minimum(b.threads, spec.arch.subpartitions_per_sm * spec.arch.warp_size)
    unaligned_s = (p.unaligned_a_element_cycles * b.bm * b.bk * b.unaligned_a / lanes
                   + p.spill_word_cycles * b.spills) / clock

    # num_stages = 1 compiles to synchronous loads (LDG + STS, no cp.async: sm_90 SASS), so a step's MMA and the next
    # step's loads do not overlap: all of the MMA is in the chain, not the mma_in_load_chain share.
    chi = np.where(b.stages == 1, 1.0, p.mma_in_load_chain)
    # A warp issues its MMAs to the tensor core of its own SM sub-partition: a CTA of fewer warps than
    # sub-partitions computes at that share of the SM's rate however idle the rest is.
    subs = spec.arch.subpartitions_per_sm
    warps = b.threads / spec.arch.warp_size
    t_math_own = t_math * subs / np.minimum(warps, subs)
    # Every warp issues the whole loop body each K step, one instruction a clock on its sub-partition, and the SM's four
    # schedulers share a step's loop x warps instructions (the loop's length read from the SASS, less its MMAs, which
    # t_math holds). On Hopper that issue adds to the SM-shared step (below), where the loop is known; elsewhere the
    # fitted per-step overhead stands for it (variants IS2 and IS3, NOTES.md sessions 36-37).
    t_issue = b.loop_instructions * warps / subs / WARP_ISSUE_PER_CLOCK / clock
    issue_known = (b.loop_instructions > 0) & (_arch_order(spec.arch.name) >= WGMMA_MIN_ARCH)
    t_loop = np.where(issue_known, t_issue, p.k_step_overhead_cycles / clock)

    # fp32 under wgmma: B's tile is copied into K-major shared memory one element per lane (WGMMA_TRANSPOSABLE_DTYPES).
    t_tf32_copy = p.tf32_b_element_cycles * b.transposed_b * b.bk * b.bn / clock

    # An mma.sync K step moves its tile into shared memory and its warps' fragments out of it (ldmatrix) through the
    # SM's shared-memory port: a floor on the CTA's own step. Not SM-shared work: there it adds M-sweep jumps the
    # hardware lacks (variant SM1, NOTES.md session 34).
    smem_rate = spec.arch.smem_bytes_per_clock
    smem_s_per_byte = 1.0 / (smem_rate * clock) if smem_rate else 0.0
    t_reads = b.smem_reads * b.bk * elem * smem_s_per_byte     # the warps' fragment reads (0 but for mma.sync)
    t_smem = np.where(b.smem_reads > 0, step_bytes * smem_s_per_byte + t_reads, 0.0)

    def latency_step(dram_latency_cycles):
        lat_cycles = dram_wait * dram_latency_cycles + (1.0 - dram_wait) * p.l2_latency_cycles
        # A loop that stages its tiles through registers waits on its loads once per round (one stage; the unaligned
        # kernel's cost per element is fitted instead).
        lat_cycles = lat_cycles * np.where(unaligned, 1.0, b.load_rounds)
        # A smem stage is refilled only after the MMA that read it is done, so each of the num_stages - 1
        # stages in flight cycles through load latency + transfer + (a share of) the math (Little's law on the
        # buffers; the share: mma_in_load_chain). The tf32 B copy is such a load, issued element by element by the
        # CTA's own warps: its issue is in the cycle too (with one stage in flight the hardware's fp32 kernels run
        # 11-13% slower than with two, which only the chain shows: NOTES session 19).
        t = (lat_cycles / clock + t_port + chi * t_math + t_tf32_copy) / in_flight + unaligned_s
        # Each K step's MMAs accumulate into the same registers, one K slice after another: a dependent chain
        # of BLOCK_K / 16 instructions (BLOCK_K / 8 for tf32) that no stage in flight hides (measured:
        # validation/data/h200/stages/).
        t = t + b.bk * elem / MMA_K_BYTES * k16_chain / clock
        t = np.maximum(np.maximum(t, t_math_own), t_smem)
        # M < BM: every CTA's A tile is BM / M copies of each of M rows, requested by all co-resident CTAs each K step.
        return t + wrapped_row_share(b.M, b.bm) * b.resident * b.bm * b.bk * elem / single_row_Bps

    # SM-shared per K step: math and port transfers overlap, the loop overhead adds to them, and so does copying B's
    # tile one element per lane where wgmma needs it transposed or N is unaligned (the same warps issue those copies
    # and the MMAs; adding fits the fp32 records better than overlapping: NOTES.md, session 17).
    t_bcopy = t_tf32_copy + p.unaligned_b_element_cycles * b.unaligned_b * b.bk * b.bn / clock
    # mma.sync CTAs that share an SM hide each other's issue latency: their SM-shared math runs at the SM's own rate
    # (mma_v2_sm_efficiency, measured), where a CTA's own warps reach only mma_v2_efficiency (t_math, in its chain and
    # floor above), and their fragment reads queue for the SM's shared-memory port (variant MS1, NOTES.md session 35).
    # Measured on Hopper, where mma.sync is the second path; before it (sm_80-89) mma.sync is the tensor path and the
    # rate is unmeasured, so the form stays the one-rate one there.
    hopper_v2 = ~b.wgmma & (_arch_order(spec.arch.name) >= WGMMA_MIN_ARCH)
    t_math_sm = np.where(hopper_v2, t_math * p.mma_v2_efficiency / p.mma_v2_sm_efficiency, t_math)
    # wgmma reads both operands from shared memory for each instruction (gdesc operands in the sm_90 SASS): A's 64 rows
    # once per warpgroup along N, B once per 64-row instruction, at least 8 columns an instruction (m64n8 is wgmma's
    # narrowest); elements per K column. Co-resident CTAs queue for the same port (variant WS1).
    along_n = b.bn / b.wg_width
    wg_reads = np.where(b.wgmma, b.bm * along_n + b.bm / WGMMA_M * along_n * np.maximum(b.wg_width, WGMMA_MIN_N), 0.0)
    t_frag = np.where(hopper_v2, t_reads, wg_reads * b.bk * elem * smem_s_per_byte)
    t_share = np.maximum.reduce([t_math_sm, t_port, t_frag]) + t_bcopy + t_loop
    # DRAM latency grows with the DRAM load (a queue: x (1 + dram_queueing x rho / (1 - rho))), rho being what the
    # wave's CTAs would stream at the unloaded latency (each step at its latency or its SM share, whichever is
    # slower) over the DRAM capacity; capped at DRAM_LOAD_CAP, past which the engines' DRAM bandwidth pool limits.
    dram_cta = dram_total / grid * _dram_access_factor(b, elem, p.dram_segment_half_bytes)
    dram_Bps = spec.dram_bandwidth_bytes_per_s * p.dram_efficiency
    unloaded = latency_step(p.dram_latency_cycles)
    step = np.maximum(unloaded, b.resident / spec.sm_count * t_share)
    rho = np.minimum(b.resident * dram_cta / (L * step) / dram_Bps, DRAM_LOAD_CAP)
    t_lat = latency_step(p.dram_latency_cycles * (1.0 + p.dram_queueing * rho / (1.0 - rho)))
    masked_s = masked_copies_s(b, step_bytes, unaligned)
    compute_s = L * t_share + masked_s
    solo_frac = compute_s / (L * np.maximum(t_share, t_lat) + masked_s)
    store_s = b.bm * b.bn * elem / l2_Bps
    return {"grid": grid, "sm_count": spec.sm_count, "slots_per_sm": b.ctas_per_sm, "compute_s": compute_s,
            "solo_frac": solo_frac,
            "l2_bytes": L * pool_bytes, "l2_Bps": l2_Bps * spec.sm_count,
            "dram_bytes": dram_cta,
            "mem_cap_Bps": dram_Bps,
            "fixed_s": (p.dram_latency_cycles + p.cta_overhead_cycles) / clock + store_s,
            "dram_Bps": dram_Bps,
            "launch_overhead_s": p.launch_overhead_s, "desync_rate": desync_rates(b.ctas_per_sm, solo_frac, p),
            "load_slowdown": p.load_slowdown, "sm_queueing": True}


def simulate_batch(b: GemmBatch, params: GemmParams | None = None):
    """Makespans (seconds) of every record, by the engines' exact closed form (all CTAs alike)."""
    from wavesim.engine import run_uniform_batch

    w = workload_arrays(b, params or _priors())
    grid = w.pop("grid")
    return run_uniform_batch(grid.astype(np.int64), **{**w, "slots_per_sm": w["slots_per_sm"].astype(np.int64)})


def simulate_config(spec: GPUSpec, cfg: LaunchConfig, M, N, K, dtype: str = "bf16",
                    params: GemmParams | None = None):
    """Makespans (seconds) and waves of one config over arrays of shapes."""
    M, N, K = np.broadcast_arrays(*(np.atleast_1d(np.asarray(x, dtype=np.float64)) for x in (M, N, K)))
    b = GemmBatch.build(spec, dtype, M, N, K, [cfg] * M.size)
    out = simulate_batch(b, params)
    return out.makespan_s, out.waves, b


class GemmModel:
    """The `KernelModel` of the canonical Triton GEMM: problem + config -> CTAs (Workload) and L."""

    name = "gemm"

    def grid(self, problem: GemmProblem, cfg: LaunchConfig) -> int:
        return math.ceil(problem.M / cfg.BLOCK_M) * math.ceil(problem.N / cfg.BLOCK_N)

    def inner_loop(self, problem: GemmProblem, cfg: LaunchConfig) -> int:
        return math.ceil(problem.K / cfg.BLOCK_K)

    def batch(self, spec: GPUSpec, problem: GemmProblem, cfg: LaunchConfig) -> GemmBatch:
        return GemmBatch.build(spec, problem.dtype, [problem.M], [problem.N], [problem.K], [cfg])

    def workload(self, spec: GPUSpec, problem: GemmProblem, cfg: LaunchConfig, params: GemmParams | None = None):
        """The engines' Workload: G identical CTAs."""
        from wavesim.engine import Workload

        w = workload_arrays(self.batch(spec, problem, cfg), params or _priors())
        g = int(w.pop("grid")[0])
        one = {k: (float(np.ravel(v)[0]) if np.ndim(v) else v) for k, v in w.items()}
        return Workload(compute_s=np.full(g, one.pop("compute_s")), sm_count=int(one.pop("sm_count")),
                        slots_per_sm=int(one.pop("slots_per_sm")), **one)
