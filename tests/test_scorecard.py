"""validation.scorecard: the figures a model change is judged by, from the committed measurements."""
import json

import numpy as np
import pytest

import hwspecs
from validation import scorecard as sc
from validation.measurements import parse_record
from wavesim.kernels.gemm import simulate_config
from wavetune.config import LaunchConfig, fastest


def test_the_description_lists_only_files_that_exist_and_studies_of_two_passes_or_more():
    doc = sc.load_description("h200")
    for group, studies in doc["sweep_groups"].items():
        for study in studies:
            assert len(study["passes"]) >= 2, group
            for files in study["passes"]:
                for f in files:
                    assert (sc.DATA_DIR / "h200" / f).is_file(), f
            key = study.get("calibration")
            assert key is None or (sc.REPO_ROOT / doc["holdout_calibrations"][key]).is_file()
    for files in doc["pick_sets"].values():
        assert all((sc.DATA_DIR / "h200" / f).is_file() for f in files)
    for passes in doc["group_m_sets"].values():
        assert len(passes) >= 2 and all((sc.DATA_DIR / "h200" / f).is_file() for files in passes for f in files)
    for passes in doc["ncu_pick_sets"].values():
        assert len(passes) >= 2 and all(list((sc.DATA_DIR / "h200").glob(pat)) for files in passes for pat in files)


def test_sealed_groups_are_scored_only_when_named():
    """A sealed sweep group or set (the description's "sealed": kept to decide a model change once) is left out of the
    default selection and scored when named; the committed description with one more group sealed, so that the test
    does not follow which sets are sealed from session to session."""
    doc = sc.load_description("h200")
    doc = {**doc, "sealed": {"fresh36": "sealed for this test", "fresh35": "sealed for this test"}}
    assert "fresh35" in doc["group_m_sets"]
    groups, sets = sc.selection(doc, None, None)
    assert "fresh36" not in groups and "six" in groups and "fresh34" in groups
    assert sets == [*doc["pick_sets"], *doc["ncu_pick_sets"], *(s for s in doc["group_m_sets"] if s != "fresh35")]
    assert sc.selection(doc, ["fresh36"], [])[0] == ["fresh36"]
    assert sc.selection(doc, [], ["fresh35"])[1] == ["fresh35"]
    with pytest.raises(ValueError, match="unknown group.*described"):
        sc.selection(doc, ["nope"], None)
    with pytest.raises(ValueError, match="unknown pick set"):
        sc.selection(doc, None, ["nope"])


def _record(M, N, K, cfg, ms):
    return parse_record({"schema": 1, "kernel": "gemm", "gpu": "h200", "backend": "triton", "dtype": "bf16",
                         "M": M, "N": N, "K": K, "config": cfg.to_dict(), "status": "ok", "ms": ms}, "test")


def test_pick_regret_takes_the_simulated_fastest_against_the_median_of_repeats_on_aligned_shapes():
    spec = hwspecs.load_gpu("h200")
    cfgs = [LaunchConfig(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=64, GROUP_M=8, num_warps=4, num_stages=3)
            for bm, bn in ((64, 64), (128, 128), (64, 128))]
    shape = (2048, 4096, 4096)
    sim = [float(simulate_config(spec, c, *shape)[0][0]) for c in cfgs]
    pick = fastest(sim, cfgs)
    # measured: the pick is not the measured best, and one config has an outlier repeat the median drops
    base = {i: (1.0 if i != pick else 1.3) for i in range(3)}
    recs = [_record(*shape, c, base[i]) for i, c in enumerate(cfgs)]
    recs += [_record(*shape, cfgs[pick], 1.3), _record(*shape, cfgs[pick], 50.0)]   # median of 1.3, 1.3, 50 is 1.3
    recs += [_record(64, 4100, 4096, c, 1.0 + i) for i, c in enumerate(cfgs)]         # N % 16 != 0: not scored
    reg = sc.pick_regrets(spec, recs, None)
    assert list(reg) == [shape] and reg[shape] == pytest.approx(1.3)


