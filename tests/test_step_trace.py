"""Per-step traces: the analysis of `wavetune trace --steps` files, and the kernel that records them."""
import json

import numpy as np
import pytest

from validation.step_trace import launch_steps, main, step_profile
from validation.trace import STEPS_PREFIX, load_traces


def _launch():
    """4 CTAs, L = 10: two share SM 0 (prologue 5000 cycles, then 600 a step), two are alone on SMs 1 and 2 (4000, then
    500); every CTA's epilogue is 300 cycles and it runs at 1.8 GHz."""
    first = np.array([5000, 5000, 4000, 4000])
    step = np.array([600, 600, 500, 500])
    steps = np.c_[first, np.repeat(step[:, None], 9, axis=1)]
    cycles = steps.sum(axis=1) + 300
    start = np.array([0, 10, 0, 20])
    trace = np.stack([[0, 0, 1, 2], start, start + np.round(cycles / 1.8), cycles], axis=1)
    return trace.astype(np.int32), steps.astype(np.int32)


def test_a_launch_gives_its_prologue_steady_step_epilogue_and_the_cost_of_a_co_resident_cta():
    r = launch_steps(*_launch())
    assert r["ctas"] == 4 and r["k_steps"] == 10
    assert r["first_step_cycles"] == 4500 and r["steady_step_cycles"] == 550 and r["epilogue_cycles"] == 300
    assert r["steady_by_ctas_on_sm"] == {"1": 500.0, "2": 600.0}
    assert r["early_quarter_cycles"] == r["late_quarter_cycles"] == 550
    assert r["clock_mhz"] == pytest.approx(1800, rel=1e-3)
    with pytest.raises(ValueError, match="do not match"):
        launch_steps(_launch()[0], _launch()[1][:3])


def test_a_trace_file_with_its_steps_file_is_read_per_launch(tmp_path, capsys):
    trace, steps = _launch()
    out = tmp_path / "t.npz"
    keys = ("128x128x64_g8_w4_s3/M640/r0", "128x128x64_g8_w4_s3/M64/r0")
    np.savez_compressed(out, **{k: trace for k in keys})
    out.with_suffix(".json").write_text(json.dumps({"N": 4096, "K": 640}))
    assert main([str(out)]) == 2 and "--steps" in capsys.readouterr().err   # no per-step arrays: says how to get them
    np.savez_compressed(out, **{k: trace for k in keys}, **{STEPS_PREFIX + k: steps for k in keys})
    assert set(load_traces(out)[0]) == set(keys)       # the per-CTA trace tools do not see the per-step arrays
    rows = step_profile(out)
    assert [r["M"] for r in rows] == [64, 640] and rows[0]["config"] == "128x128x64_g8_w4_s3" and rows[1]["K"] == 640
    assert main([str(out)]) == 0 and "128x128x64_g8_w4_s3 | 640 | 4" in capsys.readouterr().out


@pytest.mark.triton
def test_the_step_clock_leaves_the_pipelined_loop_as_the_plain_kernel_compiles_it():
    """sm_90: the same cp.async groups and waits, the same wgmma waits and shared memory as the plain kernel, one more
    %clock64 read than the per-CTA trace (inside the loop, after the step's wgmma wait)."""
    import re

    pytest.importorskip("triton")
    from wavesim.resources import oracle
    from wavetune.config import LaunchConfig

    for key in ("128x256x64_g8_w8_s4", "128x128x64_g4_w4_s3", "64x64x32_g8_w4_s2"):
        cfg = LaunchConfig.from_key(key)
        ks = {t: oracle._compile(cfg, "sm_90", "bf16", oracle.DEFAULT_PROBLEM, t) for t in (None, "trace", "steps")}
        count = {t: {x: len(re.findall(x, k.asm["ptx"])) for x in ("cp.async.commit_group", "cp.async.wait_group",
                                                                    "wgmma.wait_group", "wgmma.mma_async", "%clock64")}
                 for t, k in ks.items()}
        for x in ("cp.async.commit_group", "cp.async.wait_group", "wgmma.wait_group", "wgmma.mma_async"):
            assert count["steps"][x] == count["trace"][x] == count[None][x] > 0, (key, x)
        assert count["steps"]["%clock64"] == count["trace"]["%clock64"] + 1 == 3
        assert ks["steps"].metadata.shared == ks[None].metadata.shared
        loop = ks["steps"].asm["ptx"].split("Inner Loop Header")[1].split("._crit_edge")[0]
        assert loop.index("wgmma.wait_group") < loop.index("%clock64")
    with pytest.raises(ValueError, match="traced="):
        oracle._compile(cfg, "sm_90", "bf16", oracle.DEFAULT_PROBLEM, "nope")


