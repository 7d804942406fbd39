"""The fast engine: the same model as the reference engine, as one numba ``@njit`` event loop.

State lives in flat slot arrays (slot s = sm * slots_per_sm + j). Each event round scans the
slots: per-SM water-filling of math throughput (capped by queueing.py when sm_queueing), then global
water-filling of L2 and of DRAM bandwidth (all as progressive filling to a water level, allocation-free),
the next event time, then the events at that time (within ``EPS_REL``) are applied and free slots are
refilled in launch order, each CTA to the SM with the fewest residents (lowest index on ties). Cost per round: O(slots x filling passes);
per dispatch O(sm_count).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..result import SimResult, Trace
from .queueing import mva_cycle
from .reference import EPS_REL
from .workload import Workload

_mva_cycle = njit(cache=True)(mva_cycle)


@njit(cache=True)
def _fill_level(dem, n, cap):
    """Water level of max-min fair sharing of cap over dem[:n] (each share = min(d, level)).

    inf when the demands fit. Progressive filling without allocation: start at cap/n; the demands
    below the level are satisfied, the rest split what is left; repeat until the satisfied set stops
    growing (at most n passes, usually 2-4).
    """
    total = 0.0
    for k in range(n):
        total += dem[k]
    if total <= cap:
        return np.inf
    level = cap / n
    prev = -1
    for _ in range(n + 1):
        s_sat = 0.0
        n_sat = 0
        for k in range(n):
            if dem[k] <= level:
                s_sat += dem[k]
                n_sat += 1
        if n_sat == prev:
            return level
        if n_sat == n:
            return np.inf
        prev = n_sat
        left = cap - s_sat
        if left < 0.0:
            left = 0.0
        nxt = left / (n - n_sat)
        # in exact arithmetic the level never falls; keeping it monotone under rounding makes the
        # satisfied set grow monotonically, so the loop ends (no 2-cycles around a tie)
        if nxt > level:
            level = nxt
    return level


@njit(cache=True)
def _cap_by_pool(nbytes, cta_cap, pool, slot_cta, slot_fluid, rate, dem, idx):
    """Cap the rates of the fluid CTAs that move bytes through a chip-wide pool: demand min(cta_cap,
    bytes * rate), max-min fair shares of `pool`, rate <= share / bytes (dem, idx: scratch arrays)."""
    n = 0
    for sl in range(slot_cta.shape[0]):
        c = slot_cta[sl]
        if c >= 0 and slot_fluid[sl] and nbytes[c] > 0.0:
            d = nbytes[c] * rate[sl]
            dem[n] = cta_cap[c] if cta_cap[c] < d else d
            idx[n] = sl
            n += 1
    if n == 0:
        return
    level = _fill_level(dem, n, pool)
    for k in range(n):
        sl = idx[k]
        m = dem[k] if dem[k] < level else level
        r_m = m / nbytes[slot_cta[sl]]
        if r_m < rate[sl]:
            rate[sl] = r_m


@njit(cache=True)
def _pool_rates(share, compute, slow, l2b, l2cap, dbytes, memcap, dram, slot_cta, slot_fluid, rate, dem, idx,
                no_cap):
    """Rates of the fluid slots from their SM math shares, with every compute x slow and the L2 pool / slow:
    the L2 pool first (demand at the math rate), then DRAM at the rate the L2 leaves."""
    for sl in range(slot_cta.shape[0]):
        c = slot_cta[sl]
        if c >= 0 and slot_fluid[sl]:
            rate[sl] = share[sl] / (compute[c] * slow) if compute[c] > 0.0 else np.inf
    _cap_by_pool(l2b, no_cap, l2cap / slow, slot_cta, slot_fluid, rate, dem, idx)
    _cap_by_pool(dbytes, memcap, dram, slot_cta, slot_fluid, rate, dem, idx)


@njit(cache=True)
def _simulate(compute, solo, dbytes, memcap, fixed, l2b, S, K, dram, l2cap, sm_cap, kappa, queueing, eps):
    G = compute.shape[0]
    NS = S * K
    inf = np.inf
    slot_cta = np.full(NS, -1, np.int64)
    slot_fluid = np.zeros(NS, np.bool_)
    slot_fixed_end = np.zeros(NS)
    slot_rem = np.zeros(NS)
    rate = np.zeros(NS)
    share = np.zeros(NS)
    cand = np.zeros(NS)
    sm_n = np.zeros(S, np.int64)
    busy = np.zeros(S)
    busy_since = np.zeros(S)
    sm_of = np.full(G, -1, np.int64)
    start = np.full(G, np.nan)
    end = np.full(G, np.nan)
    dem = np.zeros(max(NS, 1))
    no_cap = np.full(G, np.inf)  # the L2 pool has no per-CTA cap (a kernel model caps an SM via solo_frac)
    idx = np.zeros(max(NS, 1), np.int64)
    t = 0.0
    nxt = 0
    active = 0
    rounds = 0
    while True:
        # ---- dispatch: launch order, SM with a free slot and the fewest residents, lowest index
        while nxt < G:
            best = -1
            for s in range(S):
                if sm_n[s] < K and (best < 0 or sm_n[s] < sm_n[best]):
                    best = s
            if best < 0:
                break
            slot = best * K
            while slot_cta[slot] >= 0:
                slot += 1
            i = nxt
            nxt += 1
            slot_cta[slot] = i
            if fixed[i] > 0.0:
                slot_fluid[slot] = False
                slot_fixed_end[slot] = t + fixed[i]
            else:
                slot_fluid[slot] = True
            slot_rem[slot] = 1.0
            if sm_n[best] == 0:
                busy_since[best] = t
            sm_n[best] += 1
            active += 1
            sm_of[i] = best
            start[i] = t
        if active == 0:
            break
        # ---- rates: per-SM math water-filling, then the chip-wide L2 and DRAM pools
        for s in range(S):
            n = 0
            for j in range(K):
                sl = s * K + j
                if slot_cta[sl] >= 0 and slot_fluid[sl]:
                    dem[n] = solo[slot_cta[sl]]
                    idx[n] = sl
                    n += 1
            if n == 0:
                continue
            level = _fill_level(dem, n, sm_cap)
            cycle = 1.0
            if queueing and n > 1:
                f_sum = 0.0
                for k in range(n):
                    f_sum += dem[k]
                cycle = _mva_cycle(n, f_sum / n)
            for k in range(n):
                sh = dem[k] if dem[k] < level else level
                queued = dem[k] / cycle
                share[idx[k]] = queued if queued < sh else sh
        _pool_rates(share, compute, 1.0, l2b, l2cap, dbytes, memcap, dram, slot_cta, slot_fluid, rate, dem, idx,
                    no_cap)
        if kappa > 0.0:
            # chip load u: the fraction of the chip's SM math in use at these rates; redo the sharing slower
            u = 0.0
            for sl in range(NS):
                c = slot_cta[sl]
                if c >= 0 and slot_fluid[sl] and compute[c] > 0.0:
                    u += rate[sl] * compute[c]
            _pool_rates(share, compute, 1.0 + kappa * u / S, l2b, l2cap, dbytes, memcap, dram, slot_cta,
                        slot_fluid, rate, dem, idx, no_cap)
        # ---- next event time
        t_next = inf
        for sl in range(NS):
            if slot_cta[sl] < 0:
                continue
            if slot_fluid[sl]:
                cand[sl] = t if rate[sl] == inf else t + slot_rem[sl] / rate[sl]
            else:
                cand[sl] = slot_fixed_end[sl]
            if cand[sl] < t_next:
                t_next = cand[sl]
        if not t_next < inf:
            raise RuntimeError("wavesim fast engine: no next event (a CTA with a zero rate)")
        thr = t_next * (1.0 + eps)
        dt = t_next - t
        # ---- apply every event at t_next, then advance the rest
        for sl in range(NS):
            c = slot_cta[sl]
            if c < 0:
                continue
            ended = False
            if not slot_fluid[sl]:
                if slot_fixed_end[sl] <= thr:
                    slot_fluid[sl] = True
                    if compute[c] == 0.0 and dbytes[c] == 0.0 and l2b[c] == 0.0:
                        ended = True
            elif cand[sl] <= thr:
                ended = True
            else:
                slot_rem[sl] -= rate[sl] * dt
            if ended:
                end[c] = t_next
                slot_cta[sl] = -1
                s = sl // K
                sm_n[s] -= 1
                active -= 1
                if sm_n[s] == 0:
                    busy[s] += t_next - busy_since[s]
        t = t_next
        rounds += 1
    return sm_of, start, end, busy, rounds


def simulate_arrays(workload: Workload):
    """Raw engine output: (sm_of, start_s, end_s, per_sm_busy_s, rounds)."""
    wl = workload
    return _simulate(wl.compute_s, wl.solo_frac, wl.dram_bytes, wl.mem_cap_Bps, wl.fixed_s, wl.l2_bytes,
                     wl.sm_count, wl.slots_per_sm, wl.dram_Bps, wl.l2_Bps, wl.sm_throughput, wl.load_slowdown,
                     wl.sm_queueing, EPS_REL)


def simulate(workload: Workload, trace: bool = False) -> SimResult:
    sm_of, start, end, busy, _ = simulate_arrays(workload)
    span = float(end.max()) if workload.grid else 0.0
    tr = Trace(sm_of, start, end) if trace else None
    return SimResult.build(span_s=span, launch_overhead_s=workload.launch_overhead_s, grid=workload.grid,
                           sm_count=workload.sm_count, slots_per_sm=workload.slots_per_sm,
                           per_sm_busy_s=busy, trace=tr, engine="fast")