def test_a_sweep_group_is_scored_per_layer_and_summed(tmp_path):
    out = tmp_path / "sc.json"
    assert sc.main(["--groups", "fresh31", "--sets", "none", "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    g = r["groups"]["fresh31"]
    assert {(x["N"], x["K"]) for x in g["layers"]} == {(6144, 4096), (10240, 2560)}
    assert all(x["passes"] == 3 and 0 <= x["predicted"] <= x["every"] for x in g["layers"])
    for k in ("every", "predicted", "no_pass"):
        assert g[k] == sum(x[k] for x in g["layers"])
    # the shipped model predicts most of the steps every pass shows on layers it never saw (session 21: 105 / 114)
    assert g["predicted"] >= 0.9 * g["every"] and r["pick_sets"] == {}


def test_a_study_scored_with_a_hold_out_calibration_uses_the_one_given(tmp_path, capsys):
    """The 4096 sweep of the six names the fit that never saw its layer; --holdout replaces it, and a study whose
    hold-out calibration nobody gives is an error naming the flag."""
    doc = sc.load_description("h200")
    study = next(s for s in doc["sweep_groups"]["six"] if s.get("calibration"))
    passes = [sc._load_pass("h200", files) for files in study["passes"][:2]]
    spec = hwspecs.load_gpu("h200")
    from wavesim.calibration import load_calibration

    hold = sc.sweep_scores(spec, passes, load_calibration(sc.REPO_ROOT / doc["holdout_calibrations"]["4096x4096"],
                                                          "h200"), study["nk"])
    none = sc.sweep_scores(spec, passes, None, study["nk"])
    assert hold[0]["every"] == none[0]["every"]      # what the passes show does not depend on the model
    assert hold[0]["predicted"] != none[0]["predicted"] or hold[0]["no_pass"] != none[0]["no_pass"]
    assert sc.main(["--holdout", "4096x4096"]) == 2
    assert "NxK=FILE" in capsys.readouterr().err


def test_bad_input_names_the_problem():
    with pytest.raises(ValueError, match="no scorecard description for 'b200'"):
        sc.load_description("b200")
    with pytest.raises(ValueError, match="not found.*scorecard.json"):
        sc._load_pass("h200", ["gemm/no_such_file.jsonl"])
    with pytest.raises(ValueError, match="two measured passes"):
        sc.sweep_scores(hwspecs.load_gpu("h200"), [[]], None)


def test_ncu_pick_regret_takes_the_simulated_fastest_among_the_candidates_of_every_pass():
    spec = hwspecs.load_gpu("h200")
    cfgs = [LaunchConfig(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=64, GROUP_M=8, num_warps=4, num_stages=3)
            for bm, bn in ((64, 64), (128, 128), (64, 128))]
    shape = (2048, 4096, 4096)
    pick = fastest([float(simulate_config(spec, c, *shape)[0][0]) for c in cfgs], cfgs)
    other = (pick + 1) % 3
    first = {c: 1.0 for c in cfgs} | {cfgs[pick]: 1.21, cfgs[other]: 0.9}
    second = {c: 1.0 for c in cfgs} | {cfgs[pick]: 1.0, cfgs[other]: 1.1}
    lone = {(64, 64, 64): {cfgs[0]: 1.0}}                  # a shape with one candidate: not scored
    reg, floor = sc.ncu_pick_regrets(spec, [{shape: first, **lone}, {shape: second, **lone}], None)
    assert list(reg) == [shape]
    assert reg[shape] == pytest.approx(np.sqrt(1.21) / np.sqrt(0.9 * 1.1))   # geometric means over the passes
    assert floor[shape] == pytest.approx(1.1)              # the first pass's best (other) on the second
    with pytest.raises(ValueError, match="two passes"):
        sc.ncu_pick_regrets(spec, [{shape: first}], None)


def test_large_m_picks_under_ncu_are_within_a_few_percent_and_the_yardstick_is_quiet():
    """validation/data/h200/large_m_ncu/ (session 25): the 100 shapes with M > 1024 of the pick sets, their candidates
    timed under ncu twice. One pass's best is within 0.1% of the other's (the profiler's second passes: 0.4-1.6%), so
    the figure measures the simulator: its pick within 2.5% of the best (1.028 against one profiler pass per shape)."""
    r = sc.scorecard("h200", groups=[], sets=["large_m_ncu"])["ncu_pick_sets"]["large_m_ncu"]
    assert r["shapes"] == 100
    assert r["one_pass_on_another"] < 1.003
    assert 1.005 < r["regret"] < 1.025


def test_with_a_clean_l2_eviction_the_sweeps_show_more_steps_and_the_simulator_few_jumps_they_lack():
    """Group clean (session 25: three of the six layers at M <= 2176, `wavetune profile --l2-flush read`, two passes).
    The profiler's write flush softens first co-residence steps (tests/test_profiler_timing.py); timed after a clean
    eviction the passes agree on 150 steps where the six write-flush passes agree on 123 in the same range, and the
    shipped simulator (fitted on write-flush records) predicts 136 of them with 4 jumps that neither pass shows (12 in
    no write-flush pass there)."""
    r = sc.scorecard("h200", groups=["clean"], sets=[])["groups"]["clean"]
    assert len(r["layers"]) == 3 and r["every"] >= 140
    assert r["predicted"] >= 0.85 * r["every"] and r["no_pass"] <= 6


def test_on_the_six_sweeps_timed_clean_the_shipped_model_keeps_the_curves_shape():
    """Group six_clean (session 26, issue 3's reference: the six layers over M = 64..8192, clean eviction, two passes):
    the passes agree on 381 steps (the six write-flush passes on 295); the shipped model, fitted on write-flush records,
    predicts 346 with 13 jumps that neither pass shows; read away from the threshold it misses 6 of the 306 clear steps
    with 2 clear jumps the passes lack, and after one scale per config its curves are within 6.3% (median error,
    worst config) of the first pass."""
    r = sc.scorecard("h200", groups=["six_clean"], sets=[])["groups"]["six_clean"]
    assert len(r["layers"]) == 6 and all(x["passes"] == 2 for x in r["layers"]) and r["every"] >= 360
    assert r["predicted"] >= 0.88 * r["every"] and r["no_pass"] <= 20
    assert r["err_worst"] <= 0.08 and r["err_median"] <= 0.03
    assert r["clear_steps"] >= 290 and r["clear_missed"] <= 10 and r["clear_spurious"] <= 5
    assert r["clear_missed"] == sum(x["clear_missed"] for x in r["layers"])


def test_the_hardwares_first_wave_is_faster_than_its_later_ones_where_ctas_share_tiles_and_the_model_prices_them_alike():
    """validation.first_wave on six_clean (session 26): 64x128x64 at 3 CTAs/SM with GROUP_M 4-16 takes 0.69-0.93 of a
    later wave for its first (lockstep reads of shared tiles), where the simulator gives about 1; 1-CTA/SM tiles agree.
    The write-flush passes (group six) show the same, so it is not the flush."""
    from validation.first_wave import first_wave_ratios, wave_ratio

    assert wave_ratio([1, 1, 2, 2, 3, 3], np.array([1.0, 2.0, 3.0, 4.0, 5.0, 7.0])) == pytest.approx(2.0 / 3.0)
    assert wave_ratio([1, 1, 2, 2], np.array([1.0, 2.0, 3.0, 4.0])) is None
    rows = first_wave_ratios("h200", "six_clean")
    grouped = [r for r in rows if r["config"].startswith("64x128x64") and "_g1_" not in r["config"]]
    wide = [r for r in rows if r["config"].startswith("128x256x64")]
    assert len(grouped) == 18 and len(wide) == 24
    assert np.median([r["measured"] for r in grouped]) < 0.85 < 0.95 < np.median([r["simulated"] for r in grouped])
    assert all(0.9 < r["measured"] / r["simulated"] < 1.05 for r in wide)


def test_per_cta_traces_put_the_grouped_orders_gain_in_the_first_generation_of_ctas():
    """validation.first_wave --traces on the 7168^2 grouping traces: 64x128x64's first-generation CTAs take about 0.7
    of a later one with GROUP_M 4-16 and about 0.93 with GROUP_M 1; 128x128x64 (2 CTAs/SM) about 1."""
    from pathlib import Path

    from validation.first_wave import main, trace_generation_ratios

    path = Path(__file__).resolve().parents[1] / "validation/data/h200/traces/trace_grouping_7168x7168.npz"
    rows = trace_generation_ratios(str(path))
    med = {c: np.median([r["ratio"] for r in rows if r["config"] == c]) for c in {r["config"] for r in rows}}
    assert all(med[f"64x128x64_g{g}_w4_s3"] < 0.8 for g in (4, 8, 16))
    assert 0.88 < med["64x128x64_g1_w4_s3"] < 0.98
    assert all(0.95 < med[f"128x128x64_g{g}_w4_s3"] < 1.06 for g in (1, 16))
    assert main(["--traces", str(path.with_name("no_such_trace.npz"))]) == 2


def test_grouped_tiles_follow_the_kernels_launch_order():
    """The canonical kernel's pid -> (pid_m, pid_n): GROUP_M rows are walked down before moving one column right, and the
    last group holds the rows that are left."""
    from wavesim.kernels.gpc_share import grouped_tiles

    pm, pn = grouped_tiles(np.arange(15), npm=5, npn=3, group_m=2)
    assert list(pm) == [0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 4, 4, 4]
    assert list(pn) == [0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2, 0, 1, 2]
    pm1, pn1 = grouped_tiles(np.arange(6), npm=2, npn=3, group_m=1)
    assert list(pm1) == [0, 0, 0, 1, 1, 1] and list(pn1) == [0, 1, 2, 0, 1, 2]


def test_traces_put_the_grouped_first_waves_gain_in_reads_that_one_gpc_shares():
    """validation.first_wave --gpc (session 27) on committed traces: a grouped order's first generation has the CTAs of
    one GPC read the same tiles at the same K step (coalesced share ~0.25-0.3) and runs about a third faster than with
    GROUP_M 1 (~0.7); its later generations lose the share (~0.6) and the speed. 128x64x32, whose L2 requests are half
    lines, gains nothing from the same share in its first wave (clean-flush traces)."""
    from pathlib import Path

    from validation.first_wave import main, trace_gpc_coalescing

    traces = Path(__file__).resolve().parents[1] / "validation/data/h200/traces"
    rows = trace_gpc_coalescing(str(traces / "trace_grouping_7168x7168.npz"), only=r"64x128x64_g\d+_w4_s3/M1024/r0")
    by = {(r["config"].split("_")[1], r["generation"]): r for r in rows}
    for g in ("g4", "g8", "g16"):
        assert by[g, 0]["coalesced_share"] < 0.35 < 0.5 < by[g, 1]["coalesced_share"]
        assert by[g, 0]["cta_us"] < 0.8 * by[g, 1]["cta_us"] and by[g, 0]["cta_us"] < 0.75 * by["g1", 0]["cta_us"]
    assert by["g1", 0]["coalesced_share"] > 0.6 and by["g1", 0]["gpc_distinct_share"] > 2 * by["g8", 0]["gpc_distinct_share"]
    flat = trace_gpc_coalescing(str(traces / "trace_gpc_5120x5120.npz"), only="128x64x32_g8_w4_s3/M2560/r0")
    assert flat[0]["coalesced_share"] < 0.5 < flat[1]["coalesced_share"]
    assert flat[0]["cta_us"] > 0.9 * flat[1]["cta_us"]
    with pytest.raises(SystemExit):
        main(["--gpc"])  # --gpc reads traces: argparse names the missing --traces


def test_the_gpc_scope_probe_a_scattered_order_loses_the_grouped_gain_with_the_same_tiles_in_flight(tmp_path):
    """validation.gpc_scope on its committed H200 records (session 27): in one-wave launches every order has the same
    tiles in flight, yet permuting GROUP_M 8's programs so that one GPC's CTAs no longer share tiles costs 1.25-1.6x;
    the canonical kernel and the permuted one at stride 1 agree. The lockstep per-GPC share orders the cases."""
    from pathlib import Path

    from validation.gpc_scope import least_shared_stride, load_records, lockstep_gpc_share, main, report_rows, scatter_stride
    from wavetune.config import LaunchConfig

    cfg = LaunchConfig.from_key("64x128x64_g8_w4_s3")
    assert lockstep_gpc_share(448, 7168, cfg, 1, 132, 3) < 0.25 < 0.5 < lockstep_gpc_share(448, 7168, cfg, 149, 132, 3)
    assert scatter_stride(392) == 149 and np.gcd(least_shared_stride(448, 7168, cfg, 132, 3), 392) == 1
    path = Path(__file__).resolve().parents[1] / "validation/data/h200/gpc_scope/gpc_scope.jsonl"
    rows = report_rows(path)
    for r in rows:
        if r["order"] == "stride1":
            assert abs(r["vs_canonical"] - 1) < 0.02
        if r["waves"] == 1 and "_g8_" in r["config"] and r["stride"] > 1:
            assert r["vs_canonical"] > 1.2 and r["gpc_share"] > 0.4
    again = {(r["config"], r["M"], r["order"]): r["ms"] for r in report_rows(path.with_name("gpc_scope_pass2.jsonl"))}
    assert all(0.95 < again[(r["config"], r["M"], r["order"])] / r["ms"] < 1.05 for r in rows)   # a second pass agrees
    g8 = [r for r in rows if r["config"] == "64x128x64_g8_w4_s3" and r["M"] == 448 and r["stride"] > 1]
    g1 = [r for r in rows if r["config"] == "64x128x64_g1_w4_s3" and r["order"] == "canonical"]
    assert min(r["ms"] for r in g8) > g1[0]["ms"] > 1.4 * max(r["ms"] for r in rows if r["config"] == "64x128x64_g8_w4_s3"
                                                               and r["M"] == 448 and r["stride"] == 1)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"N": 1}\n')
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        load_records(bad)
    assert main(["report", str(tmp_path / "missing.jsonl")]) == 2


def test_the_same_tile_probe_measures_each_tiles_sm_side_against_the_model(tmp_path):
    """validation.sm_side on its committed H200 records (session 27): with every CTA on one tile from a warm L2, a K step
    grows with the CTAs on the SM (one per SM fastest, the busiest SM holding exactly k), and the shipped model's
    SM-shared work at a full SM is right for 64x128x64 and 128x128x64 but too cheap for 128x64x32."""
    from pathlib import Path

    from validation.sm_side import full_sm_ratios, load_records, main, report_rows

    path = Path(__file__).resolve().parents[1] / "validation/data/h200/sm_side/sm_side.jsonl"
    rows = report_rows(path)
    by = {(r["config"], r["ctas_per_sm"]): r for r in rows}
    assert all(r["max_ctas_on_an_sm"] == r["ctas_per_sm"] for r in rows)
    for cfg in {r["config"] for r in rows}:
        steps = [by[cfg, k]["step_ns"] for k in range(1, 1 + max(k for c, k in by if c == cfg))]
        assert all(b > a for a, b in zip(steps, steps[1:])), cfg
    assert 0.9 < by["64x128x64_g8_w4_s3", 3]["model_over_measured_time"] < 1.1
    assert 0.9 < by["128x128x64_g8_w4_s3", 2]["model_over_measured_time"] < 1.1
    assert by["128x64x32_g8_w4_s3", 4]["model_over_measured_time"] < 0.85
    broad = full_sm_ratios(report_rows(path.with_name("sm_side_broad.jsonl")))
    assert len(broad) >= 170 and 0.8 < np.median(broad) < 1.0 and np.percentile(broad, 90) > 1.1
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        load_records(bad)
    assert main(["report", str(tmp_path / "missing.jsonl")]) == 2


def test_the_l2_probe_a_scattered_order_over_a_resident_tile_set_costs_the_l2_heavy_tiles_most(tmp_path):
    """validation.l2_probe on its committed H200 records (session 27): with A and B resident in the L2, scattering the
    programs over the tile set costs 64x128x64 and 64x64x64 s4 at a full SM 1.5x or more per CTA, and 128x64x32, which
    runs at the L2 request ceiling either way, about 1.1x."""
    from pathlib import Path

    from validation.l2_probe import load_records, main, report_rows

    rows = report_rows(Path(__file__).resolve().parents[1] / "validation/data/h200/l2_probe/l2_probe.jsonl")
    cta = {(r["config"].split("_")[0], r["ctas_per_sm"], r["stride"] == 1): r for r in rows}
    assert cta["64x128x64", 3, False]["cta_ns"] > 1.5 * cta["64x128x64", 3, True]["cta_ns"]
    assert cta["64x64x64", 3, False]["cta_ns"] > 1.5 * cta["64x64x64", 3, True]["cta_ns"]
    assert 1.0 < cta["128x64x32", 4, False]["cta_ns"] / cta["128x64x32", 4, True]["cta_ns"] < 1.2
    assert all(100e3 < cta["128x64x32", k, True]["requests_per_us"] < 140e3 for k in (2, 3, 4))
    # the block study: blocks of 4 consecutive programs keep most of the grouped gain, single programs none of it
    blocks = {r["tile_block"]: r["cta_ns"] for r in report_rows(Path(__file__).resolve().parents[1]
              / "validation/data/h200/l2_probe/l2_blocks.jsonl") if r["config"].startswith("64x128x64")}
    assert blocks[1] > 1.5 * blocks[256] and blocks[4] < 1.1 * blocks[256] and blocks[1] > blocks[2] > blocks[4]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"config": "64x128x64_g8_w4_s3"}\n')
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        load_records(bad)
    assert main(["report", str(tmp_path / "missing.jsonl")]) == 2


