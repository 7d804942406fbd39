"""A probe of the L2 request coalescer: which SMs' reads of one sector merge, and how close in time they must be.

One CTA per SM by default (grid = SM count, small enough that the dispatch gives every SM one; `ctas_per_sm` more
to load the coalescer with more requests in flight: the k-th CTA on an SM reads the k-th copy of the region, so
they add load, not sharers). Each CTA reads its SM's
group's region of `buf` tile by tile, as the GEMM reads A (the tiles feed tl.dot, so Triton loads them with
cp.async through the same pipeline), after spinning `delay_of_sm[smid]` cycles. SMs of one group read the same
bytes in the same order; who shares with whom is the caller's choice (`group_of_sm`), and so is the stagger
(`delay_of_sm`). Under Nsight Compute the coalescer's counters then say how many of the sectors merged
(validation/counters.py, `probe`).
"""

from __future__ import annotations

import triton
import triton.language as tl

from validation.kernels.gemm_trace import read_u64, smid

TILE_ROWS = 64
TILE_COLS = 64    # a bf16 tile of 64 x 64: 8 KB, rows of 128 B (one cache line each)


@triton.jit
def lrc_probe_kernel(buf_ptr, w_ptr, group_of_sm_ptr, delay_of_sm_ptr, out_ptr, slot_of_sm_ptr, steps, region_tiles,
                     n_groups, active_per_sm, ROWS: tl.constexpr, COLS: tl.constexpr, N_OUT: tl.constexpr):
    sm = smid()
    # the k-th CTA to arrive on each SM reads the k-th copy of its group's region: more CTAs per SM add requests in
    # flight, not sharers (the dispatch order does not fix which CTA lands on which SM as which slot); the grid fills
    # every SM evenly and the CTAs past active_per_sm on an SM do no work, so exactly that many load each SM
    slot = tl.atomic_add(slot_of_sm_ptr + sm, 1).to(tl.int64)
    steps = tl.where(slot < active_per_sm, steps, 0)
    group = tl.load(group_of_sm_ptr + sm).to(tl.int64) + n_groups * slot
    delay = tl.load(delay_of_sm_ptr + sm).to(tl.int64)
    t0 = read_u64("%clock64")
    while read_u64("%clock64") - t0 < delay:
        pass
    offs = tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :]
    w = tl.load(w_ptr + tl.arange(0, COLS)[:, None] * N_OUT + tl.arange(0, N_OUT)[None, :])
    base = buf_ptr + group * region_tiles * ROWS * COLS
    acc = tl.zeros((ROWS, N_OUT), dtype=tl.float32)
    for s in range(0, steps):
        x = tl.load(base + (s % region_tiles) * ROWS * COLS + offs)
        acc = tl.dot(x, w, acc)
    pid = tl.program_id(0)
    tl.store(out_ptr + pid * ROWS * N_OUT + tl.arange(0, ROWS)[:, None] * N_OUT + tl.arange(0, N_OUT)[None, :], acc)


def run_probe(buf, w, group_of_sm, delay_of_sm, out, steps: int, region_tiles: int, sm_count: int,
              ctas_per_sm: int = 1, num_stages: int = 3, cols: int = TILE_COLS, resident_per_sm: int | None = None):
    """One launch: resident_per_sm x sm_count CTAs (as many as fit on an SM at once, so the dispatch gives each SM
    exactly that many), of which ctas_per_sm per SM work; 4 warps, num_stages stages (the GEMM's load pipeline:
    num_stages - 1 tiles in flight per CTA), tiles of TILE_ROWS x cols."""
    resident_per_sm = resident_per_sm or ctas_per_sm
    import torch

    n_groups = int(group_of_sm.max()) + 1
    slots = torch.zeros(sm_count, dtype=torch.int32, device=buf.device)
    lrc_probe_kernel[(sm_count * resident_per_sm,)](buf, w, group_of_sm, delay_of_sm, out, slots, steps, region_tiles,
                                                    n_groups, ctas_per_sm, ROWS=TILE_ROWS, COLS=cols, N_OUT=w.shape[1],
                                                    num_warps=4, num_stages=num_stages)


def grid_bytes(region_tiles: int, groups: int) -> int:
    """Bytes of `buf` for `groups` regions of `region_tiles` bf16 tiles."""
    return groups * region_tiles * TILE_ROWS * TILE_COLS * 2



