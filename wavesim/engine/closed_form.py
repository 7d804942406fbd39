"""Exact closed form of the engine model for launches whose CTAs are all alike.

With identical CTAs and no jitter the discrete-event run has a fixed shape:

* Full waves. n_full = G // (S*K) times, every slot of every SM is filled at once (breadth-first,
  every SM gets K), every CTA spends fixed_s, then shares its SM with K-1 others
  (share = min(solo_frac, 1/K), and with sm_queueing at most solo_frac / C(K, solo_frac), queueing.py)
  and the L2 and DRAM pools with S*K-1 others; all end together after
  T_full = fixed_s + 1 / r_full, and the next wave is dispatched at that instant.
* The partial last wave of R = G mod (S*K) CTAs is dealt breadth-first: with q = R // S and
  r = R % S, SMs 0..r-1 hold q+1 CTAs (group A) and SMs r..S-1 hold q (group B, empty when
  q = 0). After fixed_s both groups enter their fluid phase together. Phase 1: both groups draw
  L2, then DRAM, each water-filled between the two demands; B (fewer CTAs per SM, so never slower)
  ends first after 1/r_B. Phase 2: A alone, with the L2 and DRAM B released, finishes its remaining
  1 - r_A/r_B.

With ``load_slowdown`` kappa > 0 the rates of each phase are first computed as above, give the phase's chip
load u (the fraction of the chip's SM math in use, ``partial_phase_loads``), and are then recomputed with compute_s
x (1 + kappa u) and the L2 pool / (1 + kappa u): the same rule the event engines apply at every event.

With ``desync_rate`` > 0 and 2+ slots per SM, the partial wave after n_full >= 1 full waves is priced with
the expected de-synchronisation of later waves (desync.py): part of it streams in at R / W of a full wave;
both groups' end times scale with it. desync_rate = 0 (the default) is the lockstep model of the engines.

Consequences (pinned by tests/test_engine.py; without sm_queueing): with no DRAM traffic and no fixed
latency, a launch of w full waves takes exactly w * compute_s / min(solo_frac, 1/K). If solo_frac * K <= 1
co-resident CTAs never compete, every CTA takes compute_s / solo_frac whatever its SM holds, and the
makespan is an exact staircase, waves * compute_s / solo_frac. If solo_frac * K > 1 the partial last wave
holds fewer CTAs per SM, which run faster, so the step is softened inside its band
((w-1) * T_full, w * T_full].

``uniform_phases`` evaluates this with numpy on broadcast arrays, so one call prices many
launches (a config-space sweep); ``simulate`` uses it for one ``Workload`` and also rebuilds the
per-SM busy times and, on request, the per-CTA trace.
"""
from __future__ import annotations

import numpy as np

from ..result import SimResult, Trace
from .desync import out_of_step_fraction, paired_tail_probability, partial_wave_time
from .queueing import mva_cycles
from .workload import Workload


def _l2_rate(share, compute_s, l2_bytes, l2_level):
    """(rate after the SM math share and the L2 level, the CTA's L2 demand at its math rate)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r_c = np.where(compute_s > 0, share / np.where(compute_s > 0, compute_s, 1.0), np.inf)
        has_l2 = l2_bytes > 0
        safe = np.where(has_l2, l2_bytes, 1.0)
        demand = np.where(has_l2, safe * r_c, 0.0)
        r = np.where(has_l2, np.minimum(r_c, np.minimum(demand, l2_level) / safe), r_c)
        return r, demand


def _rate(r_c, dram_bytes, mem_cap, dram_level):
    """Progress rate of a CTA whose rate before DRAM is r_c, with DRAM level `dram_level` (its fair share)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        has_mem = dram_bytes > 0
        safe_b = np.where(has_mem, dram_bytes, 1.0)
        demand = np.where(has_mem, np.minimum(mem_cap, safe_b * r_c), 0.0)
        m = np.minimum(demand, dram_level)
        return np.where(has_mem, np.minimum(r_c, m / safe_b), r_c), demand


def _inv(x):
    with np.errstate(divide="ignore"):
        return np.where(np.isinf(x), 0.0, 1.0 / np.where(x == 0, np.nan, x))


