"""The share of a wave's tile reads that one GPC's CTAs do not share: what the L2 serves once per GPC.

The H200's block dispatch deals a launch's first round GPC by GPC: consecutive program ids go to one GPC's SMs
(validation/data/h200/gpc_layout.json and the per-CTA traces, `python3 -m validation.first_wave --traces FILE --gpc`),
in rounds of sm_count programs (program r x sm_count + j runs on the j-th SM of the dealing, for r < CTAs/SM). CTAs of
one GPC that read the same tile of A or B at the same K step are merged by the L2 request coalescer
(validation/coalescing.py). For the W = min(G, sm_count x CTAs/SM) CTAs of a wave in the kernel's grouped launch order,

    s = sum over GPC windows (distinct tile rows x BM + distinct tile columns x BN) / (W x (BM + BN))

with windows of `scope` consecutive SMs of the dealing (hwspecs sms_per_gpc). This is
validation.gpc_scope.lockstep_gpc_share with the canonical order (stride 1), vectorised over records: each distinct
(tile grid, GROUP_M, CTAs/SM, tile) is counted once per process, by numpy for a few and by a numba kernel for many
(numba's import and load cost more than numpy's loop below a few hundred keys, which is what one `wavetune predict`
worker mostly sees).
"""

from __future__ import annotations

import numpy as np

# Above this many uncounted keys in one call the numba kernel is cheaper than numpy's per-key loop (which takes
# ~40 us a key; numba's import and cached load ~0.5 s once per process).
NUMBA_MIN_KEYS = 2000

_cache: dict[tuple[int, ...], float] = {}


def grouped_tiles(pid, npm: int, npn: int, group_m: int):
    """(tile row of A, tile column of B) of each program id in the canonical kernel's grouped launch order."""
    gm = min(group_m, npm)
    width = gm * npn
    first = (pid // width) * gm
    size = np.minimum(npm - first, gm)
    return first + (pid % width) % size, (pid % width) // size


def _share_numpy(npm: int, npn: int, gm: int, slots: int, bm: int, bn: int, sm_count: int, scope: int) -> float:
    W = min(npm * npn, sm_count * slots)
    pid = np.arange(W, dtype=np.int64)
    window = (pid % sm_count) // scope
    pm, pn = grouped_tiles(pid, npm, npn, gm)
    rows = np.unique(window * npm + pm).size
    cols = np.unique(window * npn + pn).size
    return (rows * bm + cols * bn) / (W * (bm + bn))


def _numba_kernel():
    import numba

    @numba.njit(cache=True)
    def shares(keys, sm_count, scope):
        out = np.empty(keys.shape[0])
        row_stamp = np.zeros(int(keys[:, 0].max()) + 1, dtype=np.int64)
        col_stamp = np.zeros(int(keys[:, 1].max()) + 1, dtype=np.int64)
        stamp = 0
        windows = (sm_count + scope - 1) // scope
        for k in range(keys.shape[0]):
            npm, npn, gm, slots, bm, bn = keys[k]
            gm = min(gm, npm)
            W = min(npm * npn, sm_count * slots)
            width = gm * npn
            rows = 0
            cols = 0
            for w in range(windows):          # one stamp per (key, window): no clearing between them
                stamp += 1
                for r in range(slots):
                    for j in range(w * scope, min((w + 1) * scope, sm_count)):
                        pid = r * sm_count + j
                        if pid >= W:
                            break
                        first = (pid // width) * gm
                        size = min(npm - first, gm)
                        pm = first + (pid % width) % size
                        pn = (pid % width) // size
                        if row_stamp[pm] != stamp:
                            row_stamp[pm] = stamp
                            rows += 1
                        if col_stamp[pn] != stamp:
                            col_stamp[pn] = stamp
                            cols += 1
            out[k] = (rows * bm + cols * bn) / (W * (bm + bn))
        return out

    return shares


def distinct_shares(keys: np.ndarray, sm_count: int, scope: int, engine: str = "auto") -> np.ndarray:
    """s for each row (npm, npn, GROUP_M, CTAs/SM, BM, BN) of an int array; `engine` "numpy", "numba" or "auto" (by
    the number of keys not counted yet in this process)."""
    keys = np.asarray(keys, dtype=np.int64).reshape(-1, 6)
    uniq, inv = np.unique(keys, axis=0, return_inverse=True)
    tagged = [(sm_count, scope, *map(int, u)) for u in uniq]
    todo = [i for i, t in enumerate(tagged) if t not in _cache]
    if todo:
        use_numba = engine == "numba" or (engine == "auto" and len(todo) >= NUMBA_MIN_KEYS)
        if use_numba:
            got = _numba_kernel()(uniq[todo], sm_count, scope)
        else:
            got = [_share_numpy(*map(int, uniq[i]), sm_count, scope) for i in todo]
        for i, v in zip(todo, got):
            _cache[tagged[i]] = float(v)
    return np.array([_cache[t] for t in tagged])[inv.ravel()]
