"""The canonical GEMM with its programs taken in another order: program i computes the tile of pid (i x STRIDE) mod G.

With STRIDE = 1 it is the canonical kernel (validation/kernels/gemm.py, the same ``gemm_tile``). With STRIDE coprime
to G every tile is still computed once, but the programs the hardware dispatches one after another (to the SMs of
one GPC: validation/first_wave.py) get tiles far apart in the grouped order. A launch whose CTAs all fit in one wave
then runs the same set of tiles at the same time in either order; only which tiles share a GPC changes
(validation/gpc_scope.py).
"""

from __future__ import annotations

import triton
import triton.language as tl

from validation.kernels.gemm import gemm_tile, grid_size
from wavetune.config import LaunchConfig


@triton.jit
def gemm_kernel_permuted(a_ptr, b_ptr, c_ptr, M, N, K,
                         stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, STRIDE,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = (tl.program_id(axis=0).to(tl.int64) * STRIDE % tl.num_programs(axis=0)).to(tl.int32)
    gemm_tile(pid, a_ptr, b_ptr, c_ptr, M, N, K,
              stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M,
              c_ptr, False)


def gemm_permuted(a, b, cfg: LaunchConfig, stride: int, c=None):
    """C = A @ B with the programs in order i -> (i x stride) mod G; stride must be coprime to G."""
    import math

    import torch

    M, K = a.shape
    N = b.shape[1]
    G = grid_size(M, N, cfg)
    if math.gcd(stride, G) != 1:
        raise ValueError(f"stride {stride} shares a factor with the grid of {G} programs: some tiles would be "
                         f"computed twice and others never; pick a stride coprime to {G}")
    if c is None:
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    gemm_kernel_permuted[(G,)](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1), stride,
        BLOCK_M=cfg.BLOCK_M, BLOCK_N=cfg.BLOCK_N, BLOCK_K=cfg.BLOCK_K, GROUP_M=cfg.GROUP_M,
        num_warps=cfg.num_warps, num_stages=cfg.num_stages)
    return c