def _two_levels(dem_a, dem_b, nA, nB, cap):
    """Water levels of max-min fair sharing of cap between nA claimants of demand dem_a and nB of
    demand dem_b, where dem_a <= dem_b (group A has more CTAs per SM, so never a larger demand)."""
    level = cap / np.maximum(nA + nB, 1.0)
    a_fits = dem_a <= level
    lvl_a = np.where(a_fits, dem_a, level)
    lvl_b = np.where(a_fits, (cap - nA * dem_a) / np.maximum(nB, 1.0), level)
    return lvl_a, lvl_b


def _full_wave_rate(share, c, Lb, B, M, D, X, W):
    """Progress rate of the CTAs of a full wave (S*K identical CTAs, each with SM share `share`)."""
    r1_full, _ = _l2_rate(share, c, Lb, X / W)
    return _rate(r1_full, B, M, D / W)[0]


def _partial_wave_rates(share_a, share_b, c, Lb, B, M, D, X, nA, nB):
    """Progress rates of groups A and B while both run (phase 1): L2, then DRAM, each water-filled between
    the two groups' demands."""
    _, ldem_a = _l2_rate(share_a, c, Lb, np.inf)
    _, ldem_b = _l2_rate(share_b, c, Lb, np.inf)
    l2_a, l2_b = _two_levels(ldem_a, ldem_b, nA, nB, X)
    r1A, _ = _l2_rate(share_a, c, Lb, l2_a)
    r1B, _ = _l2_rate(share_b, c, Lb, l2_b)
    _, dem_a = _rate(r1A, B, M, np.inf)
    _, dem_b = _rate(r1B, B, M, np.inf)
    lvl_a, lvl_b = _two_levels(dem_a, dem_b, nA, nB, D)
    return _rate(r1A, B, M, lvl_a)[0], _rate(r1B, B, M, lvl_b)[0]


def _group_a_alone_rate(share_a, c, Lb, B, M, D, X, nA):
    """Progress rate of group A once group B has ended (phase 2)."""
    nA1 = np.maximum(nA, 1.0)
    r1A2, _ = _l2_rate(share_a, c, Lb, X / nA1)
    return _rate(r1A2, B, M, D / nA1)[0]


def _math_in_use(c, r):
    """Per CTA, the fraction of its SM's math it uses at fluid rate r (a CTA with no math uses none)."""
    with np.errstate(invalid="ignore"):
        return np.where(c > 0, r * c, 0.0)


def partial_phase_loads(c, S, nA, nB, rA, rB, rA2):
    """The chip load u of the partial wave's phases 1 and 2: the fraction of the chip's SM math in use, sum over
    fluid CTAs of rate x compute_s / sm_count (a full wave's: slots_per_sm x _math_in_use)."""
    return (nA * _math_in_use(c, rA) + nB * _math_in_use(c, rB)) / S, nA * _math_in_use(c, rA2) / S


