"""The GEMM kernel model: wave structure from real occupancy, the engines' agreement on GEMM workloads,
the bilinear growth in K, and the small-M regime."""

import numpy as np
import pytest

import hwspecs
from tuner.space import WAVE_STUDY
from wavesim.engine import run
from wavesim.kernels.gemm import (ConfigDoesNotFit, GemmBatch, GemmModel, GemmParams, config_occupancy,
                                  l2_requests_per_k_step, loop_instructions_per_step, mmas_per_step, simulate_batch,
                                  simulate_config, specialization_problem, wrapped_row_share)
from wavesim.resources import gemm_resources
from wavetune.config import GemmProblem, LaunchConfig

H200 = hwspecs.load_gpu("h200")


@pytest.mark.parametrize("cfg, ctas", [(WAVE_STUDY[0], 1), (WAVE_STUDY[1], 2), (WAVE_STUDY[2], 3), (WAVE_STUDY[3], 8)])
def test_guide_occupancies_on_h200(cfg, ctas):
    """GUIDE: 128x128x64 s4 -> 1, s2 -> 2, 64x128x64 s3 -> 3, 64x64x32 s2 -> 8 CTAs/SM (measured staircases)."""
    assert config_occupancy(H200, cfg, "bf16")[0].ctas_per_sm == ctas