def test_the_h200_per_step_traces_show_sm_bound_wgmma_steps_at_exactly_the_tiles_math():
    """validation/data/h200/traces/trace_steps_*.npz (session 23): where the tensor cores bind (128x256 tiles alone, two
    128x128x64 on an SM), a K step takes the tile's math at 4096 FLOP per cycle (hwspecs sm_90: 4 sub-partitions x
    1024), BM x BN x BK / 2048 cycles; BLOCK_K 32 runs such steps as fast as 64 but at a lower in-kernel clock."""
    from pathlib import Path

    from wavetune.config import LaunchConfig

    traces = Path(__file__).resolve().parent.parent / "validation/data/h200/traces"
    bk = step_profile(traces / "trace_steps_bk_4096x4096.npz")   # BLOCK_K 32 and 64 side by side, one run
    rows = bk + step_profile(traces / "trace_steps_4096x4096.npz")
    seen = 0
    for r in rows:
        c = LaunchConfig.from_key(r["config"])
        math = c.BLOCK_M * c.BLOCK_N * c.BLOCK_K / 2048
        if c.BLOCK_N == 256 and c.BLOCK_M == 128 and r["M"] >= 2048:
            assert r["steady_step_cycles"] == pytest.approx(math, rel=0.01), r
            seen += 1
        if r["config"] == "128x128x64_g8_w4_s3" and r["M"] >= 1024:   # two CTAs on every SM (one wave at M = 1024)
            assert r["steady_step_cycles"] == pytest.approx(2 * math, rel=0.01)
            seen += 1
    assert seen >= 10
    clock = {(r["config"], r["M"]): r["clock_mhz"] for r in bk}
    for M in (2048, 4096, 8192):
        assert clock[("128x256x32_g8_w8_s5", M)] < clock[("128x256x64_g8_w8_s3", M)]


def test_the_h200_per_step_traces_show_which_full_sm_steps_leave_the_tiles_math():
    """validation/data/h200/traces/trace_steps_wg_4096x2048.npz (session 24, collect_h200_steps_wg.sh): with every SM
    full over several waves (M = 4096), pairs of 128x128x64 and a lone 4-stage 128x128x64 run at exactly the tile's
    math; 256x128x64 w8 (two m64n128 per warpgroup, the bytes of 128x256x64) does not at 3 stages and nearly does at 4;
    a 3-stage 128-deep K step is bound by its loads, well above its math, however many CTAs share the SM."""
    from pathlib import Path

    from wavetune.config import LaunchConfig

    rows = step_profile(Path(__file__).resolve().parent.parent / "validation/data/h200/traces/trace_steps_wg_4096x2048.npz")
    over = {}   # (config, M) -> steady step / the SM-shared math of the CTAs an SM holds at once
    for r in rows:
        c = LaunchConfig.from_key(r["config"])
        per_sm = 2 if r["config"].startswith("128x128x64") and c.num_stages == 3 else 1
        over[(r["config"], r["M"])] = r["steady_step_cycles"] / (per_sm * c.BLOCK_M * c.BLOCK_N * c.BLOCK_K / 2048)
    for cfg in ("128x128x64_g8_w4_s3", "128x128x64_g8_w8_s3", "128x128x64_g8_w4_s4", "128x256x64_g8_w8_s3"):
        assert over[(cfg, 4096)] == pytest.approx(1.0, abs=0.01), cfg
    assert over[("256x128x64_g8_w8_s3", 4096)] > 1.04 > over[("256x128x64_g8_w8_s4", 4096)] > 1.0
    for cfg in ("128x128x128_g8_w4_s3", "128x128x128_g8_w8_s3"):
        assert over[(cfg, 4096)] > 1.15, cfg


