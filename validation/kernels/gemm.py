"""The canonical Triton GEMM: the kernel of Triton's matmul tutorial (python/tutorials/03-matrix-multiplication.py).

One program per BLOCK_M x BLOCK_N output tile, launched in grouped order (GROUP_M row-tiles share the
B columns they read, for L2 reuse), a loop over K in BLOCK_K steps with masked loads, fp32 accumulation,
A row-major MxK, B row-major KxN, C MxN in the input dtype. wavesim.kernels.gemm models exactly this.
"""

from __future__ import annotations

import triton
import triton.language as tl

from wavetune.config import LaunchConfig


@triton.jit
def read_u64(REG: tl.constexpr):
    """A 64-bit PTX special register, e.g. '%globaltimer' or '%clock64'."""
    # Not pure: each read must stay where it is written, not be merged or hoisted.
    return tl.inline_asm_elementwise("mov.u64 $0, " + REG + ";", "=l", [], dtype=tl.int64, is_pure=False, pack=1)


@triton.jit
def gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    gemm_tile(tl.program_id(axis=0), a_ptr, b_ptr, c_ptr, M, N, K,
              stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M,
              c_ptr, False)


@triton.jit
def gemm_tile(pid, a_ptr, b_ptr, c_ptr, M, N, K,
              stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
              steps_ptr, RECORD_STEPS: tl.constexpr):
    """Program `pid`'s output tile: the whole kernel body (inlined; validation/kernels/gemm_trace.py
    wraps it in timestamps). With RECORD_STEPS, the SM's cycle counter after each K step's dot is stored at
    steps_ptr[step] (the per-step trace; constexpr False compiles to the plain kernel, unchanged)."""
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # range(0, K, BLOCK_K) rather than the tutorial's range(0, cdiv(K, BLOCK_K)): the same loop, and
    # the form that Triton's CPU interpreter also runs (CI checks this kernel with TRITON_INTERPRET=1).
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k0, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k0, other=0.0)
        acc = tl.dot(a, b, acc)
        if RECORD_STEPS:
            tl.store(steps_ptr + k0 // BLOCK_K, read_u64("%clock64"))
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def grid_size(M: int, N: int, cfg: LaunchConfig) -> int:
    return triton.cdiv(M, cfg.BLOCK_M) * triton.cdiv(N, cfg.BLOCK_N)


def gemm(a, b, cfg: LaunchConfig, c=None):
    """C = A @ B with the given launch config; returns (C, compiled kernel handle)."""
    import torch

    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"gemm: shapes {tuple(a.shape)} @ {tuple(b.shape)} do not chain")
    M, K = a.shape
    N = b.shape[1]
    if c is None:
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    handle = gemm_kernel[(grid_size(M, N, cfg),)](
        a, b, c, M, N, K,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_M=cfg.BLOCK_M, BLOCK_N=cfg.BLOCK_N, BLOCK_K=cfg.BLOCK_K, GROUP_M=cfg.GROUP_M,
        num_warps=cfg.num_warps, num_stages=cfg.num_stages)
    return c, handle


def warmup(M: int, N: int, K: int, dtype, cfg: LaunchConfig, device: str = "cuda"):
    """Compile (no launch) the specialization a real launch of this shape would use; returns the kernel."""
    import torch

    a = torch.empty((M, K), device=device, dtype=dtype)
    b = torch.empty((K, N), device=device, dtype=dtype)
    c = torch.empty((M, N), device=device, dtype=dtype)
    return gemm_kernel.warmup(
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_M=cfg.BLOCK_M, BLOCK_N=cfg.BLOCK_N, BLOCK_K=cfg.BLOCK_K, GROUP_M=cfg.GROUP_M,
        num_warps=cfg.num_warps, num_stages=cfg.num_stages, grid=(grid_size(M, N, cfg),))
