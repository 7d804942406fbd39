"""The canonical GEMM with a per-CTA trace: which SM ran each program, and when it started and ended.

The same tile code as validation/kernels/gemm.py (``gemm_tile``, inlined), bracketed by two reads of the
GPU's global nanosecond timer (%globaltimer, the same clock on every SM) and of the SM's cycle counter
(%clock64), plus %smid. Each program writes one row of ``TRACE_FIELDS`` (int64) to ``trace``. This is the
hardware counterpart of wavesim's per-CTA trace (Result.trace: SM, start, end): it shows the dispatch
order, how synchronous the waves are and whether SMs run at different speeds, none of which a kernel
time can show. The timestamps cost a few instructions per CTA (validation/trace.py measures the traced
and untraced kernel side by side). With a `steps` buffer it also stores %clock64 after every K step's dot
(CTAs x K steps, int64): what each step of a CTA took, and how that changes with its SM's co-residents.
"""

from __future__ import annotations

import triton
import triton.language as tl

from validation.kernels.gemm import gemm_tile, grid_size, read_u64
from wavetune.config import LaunchConfig

TRACE_FIELDS = ("smid", "start_ns", "end_ns", "start_clk", "end_clk")


@triton.jit
def smid():
    """The id of the SM running this CTA (%smid)."""
    return tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def gemm_kernel_traced(a_ptr, b_ptr, c_ptr, trace_ptr, M, N, K,
                       stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP_M: tl.constexpr, steps_ptr, RECORD_STEPS: tl.constexpr, TILE_STRIDE, TILE_BLOCK,
                       MAPPED: tl.constexpr):
    pid = tl.program_id(axis=0)
    row = trace_ptr + pid.to(tl.int64) * 5
    # the start values go to memory before the tile rather than being held in registers across it, which cost
    # register-bound configs a CTA per SM (sm_90: 32x128x32 s3 80 registers as in the plain kernel, 94 held;
    # 32x64x64 s2 still 72 against 64, so it runs 7 CTAs/SM traced where the plain kernel runs 8)
    tl.store(row + 1, read_u64("%globaltimer"))
    tl.store(row + 3, read_u64("%clock64"))
    # MAPPED: blocks of TILE_BLOCK consecutive programs keep their tiles' order and the blocks are permuted: program i
    # computes tile ((i // TILE_BLOCK) x TILE_STRIDE mod (tiles / TILE_BLOCK)) x TILE_BLOCK + i mod TILE_BLOCK, for any
    # number of programs (the probes: validation/sm_side.py puts every program on C's one tile, validation/l2_probe.py
    # on a resident set of tiles)
    tile = pid
    if MAPPED:
        blocks = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N) // TILE_BLOCK
        tile = ((pid // TILE_BLOCK).to(tl.int64) * TILE_STRIDE % blocks).to(tl.int32) * TILE_BLOCK + pid % TILE_BLOCK
    gemm_tile(tile, a_ptr, b_ptr, c_ptr, M, N, K,
              stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M,
              steps_ptr + pid.to(tl.int64) * tl.cdiv(K, BLOCK_K), RECORD_STEPS)
    tl.store(row + 4, read_u64("%clock64"))
    tl.store(row + 2, read_u64("%globaltimer"))
    tl.store(row, smid().to(tl.int64))


def gemm_traced(a, b, cfg: LaunchConfig, c=None, trace=None, steps=None, programs: int | None = None,
                tile_stride: int = 1, tile_block: int = 1):
    """C = A @ B like validation.kernels.gemm.gemm, also filling `trace` (int64, grid x 5, TRACE_FIELDS) and, when
    given, `steps` (int64, grid x ceil(K / BLOCK_K): %clock64 after each K step); returns (C, trace). With `programs`,
    that many programs run instead of one per tile, program i computing tile (i x tile_stride) mod C's tiles, or with
    tile_block b, blocks of b consecutive programs keeping their tiles' order and the blocks permuted by tile_stride
    (several programs may compute the same tile; the probes use this)."""
    import torch

    M, K = a.shape
    N = b.shape[1]
    grid = grid_size(M, N, cfg) if programs is None else programs
    if c is None:
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    if trace is None:
        trace = torch.zeros((grid, len(TRACE_FIELDS)), device=a.device, dtype=torch.int64)
    gemm_kernel_traced[(grid,)](
        a, b, c, trace, M, N, K,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_M=cfg.BLOCK_M, BLOCK_N=cfg.BLOCK_N, BLOCK_K=cfg.BLOCK_K, GROUP_M=cfg.GROUP_M,
        steps_ptr=trace if steps is None else steps, RECORD_STEPS=steps is not None,
        TILE_STRIDE=tile_stride, TILE_BLOCK=tile_block, MAPPED=programs is not None,
        num_warps=cfg.num_warps, num_stages=cfg.num_stages)
    return c, trace


def warm_trace_medians(a, b, cfg: LaunchConfig, c, programs: int, reps: int, tile_stride: int = 1,
                       tile_block: int = 1, flush=None) -> dict:
    """Launch `programs` mapped programs (gemm_traced) once to compile and to bring A and B into the L2, then `reps`
    times with no flush in between (A and B stay resident: no K step waits on DRAM); the medians over the launches of
    the median CTA time and cycles and of the span, and the most CTAs one SM ran (the probes: validation/sm_side.py,
    validation/l2_probe.py). With `flush` (a callable emptying the L2), it runs before each timed launch instead:
    every first read of a tile waits on DRAM (validation/cold_tail.py)."""
    import numpy as np
    import torch

    _, tr = gemm_traced(a, b, cfg, c, programs=programs, tile_stride=tile_stride, tile_block=tile_block)
    torch.cuda.synchronize()
    durs, cycles, spans, most = [], [], [], 0
    for _ in range(reps):
        if flush is not None:
            flush()
        gemm_traced(a, b, cfg, c, tr, programs=programs, tile_stride=tile_stride, tile_block=tile_block)
        torch.cuda.synchronize()
        t = tr.cpu().numpy()
        durs.append(float(np.median(t[:, 2] - t[:, 1])))
        cycles.append(float(np.median(t[:, 4] - t[:, 3])))
        spans.append(float(t[:, 2].max() - t[:, 1].min()))
        most = max(most, int(np.bincount(t[:, 0]).max()))
    return {"cta_ns": float(np.median(durs)), "cta_cycles": float(np.median(cycles)), "span_ns": float(np.median(spans)),
            "max_ctas_on_an_sm": most, "l2": "warm (A and B resident)" if flush is None else "cold (emptied before "
            "each launch)", "gpu": torch.cuda.get_device_name(),
            "torch": torch.__version__, "triton": __import__("triton").__version__}


def random_operands(M: int, N: int, K: int, gen):
    """(A, B, C) for a probe's launches on the GPU: A and B bf16 drawn from `gen` (a torch.Generator: A first, then B,
    so a seeded generator gives every probe the same operands), C an empty bf16 M x N."""
    import torch

    a = torch.randn((M, K), device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn((K, N), device="cuda", generator=gen).to(torch.bfloat16)
    return a, b, torch.empty((M, N), device="cuda", dtype=torch.bfloat16)


def case_operands(cases):
    """For each (N, K, M, config key) of a probe's cases, in order: (N, K, M, key, its LaunchConfig, (A, B, C)), the
    operands drawn from one generator seeded 0 (random_operands), so a probe's cases get the same operands every run."""
    import torch

    gen = torch.Generator(device="cuda").manual_seed(0)
    for N, K, M, key in cases:
        yield N, K, M, key, LaunchConfig.from_key(key), random_operands(M, N, K, gen)


def local_gpu_spec():
    """The visible GPU's spec (hwspecs.detect), for the probes that run on it; a clear error without one."""
    import hwspecs

    spec = hwspecs.detect()
    if spec is None:
        raise ValueError("this probe runs kernels on the local GPU and none is visible: install the 'gpu' extra (torch, "
                         "triton) on a machine with an NVIDIA GPU; its `report` reads the committed records anywhere")
    return spec