def test_the_lone_step_law_recovers_a_known_latency_and_fill_rate():
    """Launches generated from max(math, (600 ns + bytes / 80 B/ns) / stages in flight) at 1.5 GHz give those values back;
    tiles below 64 rows (no wgmma) are left out, and too few launches are an error that says so."""
    from validation.step_trace import lone_step_law
    from wavetune.config import LaunchConfig

    rows = []
    for key in ("128x128x64_g8_w4_s3", "64x64x32_g8_w4_s2", "128x256x64_g8_w8_s4", "64x256x32_g8_w4_s5",
                "128x128x128_g8_w8_s3", "32x64x64_g8_w4_s3"):
        c = LaunchConfig.from_key(key)
        ns = max(2 * c.BLOCK_M * c.BLOCK_N * c.BLOCK_K / 4096 / 1.5,
                 (600 + (c.BLOCK_M + c.BLOCK_N) * c.BLOCK_K * 2 / 80) / max(c.num_stages - 1, 1))
        rows.append({"config": key, "k_steps": 64, "clock_mhz": 1500.0, "steady_by_ctas_on_sm": {"1": ns * 1.5}})
    law = lone_step_law(rows)
    assert law["launches"] == 5
    assert law["c0_ns"] == pytest.approx(600, rel=1e-3) and law["fill_bytes_per_ns"] == pytest.approx(80, rel=1e-3)
    assert law["rms_log_error"] < 1e-6
    with pytest.raises(ValueError, match="at least 3 launches of at least 2 sizes"):
        lone_step_law(rows[:2])
    with pytest.raises(ValueError, match="at least 3 launches of at least 2 sizes"):
        lone_step_law([rows[0]] * 4)   # one tile: latency and fill rate cannot be told apart


def test_the_h200_lone_steps_follow_one_latency_and_fill_rate_across_tiles():
    """validation/data/h200/traces/trace_steps_*.npz: a wgmma CTA alone on its SM waits ~0.6-0.8 us per stage in flight
    plus its loads at ~60-130 B/ns, whatever the tile (session 23: about 1200 cycles + 20 per KB), within 8% rms."""
    from pathlib import Path

    from validation.step_trace import lone_step_law

    traces = sorted((Path(__file__).resolve().parent.parent / "validation/data/h200/traces").glob("trace_steps_*.npz"))
    law = lone_step_law([r for p in traces if "width" not in p.name for r in step_profile(p)])
    assert law["launches"] >= 60
    assert 550 < law["c0_ns"] < 800 and 60 < law["fill_bytes_per_ns"] < 130
    assert law["rms_log_error"] < 0.08


def test_the_h200_lone_step_grows_with_the_layer_width():
    """validation/data/h200/traces/trace_steps_width_*.npz (session 24): the same tiles alone on their SMs (M = 128) take
    longer per K step the wider the layer (more of B streamed from DRAM at once), 128x128x64 s3 about 1.6x from
    N = 2048 to 16384; at a given width, twice the CTAs (M = 256, the same B) change it little."""
    from pathlib import Path

    traces = Path(__file__).resolve().parent.parent / "validation/data/h200/traces"
    lone = {}
    for n in (2048, 4096, 8192, 16384):
        for r in step_profile(traces / f"trace_steps_width_{n}x2048.npz"):
            lone[(r["config"], n, r["M"])] = r["steady_by_ctas_on_sm"].get("1")   # None: no CTA was alone on an SM
    for cfg in ("128x128x64_g8_w4_s3", "64x128x64_g8_w4_s3", "256x128x64_g8_w8_s3"):
        steps = [lone[(cfg, n, 128)] for n in (2048, 4096, 8192, 16384)]
        assert steps == sorted(steps), cfg
        assert all(lone[(cfg, n, 256)] == pytest.approx(lone[(cfg, n, 128)], rel=0.1) for n in (2048, 4096, 8192)), cfg
    assert lone[("128x128x64_g8_w4_s3", 16384, 128)] > 1.5 * lone[("128x128x64_g8_w4_s3", 2048, 128)]


def test_the_h200_full_sm_steps_follow_the_wgmma_instructions_with_a_floor_for_narrow_ones():
    """validation/data/h200/traces/trace_steps_wg2_4096x2048.npz (session 24): with one CTA of at most 8 warps on every
    SM, a K step takes its warpgroup MMA instructions one after another, each m64nNk16 holding the SM's tensor cores
    max(N / 2, ~47) cycles: n128 and n256 at the tile's math, n64 about 47% above it (a floor per instruction, which
    the width of 64 columns does not reach); 16-warp CTAs run 11-13% above their math."""
    from pathlib import Path

    from wavesim.kernels.gemm import wgmma_width
    from wavetune.config import LaunchConfig

    rows = step_profile(Path(__file__).resolve().parent.parent / "validation/data/h200/traces/trace_steps_wg2_4096x2048.npz")
    seen = 0
    for r in rows:
        c = LaunchConfig.from_key(r["config"])
        width = wgmma_width(c)
        instructions = c.BLOCK_M * c.BLOCK_N * c.BLOCK_K / (64 * width * 16)   # m64 x width x k16 per CTA per step
        law = instructions * max(width / 2, 47)
        if c.num_warps <= 8:
            assert r["steady_step_cycles"] == pytest.approx(law, rel=0.03), r["config"]
            seen += 1
        else:
            assert 1.08 < r["steady_step_cycles"] / law < 1.16, r["config"]
    assert seen == 5


