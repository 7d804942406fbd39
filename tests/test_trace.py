"""Per-CTA traces (validation/trace.py): the analysis on synthetic and simulated traces, the report end to
end, and a replay of the committed H200 traces."""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest

import hwspecs
from validation.trace import (COLUMNS, PACKED_KEY, STEPS_PREFIX, _ranges, cta_time_by_ctas_on_sm, generations,
                              launch_stats, load_slowdown_from_traces, load_trace_file, load_traces, max_ctas_on_sm,
                              save_trace_arrays, sm_classes, sm_relative_time, trace_key, write_report)
from wavesim.engine import run
from wavesim.calibration import load_calibration
from wavesim.kernels.gemm import GemmModel, GemmParams, config_occupancy
from wavetune.config import GemmProblem, LaunchConfig

ROOT = Path(__file__).resolve().parent.parent
H200_TRACES_ALL = sorted((ROOT / "validation/data/h200/traces").glob("trace_*.npz"))
# the traces of the scheduler studies (wave-study tiles, 4-8 warps); trace_clock_blind_* (session 22: odd configs for
# the in-kernel clock) is checked on its own below; trace_steps_* and trace_bk_* (session 23: per-step traces, and the
# BLOCK_K 32 / 64 launches beside them) are read in test_step_trace.py
H200_TRACES = [f for f in H200_TRACES_ALL if not f.name.startswith(("trace_clock_blind", "trace_steps", "trace_bk"))]
H200 = hwspecs.load_gpu("h200")
GPC_LAYOUT = ROOT / "validation/data/h200/gpc_layout.json"


def test_generations_follow_each_sm_not_launch_order():
    # SM 0 runs CTAs 0, 2, 3 one after another; SM 1 runs CTA 1 then 4 (2 slots: 0 and 2 share SM 0's first wave)
    sm = np.array([0, 1, 0, 0, 1])
    start = np.array([0.0, 0.0, 0.0, 5.0, 6.0])
    assert generations(sm, start, slots=1).tolist() == [0, 0, 1, 2, 1]
    assert generations(sm, start, slots=2).tolist() == [0, 0, 0, 1, 0]


