"""wavesim engines: two engines with one answer, the closed form, and the wave invariants.

All numbers are synthetic model inputs, not hardware claims.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wavesim.engine import EPS_REL, ReferenceEngine, Workload, jitter_factors, run, run_uniform_batch
from wavesim.result import SimResult

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def rel_close(a, b, rtol=1e-9):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return bool(np.all(np.abs(a - b) <= rtol * np.maximum(np.abs(a), np.abs(b)) + 1e-300))


@st.composite
def workloads(draw, max_grid=200):
    G = draw(st.integers(0, max_grid))
    S = draw(st.integers(1, 8))
    K = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    p_zero = draw(st.sampled_from([0.0, 0.2]))
    compute = rng.uniform(0, 2, G) * (rng.random(G) >= p_zero)
    solo = rng.uniform(0.05, 1, G)
    dram = rng.uniform(0, 5, G) * (rng.random(G) >= draw(st.sampled_from([0.0, 0.5, 1.0])))
    cap = rng.uniform(0.2, 3, G)
    fixed = rng.uniform(0, 1, G) * (rng.random(G) >= draw(st.sampled_from([0.0, 0.5, 1.0])))
    dram_Bps = draw(st.floats(0.5, 20))
    l2 = rng.uniform(0, 8, G) * (rng.random(G) >= draw(st.sampled_from([0.0, 0.5, 1.0])))
    return Workload(compute, solo, dram, cap, fixed, S, K, dram_Bps, draw(st.sampled_from([0.0, 0.25])),
                    l2_bytes=l2, l2_Bps=draw(st.floats(0.5, 30)), load_slowdown=draw(st.sampled_from([0.0, 0.4])),
                    sm_queueing=draw(st.booleans()))


@st.composite
def uniform_workloads(draw, max_grid=300, contention=True):
    G = draw(st.integers(0, max_grid))
    S = draw(st.integers(1, 12))
    K = draw(st.integers(1, 8))
    return Workload.uniform(
        G, compute_s=draw(st.floats(0.01, 10)), solo_frac=draw(st.floats(0.05, 1.0)),
        dram_bytes=draw(st.sampled_from([0.0, 1.0, 3.0])) * draw(st.floats(0.1, 10)) if contention else 0.0,
        mem_cap_Bps=draw(st.floats(0.1, 5)), fixed_s=draw(st.sampled_from([0.0, 0.5])) if contention else 0.0,
        sm_count=S, slots_per_sm=K, dram_Bps=draw(st.floats(0.5, 50)),
        launch_overhead_s=draw(st.sampled_from([0.0, 0.1])),
        l2_bytes=draw(st.sampled_from([0.0, 2.0])) * draw(st.floats(0.1, 10)) if contention else 0.0,
        l2_Bps=draw(st.floats(0.5, 80)), load_slowdown=draw(st.sampled_from([0.0, 0.4])),
        sm_queueing=draw(st.booleans()))


def assert_same(a: SimResult, b: SimResult, rtol=1e-9):
    assert a.waves == b.waves and a.grid == b.grid and a.ctas_per_sm == b.ctas_per_sm
    assert rel_close(a.makespan_s, b.makespan_s, rtol), (a.makespan_s, b.makespan_s)
    assert rel_close(a.per_sm_busy_s, b.per_sm_busy_s, rtol)
    if a.trace is not None and b.trace is not None:
        assert np.array_equal(a.trace.sm, b.trace.sm)
        assert rel_close(a.trace.start_s, b.trace.start_s, rtol)
        assert rel_close(a.trace.end_s, b.trace.end_s, rtol)


# ---------------------------------------------------------------- two engines, one answer
@SETTINGS
@given(workloads(), st.sampled_from([0.0, 0.3]), st.integers(0, 1000))
def test_reference_and_fast_agree(wl, cv, seed):
    a = run(wl, engine="reference", jitter_cv=cv, seed=seed, trace=True)
    b = run(wl, engine="fast", jitter_cv=cv, seed=seed, trace=True)
    assert (a.engine, b.engine) == ("reference", "fast")
    assert_same(a, b)
    if wl.grid:
        assert np.all(np.isfinite(a.trace.end_s)) and np.all(a.trace.end_s >= a.trace.start_s)


@SETTINGS
@given(uniform_workloads())
def test_closed_form_agrees_with_both_engines(wl):
    cf = run(wl, engine="closed_form", trace=True)
    assert cf.engine == "closed_form"
    assert_same(cf, run(wl, engine="fast", trace=True))
    if wl.grid <= 150:
        assert_same(cf, run(wl, engine="reference", trace=True))
    assert run(wl).engine == "closed_form"  # auto


@SETTINGS
@given(st.lists(uniform_workloads(max_grid=2000), min_size=1, max_size=8))
def test_batch_equals_scalar_closed_form(wls):
    arr = lambda name: np.array([getattr(w, name)[0] if w.grid else 1.0 for w in wls])  # noqa: E731
    b = run_uniform_batch(np.array([w.grid for w in wls]), sm_count=np.array([w.sm_count for w in wls]),
                          slots_per_sm=np.array([w.slots_per_sm for w in wls]), compute_s=arr("compute_s"),
                          solo_frac=arr("solo_frac"), dram_bytes=arr("dram_bytes"), mem_cap_Bps=arr("mem_cap_Bps"),
                          fixed_s=arr("fixed_s"), dram_Bps=np.array([w.dram_Bps for w in wls]),
                          launch_overhead_s=np.array([w.launch_overhead_s for w in wls]), l2_bytes=arr("l2_bytes"),
                          l2_Bps=np.array([w.l2_Bps for w in wls]),
                          load_slowdown=np.array([w.load_slowdown for w in wls]),
                          sm_queueing=np.array([w.sm_queueing for w in wls]))
    for k, w in enumerate(wls):
        r = run(w, engine="closed_form")
        assert rel_close(b.makespan_s[k], r.makespan_s, 1e-12)
        assert b.waves[k] == r.waves
        assert rel_close(b.tail_utilization[k], r.tail_utilization, 1e-9)
        assert rel_close(b.last_wave_fill[k], r.last_wave_fill, 1e-12)


def test_batch_broadcasts_over_a_grid_sweep():
    G = np.arange(1, 1001)
    b = run_uniform_batch(G, sm_count=10, slots_per_sm=2, compute_s=1.0, solo_frac=0.5)
    assert b.makespan_s.shape == G.shape
    assert np.array_equal(b.waves, -(-G // 20))
    assert rel_close(b.makespan_s, 2.0 * b.waves, 1e-12)  # solo_frac*slots = 1: a perfect staircase


def test_l2_pool_is_chip_wide_so_a_busier_sm_draws_more_of_it():
    """L2-bound and inside one wave, the makespan follows the total bytes, not the busiest SM: 4 SMs,
    CTAs of 1 byte each, L2 pool 1 byte/s, no math limit. 5 CTAs (one SM holds 2) take 5 s, exactly
    as long as 5 CTAs spread evenly would; a per-SM limit would make the doubled SM the critical path."""
    for engine in ("reference", "fast", "closed_form"):
        for G in (4, 5, 6, 8):
            wl = Workload.uniform(G, compute_s=1e-9, sm_count=4, slots_per_sm=2, l2_bytes=1.0, l2_Bps=1.0)
            assert rel_close(run(wl, engine=engine).makespan_s, float(G), 1e-9), (engine, G)
    # the pool caps, but never raises, a CTA's own rate: with room to spare each runs at its math rate
    wl = Workload.uniform(5, compute_s=2.0, sm_count=4, slots_per_sm=2, l2_bytes=1.0, l2_Bps=100.0)
    assert rel_close(run(wl).makespan_s, 4.0, 1e-12)  # the SM holding two CTAs shares its math: 2 x 2 s


# ---------------------------------------------------------------- wave invariants
@SETTINGS
@given(st.integers(1, 12), st.integers(1, 8), st.floats(0.05, 1.0), st.floats(0.01, 10), st.integers(1, 400),
       st.sampled_from(["closed_form", "fast"]))
def test_staircase_without_dram_or_fixed_latency(S, K, f, c, G, engine):
    wl = Workload.uniform(G, compute_s=c, solo_frac=f, sm_count=S, slots_per_sm=K)
    r = run(wl, engine=engine)
    waves = math.ceil(G / (S * K))
    assert r.waves == waves
    if f * K <= 1.0:
        # co-resident CTAs never compete for math: each runs at solo_frac, latency c/f per wave
        assert rel_close(r.makespan_s, waves * c / f, 1e-12)
    else:
        # the SM is saturated in full waves (K CTAs at 1/K each): K*c per wave; a partial last wave
        # holds fewer CTAs per SM and runs faster, so the step is softened but stays in its band
        t_wave = K * c
        if G % (S * K) == 0:
            assert rel_close(r.makespan_s, waves * t_wave, 1e-12)
        assert (waves - 1) * t_wave < r.makespan_s <= waves * t_wave * (1 + 1e-12)


@SETTINGS
@given(uniform_workloads(max_grid=1, contention=True), st.integers(50, 400))
def test_more_ctas_never_finish_sooner(wl, n):
    """Monotonicity for uniform CTAs (with DRAM contention and fixed latency), over G = 0..n."""
    w0 = wl
    p = {k: (getattr(w0, k)[0] if w0.grid else 1.0) for k in
         ("compute_s", "solo_frac", "dram_bytes", "mem_cap_Bps", "fixed_s", "l2_bytes")}
    p["l2_Bps"], p["sm_queueing"] = w0.l2_Bps, w0.sm_queueing
    G = np.arange(0, n + 1)
    b = run_uniform_batch(G, sm_count=w0.sm_count, slots_per_sm=w0.slots_per_sm, dram_Bps=w0.dram_Bps, **p)
    assert np.all(np.diff(b.makespan_s) >= -1e-12 * b.makespan_s[1:])
    for g in (1, n // 3, n // 2, n):  # spot-check the event engine on the same curve
        r = run(Workload.uniform(int(g), sm_count=w0.sm_count, slots_per_sm=w0.slots_per_sm, dram_Bps=w0.dram_Bps,
                                 **p), engine="fast")
        assert rel_close(r.makespan_s, b.makespan_s[g])


@SETTINGS
@given(workloads(), st.sampled_from(["reference", "fast"]))
def test_first_wave_is_breadth_first(wl, engine):
    r = run(wl, engine=engine, trace=True)
    n = min(wl.grid, wl.sm_count)
    assert np.array_equal(r.trace.sm[:n], np.arange(n))
    assert np.all(r.trace.start_s[: min(wl.grid, wl.capacity)] == 0.0)


def test_most_room_dispatch_later():
    # SM 0 frees first, then a CTA goes to the SM with the fewest residents, not round-robin
    wl = Workload(np.array([1.0, 5.0, 5.0, 5.0, 1.0, 1.0]), 0.25, 0.0, 1.0, 0.0, sm_count=2, slots_per_sm=2,
                  dram_Bps=1.0)
    for engine in ("reference", "fast"):
        tr = run(wl, engine=engine, trace=True).trace
        assert list(tr.sm[:4]) == [0, 1, 0, 1]
        # at t=4 (CTA 0 ends: 1.0 / 0.25) SM 0 holds 1 and SM 1 holds 2 -> CTA 4 to SM 0; CTA 5 waits
        assert tr.sm[4] == 0 and tr.start_s[4] == pytest.approx(4.0)
        assert tr.start_s[5] == pytest.approx(8.0)


@SETTINGS
@given(workloads(max_grid=120), st.integers(0, 10**6))
def test_determinism(wl, seed):
    for engine in ("reference", "fast"):
        a = run(wl, engine=engine, jitter_cv=0.5, seed=seed, trace=True)
        b = run(wl, engine=engine, jitter_cv=0.5, seed=seed, trace=True)
        assert a.makespan_s == b.makespan_s
        assert np.array_equal(a.trace.end_s, b.trace.end_s) and np.array_equal(a.trace.sm, b.trace.sm)


def test_jitter_changes_with_seed_and_has_the_asked_moments():
    wl = Workload.uniform(300, compute_s=1.0, sm_count=7, slots_per_sm=1)
    a = run(wl, jitter_cv=0.3, seed=1)
    b = run(wl, jitter_cv=0.3, seed=2)
    assert a.engine == "fast" and a.makespan_s != b.makespan_s
    for dist in ("gamma", "lognormal"):
        f = jitter_factors(200_000, 0.3, seed=0, dist=dist)
        assert abs(f.mean() - 1) < 0.01 and abs(f.std() / f.mean() - 0.3) < 0.01
        assert np.array_equal(jitter_factors(10, 0.3, 0, dist), f[:10])  # prefix-stable in CTA order
    assert np.array_equal(jitter_factors(5, 0.0), np.ones(5))


# ---------------------------------------------------------------- hand-worked cases
def test_hand_worked_sharing_and_dram():
    # one SM, 2 slots: solo 0.75 each -> over capacity, fair 0.5 each; 1 s of math -> 2 s
    wl = Workload(np.array([1.0, 1.0]), 0.75, 0.0, 1.0, 0.0, sm_count=1, slots_per_sm=2, dram_Bps=1.0)
    assert run(wl, engine="reference").makespan_s == pytest.approx(2.0)
    # caps 0.2 and 0.9: 0.2 fits, the other gets 0.8; CTA0 (c=0.2) ends at 1.0, then CTA1 runs at 0.9
    wl = Workload(np.array([0.2, 1.0]), np.array([0.2, 0.9]), 0.0, 1.0, 0.0, sm_count=1, slots_per_sm=2,
                  dram_Bps=1.0)
    r = run(wl, engine="reference", trace=True)
    assert r.trace.end_s[0] == pytest.approx(1.0)
    assert r.trace.end_s[1] == pytest.approx(1.0 + (1 - 0.8) / 0.9)
    # DRAM-bound: 2 SMs, 1 CTA each, 10 B each, DRAM 4 B/s, caps 3 B/s -> 2 B/s each -> 5 s
    wl = Workload(np.array([0.0, 0.0]), 1.0, 10.0, 3.0, 0.5, sm_count=2, slots_per_sm=1, dram_Bps=4.0,
                  launch_overhead_s=0.25)
    for engine in ("reference", "fast", "closed_form"):
        r = run(wl, engine=engine)
        assert r.makespan_s == pytest.approx(0.25 + 0.5 + 5.0)
        assert r.tail_utilization == pytest.approx(1.0)


def test_tail_utilization_and_fill():
    wl = Workload.uniform(5, compute_s=1.0, sm_count=4, slots_per_sm=1)
    r = run(wl, trace=True)
    assert r.waves == 2 and r.last_wave_fill == pytest.approx(0.25)
    assert r.tail_utilization == pytest.approx((4 * 1 + 1 * 1) / (4 * 2))
    assert list(r.per_sm_busy_s) == [2.0, 1.0, 1.0, 1.0]
    assert list(r.trace.wave_of(4)) == [0, 0, 0, 0, 1]
    empty = run(Workload.uniform(0, compute_s=1.0, sm_count=4))
    assert empty.makespan_s == 0.0 and empty.waves == 0 and empty.tail_utilization == 1.0


def test_zero_work_ctas_end_at_once():
    wl = Workload(np.zeros(6), 1.0, 0.0, 1.0, np.array([0, 0, 1, 0, 0, 2.0]), sm_count=2, slots_per_sm=1,
                  dram_Bps=1.0)
    a, b = run(wl, engine="reference", trace=True), run(wl, engine="fast", trace=True)
    assert_same(a, b, 1e-15)
    # CTAs 0,1 end at t=0; CTA 2 -> SM 0 (ends at 1), CTAs 3,4 -> SM 1 (end at 0), CTA 5 -> SM 1 (ends at 2)
    assert list(a.trace.sm) == [0, 1, 0, 1, 1, 1]
    assert list(a.trace.end_s) == [0.0, 0.0, 1.0, 0.0, 0.0, 2.0]
    assert a.makespan_s == 2.0


def test_simultaneous_ends_are_applied_before_dispatch():
    # two CTAs end at the same time on SMs 1 and 0; the next two go breadth-first to SM 0 then SM 1
    wl = Workload(np.array([2.0, 2.0, 3.0, 1.0, 1.0]), 1.0, 0.0, 1.0, 0.0, sm_count=3, slots_per_sm=1,
                  dram_Bps=1.0)
    for engine in ("reference", "fast"):
        tr = run(wl, engine=engine, trace=True).trace
        assert list(tr.sm) == [0, 1, 2, 0, 1]
        assert list(tr.start_s[3:]) == [2.0, 2.0]


# ---------------------------------------------------------------- API and single-stepping
def test_reference_engine_single_steps():
    wl = Workload(np.array([1.0, 2.0, 1.0]), 1.0, 0.0, 1.0, 0.0, sm_count=2, slots_per_sm=1, dram_Bps=1.0)
    eng = ReferenceEngine(wl)
    eng.env.step()  # controller starts: first wave dispatched
    assert eng.snapshot()["sm"] == [[0], [1]] and eng.env.peek() == pytest.approx(1.0)
    eng.env.step()  # t = 1: CTA 0 ends, CTA 2 goes to SM 0
    snap = eng.snapshot()
    assert snap["t"] == 1.0 and snap["sm"] == [[2], [1]] and snap["done"] == 1
    with pytest.raises(RuntimeError):
        eng.result()
    eng.env.run()
    assert eng.finished and eng.result().makespan_s == 2.0 and eng.env.peek() == math.inf


def test_api_errors_and_validation():
    uni = Workload.uniform(4, compute_s=1.0, sm_count=2)
    non = Workload(np.array([1.0, 2.0]), 1.0, 0.0, 1.0, 0.0, sm_count=2, slots_per_sm=1, dram_Bps=1.0)
    assert uni.is_uniform() and not non.is_uniform() and uni.waves == 2 and uni.capacity == 2
    with pytest.raises(ValueError):
        run(non, engine="closed_form")
    with pytest.raises(ValueError):
        run(uni, engine="closed_form", jitter_cv=0.1)
    with pytest.raises(ValueError):
        run(uni, engine="nope")
    with pytest.raises(ValueError):
        Workload(np.ones(2), 0.0, 0.0, 1.0, 0.0, sm_count=1, slots_per_sm=1, dram_Bps=1.0)
    with pytest.raises(ValueError):
        Workload(np.ones(2), 1.0, 1.0, 0.0, 0.0, sm_count=1, slots_per_sm=1, dram_Bps=1.0)
    with pytest.raises(ValueError):
        Workload(np.ones(2), 1.0, 0.0, 1.0, np.zeros(3), sm_count=1, slots_per_sm=1, dram_Bps=1.0)
    with pytest.raises(ValueError):
        Workload(np.ones(2), 1.0, 0.0, 1.0, 0.0, sm_count=1, slots_per_sm=0, dram_Bps=1.0)
    assert not uni.compute_s.flags.writeable
    assert EPS_REL == 1e-12


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reference_and_fast_agree_on_larger_launches(seed):
    rng = np.random.default_rng(seed)
    G, S, K = int(rng.integers(300, 600)), int(rng.integers(4, 17)), int(rng.integers(1, 9))
    wl = Workload(rng.uniform(0.5, 2, G), rng.uniform(0.1, 1, G), rng.uniform(0, 4, G), rng.uniform(0.5, 2, G),
                  rng.uniform(0, 0.5, G), S, K, dram_Bps=float(S) * 0.8)
    a = run(wl, engine="reference", jitter_cv=0.2, seed=seed, trace=True)
    b = run(wl, engine="fast", jitter_cv=0.2, seed=seed, trace=True)
    assert_same(a, b)


def test_water_level_terminates_on_rounding_ties():
    """Regression: (1 - 0.4) / 3 rounds below 0.2, which once made the filling loop cycle forever."""
    from wavesim.engine.fast import _fill_level
    from wavesim.engine.reference import water_fill

    dem = np.array([0.2, 0.1, 1.0, 1 / 3, 0.1, 1 / 3])
    level = _fill_level(dem, len(dem), 1.0)
    ref = water_fill(list(dem), 1.0)
    assert rel_close(np.minimum(dem, level), ref, 1e-12)
    assert sum(ref) == pytest.approx(1.0)
    assert _fill_level(np.array([0.2, 0.3]), 2, 1.0) == math.inf


@st.composite
def tie_workloads(draw):
    """Per-CTA values from small sets: many exact ties between CTAs, SMs and event times."""
    G = draw(st.integers(0, 120))
    S, K = draw(st.integers(1, 6)), draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    pick = lambda vals: rng.choice(vals, G)  # noqa: E731
    return Workload(pick([0.0, 0.5, 1.0, 1.5]), pick([0.25, 0.5, 1.0, 1 / 3]), pick([0.0, 1.0, 2.0]),
                    pick([0.5, 1.0, 3.0]), pick([0.0, 0.25, 0.5]), S, K, draw(st.sampled_from([0.5, 1.0, 3.0, 100.0])))


@SETTINGS
@given(tie_workloads())
def test_reference_and_fast_agree_with_many_ties(wl):
    assert_same(run(wl, engine="reference", trace=True), run(wl, engine="fast", trace=True))


@pytest.mark.parametrize("kw", [dict(compute_s=0.0, fixed_s=0.5), dict(compute_s=0.0, fixed_s=0.0),
                                dict(compute_s=0.0, dram_bytes=2.0, mem_cap_Bps=1.0, fixed_s=0.1, dram_Bps=2.5),
                                dict(compute_s=1.0, solo_frac=0.3, dram_bytes=2.0, mem_cap_Bps=1.0, dram_Bps=2.5)])
@pytest.mark.parametrize("G", [0, 1, 7, 12, 13])
def test_closed_form_edge_cases(kw, G):
    """Zero-math, zero-work and memory-only CTAs: all three engines agree, busy times included."""
    wl = Workload.uniform(G, sm_count=3, slots_per_sm=2, **kw)
    ref = run(wl, engine="reference", trace=True)
    for engine in ("fast", "closed_form"):
        assert_same(ref, run(wl, engine=engine, trace=True), 1e-12)


def test_desync_softens_only_partial_waves_after_a_full_one_at_2_plus_ctas_per_sm():
    """desync_rate (closed form only): after n_full >= 1 full waves at 2+ CTAs/SM the partial wave takes
    (1 - phi) of its lockstep time + phi R/W of a full wave, phi = 1 - exp(-rate n_full); the first band and
    1 CTA/SM are lockstep; the makespan still grows with the grid; event engines refuse it."""
    from dataclasses import replace

    S, K, T = 4, 3, 1e-3
    lock = lambda G, k=K: Workload.uniform(G, compute_s=T / k, solo_frac=1.0, sm_count=S, slots_per_sm=k)  # noqa: E731
    for k in (2, K):
        W = S * k
        for G in (1, W, W + 1, 2 * W, 2 * W + 1, 3 * W + 5, 5 * W - 1):
            t_lock = run(lock(G, k)).span_s
            t = run(replace(lock(G, k), desync_rate=0.7)).span_s
            n_full, R = divmod(G, W)
            if n_full >= 1 and R:
                phi = 1 - math.exp(-0.7 * n_full)
                t_part = t_lock - n_full * T
                assert t == pytest.approx(n_full * T + (1 - phi) * t_part + phi * R / W * T, rel=1e-12)
                assert t < t_lock
            else:
                assert t == pytest.approx(t_lock, rel=1e-12)
            assert run(replace(lock(G, 1), desync_rate=0.7)).span_s == pytest.approx(run(lock(G, 1)).span_s,
                                                                                       rel=1e-12)
    W = S * K
    spans = [run(replace(lock(G), desync_rate=0.7)).span_s for G in range(1, 6 * W)]
    assert all(b >= a * (1 - 1e-12) for a, b in zip(spans, spans[1:]))
    batch = run_uniform_batch(np.arange(1, 6 * W), sm_count=S, slots_per_sm=K, compute_s=T / K, desync_rate=0.7)
    assert np.allclose(batch.span_s, spans, rtol=1e-12)
    with pytest.raises(ValueError, match="desync_rate"):
        run(replace(lock(3 * W + 1), desync_rate=0.7), engine="fast")
    with pytest.raises(ValueError, match="desync_rate"):
        replace(lock(1), desync_rate=-1.0)


def test_a_2_cta_tail_pays_the_paired_time_from_its_onset():
    """At 2 CTAs/SM, out of step (desync_rate > 0), a partial wave of 2 <= R <= S CTAs after n full waves pays the time
    of an SM holding two of them from R n >= PAIR_ONSET S on (wavesim/engine/desync.py), lockstep (one per SM) below;
    in step (desync_rate 0) never; 3 CTAs/SM never. A rate of 1e-12 leaves the streaming term out of the sums."""
    from dataclasses import replace

    from wavesim.engine.desync import PAIR_ONSET, paired_tail_probability

    S, T = 8, 1e-3
    # R n / S = 1.0 (under the onset), 1.25 twice, no full wave, R > S
    assert paired_tail_probability([4, 5, 5, 5, 9], S, 2, [2, 2, 2, 0, 2], 0.1).tolist() == [0, 1, 1, 0, 0]
    assert paired_tail_probability(5, S, 3, 2, 0.1) == 0 and paired_tail_probability(5, S, 2, 2, 0.0) == 0
    assert 4 * 2 < PAIR_ONSET * S <= 5 * 2
    wl = lambda G, k=2: Workload.uniform(G, compute_s=T / 2, solo_frac=1.0, sm_count=S, slots_per_sm=k)  # noqa: E731
    out_of_step = lambda G, k=2: run(replace(wl(G, k), desync_rate=1e-12)).span_s  # noqa: E731
    W = 2 * S
    assert out_of_step(2 * W + 4) == pytest.approx(2 * T + T / 2, rel=1e-9)     # lone tail CTAs: half a full CTA
    assert out_of_step(2 * W + 5) == pytest.approx(3 * T, rel=1e-9)             # one SM holds two: a full CTA's time
    assert run(wl(2 * W + 5)).span_s == pytest.approx(2 * T + T / 2, rel=1e-9)  # lockstep
    assert out_of_step(2 * 3 * S + 5, 3) == pytest.approx(run(wl(2 * 3 * S + 5, 3)).span_s, rel=1e-9)


@pytest.mark.parametrize("engine", ["closed_form", "fast", "reference"])
def test_chip_load_slows_busy_phases_and_spares_light_tails(engine):
    """load_slowdown kappa: at chip load u (fraction of the SM math in use) SM-side work runs 1 + kappa u
    slower. Compute-bound CTAs, one per SM: a full wave takes c (1 + kappa), a tail of R CTAs on S SMs
    c (1 + kappa R / S); kappa = 0 is the lockstep staircase."""
    S, c, kappa = 8, 2.0, 0.3
    for G in (3, 8, 8 + 2, 3 * 8 + 5):
        wl = Workload.uniform(G, compute_s=c, sm_count=S, slots_per_sm=1, load_slowdown=kappa)
        full, tail = divmod(G, S)
        expect = full * c * (1 + kappa) + (c * (1 + kappa * tail / S) if tail else 0.0)
        assert run(wl, engine=engine).span_s == pytest.approx(expect, rel=1e-12)
    # DRAM-bound CTAs do not slow: the rule scales SM-side work only
    wl = Workload.uniform(16, compute_s=1e-3, dram_bytes=10.0, mem_cap_Bps=100.0, sm_count=S, dram_Bps=1.0,
                          load_slowdown=kappa)
    assert run(wl, engine=engine).span_s == pytest.approx(16 * 10.0 / 1.0, rel=1e-9)
    with pytest.raises(ValueError, match="load_slowdown"):
        Workload.uniform(1, compute_s=1.0, sm_count=1, load_slowdown=-0.1)


def test_queueing_at_the_sm_by_hand_and_its_bounds():
    """sm_queueing: n alike CTAs of solo fraction f get min(f, 1/n, f / C(n, f)) of their SM, C from exact
    mean-value analysis with deterministic service. By hand, f = 0.5 (Z = D = 0.5): k = 1: R = 0.5, X = 1,
    Q = U = 0.5; k = 2: R = 0.5 (1 + 0.5 - 0.25) = 0.625, C = 1.125, so two co-resident CTAs of compute_s 1
    each progress at 0.5 / 1.125 and take 2.25 (fair sharing alone: 2.0, the SM is exactly full)."""
    from dataclasses import replace

    from wavesim.engine.queueing import mva_cycle, mva_cycles

    assert mva_cycle(1, 0.3) == pytest.approx(1.0, rel=1e-15) and mva_cycle(2, 0.5) == pytest.approx(1.125, rel=1e-15)
    for engine in ("closed_form", "fast", "reference"):
        wl = Workload.uniform(2, compute_s=1.0, solo_frac=0.5, sm_count=1, slots_per_sm=2, sm_queueing=True)
        assert run(wl, engine=engine).span_s == pytest.approx(2.25, rel=1e-12)
        assert run(replace(wl, sm_queueing=False), engine=engine).span_s == pytest.approx(2.0, rel=1e-12)
    f = np.linspace(0.02, 1.0, 50)[:, None]
    n = np.arange(1, 33)[None, :]
    C = mva_cycles(f, n)
    assert np.array_equal(C[:, 0], np.ones(50))
    assert np.all(np.diff(C, axis=1) > 0)                       # each extra CTA slows the others
    assert np.all(C <= (1 - f) + n * f + 1e-12)                 # at most every other CTA ahead in the queue
    assert np.all(C[:, -1] >= 0.95 * n[0, -1] * f[:, 0])        # near the SM capacity with many CTAs
    # where the approximation undershoots that capacity, the fair share bounds the share
    wl = Workload.uniform(8, compute_s=1.0, solo_frac=1.0, sm_count=1, slots_per_sm=8, sm_queueing=True)
    assert run(wl, engine="closed_form").span_s == pytest.approx(8.0, rel=1e-12)
    assert mva_cycles(0.4, 5) == pytest.approx(mva_cycle(5, 0.4), rel=1e-15)
    with pytest.raises(ValueError, match="sm_queueing"):
        Workload.uniform(1, compute_s=1.0, sm_count=1, sm_queueing="yes")