def test_the_probes_collections_say_plainly_that_they_need_a_gpu(tmp_path, capsys, monkeypatch):
    """On a machine without a visible GPU every probe's `collect` exits 2 with one line that names the way out, and
    writes nothing."""
    import hwspecs

    from validation import gpc_scope, l2_probe, sm_side

    monkeypatch.setattr(hwspecs, "detect", lambda device=0: None)
    out = tmp_path / "records.jsonl"
    for main, args in ((gpc_scope.main, ["collect"]), (sm_side.main, ["collect"]), (l2_probe.main, ["collect"]),
                       (l2_probe.main, ["collect-blocks"])):
        assert main([*args, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert "no" in err and "GPU" in err and "'gpu' extra" in err and err.count("\n") == 1
    assert not out.exists()
    small = hwspecs.load_gpu("a10")          # 6 MiB of L2: the L2 probe would time DRAM, so it refuses
    monkeypatch.setattr(hwspecs, "detect", lambda device=0: small)
    assert l2_probe.main(["collect", "--out", str(out)]) == 2
    assert "cannot keep the probe's A and B resident" in capsys.readouterr().err and not out.exists()


def test_the_step_protocol_probe_the_sweeps_misses_are_the_kernels_not_the_timing_order(tmp_path):
    """validation.step_protocol on its committed H200 records (session 28): the launches of every strict disagreement
    between the simulator and the six_clean sweeps, re-timed config by config, jump as in the sweeps (the missed steps
    stay steps), so the misses are the model's, not the sweeps' timing order's."""
    from pathlib import Path

    from validation.step_protocol import THRESHOLD, main, report

    d = Path(__file__).resolve().parents[1] / "validation/data/h200/step_protocol"
    points = json.loads((d / "points.json").read_text())
    for p in points:   # each point is the disagreement (or agreement) its kind says
        steps = min(p["sweep_jumps"]) > THRESHOLD, max(p["sweep_jumps"]) <= THRESHOLD, p["sim_jump"] > THRESHOLD
        assert {"missed": steps[0] and not steps[2], "spurious": steps[1] and steps[2],
                "agreed": steps[0] and steps[2]}[p["kind"]]
    res = report(d / "points.json", d / "step_protocol.jsonl")
    missed, agreed, spurious = (res["kinds"][k] for k in ("missed", "agreed", "spurious"))
    assert missed["points"] >= 30 and missed["protocol_steps"] >= 0.85 * missed["points"]
    assert agreed["protocol_steps"] >= agreed["points"] - 2 and spurious["protocol_steps"] <= spurious["points"] // 3
    assert missed["median_abs_jump_change"] < 0.015 and agreed["median_abs_jump_change"] < 0.015
    assert all(len(r["protocol_jumps"]) == 2 for r in res["rows"])   # two passes of every point
    stray = tmp_path / "stray.jsonl"
    stray.write_text(json.dumps({"N": 1, "K": 1, "config": "64x64x32_g8_w4_s2", "M0": 1, "M1": 2, "kind": "agreed",
                                 "pass": 1, "ms0": 1.0, "ms1": 1.0}) + "\n")
    with pytest.raises(ValueError, match="does not list"):
        report(d / "points.json", stray)
    assert main(["report", str(d / "points.json"), str(tmp_path / "missing.jsonl")]) == 2


def test_the_cold_tail_probe_a_lone_cta_is_warm_or_cold_not_slowed_by_its_neighbours(tmp_path):
    """validation.cold_tail on its committed H200 records (session 28): one CTA per SM, cold tiles cost the same
    whatever the number of CTAs beside them; resident tiles are ~40% faster until the programs' tiles outgrow about
    half the L2 (64x128x64 GROUP_M 1 from 32 programs), after which warm runs as cold."""
    from pathlib import Path

    from validation.cold_tail import main, report_rows

    path = Path(__file__).resolve().parents[1] / "validation/data/h200/cold_tail/cold_tail.jsonl"
    rows = report_rows(path)
    assert all(r["max_ctas_on_an_sm"] == 1 for r in rows)
    assert all(0.9 < r["vs_fewest"] < 1.1 for r in rows if r["cache"] == "cold")
    t = {(r["config"], r["order"], r["cache"], r["programs"]): r["cta_ns"] for r in rows}
    wide = "64x128x64_g1_w4_s3"
    assert t[wide, "band", "warm", 4] < 0.6 * t[wide, "band", "cold", 4]
    assert t[wide, "band", "warm", 132] > 0.9 * t[wide, "band", "cold", 132]
    assert t["64x64x64_g8_w4_s4", "band", "warm", 132] < 0.75 * t["64x64x64_g8_w4_s4", "band", "cold", 132]
    assert main(["report", str(tmp_path / "missing.jsonl")]) == 2


def test_group_m_set_scores_the_simulators_group_m_choice_and_order_against_every_pass(monkeypatch):
    """Hand-made passes of one shape: three GROUP_M siblings of one tile and a tile without siblings; a stand-in
    simulator that ranks GROUP_M 16 < 8 < 1. Its GROUP_M pick (16) is scored against the siblings' best over both
    passes (8), and of the three sibling pairs the two that both passes put > 5% apart count, ordered right."""
    import types

    import wavesim.kernels.gemm as gemm

    spec = hwspecs.load_gpu("h200")
    tile = dict(BLOCK_M=64, BLOCK_N=128, BLOCK_K=64, num_warps=4, num_stages=3)
    cfg = {g: LaunchConfig(GROUP_M=g, **tile) for g in (1, 8, 16)}
    lone = LaunchConfig(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=4, num_stages=3)
    shape = (1024, 4096, 4096)
    p1 = [_record(*shape, cfg[1], 1.3), _record(*shape, cfg[8], 1.0), _record(*shape, cfg[16], 1.02),
          _record(*shape, lone, 0.9)]
    p2 = [_record(*shape, cfg[1], 1.25), _record(*shape, cfg[8], 1.0), _record(*shape, cfg[16], 1.04),
          _record(*shape, lone, 0.9)]
    fake = {1: 1.2, 8: 1.1, 16: 1.0}
    monkeypatch.setattr(gemm, "simulate_batch", lambda b, params=None: types.SimpleNamespace(
        makespan_s=np.array([fake.get(int(g), 1.0) for g in b.group_m])))
    got = sc.group_m_set_scores(spec, [p1, p2], None)
    assert got["families"] == 1
    assert got["group_m_pick_regret"] == pytest.approx(float(np.sqrt(1.02 * 1.04)))
    assert (got["group_m_differ"], got["group_m_right"], got["group_m_wrong"]) == (2, 2, 0)
    with pytest.raises(ValueError, match="two passes"):
        sc.group_m_set_scores(spec, [p1], None)