def test_launch_stats_of_a_synchronous_staircase():
    """4 SMs x 1 slot, 10 CTAs of 1 s: three SM-local waves, nothing desynchronised."""
    sm = np.arange(10) % 4
    start = (np.arange(10) // 4).astype(float)
    s = launch_stats(sm, start, start + 1.0, slots=1, sm_count=4, cycles=np.full(10, 2e9))
    assert s["sm_waves"] == 3 and s["span_s"] == 3.0
    assert s["cta_s_first_wave"] == s["cta_s_later_full_waves"] == s["cta_s_last_wave"] == 1.0
    assert s["last_wave_start_spread_s"] == 0.0 and s["sm_cta_time_cv"] == 0.0
    assert s["clock_hz_first_wave"] == pytest.approx(2e9)
    # one slow SM in the later waves shows up in its relative CTA time
    end = start + np.where(sm == 2, 1.5, 1.0)
    rel = sm_relative_time(sm, start, end, slots=1, sm_count=4)
    assert rel[2] == pytest.approx(1.5) and rel[[0, 1, 3]] == pytest.approx([1.0, 1.0, 1.0])


def _simulated_trace_file(tmp_path, cfg, Ms, N=4096, K=4096, params=None):
    """A trace file in the collector's format, made from the simulator's own per-CTA trace."""
    arrays, launches = {}, {}
    for M in Ms:
        r = run(GemmModel().workload(H200, GemmProblem(M, N, K), cfg, params), trace=True)
        ns = lambda x: np.round(x * 1e9).astype(np.int64)  # noqa: E731
        a = np.stack([r.trace.sm, ns(r.trace.start_s), ns(r.trace.end_s),
                      ns(r.trace.end_s - r.trace.start_s) * 2], axis=1).astype(np.int32)
        for rep in range(2):
            arrays[trace_key(cfg.key, M, rep)] = a
        launches[f"{cfg.key}/M{M}"] = {"ms": r.makespan_s * 1e3, "ms_traced": r.makespan_s * 1e3, "sm_clock_mhz": None}
    path = tmp_path / "sim_trace.npz"
    np.savez_compressed(path, **arrays)
    path.with_suffix(".json").write_text(json.dumps({"N": N, "K": K, "Ms": Ms, "reps": 2, "columns": COLUMNS,
                                                     "launches": launches}))
    return path


def test_max_ctas_on_sm_and_how_early_the_first_wave_frees_slots():
    """SM 0 runs [0, 2), [1, 3), [2, 4): two at once (a CTA that starts as another ends does not overlap it);
    SM 1 runs three at once. A first wave whose earliest CTAs end at half the others' time frees slots early."""
    sm = np.array([0, 0, 0, 1, 1, 1])
    start = np.array([0, 1, 2, 0, 0, 0])
    end = np.array([2, 3, 4, 5, 5, 5])
    assert max_ctas_on_sm(sm, start, end) == 3
    assert max_ctas_on_sm(sm[:3], start[:3], end[:3]) == 2
    # 20 SMs x 1 slot: one SM's first CTA ends at 0.5, the others at 1.0, then a second wave
    n = 20
    sm = np.r_[np.arange(n), np.arange(n)]
    first_end = np.where(np.arange(n) == 0, 0.5, 1.0)
    start = np.r_[np.zeros(n), first_end]
    s = launch_stats(sm, start, start + np.r_[first_end, np.ones(n)], slots=1, sm_count=n)
    assert s["first_wave_end_p05_over_cta_time"] == pytest.approx(0.975)   # 5th percentile of 19 x 1.0 and 0.5
    assert launch_stats(np.arange(4), np.zeros(4), np.ones(4), slots=1, sm_count=4)[
        "first_wave_end_p05_over_cta_time"] is None   # one wave: no slot to free for anyone


@pytest.mark.skipif(not (ROOT / "validation/data/h200/traces/trace_dense_wgmma_4096.npz").exists(),
                    reason="no committed dense-study traces")
def test_replay_h200_dense_first_waves_free_slots_early_where_ctas_contend():
    """The dense study's traces (session 13, 6-10 CTAs/SM on N = K = 4096): 3-stage wgmma tiles, whose CTAs
    oversubscribe their SM, free their first slots early (the earliest 5% end at 0.68-0.70 of the median CTA time);
    2-stage ones, mostly waiting on their loads, end in step (0.97-0.98). The shipped model's de-synchronisation
    rates, driven by the SM load, rank them alike. The tracing code costs registers: 32x64x64 s2 runs at 7
    CTAs/SM traced against 8 in the plain kernel (whose M sweep has its wave boundaries at 8)."""
    from validation.trace import compare, first_wave_ends

    files = [ROOT / f"validation/data/h200/traces/trace_dense_{x}_4096.npz" for x in ("wgmma", "mma")]
    ends = {e["config"]: e for e in first_wave_ends(compare(files, "h200"))}
    cal = load_calibration("auto", "h200")
    contended = ("64x64x32_g8_w4_s3", "64x32x32_g8_w4_s3", "128x32x32_g8_w4_s3")
    in_step = ("64x64x64_g8_w4_s2", "64x32x64_g8_w4_s2")
    for key in contended:
        assert ends[key]["hardware"] < 0.75 and ends[key]["simulated"] == pytest.approx(1.0, abs=0.01), key
    for key in in_step:
        assert ends[key]["hardware"] > 0.95, key
    rate = {key: GemmModel().workload(H200, GemmProblem(2048, 4096, 4096), LaunchConfig.from_key(key), cal).desync_rate
            for key in contended + in_step}
    assert min(rate[k] for k in contended) > 2 * max(rate[k] for k in in_step)
    assert ends["32x64x64_g8_w4_s2"]["ctas_per_sm"] == 8 and ends["32x64x64_g8_w4_s2"]["traced_ctas_per_sm"] == 7


def test_report_of_the_simulators_own_trace_agrees_with_the_simulator(tmp_path):
    cfg = LaunchConfig(64, 128, 64, 8, 4, 3)
    path = _simulated_trace_file(tmp_path, cfg, [1024, 2560])
    out = write_report([path], "h200", tmp_path / "rep")
    assert {(r["M"], r["ctas_per_sm"]) for r in out["launches"]} == {(1024, 3), (2560, 3)}
    for r in out["launches"]:
        h, s = r["hardware"], r["simulated"]
        assert h["sm_waves"] == s["sm_waves"] == -(-r["hardware"]["grid"] // (132 * 3))
        assert h["span_s"] == pytest.approx(s["span_s"], rel=1e-4)  # ns rounding
        assert h["cta_s_first_wave"] == pytest.approx(s["cta_s_first_wave"], rel=1e-4)
        assert h["clock_hz_first_wave"] == pytest.approx(2e9, rel=1e-3)
    md = (tmp_path / "rep/TRACES.md").read_text()
    assert "| 4096 x 4096 | 3 | 2 | hardware |" in md and (tmp_path / "rep/sm_cta_time_4096x4096.png").stat().st_size > 0
    assert any(p.name.endswith("_hw.png") for p in (tmp_path / "rep").iterdir())


def test_cta_time_by_ctas_on_sm_of_a_partial_wave():
    """SMs 0 and 1 hold two CTAs (2 s and 4 s), SMs 2 and 3 one (1 s each): medians by CTAs on the SM; a
    launch of more than one SM-local wave has no such entry."""
    sm = np.array([0, 0, 1, 1, 2, 3])
    dur = np.array([2.0, 2.0, 4.0, 4.0, 1.0, 1.0])
    assert cta_time_by_ctas_on_sm(sm, dur, sm_count=4) == {"1": 1.0, "2": 3.0}
    s = launch_stats(sm, np.zeros(6), dur, slots=2, sm_count=4)
    assert s["cta_s_by_ctas_on_sm"] == {"1": 1.0, "2": 3.0}
    assert "cta_s_by_ctas_on_sm" not in launch_stats(np.arange(8) % 4, np.repeat([0.0, 1.0], 4), np.repeat([1.0, 2.0], 4),
                                                     slots=1, sm_count=4)


def test_first_wave_coresidence_of_the_simulators_own_trace(tmp_path):
    """Partial first waves (160 and 200 CTAs of 3 slots/SM: 28 and 68 SMs hold a second CTA): the report reads
    the same per-SM cost and one-per-SM growth from the simulator's trace as from the simulator."""
    cfg = LaunchConfig(64, 128, 64, 8, 4, 3)
    out = write_report([_simulated_trace_file(tmp_path, cfg, [320, 400])], "h200", tmp_path / "rep")
    (f,) = out["first_waves"]
    assert f["M"] == [320, 400] and f["hardware"]["launches_with_both"] == 2
    for key in ("one_more_cta_on_sm", "one_per_sm_growth"):
        assert f["hardware"][key] == pytest.approx(f["simulated"][key], rel=1e-4)
    assert "## Partial first waves" in (tmp_path / "rep/TRACES.md").read_text()


@pytest.mark.skipif(not (ROOT / "validation/data/h200/traces/trace_firstwave_8192x2048.npz").exists(),
                    reason="no committed first-wave traces")
def test_replay_h200_first_waves_co_residence_is_cheap_per_sm():
    """The first-wave traces of two layers (NOTES.md): in one launch, an SM holding one more CTA than its
    neighbours runs it at most ~15% slower (128x128x64 s3, 2 CTAs/SM) and at most ~6% slower for the small
    tiles of 3-4 CTAs/SM, although a full wave of them costs far more than a lone CTA: the first-wave knee
    is mostly chip-wide."""
    from validation.trace import compare, first_wave_coresidence

    files = [ROOT / f"validation/data/h200/traces/trace_firstwave_{x}.npz" for x in ("5120", "8192x2048")]
    rows = first_wave_coresidence(compare(files, "h200"))
    got = {(r["N"], r["config"]): r["hardware"]["one_more_cta_on_sm"] for r in rows}
    assert len(got) == 8
    for (N, cfg), ratio in got.items():
        bound = 1.2 if cfg.startswith("128x128x64") else 1.06
        assert 1.0 < ratio < bound, (N, cfg, ratio)


def test_a_malformed_trace_file_is_named(tmp_path):
    p = tmp_path / "bad.npz"
    np.savez(p, **{"x/M1/r0": np.zeros((3, 2), np.int32)})
    with pytest.raises(FileNotFoundError, match="sidecar"):
        load_traces(p)
    p.with_suffix(".json").write_text("{}")
    with pytest.raises(ValueError, match=r"shape \(3, 2\)"):
        load_traces(p)


def test_packed_trace_files_read_back_exactly(tmp_path):
    """The packed format (save_trace_arrays) is lossless for any int32 rows, keeps per-step arrays as they are, and
    is what np.load and load_trace_file read; a file of an unknown format is named, not misread."""
    rng = np.random.default_rng(0)
    start = np.sort(rng.integers(0, 2**30, 500))
    rows = np.stack([rng.integers(0, 132, 500), start, start + rng.integers(0, 2**20, 500),
                     rng.integers(-2**31, 2**31 - 1, 500)], axis=1).astype(np.int32)
    steps = rng.integers(0, 5000, (500, 7)).astype(np.int32)
    p = tmp_path / "t.npz"
    save_trace_arrays(p, {"a/M1/r0": rows, "b/M2/r0": rows[::-1].copy(), STEPS_PREFIX + "a/M1/r0": steps})
    p.with_suffix(".json").write_text("{}")
    ctas, st, _ = load_trace_file(p)
    assert set(ctas) == {"a/M1/r0", "b/M2/r0"} and set(st) == {"a/M1/r0"}
    assert np.array_equal(ctas["a/M1/r0"], rows) and np.array_equal(ctas["b/M2/r0"], rows[::-1])
    assert ctas["a/M1/r0"].dtype == np.int32 and np.array_equal(st["a/M1/r0"], steps)
    with pytest.raises(ValueError, match=r"shape \(3, 2\)"):
        save_trace_arrays(p, {"x/M1/r0": np.zeros((3, 2), np.int32)})
    q = tmp_path / "future.npz"
    np.savez(q, **{PACKED_KEY: np.array("some-later-format"), "x/M1/r0": np.zeros((4, 3), np.int32)})
    q.with_suffix(".json").write_text("{}")
    with pytest.raises(ValueError, match="some-later-format"):
        load_traces(q)


@pytest.mark.skipif(not H200_TRACES, reason="no committed H200 traces")
def test_replay_h200_traces_waves_and_topology():
    """What the committed H200 traces show: with 1-2 CTAs/SM the SMs run exactly ceil(G / (132 x CTAs/SM))
    SM-local waves and 1-CTA/SM launches of up to 12 waves stay synchronous; the bandwidth-bound 3-CTA/SM config has SMs that run
    their later waves >10% faster than the median SM where B does not fit in the L2 (the chip's topology, NOTES.md)."""
    seen = 0
    for f in H200_TRACES:
        arrays, meta = load_traces(f)
        for key, a in arrays.items():
            cfg_key, m_txt, _ = key.split("/")
            slots = config_occupancy(H200, LaunchConfig.from_key(cfg_key), "bf16")[0].ctas_per_sm
            a = a.astype(np.int64)
            assert a[:, 0].max() < H200.sm_count
            s = launch_stats(a[:, 0], a[:, 1] * 1e-9, a[:, 2] * 1e-9, slots, H200.sm_count)
            waves = -(-len(a) // (H200.sm_count * slots))
            # desynchronised SMs (several CTAs each, bandwidth-bound) may run more waves than the average
            assert s["sm_waves"] == waves if slots <= 2 else s["sm_waves"] >= waves, key
            # up to 12 waves; after 14-18 (trace_jagged_7168: 128x128x64 s4 at M >= 4160, 1.30-1.41 GHz) the last
            # wave's starts spread over up to 0.30 of a CTA: long launches at 1 CTA/SM drift out of step too
            if slots == 1 and 2 < s["sm_waves"] <= 12:
                assert s["last_wave_start_spread_s"] < 0.15 * s["cta_s_later_full_waves"], key
            seen += 1
        # only where B does not fit in the L2: with an 8 MB B (trace_smallb_*, session 15) no SM is fast
        if "64x128x64_g8_w4_s3/M8192/r0" in arrays and meta["N"] * meta["K"] * 2 > H200.l2_bytes / 2:
            a = arrays["64x128x64_g8_w4_s3/M8192/r0"].astype(np.int64)
            rel = sm_relative_time(a[:, 0], a[:, 1] * 1e-9, a[:, 2] * 1e-9, 3, H200.sm_count)
            assert np.sum(rel < 0.9) >= 12
    assert seen >= 100


@pytest.mark.skipif(not any(f.name.startswith("trace_clock_blind") for f in H200_TRACES_ALL), reason="no blind traces")
def test_blind_config_traces_run_the_even_wave_count_or_one_more():
    """48 blind configs (1-16 warps, 16-256-row tiles) on 4096 x 4096: at 1-2 CTAs/SM an SM runs the even share of
    waves or, over 32 waves, one more (2 of the launches); never fewer."""
    extra = 0
    for f in (f for f in H200_TRACES_ALL if f.name.startswith("trace_clock_blind")):
        arrays, _ = load_traces(f)
        for key, a in arrays.items():
            slots = config_occupancy(H200, LaunchConfig.from_key(key.split("/")[0]), "bf16")[0].ctas_per_sm
            if slots > 2:
                continue
            a = a.astype(np.int64)
            s = launch_stats(a[:, 0], a[:, 1] * 1e-9, a[:, 2] * 1e-9, slots, H200.sm_count)
            waves = -(-len(a) // (H200.sm_count * slots))
            assert waves <= s["sm_waves"] <= waves + 1, key
            extra += s["sm_waves"] > waves
    assert extra <= 3


def test_sm_classes_and_ranges():
    rel = np.array([1.0, 0.85, 0.86, 1.0, 1.06, 1.0, 0.8])
    assert sm_classes(rel) == {"fast": [1, 2, 6], "slow": [4]}
    assert _ranges([1, 2, 6]) == "1-2, 6" and _ranges([]) == "none"


@pytest.mark.skipif(not (H200_TRACES and GPC_LAYOUT.exists()), reason="no committed H200 traces / GPC layout")
def test_replay_h200_slow_sms_are_the_two_largest_gpcs():
    """The cluster probe found GPCs of 18 SMs; in the bandwidth-bound 64x64x32 waves exactly their SMs
    are the slow ones, on both traced layers (TRACES.md)."""
    gpcs = json.loads(GPC_LAYOUT.read_text())["gpcs"]
    assert sorted(s for g in gpcs for s in g) == list(range(H200.sm_count))  # a partition of the SMs
    largest = sorted(s for g in gpcs if len(g) == max(map(len, gpcs)) for s in g)
    checked = 0
    for f in H200_TRACES:
        arrays, _ = load_traces(f)
        if "64x64x32_g8_w4_s2/M8192/r0" in arrays:
            a = arrays["64x64x32_g8_w4_s2/M8192/r0"].astype(np.int64)
            rel = sm_relative_time(a[:, 0], a[:, 1] * 1e-9, a[:, 2] * 1e-9, 8, H200.sm_count)
            assert sm_classes(rel)["slow"] == largest, f
            checked += 1
    assert checked >= 2


def test_trace_cli_names_bad_input_and_a_missing_gpu(capsys):
    from validation.trace import parse_range
    from wavetune.cli import main

    assert parse_range("256:1024:256") == [256, 512, 768, 1024] and parse_range("64,128") == [64, 128]
    for bad in ("256:1024", "a,b", "0,64", "256:1024:0"):
        with pytest.raises(ValueError, match="--M"):
            parse_range(bad)
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        rc = main(["trace", "--configs", "wave-study", "--N", "4096", "--K", "4096", "--M", "256", "--out", "x.npz"])
        assert rc == 2 and "no CUDA GPU is visible" in capsys.readouterr().err


def test_random_cycle_positions_visit_every_line_once():
    """The memory probe's pointer chain (validation/probe.py --memory): from any line, following the stored
    next-slot visits all lines once, one slot per 128-byte line, before it returns."""
    from validation.probe import random_cycle_positions

    nxt = random_cycle_positions(1000, seed=3)
    assert nxt.shape == (1000 * 16,)
    seen, i = [], 0
    for _ in range(1000):
        seen.append(i)
        i = int(nxt[i])
    assert i == 0 and sorted(seen) == list(range(0, 16000, 16))
    assert not np.array_equal(seen, np.arange(0, 16000, 16))  # not a linear walk (a prefetcher would hide it)
    with pytest.raises(ValueError, match="at least 2 lines"):
        random_cycle_positions(1)


def test_join_clusters_groups_sms_that_shared_a_cluster():
    from validation.probe import join_clusters

    # clusters {0,2}, {2,4}, {1,3}: two GPCs {0,2,4} and {1,3}; SM 5 never shared one
    assert join_clusters([[0, 2], [4, 2, 2], [1, 3]], 6) == [[0, 2, 4], [1, 3], [5]]
    assert join_clusters([], 3) == [[0], [1], [2]]


def test_replay_h200_first_wave_knee_is_chip_wide():
    """The fresh layer's first-wave traces (NOTES.md): for 128x64x32 (4 CTAs/SM) the 4 SMs that hold a 4th
    CTA at 400 CTAs run their CTAs as fast as the SMs with 3, while at 480 CTAs every SM slows alike."""
    arrays, _ = load_traces(ROOT / "validation/data/h200/traces/trace_firstwave_5120.npz")

    def by_load(M):  # one wave: every CTA is dispatched with the launch
        a = arrays[f"128x64x32_g8_w4_s3/M{M}/r0"].astype(np.int64)
        assert a[:, 1].max() - a[:, 1].min() < 2000                  # ns
        return cta_time_by_ctas_on_sm(a[:, 0], (a[:, 2] - a[:, 1]).astype(np.float64), H200.sm_count)

    at400, at480 = by_load(576), by_load(704)
    assert abs(at400["4"] / at400["3"] - 1) < 0.03                    # no per-SM cost of the 4th CTA
    assert at480["3"] / at400["3"] > 1.1 and abs(at480["4"] / at480["3"] - 1) < 0.05   # a chip-wide slowdown


def test_load_slowdown_is_recovered_from_the_simulators_own_traces(tmp_path):
    """Traces simulated with a known chip-load slowdown give it back (tails of <= 1 CTA/SM after full waves)."""
    truth = dataclasses.replace(GemmParams.priors(), load_slowdown=0.4)
    path = _simulated_trace_file(tmp_path, LaunchConfig(128, 256, 64, 8, 8, 3), [1152, 2304, 3456], params=truth)
    got = load_slowdown_from_traces([path], "h200", dataclasses.replace(truth, load_slowdown=0.0))
    assert got["launches"] == 6 and got["load_slowdown"] == pytest.approx(0.4, abs=0.01)
    assert got["median_abs_log_error"] < 1e-3 < got["median_abs_log_error_without"]


@pytest.mark.skipif(not H200_TRACES, reason="no committed H200 traces")
def test_replay_h200_light_tails_run_faster_than_full_waves():
    """On the H200 the tail CTAs of 1-2 CTAs/SM launches take ~0.92 of a full-wave CTA's time; the lockstep model says
    1.0, and the shipped load_slowdown is what the traces imply (within 0.03). The tail-dealing studies of sessions
    30-31 (trace_tails2..5: lone tail CTAs at 2/SM on purpose, ~0.7 of a full one) are left out, as the prior's
    source says."""
    params = load_calibration("auto", "h200")
    traces = [f for f in H200_TRACES if not re.match(r"trace_tails\d", f.name)]
    got = load_slowdown_from_traces(traces, "h200", params)
    assert got["launches"] >= 200 and 0.9 < got["hardware_tail_over_full_median"] < 0.96
    assert got["load_slowdown"] == pytest.approx(params.load_slowdown, abs=0.03)
    assert got["median_abs_log_error"] < 0.5 * got["median_abs_log_error_without"]


@pytest.mark.skipif(not (ROOT / "validation/data/h200/memory_probe.json").exists(), reason="no committed memory probe")
def test_replay_h200_memory_probe_latencies():
    """The committed memory probe of our H200 (gemm_priors.toml cites it): an L2 hit takes a few hundred
    cycles, an unloaded DRAM access about twice that, steady over buffer sizes and repeats, the L2
    latency barely moves while other SMs stream from L2, and the DRAM latency grows with the DRAM load."""
    doc = json.loads((ROOT / "validation/data/h200/memory_probe.json").read_text())
    l2 = [r["cycles_per_load"] for runs in doc["l2_latency"].values() for r in runs]
    dram = [r["cycles_per_load"] for runs in doc["dram_latency"].values() for r in runs]
    assert 200 < min(l2) and max(l2) < 400 and max(l2) / min(l2) < 1.05
    assert 1.8 < min(dram) / max(l2) and max(dram) / min(dram) < 1.1
    loaded = [r["cycles_per_load"] for r in doc["l2_latency_under_load"] if r["streaming_programs"] >= 66]
    assert max(loaded) < 1.1 * min(l2)
    # DRAM latency rises with the DRAM load, by ~10% at 2.6 TB/s (55% of the datasheet's 4.8 TB/s)
    dl = sorted((r["stream_bytes_per_s"] or 0.0, r["cycles_per_load"]) for r in doc["dram_latency_under_load"])
    assert dl[-1][0] > 2e12 and 1.03 < dl[-1][1] / dl[0][1] < 1.3


def test_tail_dealing_tells_depth_first_from_breadth_first():
    """4 SMs x 2 slots, one full wave then a tail of 2: on one SM (that SM's pair ended first) or on two."""
    from validation.tail_dealing import tail_dealing

    sm = np.array([0, 1, 2, 3, 0, 1, 2, 3, 0, 0])
    start = np.zeros(10)
    end = np.array([1.0, 1.2, 1.3, 1.4, 1.0, 1.2, 1.3, 1.4, 2.0, 2.0]) * 1e3
    start[8:] = 1e3
    deep = tail_dealing(sm, start, end, slots=2, sm_count=4, gpc_of_sm=np.array([0, 0, 1, 1]))
    assert (deep["sms_used"], deep["breadth_first"], deep["depth_first"], deep["depth_share"]) == (1, 2, 1, 1.0)
    assert deep["within_sm_spread"] == 0.0 and deep["across_sm_spread"] > 0.2
    assert deep["gpc_tail"] == {0: 2} and deep["gpc_end"][0] < deep["gpc_end"][1]
    wide = tail_dealing(np.r_[sm[:8], 0, 1], start, end, slots=2, sm_count=4)
    assert wide["sms_used"] == 2 and wide["depth_share"] == 0.0 and "gpc_end" not in wide
    assert tail_dealing(sm[:8], start[:8], end[:8], slots=2, sm_count=4) is None   # no tail


def test_replay_h200_tails_go_depth_first_where_sms_end_apart():
    """The H200 deals a partial wave to the SMs that free first, all their slots at once, when an SM's CTAs end
    together and SMs end apart (128x64x32 at 4 CTAs/SM: its GPCs end 0.1-0.2 of a CTA time apart), and one CTA per SM
    when an SM's own CTAs end apart (32x64x64 at 7/SM); the simulator's lockstep waves deal every tail breadth-first."""
    from validation.tail_dealing import summary, trace_tails

    files = [str(ROOT / "validation/data/h200/traces" / f) for f in
             ("trace_firstwave_5120.npz", "trace_4096_a.npz", "trace_4096_b.npz", "trace_4608x3584.npz")]
    deep = trace_tails(files, "h200", only=r"^128x64x32_")
    wide = trace_tails(files, "h200", only=r"^32x64x64_")
    assert len(deep) >= 20 and len(wide) >= 4
    short = lambda rows: [r for r in rows if 2 * r["depth_first"] <= r["breadth_first"]]  # noqa: E731
    assert np.median([r["depth_share"] for r in short(deep)]) > 0.5
    assert np.median([r["depth_share"] for r in short(wide)]) == 0.0
    assert max(r["depth_share"] for r in short(wide)) < 0.2
    assert np.median([r["across_sm_spread"] / r["within_sm_spread"] for r in deep]) > 3
    assert np.median([r["across_sm_spread"] / r["within_sm_spread"] for r in wide]) < 0.5
    s = summary(deep + wide)
    assert s["apart"]["depth_share"] > 0.5 > s["together"]["depth_share"]


def test_replay_h200_a_tail_just_under_one_cta_per_sm_is_a_knife_edge():
    """128x128x64 at 2 CTAs/SM, 120 tail CTAs after a full wave (trace_half_tile_4096, session 28): dealt one per SM the
    launch ends ~30 us after the wave, but when a few SMs take two tail CTAs it pays their 2-CTA time (~42 us); the same
    launch does either from run to run, so the sweeps' sawtooth there is the hardware's dealing, not the kernel."""
    from validation.tail_dealing import trace_tails

    rows = trace_tails([str(ROOT / "validation/data/h200/traces/trace_half_tile_4096.npz")], "h200")
    arrays, _ = load_traces(ROOT / "validation/data/h200/traces/trace_half_tile_4096.npz")
    spans = {}
    for r in rows:
        if r["tail_ctas"] == 120:
            a = arrays[r["launch"]]
            spans.setdefault(r["sms_used"] < 120, []).append(float(a[:, 2].max() - a[:, 1].min()))
    assert spans.get(True) and spans.get(False)   # both outcomes occur among the launches of 120 tail CTAs
    assert min(spans[True]) > 1.08 * max(spans[False])


def test_replay_h200_the_paired_tail_comes_earlier_after_more_full_waves():
    """128x128x64 at 2 CTAs/SM on 4096^2 (trace_tails2_4096_2sm, session 30, 6 launches per full-wave count and tail
    size): after one full wave a tail of 56 CTAs goes one per SM in every launch and ends with the lone CTAs; after
    3 full waves a tail of 72 and after 6 one of 48 have SMs holding two of them in every launch and end with the
    paired time: the first paired SM comes at about 0.9 x 132 / n_full tail CTAs."""
    from validation.tail_dealing import trace_tails

    rows = trace_tails([str(ROOT / "validation/data/h200/traces/trace_tails2_4096_2sm.npz")], "h200")
    by = {}
    for r in rows:
        by.setdefault((r["full_waves"], r["tail_ctas"]), []).append(r)
    lone, three, six = by[(1, 56)], by[(3, 72)], by[(6, 48)]
    assert len(lone) == len(three) == len(six) == 6
    assert all(r["sms_used"] == 56 for r in lone) and all(r["sms_used"] < 72 for r in three + six)
    paired = np.median([r["tail_max_us"] for r in three + six])
    assert paired > 1.25 * np.median([r["tail_max_us"] for r in lone])
    assert paired == pytest.approx(np.median([r["cta_us"] for r in three + six]), rel=0.1)


def test_paired_onset_recovers_a_logistic_and_names_too_little_data():
    """paired_onset on synthetic launches whose tails pair with a known logistic in R n / S recovers its midpoint and
    width; a handful of launches, or launches that all pair alike, is an error that says what to trace."""
    from validation.tail_dealing import paired_onset

    rng = np.random.default_rng(1)
    rows = []
    for _ in range(3000):
        n, R = int(rng.integers(1, 7)), int(rng.integers(2, 133))
        paired = rng.random() < 1 / (1 + np.exp(-(R * n / 132 - 0.9) / 0.15))
        rows.append({"ctas_per_sm": 2, "tail_ctas": R, "full_waves": n, "sms_used": R - int(paired)})
    spec = hwspecs.load_gpu("h200")
    fit = paired_onset(rows + [{**rows[0], "ctas_per_sm": 3}], spec)
    assert fit["launches"] == 3000
    assert fit["x0"] == pytest.approx(0.9, abs=0.03) and fit["width"] == pytest.approx(0.15, abs=0.03)
    assert all(abs(b["paired"] - b["fitted"]) < 0.1 for b in fit["bins"] if b["launches"] > 100)
    with pytest.raises(ValueError, match="too few"):
        paired_onset(rows[:5], spec)
    with pytest.raises(ValueError, match="not all alike"):
        paired_onset([{**r, "sms_used": r["tail_ctas"]} for r in rows], spec)


def test_paired_onset_in_elapsed_time_tells_time_from_wave_count():
    """With a calibration, paired_onset fits against R n t_full / S (us), t_full the simulator's full-wave time: on
    synthetic launches of 128x128x64 on layers of K = 2048..8192 whose tails pair by elapsed time it recovers the
    midpoint and fits them better than R n / S does, which cannot follow the onset moving with K."""
    from validation.tail_dealing import paired_onset
    from wavesim.kernels.gemm import GemmBatch, simulate_batch

    spec = hwspecs.load_gpu("h200")
    params = load_calibration("auto", spec.id)
    cfg = LaunchConfig.from_key("128x128x64_g8_w4_s3")
    rng = np.random.default_rng(2)
    K = rng.choice([2048, 4096, 8192], 1500)
    M = 128 * rng.integers(9, 40, 1500)
    rows = [{"ctas_per_sm": 2, "config": cfg, "M": int(m), "N": 4096, "K": int(k)} for m, k in zip(M, K)]
    t_us = simulate_batch(GemmBatch.build(spec, "bf16", M, [4096] * len(M), K, [cfg] * len(M)), params).full_wave_s * 1e6
    for r, t in zip(rows, t_us):
        n, R = int(rng.integers(1, 5)), int(rng.integers(2, 133))
        paired = rng.random() < 1 / (1 + np.exp(-(R * n * t / 132 - 40.0) / 8.0))
        r.update(tail_ctas=R, full_waves=n, sms_used=R - int(paired))
    elapsed, plain = paired_onset(rows, spec, params), paired_onset(rows, spec)
    assert elapsed["x0"] == pytest.approx(40.0, rel=0.1) and elapsed["width"] == pytest.approx(8.0, rel=0.25)
    assert elapsed["nll"] < plain["nll"] - 20
