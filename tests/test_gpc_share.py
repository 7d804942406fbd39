"""The L2 pool served per GPC (wavesim/kernels/gpc_share.py): the per-GPC distinct share of a wave's tile reads, counted
for many keys in one pass, and what it does to GROUP_M siblings in the GEMM model."""

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import hwspecs
from validation.gpc_scope import lockstep_gpc_share
from wavesim.kernels import gpc_share
from wavesim.kernels.gemm import GemmParams, simulate_config
from wavetune.config import LaunchConfig

H200 = hwspecs.load_gpu("h200")
TILES = st.sampled_from([16, 32, 64, 128, 256])
KEYS = st.tuples(st.integers(1, 300), st.integers(1, 300), st.sampled_from([1, 2, 4, 8, 16, 32]), st.integers(1, 12),
                 TILES, TILES)


@settings(max_examples=150, deadline=None)
@given(M=st.integers(1, 20000), N=st.integers(16, 20000), bm=TILES, bn=TILES, gm=st.sampled_from([1, 2, 4, 8, 16, 32]),
       slots=st.integers(1, 16))
def test_share_is_the_gpc_scope_probes_lockstep_share(M, N, bm, bn, gm, slots):
    """The vectorised count is the GPC-scope probe's reading of the canonical order (validation/gpc_scope.py)."""
    cfg = LaunchConfig(bm, bn, 32, gm, 4, 3)
    got = _one(-(-M // bm), -(-N // bn), gm, slots, bm, bn, H200.sm_count, H200.sms_per_gpc)
    assert got == lockstep_gpc_share(M, N, cfg, 1, H200.sm_count, slots, scope=H200.sms_per_gpc)


def _one(*key_and_machine) -> float:
    """One key counted alone, in a fresh cache."""
    gpc_share._cache.clear()
    *key, sm_count, scope = key_and_machine
    return float(gpc_share.distinct_shares(np.array([key]), sm_count, scope)[0])


@settings(max_examples=20, deadline=None)
@given(keys=st.lists(KEYS, min_size=1, max_size=40), sm_count=st.integers(8, 200), scope=st.integers(1, 20),
       per_pass=st.integers(1, 5000))
def test_many_keys_in_passes_count_as_each_alone(keys, sm_count, scope, per_pass):
    """Keys counted together, split into passes of any size, with repeats, get what each gets alone."""
    alone = [_one(*k, sm_count, scope) for k in keys]
    gpc_share._cache.clear()
    old, gpc_share.PROGRAMS_PER_PASS = gpc_share.PROGRAMS_PER_PASS, per_pass
    try:
        together = gpc_share.distinct_shares(np.array(keys + keys[:3]), sm_count, scope)
    finally:
        gpc_share.PROGRAMS_PER_PASS = old
    assert together.tolist() == alone + alone[:3]


def test_share_hand_worked():
    """4 x 4 tiles of 64 x 64, GROUP_M 2, 1 CTA/SM on 8 SMs in GPCs of 4: pids 0-3 on GPC 0 cover rows {0, 1} and
    columns {0, 1}, pids 4-7 on GPC 1 rows {0, 1} and columns {2, 3}: 2 x (2 + 2) tiles of 64 of 8 x 2 read."""
    assert _one(4, 4, 2, 1, 64, 64, 8, 4) == (2 * (2 * 64 + 2 * 64)) / (8 * 128)
    # GROUP_M 1 walks a row of B: one row of A and four columns per GPC
    assert _one(4, 4, 1, 1, 64, 64, 8, 4) == (2 * (1 * 64 + 4 * 64)) / (8 * 128)
    # one CTA per GPC window shares nothing
    assert _one(4, 4, 8, 1, 64, 64, 8, 1) == 1.0


def _sibling_times(spec, params=None, M=768):
    cfgs = [LaunchConfig(64, 128, 64, g, 4, 3) for g in (1, 8)]
    return [float(simulate_config(spec, c, M, 4096, 4096, params=params)[0][0]) for c in cfgs]


def test_the_grouped_order_is_cheaper_where_the_l2_pool_binds():
    """64x128x64 on 4096^2 at M = 768 (3 CTAs/SM, 2 waves): the H200 ran GROUP_M 1 at 54 us and GROUP_M 8 at 42 us
    (NOTES.md session 29); with the coalescer the model puts GROUP_M 8 ahead (the shipped calibration, session 33:
    55.2 against 51.8 us), without it (e = 0) it calls them even."""
    from wavesim.calibration import load_calibration

    cal = load_calibration("auto", "h200")
    g1, g8 = _sibling_times(H200, cal)
    assert g1 > 1.03 * g8
    blind = dataclasses.replace(cal, l2_coalescing_one_wave=0.0, l2_coalescing_later_waves=0.0)
    b1, b8 = _sibling_times(H200, blind)
    assert abs(b1 / b8 - 1) < 0.01
    assert g8 < b8      # merging only ever relieves the pool


def test_no_gpc_size_merges_nothing():
    """A GPU whose spec has no sms_per_gpc gets the share 1: the coalescing parameters change nothing there."""
    a100 = hwspecs.load_gpu("a100-sxm4-80gb")
    assert a100.sms_per_gpc is None
    p = GemmParams.priors()
    off = dataclasses.replace(p, l2_coalescing_one_wave=0.0, l2_coalescing_later_waves=0.0)
    assert _sibling_times(a100, p) == _sibling_times(a100, off)
