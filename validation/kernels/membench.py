"""Memory micro-benchmarks for the probe (validation/probe.py --memory): the load latency of L2 and DRAM, alone
and while other SMs stream, which the GEMM model's latency chain stands on (wavesim/kernels/gemm.py:
l2_latency_cycles, dram_latency_cycles; gemm_priors.toml cites the result).

* ``chase_kernel``: one thread follows a random cycle of pointers, one per 128-byte line, through a buffer
  (the next index is the value loaded, so every load waits for the one before): cycles per load (%clock64)
  = the load-to-use latency. Loads bypass L1 (``.cg``), as the GEMM's operand loads do. A buffer that fits
  in L2 and was just walked gives the L2 latency; one many times the L2 gives DRAM's.
* ``tile_read_kernel``: each program reads ROWS x COLS bf16 tiles (rows of COLS x 2 contiguous bytes, ROW_STRIDE
  apart, like a GEMM operand tile) from an L2-resident buffer, TILES_PER_ITER independent tiles at a time,
  and keeps a sum so nothing is optimised away. Bytes over kernel time = what register loads (ld.global.cg.v4)
  move at that grid (grid <= SM count: one program per SM). On the H200 that path is limited by each SM's
  issue (30-60 GB/s per SM, 7.8 TB/s at most), not by the L2: the GEMM's cp.async loads moved 11-14 TB/s
  in first waves (validation/reports/h200-firstwave/traces). Its use here is the load it puts on the L2
  while the pointer chase measures the latency.
"""

from __future__ import annotations

import triton
import triton.language as tl

from validation.kernels.gemm_trace import read_u64

LINE_BYTES = 128  # one pointer per L2 line: consecutive loads never share a line


@triton.jit
def chase_kernel(next_ptr, out_ptr, start, n_steps):
    idx = tl.full((), start, tl.int64)
    # one untimed step, so the timer does not include the first load's issue
    idx = tl.load(next_ptr + idx, cache_modifier=".cg")
    t0 = read_u64("%globaltimer")
    c0 = read_u64("%clock64")
    for _ in range(n_steps):
        idx = tl.load(next_ptr + idx, cache_modifier=".cg")
    c1 = read_u64("%clock64")
    t1 = read_u64("%globaltimer")
    tl.store(out_ptr, c1 - c0)
    tl.store(out_ptr + 1, t1 - t0)
    tl.store(out_ptr + 2, idx)  # the chain's end: keeps the loads live


@triton.jit
def tile_read_kernel(buf_ptr, out_ptr, n_iter, row_blocks,
                     ROWS: tl.constexpr, COLS: tl.constexpr, ROW_STRIDE: tl.constexpr,
                     TILES_PER_ITER: tl.constexpr):
    """The buffer is row_blocks x ROWS rows of ROW_STRIDE bf16; a tile is ROWS rows x COLS columns of it."""
    pid = tl.program_id(0)
    col_blocks: tl.constexpr = ROW_STRIDE // COLS
    rows = tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    offs = rows[:, None] * ROW_STRIDE + cols[None, :]
    acc = tl.zeros((ROWS, COLS), dtype=tl.float32)
    tile = pid.to(tl.int64) * TILES_PER_ITER
    n_tiles = row_blocks * col_blocks
    for _ in range(n_iter):
        for j in tl.static_range(TILES_PER_ITER):
            t = (tile + j) % n_tiles
            base = tl.multiple_of((t // col_blocks) * (ROWS * ROW_STRIDE) + (t % col_blocks) * COLS, COLS)
            acc += tl.load(buf_ptr + base + offs, cache_modifier=".cg").to(tl.float32)
        tile += TILES_PER_ITER * 7919  # a prime stride: programs wander the buffer apart
    tl.store(out_ptr + pid, tl.sum(acc))