def test_the_h200_small_tiles_pay_per_co_resident_cta_once_their_sm_is_busy():
    """validation/data/h200/traces/trace_steps_small_*.npz (session 24): single-wave launches on 3072 x 1024 with 1-6
    CTAs of a small tile per SM. A CTA's step stays near its lone step while the SM has room, then grows by a fixed cost
    per co-resident CTA: 16x128x64 and 32x64x64 (mma.sync) about 240-300 cycles each from 3 CTAs on; 64x64x64 and
    128x64x32 (wgmma, four m64n64k16 per step) at the instruction floor of about 47 cycles x 4 each."""
    from pathlib import Path

    traces = Path(__file__).resolve().parent.parent / "validation/data/h200/traces"
    by = {}
    for f in traces.glob("trace_steps_small_*.npz"):
        for r in step_profile(f):
            for n, v in r["steady_by_ctas_on_sm"].items():
                by[(r["config"], int(n))] = v   # single-wave launches: n CTAs on the SM at once
    for cfg in ("16x128x64_g8_w4_s4", "32x64x64_g8_w4_s4"):
        lone, per = by[(cfg, 1)], [by[(cfg, n)] / n for n in (3, 4)]
        assert by[(cfg, 2)] > 1.15 * lone                           # a second CTA already costs
        assert all(230 < p < 310 for p in per), (cfg, per)          # then a fixed cost per CTA
    for cfg, n in (("64x64x64_g8_w4_s4", 3), ("128x64x32_g8_w4_s3", 4)):
        assert by[(cfg, n)] == pytest.approx(n * 4 * 47, rel=0.07), cfg


def test_the_h200_saturated_mma_sync_step_carries_an_idle_part_that_grows_with_warps():
    """validation/data/h200/traces/trace_steps_cprime_*.npz (session 25; with trace_steps_small_*): single-wave launches
    on 3072 x 1024 with 1-6 CTAs of a small tile per SM. A saturated step is about n x s + c' with n CTAs on the SM.
    For mma.sync tiles the lone step does not depend on the warps (within 6%), but c' does: a second or third CTA costs
    8 warps 146-365 cycles more than 4 warps. 64x64x32 (one warpgroup of wgmma) saturates at c' ~ 0 (4 CTAs: 4 x the
    per-CTA increment), and with two stages (one load in flight) 32x64x64's chain-bound step hardly grows with CTAs."""
    from pathlib import Path

    traces = Path(__file__).resolve().parent.parent / "validation/data/h200/traces"
    by: dict = {}
    for f in [*traces.glob("trace_steps_cprime_*.npz"), *traces.glob("trace_steps_small_*.npz")]:
        for r in step_profile(f):
            for n, v in r["steady_by_ctas_on_sm"].items():
                by.setdefault((r["config"], int(n)), []).append(v)
    step = {k: float(np.median(v)) for k, v in by.items()}
    for tile in ("32x64x64", "16x128x64"):
        w = {nw: f"{tile}_g8_w{nw}_s4" for nw in (2, 4, 8)}
        lone = [step[(w[nw], 1)] for nw in w]
        assert max(lone) / min(lone) < 1.06, (tile, lone)
        for n in (2, 3):
            assert 130 < step[(w[8], n)] - step[(w[4], n)] < 400, (tile, n)
    wg = "64x64x32_g8_w4_s5"
    assert step[(wg, 4)] == pytest.approx(4 * (step[(wg, 5)] - step[(wg, 4)]), rel=0.1)
    s2 = "32x64x64_g8_w4_s2"
    assert step[(s2, 6)] < 1.15 * step[(s2, 1)] and step[("32x64x64_g8_w4_s4", 6)] > 2.5 * step[("32x64x64_g8_w4_s4", 1)]