def _rescaled_ends(end_a, end_b, t_part, t_new):
    """Both groups' end times stretched by t_new / t_part (the partial wave's time as a later term prices it)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        stretch = np.where(t_part > 0, t_new / np.where(t_part > 0, t_part, 1.0), 1.0)
    return end_a * stretch, end_b * stretch, t_new


def uniform_phases(grid, sm_count, slots_per_sm, compute_s, solo_frac=1.0, dram_bytes=0.0, mem_cap_Bps=1.0,
                   fixed_s=0.0, dram_Bps=1.0, l2_bytes=0.0, l2_Bps=1.0, desync_rate=0.0,
                   load_slowdown=0.0, sm_queueing=False) -> dict[str, np.ndarray]:
    """All phase durations of the closed form, on numpy-broadcast inputs.

    Returns arrays: waves, n_full, q, r, t_full (one full wave), end_a, end_b (time from the start
    of the partial wave to the end of group A / group B; 0 where the group is empty), span_s.
    """
    G = np.asarray(grid, dtype=np.int64)
    S = np.asarray(sm_count, dtype=np.int64)
    K = np.asarray(slots_per_sm, dtype=np.int64)
    c = np.asarray(compute_s, dtype=np.float64)
    f = np.asarray(solo_frac, dtype=np.float64)
    B = np.asarray(dram_bytes, dtype=np.float64)
    M = np.asarray(mem_cap_Bps, dtype=np.float64)
    F = np.asarray(fixed_s, dtype=np.float64)
    D = np.asarray(dram_Bps, dtype=np.float64)
    Lb = np.asarray(l2_bytes, dtype=np.float64)
    X = np.asarray(l2_Bps, dtype=np.float64)
    kappa = np.asarray(load_slowdown, dtype=np.float64)
    queueing = np.asarray(sm_queueing, dtype=bool)
    W = S * K
    n_full = G // W
    R = G - n_full * W
    waves = n_full + (R > 0)
    q = R // S
    r = R - q * S
    nA = (r * (q + 1)).astype(np.float64)
    nB = ((S - r) * q).astype(np.float64)

    def sm_share(n):
        """A CTA's share of its SM with n alike co-resident CTAs: fair, and with queueing below capacity."""
        fair = np.minimum(f, 1.0 / np.maximum(n, 1))
        return np.where(queueing, np.minimum(fair, f / mva_cycles(f, n)), fair) if np.any(queueing) else fair

    sh_full = sm_share(K)
    full = lambda cc, XX: _full_wave_rate(sh_full, cc, Lb, B, M, D, XX, W)  # noqa: E731
    r_full = full(c, X)
    if np.any(kappa > 0):
        # chip load: each phase's SM-side rates (math and L2) slow by 1 / (1 + kappa u) at its load u
        s_full = 1.0 + kappa * K * _math_in_use(c, r_full)
        r_full = full(c * s_full, X / s_full)
    t_full = F + _inv(r_full)

    def partial_ends(sh_a, sh_b, nA, nB):
        """(end of group A, end of group B) of a partial wave: nA CTAs in SMs of share sh_a, nB in SMs of sh_b."""
        partial = lambda cc, XX: _partial_wave_rates(sh_a, sh_b, cc, Lb, B, M, D, XX, nA, nB)  # noqa: E731
        a_alone = lambda cc, XX: _group_a_alone_rate(sh_a, cc, Lb, B, M, D, XX, nA)  # noqa: E731
        (rA, rB), rA2 = partial(c, X), a_alone(c, X)
        if np.any(kappa > 0):
            s_1, s_2 = (1.0 + kappa * u for u in partial_phase_loads(c, S, nA, nB, rA, rB, rA2))
            (rA, rB), rA2 = partial(c * s_1, X / s_1), a_alone(c * s_2, X / s_2)
        tB = _inv(rB)  # end of group B's fluid phase (phase 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            pA = np.where(np.isinf(rB), 1.0, rA * tB)  # A's progress when B ends
        with np.errstate(divide="ignore", invalid="ignore"):
            tA2 = np.where(pA >= 1.0, 0.0, (1.0 - pA) * _inv(rA2))
        fluid_a = np.where(nB > 0, tB + tA2, _inv(rA))
        return np.where(nA > 0, F + fluid_a, 0.0), np.where(nB > 0, F + tB, 0.0)

    end_a, end_b = partial_ends(sm_share(q + 1), sm_share(np.maximum(q, 1)), nA, nB)
    t_part = np.where(R > 0, np.maximum(end_a, end_b), 0.0)
    phi = out_of_step_fraction(n_full, K, desync_rate)
    out_of_step = np.any(np.asarray(desync_rate) > 0)  # lockstep launches (the engines' model) skip both terms
    pair = paired_tail_probability(R, S, K, n_full, desync_rate) if out_of_step else 0.0
    if np.any(pair > 0):
        # one SM holding two of the tail's CTAs (R - 2 SMs one each) sets the partial wave's end with probability pair
        p_a, p_b = partial_ends(sm_share(2), sm_share(1), np.full(R.shape, 2.0), np.maximum(R - 2, 0).astype(float))
        end_a, end_b, t_part = _rescaled_ends(end_a, end_b, t_part, (1.0 - pair) * t_part + pair * np.maximum(p_a, p_b))
    if np.any(phi > 0):
        end_a, end_b, t_part = _rescaled_ends(end_a, end_b, t_part, partial_wave_time(t_part, R, W, t_full, phi))
    span = n_full * t_full + t_part
    return {"waves": waves, "n_full": n_full, "q": q, "r": r, "t_full": t_full, "end_a": end_a,
            "end_b": end_b, "span_s": span, "R": R}