@pytest.mark.parametrize("cfg", WAVE_STUDY[:4])
def test_steps_sit_at_wave_boundaries(cfg):
    """With the shipped H200 calibration (the priors' port ratio of 1.0 saturates an SM with one 64x128x64 CTA,
    so their first wave climbs in sub-steps the hardware does not show; NOTES.md)."""
    from wavesim.calibration import load_calibration

    occ = config_occupancy(H200, cfg, "bf16")[0].ctas_per_sm
    per_row = 4096 // cfg.BLOCK_N
    ms = np.arange(cfg.BLOCK_M, 6 * 132 * occ // per_row * cfg.BLOCK_M, cfg.BLOCK_M)
    t, waves, _ = simulate_config(H200, cfg, ms, 4096, 4096, params=load_calibration("auto", "h200"))
    tiles = np.ceil(ms / cfg.BLOCK_M) * per_row
    assert np.array_equal(waves, np.ceil(tiles / (132 * occ)))
    rise = np.diff(t) / t[:-1]
    boundaries = np.flatnonzero(np.diff(waves) > 0)
    assert rise[boundaries[0]] > 0.15  # the first wave boundary is a clear step
    for lo, hi in zip(boundaries[:3], boundaries[1:4]):  # each step rises more than anything inside its band
        assert rise[hi] > rise[lo + 1:hi].max(initial=0.0)


def test_desync_rate_grows_with_the_sm_load_from_3_ctas_per_sm():
    """At 3+ CTAs/SM a record's rate is desync_rate x (n x solo_frac) ** desync_contention_exponent (CTAs that
    oversubscribe their SM fall out of step faster); at 2 CTAs/SM it is desync_rate_two_ctas whatever the load;
    at 1 none."""
    m = GemmModel()
    p = GemmParams.from_dict({"desync_rate": 0.2, "desync_contention_exponent": 3.0, "desync_rate_two_ctas": 0.07})
    flat = GemmParams.from_dict({"desync_rate": 0.2, "desync_contention_exponent": 0.0, "desync_rate_two_ctas": 0.07})
    seen = set()
    for cfg in WAVE_STUDY:
        wl = m.workload(H200, GemmProblem(2048, 4096, 4096), cfg, p)
        n, load = wl.slots_per_sm, wl.slots_per_sm * wl.solo_frac[0]
        seen.add(min(n, 3))
        expected = 0.2 * load ** 3 if n >= 3 else 0.07 if n == 2 else 0.0
        assert wl.desync_rate == pytest.approx(expected, rel=1e-12)
        assert m.workload(H200, GemmProblem(2048, 4096, 4096), cfg, flat).desync_rate == pytest.approx(
            0.2 if n >= 3 else expected, rel=1e-12)
    assert seen == {1, 2, 3}


def test_dram_latency_grows_with_the_dram_load_of_lone_ctas():
    """dram_queueing: where lone CTAs stream B from DRAM, the more of them there are (a wider N), the longer each
    waits per K step (the loaded DRAM latency); with no queueing the lone CTA's step does not depend on N. A launch
    whose operands come from L2 barely moves."""
    m = GemmModel()
    cfg = LaunchConfig(64, 64, 64, 8, 4, 4)
    flat = GemmParams.from_dict({"dram_queueing": 0.0})
    step = lambda N, p: (lambda w: w.compute_s[0] / w.solo_frac[0])(m.workload(H200, GemmProblem(64, N, 2048), cfg, p))  # noqa: E731
    narrow, wide = (step(N, None) / step(N, flat) for N in (2048, 8192))      # 32 and 128 lone CTAs
    assert 1.0 < narrow < wide and wide > 1.1
    assert step(2048, flat) == pytest.approx(step(8192, flat), rel=1e-9)
    t = lambda p: simulate_config(H200, cfg, 1024, 1024, 1024, params=p)[0][0]  # noqa: E731
    assert t(None) == pytest.approx(t(flat), rel=0.02)


def test_linear_in_k_within_a_wave():
    cfg = WAVE_STUDY[0]
    ks = np.arange(1024, 8193, 1024)
    t, waves, _ = simulate_config(H200, cfg, 1024, 4096, ks)
    assert len(set(waves.tolist())) == 1
    d = np.diff(t)
    assert np.allclose(d, d[0], rtol=1e-6)  # T = a + c L at fixed G


def test_engines_agree_on_gemm_workloads():
    """The lockstep schedule is the same in all three engines; the GEMM model's expected de-synchronisation
    (a closed-form term, its rate by occupancy) changes only launches with 2+ CTAs/SM and at least 1 full wave,
    and only lowers them."""
    from dataclasses import replace

    m = GemmModel()
    for cfg in WAVE_STUDY[:4]:
        for M in (64, 777, 2000):
            wl = m.workload(H200, GemmProblem(M, 4096, 2048), cfg)
            lock = replace(wl, desync_rate=0.0)
            ref = run(lock, engine="reference").makespan_s
            assert run(lock, engine="fast").makespan_s == pytest.approx(ref, rel=1e-9)
            assert run(lock, engine="closed_form").makespan_s == pytest.approx(ref, rel=1e-9)
            if wl.slots_per_sm == 1:
                assert wl.desync_rate == 0.0   # one CTA per SM stays in step
            else:
                with pytest.raises(ValueError, match="desync_rate"):
                    run(wl, engine="fast")
            t, _, _ = simulate_config(H200, cfg, M, 4096, 2048)
            assert t[0] == pytest.approx(run(wl).makespan_s, rel=1e-12)
            if wl.slots_per_sm >= 2 and wl.grid > wl.capacity and wl.grid % wl.capacity:
                assert t[0] < ref * (1 - 1e-3)
            else:
                assert t[0] == pytest.approx(ref, rel=1e-12)


def test_small_m_prefers_small_tiles_and_deep_pipelines():
    small = [LaunchConfig(64, 64, 128, 8, 4, 3), LaunchConfig(128, 256, 64, 8, 8, 3)]
    t_small, _, _ = simulate_config(H200, small[0], 16, 4096, 4096)
    t_big, _, _ = simulate_config(H200, small[1], 16, 4096, 4096)
    assert t_small[0] < t_big[0]
    shallow, _, _ = simulate_config(H200, LaunchConfig(64, 64, 128, 8, 4, 2), 16, 4096, 4096)
    assert t_small[0] < shallow[0]


def test_wrapped_row_share_counts_the_copies_beyond_the_first():
    """For M < BLOCK_M the kernel's A tile is BLOCK_M / M copies of each row: the share of M = 1's same-row cost is
    the copies beyond the first, all of it at M = 1, none once every row of the tile is distinct."""
    assert wrapped_row_share(1, 128) == 1.0
    assert wrapped_row_share(2, 128) == pytest.approx(63 / 127)
    assert wrapped_row_share(128, 128) == wrapped_row_share(300, 128) == 0.0
    shares = wrapped_row_share(np.arange(1, 129), 128)
    assert np.all(np.diff(shares) < 0)
    assert wrapped_row_share(1, 16) == 1.0 and wrapped_row_share(16, 16) == 0.0


def test_wrapped_rows_cost_falls_with_m_and_grows_with_concurrent_a_traffic():
    """On one grid (M <= BLOCK_M: one row of tiles) M = 1 costs more than M = 2, M = 2 more than M = BLOCK_M; taller
    tiles and wider grids pay more, a faster same-row rate less, and from M = BLOCK_M on the rate plays no part."""
    def over_full(cfg, M, params=None):
        t, _, _ = simulate_config(H200, cfg, [M, cfg.BLOCK_M], 3584, 18944, params=params)
        return t[0] / t[1]

    tall, short = LaunchConfig(128, 64, 128, 8, 4, 3), LaunchConfig(16, 64, 128, 8, 4, 3)
    narrow = LaunchConfig(128, 32, 128, 8, 4, 3)   # twice the CTAs of `tall`
    assert over_full(tall, 1) > over_full(tall, 2) > over_full(tall, 8) > 1.0
    assert over_full(tall, 1) > over_full(short, 1) > 1.0
    assert over_full(narrow, 1) > over_full(tall, 1)
    faster = GemmParams.from_dict({"single_row_l2_fraction": 10 * GemmParams.priors().single_row_l2_fraction})
    assert 1.0 < over_full(tall, 2, faster) < over_full(tall, 2)
    for M in (128, 200):
        assert (simulate_config(H200, tall, M, 3584, 18944, params=faster)[0][0]
                == simulate_config(H200, tall, M, 3584, 18944)[0][0])


def test_rows_shorter_than_a_cache_line_cost_more_per_byte():
    """An L2 request is a row segment of up to a 128-B line and costs l2_request_overhead_bytes on top of its bytes,
    normalised so a whole line costs its bytes: whole-line configs do not see the overhead; a BK = 32 bf16 config
    (half-line rows of A) runs slower with it where its loads set the pace; a GPU with no sourced line size
    counts bytes only."""
    assert l2_requests_per_k_step(128, 64, 32, 2, 128) == 128 * 1 + 32 * 1    # A: 64-B rows, B: 128-B rows
    assert l2_requests_per_k_step(64, 128, 64, 2, 128) == 64 * 1 + 64 * 2     # B: 256-B rows, 2 lines each
    no_overhead = GemmParams.from_dict({"l2_request_overhead_bytes": 0.0})
    assert GemmParams.priors().l2_request_overhead_bytes > 0

    def t(spec, cfg, params=None):
        return simulate_config(spec, cfg, [64, 4096], 4096, 4096, params=params)[0]

    whole_lines = LaunchConfig(128, 64, 64, 8, 4, 3)
    # equal up to rounding: tile and request parts are scaled apart (the coalescer merges only the first)
    np.testing.assert_allclose(t(H200, whole_lines), t(H200, whole_lines, no_overhead), rtol=1e-12)
    half_lines = LaunchConfig(128, 64, 32, 8, 4, 5)
    assert t(H200, half_lines)[1] > 1.05 * t(H200, half_lines, no_overhead)[1]
    mi300x = hwspecs.load_gpu("mi300x")
    assert mi300x.arch.cache_line_bytes is None
    assert np.array_equal(t(mi300x, half_lines), t(mi300x, half_lines, no_overhead))


def test_config_that_does_not_fit_raises_with_reason():
    with pytest.raises(ConfigDoesNotFit, match="shared memory"):
        simulate_config(H200, LaunchConfig(256, 256, 128, 8, 8, 4), 512, 512, 512)


def test_unaligned_shapes_get_their_own_kernel():
    """N or K not a multiple of 16 gets the kernel Triton compiles for it (committed resource tables): single-
    buffered, so a config whose pipelined shared memory does not fit launches, and more CTAs fit where registers
    allow; each unaligned operand makes a K step slower (no stage in flight, two-byte loads), or no faster where B's
    SM-shared stores already hide A's latency. AMD keeps the one kernel (its unaligned kernel is not measured)."""
    cfg = LaunchConfig(128, 128, 64, 8, 4, 4)
    aligned_occ, aligned_res = config_occupancy(H200, cfg, "bf16", 5008, 4096)
    occ, res = config_occupancy(H200, cfg, "bf16", 5000, 4096)
    assert (aligned_occ.ctas_per_sm, occ.ctas_per_sm) == (1, 2)
    assert res.smem_bytes < aligned_res.smem_bytes and res.spills > 0 == aligned_res.spills
    big = LaunchConfig(128, 256, 128, 8, 8, 3)
    with pytest.raises(ConfigDoesNotFit, match="shared memory"):
        simulate_config(H200, big, 1000, 5008, 4096)
    assert simulate_config(H200, big, 1000, 5000, 4096)[0][0] > 0
    for c in (LaunchConfig(128, 64, 32, 8, 4, 3), LaunchConfig(64, 128, 64, 8, 4, 3)):
        t = {nk: simulate_config(H200, c, 1000, *nk)[0][0] for nk in ((5008, 3008), (5008, 3000), (5000, 3008),
                                                                      (5000, 3000))}
        assert t[5000, 3000] >= max(t[5008, 3000], t[5000, 3008]) > min(t[5008, 3000], t[5000, 3008]) > t[5008, 3008]
    mi300x = hwspecs.load_gpu("mi300x")
    assert config_occupancy(mi300x, cfg, "bf16", 5000, 3000) == config_occupancy(mi300x, cfg, "bf16")


def test_batch_equals_per_config_and_params_round_trip():
    cfgs = list(WAVE_STUDY)
    b = GemmBatch.build(H200, "bf16", [512] * len(cfgs), [4096] * len(cfgs), [4096] * len(cfgs), cfgs)
    batched = simulate_batch(b).makespan_s
    single = [simulate_config(H200, c, 512, 4096, 4096)[0][0] for c in cfgs]
    assert np.allclose(batched, single, rtol=1e-12)
    p = GemmParams.priors()
    assert GemmParams.from_dict(p.to_dict()) == p
    with pytest.raises(ValueError, match="unknown parameter"):
        GemmParams.from_dict({"warp_speed": 1.0})
    with pytest.raises(ValueError, match="finite number"):
        GemmParams.from_dict({"mma_efficiency": -1})
    # a calibration from before the load-driven de-synchronisation (a rate, no exponent) keeps its one rate for
    # every load; one with neither takes both priors
    assert GemmParams.from_dict({"desync_rate": 0.54}).desync_contention_exponent == 0.0
    assert GemmParams.from_dict({}).desync_contention_exponent == p.desync_contention_exponent > 0


def test_priors_have_sources():
    import tomllib

    from wavesim.kernels.gemm import PRIORS_PATH

    raw = tomllib.loads(PRIORS_PATH.read_text())
    assert set(raw) == set(GemmParams.priors().to_dict())
    assert all(len(v["source"]) > 40 for v in raw.values())


def test_concurrent_readers_of_a_wave_hand_worked(monkeypatch):
    """M = 256, N = 1024, 128x128 tiles, GROUP_M 8: one wave of 16 CTAs covers 2 tile rows of A (each read by 8
    CTAs) and 8 tile columns of B (each read by 2): bytes-weighted (2 x 128 x 8 + 8 x 128 x 2) / (10 x 128) =
    3.2 readers per tile. One CTA alone reads its tiles alone (1). More readers of a tile wait on its DRAM
    miss, so the lone-step latency rises and solo_frac falls."""
    import wavesim.kernels.gemm as gemm

    cfg = LaunchConfig(128, 128, 64, 8, 4, 3)
    b = GemmBatch.build(H200, "bf16", [256, 128], [1024, 128], [4096, 4096], [cfg, cfg])
    assert gemm.concurrent_readers(b) == pytest.approx([3.2, 1.0])
    # one wave of 2048 x 2048 (K = 4096, 256 CTAs) mostly hits L2, but each of its tiles has 16 readers
    big = GemmBatch.build(H200, "bf16", [2048], [2048], [4096], [cfg])
    assert gemm.concurrent_readers(big) == pytest.approx([16.0])
    f = gemm.workload_arrays(big, GemmParams.priors())["solo_frac"][0]
    monkeypatch.setattr(gemm, "concurrent_readers", lambda b: np.ones_like(b.M))
    f_alone = gemm.workload_arrays(big, GemmParams.priors())["solo_frac"][0]
    assert f < 0.9 * f_alone


def test_a_cta_of_fewer_warps_than_sub_partitions_computes_at_their_share():
    """A warp issues MMAs to its own sub-partition's tensor core (4 per sm_90 SM): a lone 1-warp CTA cannot go
    faster than 4x its tile's math at the SM's rate, so it is much slower than the same tile on 4 warps (the blind
    set, validation/data/h200/fresh19: 1-warp tiles at M <= 22 were predicted up to 1.4x too fast without this)."""
    from dataclasses import replace

    from wavesim.calibration import load_calibration

    spec = H200
    p = load_calibration("auto", "h200")
    cfgs = [LaunchConfig.from_key(f"32x64x256_g8_w{w}_s3") for w in (1, 2, 4)]
    b = GemmBatch.build(spec, "bf16", [32] * 3, [64] * 3, [65536] * 3, cfgs)
    t = simulate_batch(b, p).makespan_s
    t_math = 2.0 * 32 * 64 * 256 / (spec.tensor_flops_per_clock_per_sm["bf16"] * spec.boost_clock_hz
                                       * p.mma_v2_efficiency)
    # (2 warps within 0.01% of 4 since MS1: both run on their chain, and 4 warps read more fragments)
    assert t[0] >= 4 * t_math * b.k_steps[0] and t[0] > 1.4 * t[2] and t[1] >= t[2] * (1 - 1e-3)
    # num_stages = 1 loads synchronously: all of the MMA waits in the chain, so it is slower than 2 stages unless
    # the calibration already puts all of it there
    b = GemmBatch.build(spec, "bf16", [32, 32], [64, 64], [65536] * 2,
                        [LaunchConfig.from_key(k) for k in ("64x64x64_g8_w4_s1", "64x64x64_g8_w4_s2")])
    t = simulate_batch(b, p).makespan_s
    assert p.mma_in_load_chain < 1 and t[0] > t[1]
    # and its loop waits on its loads in two rounds (LR1, the compiled SASS); with one round and all of the MMA in the
    # chain, only the second stage's one masked copy (masked_copies_s) tells them apart: 64 K steps, a tiny share
    assert list(b.load_rounds) == [2, 1]
    t = simulate_batch(replace(b, load_rounds=np.ones(2)), replace(p, mma_in_load_chain=1.0)).makespan_s
    assert t[1] > t[0] and t[0] == pytest.approx(t[1], rel=1e-3)


def test_masked_stage_copies_cost_their_shared_memory_stores():
    """Every CTA issues num_stages - 1 masked stage copies (zero-fill cp.async): each costs its stage's bytes at the
    arch's shared-memory rate, none for one stage, for the unaligned kernel (unpipelined loads), on AMD (no cp.async
    lowering modelled, no sourced rate) or before sm_80 (no cp.async); with one K step, stages beyond the second then
    only cost time."""
    from wavesim.kernels.gemm import masked_copies_s

    cfgs = [LaunchConfig.from_key(f"64x128x64_g8_w4_s{s}") for s in (1, 2, 3, 4)]
    b = GemmBatch.build(H200, "bf16", [4096] * 4, [4096] * 4, [64] * 4, cfgs)
    step = (64 + 128) * 64 * 2
    got = masked_copies_s(b, np.full(4, step), np.zeros(4, dtype=bool))
    rate = H200.arch.smem_bytes_per_clock * H200.boost_clock_hz
    assert got == pytest.approx([0.0, step / rate, 2 * step / rate, 3 * step / rate])
    assert not masked_copies_s(b, np.full(4, step), np.ones(4, dtype=bool)).any()
    for gpu in ("mi300x", "v100-sxm2"):
        spec = hwspecs.load_gpu(gpu)
        assert not masked_copies_s(GemmBatch.build(spec, "fp16", [4096], [4096], [64], cfgs[2:3]), np.array([step]),
                                   np.zeros(1, dtype=bool)).any()
    wide = [LaunchConfig.from_key(f"128x256x64_g8_w8_s{s}") for s in (3, 4)]
    assert len({config_occupancy(H200, c, "bf16")[0].ctas_per_sm for c in wide}) == 1
    t = simulate_batch(GemmBatch.build(H200, "bf16", [8192] * 2, [4096] * 2, [64] * 2, wide)).makespan_s
    assert t[1] > t[0]


def test_mma_sync_steps_wait_on_the_shared_memory_port():
    """An mma.sync CTA's step moves its tile into shared memory and its warps' fragments out (A once per warp column
    of the warp grid, B once per warp row) at the arch's shared-memory rate: a floor that decides a lone CTA of many
    warps on a small tile (fresh44: 16x64x256 on 16 warps measured 1.4-2.2x the best at decode M, where the model
    without it picked it). wgmma kernels read through the tensor core: no floor; nor on AMD."""
    from wavesim.calibration import load_calibration
    from wavesim.kernels.gemm import mma_v2_smem_read_elements, mma_v2_warps

    p = load_calibration("auto", "h200")
    cfg = LaunchConfig.from_key("16x64x256_g8_w16_s5")
    assert mma_v2_warps(cfg) == (2, 8) and mma_v2_smem_read_elements(cfg) == 16 * 16 + 16 * 8
    b = GemmBatch.build(H200, "bf16", [8], [1024], [65536], [cfg])
    floor = (16 + 64 + 384) * 256 * 2 / (H200.arch.smem_bytes_per_clock * H200.boost_clock_hz)
    assert b.grid[0] < H200.sm_count   # one CTA per SM: its own step is the launch
    assert simulate_batch(b, p).makespan_s[0] >= b.k_steps[0] * floor
    # the same tile on 4 warps reads a third as much and is faster, as measured
    four = GemmBatch.build(H200, "bf16", [8], [1024], [65536], [LaunchConfig.from_key("16x64x256_g8_w4_s5")])
    assert simulate_batch(four, p).makespan_s[0] < simulate_batch(b, p).makespan_s[0]
    assert not GemmBatch.build(H200, "bf16", [8], [1024], [4096], [LaunchConfig.from_key("64x64x64_g8_w4_s3")]
                               ).smem_reads.any()
    mi = hwspecs.load_gpu("mi300x")
    assert not GemmBatch.build(mi, "fp16", [8], [1024], [4096], [LaunchConfig.from_key("16x64x64_g8_w16_s2")]
                               ).smem_reads.any()


def test_narrow_operand_tiles_load_without_stages_in_flight():
    """A tile that gives each thread less than cp.async's 4 bytes (16 x 128 x 16 on 16 warps: A has half an element a
    thread) is loaded synchronously, so its stages buy nothing (their masked copies cost a little); a tile of 4+ bytes a thread keeps its pipeline (SL1,
    decided on fresh48, NOTES.md session 35)."""
    from wavesim.calibration import load_calibration

    p = load_calibration("auto", "h200")

    def times(key_of_stages):
        cfgs = [LaunchConfig.from_key(key_of_stages(s)) for s in (3, 4)]
        assert len({config_occupancy(H200, c, "bf16")[0].ctas_per_sm for c in cfgs}) == 1
        # 32 CTAs, one per SM, on a long K loop: each CTA's own chain of K steps is the launch
        return simulate_batch(GemmBatch.build(H200, "bf16", [16] * 2, [4096] * 2, [16384] * 2, cfgs), p).makespan_s

    narrow = times(lambda s: f"16x128x16_g8_w16_s{s}")   # only the masked copies of the extra stages differ
    assert narrow[1] >= narrow[0] and narrow[1] == pytest.approx(narrow[0], rel=1e-3)
    wide = times(lambda s: f"16x128x32_g8_w4_s{s}")   # A: 16 x 32 x 2 B over 128 threads = 8 bytes a thread
    assert wide[1] < 0.9 * wide[0]


def test_mma_sync_copies_cost_tensor_core_time():
    """Warps past an mma.sync tile's 16 x 8 slices recompute its MMAs (16 x 64 on 16 warps: 2 x 8 warps, twice the
    tile's m16n8k16): its math is twice that of the same tile on 8 warps (1 x 8, no copies)."""
    from wavesim.calibration import load_calibration
    from wavesim.kernels.gemm import mma_v2_copies, workload_arrays

    assert mma_v2_copies(LaunchConfig.from_key("16x64x64_g8_w16_s3")) == 2
    assert mma_v2_copies(LaunchConfig.from_key("16x64x64_g8_w8_s3")) == 1
    assert mma_v2_copies(LaunchConfig.from_key("32x32x64_g8_w16_s3")) == 2
    p = load_calibration("auto", "h200")
    cfgs = [LaunchConfig.from_key(k) for k in ("16x64x64_g8_w8_s3", "16x64x64_g8_w16_s3")]
    w = workload_arrays(GemmBatch.build(H200, "bf16", [4096] * 2, [4096] * 2, [4096] * 2, cfgs), p)
    assert w["compute_s"][1] > w["compute_s"][0]


def test_one_stage_steps_wait_once_per_load_round():
    """A one-stage loop stages its tiles through registers in rounds (LDG, then STS), each K step waiting on the load
    latency once per round (variant LR1, NOTES.md session 35): at one CTA per SM the launch grows with the rounds, and a
    cp.async kernel (rounds 1) is unchanged by the field."""
    import dataclasses

    from wavesim.calibration import load_calibration

    p = load_calibration("auto", "h200")
    b = GemmBatch.build(H200, "bf16", [256], [4096], [14080], [LaunchConfig.from_key("64x128x64_g8_w4_s1")])
    t = [simulate_batch(dataclasses.replace(b, load_rounds=np.array([r], dtype=np.float64)), p).makespan_s[0]
         for r in (1, 2, 3)]
    assert t[0] < t[1] < t[2] and t[2] - t[1] == pytest.approx(t[1] - t[0], rel=0.05)
    # the study's measured one- over two-stage ratio for this tile at this shape is 1.71 (2 rounds); with one round the
    # model had 1.07 (validation/data/h200/stages_warps/)
    two = GemmBatch.build(H200, "bf16", [256], [4096], [14080], [LaunchConfig.from_key("64x128x64_g8_w4_s2")])
    assert two.load_rounds[0] == 1
    assert t[1] / simulate_batch(two, p).makespan_s[0] > 1.4


def test_mma_sync_ctas_sharing_a_hopper_sm_run_at_its_measured_rate():
    """MS1 (NOTES.md session 35): co-resident mma.sync CTAs on Hopper share the SM's tensor cores at
    mma_v2_sm_efficiency (measured on the stages_warps study, which validation/scripts/fit_mma_sync_sm_rate.py
    reproduces), their fragment reads queue for the SM's shared-memory port, and a CTA alone keeps its warps' own rate.
    Pre-Hopper GPUs, where that rate is unmeasured, keep one rate."""
    from dataclasses import replace

    from wavesim.calibration import load_calibration

    p = load_calibration("auto", "h200")
    big = GemmBatch.build(H200, "bf16", [4096], [10752], [4096], [LaunchConfig.from_key("64x128x64_g8_w2_s3")])
    t_sm = [simulate_batch(big, replace(p, mma_v2_sm_efficiency=e)).makespan_s[0] for e in (0.4, 0.54)]
    assert t_sm[1] < 0.9 * t_sm[0]          # a full chip of 2-warp CTAs is bound by the SM's rate
    lone = GemmBatch.build(H200, "bf16", [16], [4096], [16384], [LaunchConfig.from_key("32x128x64_g8_w2_s3")])
    assert lone.grid[0] < H200.sm_count
    t_lone = [simulate_batch(lone, replace(p, mma_v2_sm_efficiency=e)).makespan_s[0] for e in (0.4, 0.54)]
    assert t_lone[1] == pytest.approx(t_lone[0], rel=0.02)   # one CTA per SM: its own warps' rate decides
    a100 = hwspecs.load_gpu("a100-sxm4-80gb")
    b = GemmBatch.build(a100, "bf16", [4096], [8192], [4096], [LaunchConfig.from_key("128x128x32_g8_w4_s3")])
    from wavesim.kernels.gemm import _priors

    pa = _priors()
    assert simulate_batch(b, replace(pa, mma_v2_sm_efficiency=0.9)).makespan_s[0] == simulate_batch(b, pa).makespan_s[0]


def test_the_mma_sync_sm_rate_is_the_one_its_study_measures():
    """The prior of mma_v2_sm_efficiency is what fit_mma_sync_sm_rate.py finds on the committed study (to 0.01)."""
    import subprocess
    import sys
    from pathlib import Path

    from wavesim.kernels.gemm import _priors

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, str(root / "validation/scripts/fit_mma_sync_sm_rate.py")], capture_output=True,
                         text=True, check=True, cwd=root).stdout
    assert float(out.split()[1]) == pytest.approx(_priors().mma_v2_sm_efficiency, abs=0.01)


