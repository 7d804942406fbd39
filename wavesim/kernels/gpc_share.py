"""The share of a wave's tile reads that one GPC's CTAs do not share: what the L2 serves once per GPC.

The H200's block dispatch deals a launch's first round GPC by GPC: consecutive program ids go to one GPC's SMs
(validation/data/h200/gpc_layout.json and the per-CTA traces, `python3 -m validation.first_wave --traces FILE --gpc`),
in rounds of sm_count programs (program r x sm_count + j runs on the j-th SM of the dealing, for r < CTAs/SM). CTAs of
one GPC that read the same tile of A or B at the same K step are merged by the L2 request coalescer
(validation/coalescing.py). For the W = min(G, sm_count x CTAs/SM) CTAs of a wave in the kernel's grouped launch order,

    s = sum over GPC windows (distinct tile rows x BM + distinct tile columns x BN) / (W x (BM + BN))

with windows of `scope` consecutive SMs of the dealing (hwspecs sms_per_gpc). This is
validation.gpc_scope.lockstep_gpc_share with the canonical order (stride 1), vectorised over records: each distinct
(tile grid, GROUP_M, CTAs/SM, tile) is counted once per process, all of a call's new ones in one numpy pass over their
programs (`python3 benchmarks/bench_gpc_share.py`).
"""

from __future__ import annotations

import numpy as np

# programs (and tile marks) counted per numpy pass (a few int64 each: ~100 MB at this size)
PROGRAMS_PER_PASS = 2_000_000

_cache: dict[tuple[int, ...], float] = {}


def grouped_tiles(pid, npm, npn, group_m):
    """(tile row of A, tile column of B) of each program id in the canonical kernel's grouped launch order (numpy
    arrays broadcast: one key per program works too)."""
    gm = np.minimum(group_m, npm)
    width = gm * npn
    first = (pid // width) * gm
    size = np.minimum(npm - first, gm)
    return first + (pid % width) % size, (pid % width) // size


def _distinct(seg: np.ndarray, local: np.ndarray, span: np.ndarray) -> np.ndarray:
    """Per segment, how many distinct values `local` (in [0, span of the segment)) takes: one mark per value, no sort."""
    start = np.cumsum(span) - span
    mark = np.zeros(int(span.sum()), dtype=np.int8)
    mark[start[seg] + local] = 1
    return np.add.reduceat(mark, start, dtype=np.int64)


def _shares(keys: np.ndarray, sm_count: int, scope: int) -> np.ndarray:
    """s of each row (npm, npn, GROUP_M, CTAs/SM, BM, BN): the W first-wave programs of every key at once."""
    npm, npn, gm, slots, bm, bn = keys.T
    W = np.minimum(npm * npn, sm_count * slots)
    k = np.repeat(np.arange(len(keys)), W)
    pid = np.arange(k.size) - np.repeat(np.cumsum(W) - W, W)
    windows = -(-sm_count // scope)
    # program r x sm_count + j runs on the j-th SM of the dealing; its window is that SM's GPC
    seg = k * windows + (pid % sm_count) // scope
    pm, pn = grouped_tiles(pid, npm[k], npn[k], gm[k])
    rows = _distinct(seg, pm, np.repeat(npm, windows)).reshape(-1, windows).sum(1)
    cols = _distinct(seg, pn, np.repeat(npn, windows)).reshape(-1, windows).sum(1)
    return (rows * bm + cols * bn) / (W * (bm + bn))


def distinct_shares(keys: np.ndarray, sm_count: int, scope: int) -> np.ndarray:
    """s for each row (npm, npn, GROUP_M, CTAs/SM, BM, BN) of an int array."""
    keys = np.array(keys, dtype=np.int64).reshape(-1, 6)
    # keys that deal the same programs to the same windows count alike: GROUP_M beyond the tile rows orders as all
    # rows, CTAs/SM beyond what fills the grid add no programs, and tile rows beyond the last full group that the
    # wave reaches are never read by it (an M sweep's large M are one key per tile, grid width and CTAs/SM)
    npm, npn = keys[:, 0], keys[:, 1]
    keys[:, 2] = np.minimum(keys[:, 2], npm)
    keys[:, 3] = np.minimum(keys[:, 3], -(-(npm * npn) // sm_count))
    gm, wave = keys[:, 2], sm_count * keys[:, 3]
    keys[:, 0] = np.where(npm * npn >= wave, np.minimum(npm, gm * ((wave - 1) // (gm * npn) + 1)), npm)
    uniq, inv = np.unique(keys, axis=0, return_inverse=True)
    tagged = [(sm_count, scope, *u) for u in uniq.tolist()]
    todo = np.array([i for i, t in enumerate(tagged) if t not in _cache], dtype=np.int64)
    if todo.size:
        npm, npn, slots = uniq[todo, 0], uniq[todo, 1], uniq[todo, 3]
        work = np.minimum(npm * npn, sm_count * slots) + -(-sm_count // scope) * (npm + npn)   # programs + marks
        # passes of at most PROGRAMS_PER_PASS programs and marks (a key larger than that gets a pass of its own)
        cut = np.searchsorted(np.cumsum(work), np.arange(1, work.sum() // PROGRAMS_PER_PASS + 1) * PROGRAMS_PER_PASS)
        for part in np.split(todo, np.unique(np.minimum(cut + 1, todo.size))):
            if part.size:
                for i, v in zip(part.tolist(), _shares(uniq[part], sm_count, scope).tolist()):
                    _cache[tagged[i]] = v
    return np.array([_cache[t] for t in tagged])[inv.ravel()]