def uniform_batch(grid, sm_count, slots_per_sm, compute_s, solo_frac=1.0, dram_bytes=0.0, mem_cap_Bps=1.0,
                  fixed_s=0.0, dram_Bps=1.0, launch_overhead_s=0.0, l2_bytes=0.0, l2_Bps=1.0,
                  desync_rate=0.0, load_slowdown=0.0, sm_queueing=False) -> dict[str, np.ndarray]:
    """Vectorized closed form: makespan_s, span_s, waves, last_wave_fill, tail_utilization, full_wave_s arrays."""
    p = uniform_phases(grid, sm_count, slots_per_sm, compute_s, solo_frac, dram_bytes, mem_cap_Bps, fixed_s,
                       dram_Bps, l2_bytes, l2_Bps, desync_rate, load_slowdown, sm_queueing)
    S = np.asarray(sm_count, dtype=np.int64)
    W = S * np.asarray(slots_per_sm, dtype=np.int64)
    G = np.asarray(grid, dtype=np.int64)
    span = p["span_s"]
    busy_total = (S * p["n_full"] * p["t_full"] + p["r"] * p["end_a"] + (S - p["r"]) * p["end_b"])
    with np.errstate(divide="ignore", invalid="ignore"):
        util = np.where(span > 0, np.minimum(1.0, busy_total / (S * span)), 1.0)
        fill = np.where(G > 0, (G - (p["waves"] - 1) * W) / W, 1.0)
    return {"makespan_s": np.asarray(launch_overhead_s, dtype=np.float64) + span, "span_s": span,
            "waves": p["waves"], "last_wave_fill": fill, "tail_utilization": util, "full_wave_s": p["t_full"]}


def simulate(workload: Workload, trace: bool = False) -> SimResult:
    wl = workload
    if not wl.is_uniform():
        raise ValueError("the closed form needs identical CTAs (Workload.is_uniform()); use engine='fast'")
    S, K, G = wl.sm_count, wl.slots_per_sm, wl.grid
    if G == 0:
        return SimResult.build(span_s=0.0, launch_overhead_s=wl.launch_overhead_s, grid=0, sm_count=S,
                               slots_per_sm=K, per_sm_busy_s=np.zeros(S), trace=Trace(
                                   np.zeros(0, np.int64), np.zeros(0), np.zeros(0)) if trace else None,
                               engine="closed_form")
    p = uniform_phases(G, S, K, wl.compute_s[0], wl.solo_frac[0], wl.dram_bytes[0], wl.mem_cap_Bps[0],
                       wl.fixed_s[0], wl.dram_Bps, wl.l2_bytes[0], wl.l2_Bps, wl.desync_rate, wl.load_slowdown,
                       wl.sm_queueing)
    n_full, r = int(p["n_full"]), int(p["r"])
    t_full, end_a, end_b = float(p["t_full"]), float(p["end_a"]), float(p["end_b"])
    t0 = n_full * t_full
    busy = np.full(S, t0)
    busy[:r] += end_a
    busy[r:] += end_b
    tr = None
    if trace:
        i = np.arange(G)
        W = S * K
        wave = i // W
        sm = (i % W) % S
        start = wave * t_full
        end = start + t_full
        part = wave == n_full
        end[part] = t0 + np.where(sm[part] < r, end_a, end_b)
        tr = Trace(sm.astype(np.int64), start.astype(np.float64), end)
    return SimResult.build(span_s=float(p["span_s"]), launch_overhead_s=wl.launch_overhead_s, grid=G, sm_count=S,
                           slots_per_sm=K, per_sm_busy_s=busy, trace=tr, engine="closed_form")