def test_the_loops_issue_adds_to_a_hopper_k_step_in_place_of_the_fitted_overhead():
    """IS2: on Hopper a CTA's K step on a full SM costs its loop's instructions x warps / 4 schedulers at one a clock on
    top of the math; the fitted per-step overhead stands for it only where the loop is unknown (loop_instructions 0:
    no triton, or a GPU before sm_90, whose form is unchanged). IS3: the loop's tensor-core instructions are not
    counted again, t_math holds their issue."""
    from dataclasses import replace

    from wavesim.kernels.gemm import _priors, simulate_batch

    p = _priors()
    cfg = LaunchConfig.from_key("64x32x64_g8_w16_s3")
    b = GemmBatch.build(H200, "bf16", [8192], [8192], [4096], [cfg])
    assert b.loop_instructions[0] > 0
    res = gemm_resources(cfg, "sm_90", "bf16", problem=specialization_problem(H200, 16, 16))
    assert b.loop_instructions[0] == loop_instructions_per_step(H200, cfg, "bf16", res) - mmas_per_step(H200, cfg, "bf16")
    t = lambda b_, p_: simulate_batch(b_, p_).makespan_s[0]  # noqa: E731
    # known loop: the overhead does not act, a longer loop is slower by about its issue on a full machine
    assert t(b, replace(p, k_step_overhead_cycles=500.0)) == t(b, p)
    longer = replace(b, loop_instructions=b.loop_instructions + 40)
    extra = b.grid[0] / H200.sm_count * b.k_steps[0] * 40 * 16 / 4 / H200.boost_clock_hz  # every CTA's steps, SM-shared
    assert t(longer, p) - t(b, p) == pytest.approx(extra, rel=0.25)
    # unknown loop: the fitted overhead is the step's loop cost again
    unknown = replace(b, loop_instructions=np.zeros(1))
    assert t(replace(unknown, spec=H200), replace(p, k_step_overhead_cycles=500.0)) > t(unknown, p)
    a100 = hwspecs.load_gpu("a100")
    old = GemmBatch.build(a100, "bf16", [8192], [8192], [4096], [LaunchConfig.from_key("64x64x64_g8_w4_s3")])
    assert t(old, replace(p, k_step_overhead_cycles=500.0)) > t(old, p)
