"""Metric functions of the validation suite and the staircase analysis, on tiny inputs with known answers."""

import math
from pathlib import Path

import numpy as np
import pytest

from validation.staircase import (clear_agreement, detect_steps, longest_regular_run, loose_match, match_steps,
                                  scaled_error)
from validation.suite import (aggregate, fold_of_groups, geomean, kendall_tau, latency_errors, layer_groups,
                              regime_of, regret, scale_factor, shape_metrics, top_k_hits)


def test_regret():
    meas = [2.0, 1.0, 4.0]
    assert regret(meas, 1) == 1.0
    assert regret(meas, 0) == 2.0
    assert regret(meas, 2) == 4.0


def test_top_k_hits():
    meas = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    # sim ranks config 6 first, config 0 (the measured best) sixth
    sim = np.array([6.0, 2.0, 3.0, 4.0, 5.0, 7.0, 1.0])
    h = top_k_hits(sim, meas, k=5)
    assert h == {"top1": False, "top5": False, "pick_in_top5": False}
    sim2 = np.array([5.0, 2.0, 3.0, 4.0, 1.0, 7.0, 8.0])  # pick = config 4 (5th measured), best is 5th in sim
    assert top_k_hits(sim2, meas, k=5) == {"top1": False, "top5": True, "pick_in_top5": True}
    assert top_k_hits(meas, meas, k=5) == {"top1": True, "top5": True, "pick_in_top5": True}
    # a pick that ties the measured best counts as a top-1 hit
    assert top_k_hits([2.0, 1.0], [1.0, 1.0], k=1)["top1"]


def test_kendall_tau():
    assert kendall_tau([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert kendall_tau([1, 2, 3, 4], [40, 30, 20, 10]) == pytest.approx(-1.0)
    # one discordant pair of 6: (5 - 1) / 6
    assert kendall_tau([1, 2, 3, 4], [1, 2, 4, 3]) == pytest.approx(4 / 6)
    assert math.isnan(kendall_tau([1.0], [1.0]))


def test_scale_and_latency_errors():
    sim = np.array([1.0, 2.0, 4.0])
    meas = 2.0 * sim
    assert scale_factor(sim, meas) == pytest.approx(2.0)
    err, err_scaled, s = latency_errors(sim, meas)
    assert err == pytest.approx(0.5) and err_scaled == pytest.approx(0.0, abs=1e-12) and s == pytest.approx(2.0)
    # geomean of ratios 1 and 4 is 2: after scaling the errors are |2/1 - 1| = 1 and |2/4 - 1| = 0.5
    e, s2 = scaled_error([1.0, 1.0], [1.0, 4.0])
    assert s2 == pytest.approx(2.0) and e == pytest.approx(0.75)


def test_shape_metrics_and_aggregate():
    meas = np.array([1.0, 1.1, 2.0, 3.0])
    sim = np.array([1.2, 1.0, 2.5, 2.9])   # picks config 1: regret 1.1
    m = shape_metrics(sim, meas, default_idx=3, cublas_ms=1.0)
    assert m["pick"] == 1 and m["regret"] == pytest.approx(1.1)
    assert m["speedup_default"] == pytest.approx(3.0 / 1.1) and m["cublas_ratio"] == pytest.approx(1.1)
    assert not m["top1"] and m["top5"] and m["pick_in_top5"]
    rows = [{"v": {**m, "regret": r}} for r in (1.0, 1.21)]
    a = aggregate(rows, "v")
    assert a["regret_geomean"] == pytest.approx(1.1) and a["regret_worst"] == pytest.approx(1.21)
    assert geomean([1.0, 4.0, None, float("nan")]) == pytest.approx(2.0)


def test_regimes():
    assert [regime_of(m) for m in (1, 64, 65, 1024, 1025, 16384)] == [
        "M<=64", "M<=64", "64<M<=1024", "64<M<=1024", "M>1024", "M>1024"]


def test_folds_hold_out_layer_i_and_i_plus_4():
    from validation.shapesets import LLM_LAYERS

    nks = [(n, k) for _, n, k in LLM_LAYERS]
    groups = layer_groups(reversed(nks + [(1, 1)]))
    assert groups[:8] == nks and groups[8] == (1, 1)
    f = fold_of_groups(nks, 4)
    for i in range(4):
        assert {g for g, j in f.items() if j == i} == {nks[i], nks[i + 4]}
    with pytest.raises(ValueError):
        fold_of_groups(nks[:3], 4)


def test_detect_and_match_steps():
    ys = [1.0, 1.05, 1.3, 1.32, 1.33, 2.0, 2.1]
    assert detect_steps(ys) == [2, 5]
    assert detect_steps(ys, threshold=0.5) == [5]
    assert detect_steps([1.0]) == []
    assert match_steps([2, 5], [5, 6]) == ([5], [2], [6])


def test_loose_match():
    meas = [1.0, 1.0, 1.2, 1.2, 1.2, 1.2]   # step of 20% at index 2
    sim = [1.0, 1.0, 1.1, 1.1, 1.1, 1.5]    # 10% at index 2 (above half the threshold), 36% at index 5
    missed, spurious = loose_match(meas, sim, [2], [5])
    assert missed == [] and spurious == [5]


def test_clear_agreement_reads_the_match_away_from_the_threshold():
    """Jumps within the margin of 15% are neither clear steps nor clear spurious jumps, whichever side they fall."""
    p1 = [1.0, 1.25, 1.25, 1.42, 1.42, 1.42, 1.42]  # +25% at 1, +13.6% at 3
    p2 = [1.0, 1.25, 1.25, 1.45, 1.45, 1.45, 1.45]  # +25% at 1, +16% at 3 (a strict step one pass shows)
    sim = [1.0, 1.1, 1.1, 1.1, 1.3, 1.3, 1.3]       # +10% at 1 (a clear miss), +18.2% at 4 (clear: both passes flat)
    cfg = {"measured_ms": p1, "repeat": {"measured_ms": p2}, "calibrated": {"sim_ms": sim}}
    assert clear_agreement([cfg], "calibrated") == {"clear_steps": 1, "clear_missed": 1, "clear_spurious": 1}
    sim_near = [1.0, 1.14, 1.14, 1.14, 1.3, 1.3, 1.3]  # +14% at 1: strictly a miss, within the margin: not clear
    cfg["calibrated"]["sim_ms"] = sim_near
    assert clear_agreement([cfg], "calibrated")["clear_missed"] == 0
    assert clear_agreement([cfg], "calibrated", margin=0.0)["clear_missed"] == 1


def test_longest_regular_run():
    assert longest_regular_run([1, 16, 32, 64, 128, 192, 256, 320, 16384]) == [64, 128, 192, 256, 320]
    assert longest_regular_run([5, 1, 3]) == [1, 3, 5]


def test_staircase_second_pass_separates_hardware_noise_from_model_errors():
    """Synthetic sweeps: 'measured' = the simulator's own curve, with edits whose answer is known. Pass 2 adds a
    lone spike (a step only one pass shows); both passes flatten the first wave step (so the simulator's jump
    there is one that neither pass shows)."""
    import hwspecs
    from tuner.space import WAVE_STUDY
    from validation.measurements import Measurement
    from validation.staircase import staircase_analysis
    from wavesim.kernels.gemm import simulate_config
    from wavetune.config import GemmProblem

    spec, cfg = hwspecs.load_gpu("h200"), WAVE_STUDY[0]  # 128x128x64 s4: 1 CTA/SM, a step every 528 rows
    Ms = np.arange(64, 64 * 41, 64)
    sim = simulate_config(spec, cfg, Ms, 4096, 4096)[0] * 1e3
    steps = detect_steps(sim)
    assert len(steps) >= 3
    first, spike = steps[0], steps[1] - 3
    flat = sim.copy()
    flat[first:] *= sim[first - 1] / sim[first]          # no jump at the first step, the rest shifted down
    again = flat.copy()
    again[spike] *= 1.3                                  # a lone spike: a step up, then a drop

    def records(ys):
        return [Measurement("h200", "gemm", "triton", GemmProblem(int(m), 4096, 4096), cfg, "ok", float(y), {})
                for m, y in zip(Ms, ys)]

    st = staircase_analysis(spec, records(flat), 4096, 4096, None, min_points=32, repeat=records(again))
    c = st["configs"][0]
    rep = c["repeat"]
    later = [int(Ms[i]) for i in steps[1:]]
    assert c["measured_steps_M"] == later and rep["reproducible_steps_M"] == later
    assert rep["one_pass_only_M"] == [int(Ms[spike])]
    assert c["specs"]["missed_reproducible_M"] == []
    assert c["specs"]["spurious_in_neither_pass_M"] == [int(Ms[first])]
    s = st["summary"]["specs"]["repeat"]
    assert (s["reproducible_steps"], s["hardware_one_pass_only"], s["missed_reproducible"],
            s["spurious_in_neither_pass"]) == (len(later), 1, 0, 1)
    kind = c["specs"]["spurious_in_neither_pass"][0]
    assert (kind["M"], kind["wave"], kind["ctas_per_sm"]) == (int(Ms[first]), 2, 1)
    assert kind["sim_jump"] > 0.15 and kind["hw_max_jump_near"] < 0.01 and not kind["near_threshold"]
    assert s["spurious_by_kind"] == {"from the first wave boundary on, 1-2 CTAs/SM": 1,
                                     "near threshold (hardware jump > half the threshold)": 0}
    # threshold-free: at the wave boundaries only the flattened first step is off, by the simulator's whole jump
    bounds = [int(Ms.tolist().index(m)) for m in c["specs"]["wave_boundaries_M"]]
    assert bounds[0] == first and len(bounds) == len(steps)
    err = c["specs"]["jump_error_at_wave_boundaries"]
    assert err[0] == pytest.approx(sim[first] / sim[first - 1] - 1) and max(err[1:]) < 1e-9
    assert max(rep["jump_diff_at_wave_boundaries"]) < 1e-9       # the spike is not at a wave boundary
    ja = s["jump_agreement"]
    assert ja["wave_boundaries"] == len(bounds) and ja["hardware_pass_to_pass"]["median"] < 1e-9
    assert s["group_m_reference"] is None                         # one config: no GROUP_M sibling
    # against one pass: the simulator's flattened first step is spurious against both passes and the spike
    # is one pass 2 has that it misses; the other pass misses or adds the spike, half the time each
    sp = s["single_pass"]
    assert sp["simulator"] == {"spurious": 1.0, "missed": 0.5}
    assert sp["simulator_by_place"] == {"boundary into wave 2, 1-2 CTAs/SM": {"spurious": 1.0, "missed": 0.0},
                                        "inside a later wave, 1-2 CTAs/SM": {"spurious": 0.0, "missed": 0.5}}
    assert sp["other_pass"] == {"spurious": 0.5, "missed": 0.5} and sp["pairs"] == {"1-2": 1}
    # a third pass like the first: pairs 1-2 and 2-3 differ by the spike, 1-3 by nothing
    sp = staircase_analysis(spec, records(flat), 4096, 4096, None, min_points=32, repeat=records(again),
                            more_passes=[records(flat)])["summary"]["specs"]["repeat"]["single_pass"]
    assert sp["passes"] == 3 and sp["pairs"] == {"1-2": 1, "1-3": 0, "2-3": 1}
    assert (sp["steps_in_every_pass"], sp["missed_of_them"], sp["predicted_in_no_pass"]) == (len(later), 0, 1)
    assert sp["simulator"] == pytest.approx({"spurious": 1.0, "missed": 1 / 3})
    assert sp["other_pass"] == pytest.approx({"spurious": 1 / 3, "missed": 1 / 3})
    # the mean of the other two passes halves the spike (a 14% jump, under the threshold): it misses the spike
    # against pass 2 only, and adds nothing
    assert sp["mean_of_other_passes"] == pytest.approx({"spurious": 0.0, "missed": 1 / 3})
    (place, errs), = sp["mean_of_other_passes_by_place"].items()       # the spike, missed against pass 2
    assert place == "inside a later wave, 1-2 CTAs/SM" and errs == pytest.approx({"spurious": 0.0, "missed": 1 / 3})
    assert "mean_of_other_passes" not in s["single_pass"]          # two passes: it would be the other pass
    from validation.staircase import spurious_kind

    last = spurious_kind(4, [1, 1, 1, 1, 1.3], ([1, 1, 1, 1.1, 1.12],), [1, 1, 1, 1, 2], 3, 320)  # i at the end
    assert last["hw_max_jump_near"] == pytest.approx(0.1) and last["near_threshold"] and last["wave"] == 2
    # without a second pass there are no reproducibility figures
    assert "repeat" not in staircase_analysis(spec, records(flat), 4096, 4096, None, min_points=32)["summary"]["specs"]


def test_group_m_sibling_yardstick_scores_measured_curves_like_the_simulator():
    """Two configs that differ only in GROUP_M, hand-made curves: each one's first pass as the prediction of the
    other, scored with the simulator's rules (missed reproducible steps, jumps in neither pass)."""
    from validation.staircase import group_m_reference

    M = [64, 128, 192, 256]

    def cfg(key, p1, p2, spurious, missed):
        steps = lambda ys: [M[i] for i in detect_steps(ys)]  # noqa: E731
        return {"config": key, "M": M, "measured_ms": p1, "measured_steps_M": steps(p1),
                "repeat": {"measured_ms": p2, "steps_M": steps(p2),
                           "reproducible_steps_M": sorted(set(steps(p1)) & set(steps(p2)))},
                "calibrated": {"wave_boundaries_M": [128, 256], "spurious_in_neither_pass_M": spurious,
                               "missed_reproducible_M": missed, "jump_error_at_wave_boundaries": [0.01, 0.03]}}

    a = cfg("128x128x64_g1_w4_s3", [1, 1.2, 1.2, 1.5], [1, 1.2, 1.25, 1.5], [], [])   # steps at 128, 256 (both)
    b = cfg("128x128x64_g8_w4_s3", [1, 1.1, 1.3, 1.5], [1, 1.1, 1.3, 1.5], [192], [])  # steps at 192, 256
    other = cfg("64x64x64_g8_w4_s4", [1, 2, 2, 2], [1, 2, 2, 2], [], [])             # no sibling: left out
    ref = group_m_reference([a, b, other], "calibrated")
    # b predicts a: 192 is in neither of a's passes (spurious), 128 is missed; a predicts b: 128 spurious, 192 missed
    assert (ref["pairs"], ref["configs"]) == (2, 2)
    assert ref["sibling_spurious_per_config"] == 1.0 and ref["sibling_missed_per_config"] == 1.0
    assert ref["simulator_spurious_per_config"] == 0.5 and ref["simulator_missed_per_config"] == 0.0
    # |sibling jump - target's mean jump| at 128 and 256; a's mean jumps 0.2, 0.225, b's 0.1, 0.2/1.3
    diffs = [0.1, abs(0.2 / 1.3 - 0.225), 0.1, abs(0.25 - 0.2 / 1.3)]   # b for a, then a (pass 1) for b
    assert ref["sibling_jump_diff_at_wave_boundaries"]["median"] == pytest.approx(float(np.median(diffs)))
    assert ref["simulator_jump_error_at_wave_boundaries"]["median"] == pytest.approx(0.02)
    assert group_m_reference([other], "calibrated") is None


def test_group_m_ordering_counts_siblings_the_passes_put_apart_and_how_the_simulator_orders_them():
    """Hand-made GROUP_M siblings: points where every pass has one ahead by > 5% count; the simulator is right, wrong
    or calls them even (< 1%) there; a point where the passes disagree, or differ by under 5%, is left out."""
    from validation.staircase import group_m_ordering

    M = [64, 128, 192, 256, 320]

    def cfg(key, p1, p2, sim):
        return {"config": key, "M": M, "measured_ms": p1, "repeat": {"measured_ms": p2}, "calibrated": {"sim_ms": sim}}

    g1 = cfg("64x128x64_g1_w4_s3", [1.0, 1.2, 1.2, 1.03, 1.2], [1.0, 1.2, 1.2, 1.03, 1.0], [1.0, 1.3, 1.0, 1.0, 1.0])
    g8 = cfg("64x128x64_g8_w4_s3", [1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0, 1.1], [1.0, 1.0, 1.2, 1.005, 1.0])
    # 128: g1 20% slower in both passes, simulated 30% slower (right); 192: simulated 1/1.2 (wrong); 256: 3% apart,
    # left out; 320: the passes disagree, left out; 64: even everywhere
    other = cfg("64x64x64_g8_w4_s4", [1.0] * 5, [2.0] * 5, [1.0] * 5)        # no sibling: left out
    got = group_m_ordering([g1, g8, other], "calibrated")
    assert (got["group_m_differ"], got["group_m_right"], got["group_m_wrong"]) == (2, 1, 1)
    g8["calibrated"]["sim_ms"][2] = 1.005                                     # within the tie: neither right nor wrong
    got = group_m_ordering([g1, g8], "calibrated")
    assert (got["group_m_differ"], got["group_m_right"], got["group_m_wrong"]) == (2, 1, 0)
    assert len(got["group_m_log_ratio_errors"]) == len(M)
    assert got["group_m_log_ratio_errors"][1] == pytest.approx(abs(np.log(1.3) - np.log(1.2)))


def test_load_shapes_reads_long_comma_lists_named_sets_and_rejects_the_rest(tmp_path):
    from validation.shapesets import load_shapes

    text = ",".join(f"{m}x3072x3072" for m in range(64, 4097, 64))   # longer than a file name may be
    shapes = load_shapes(text)
    assert [s.M for s in shapes] == list(range(64, 4097, 64)) and {(s.N, s.K) for s in shapes} == {(3072, 3072)}
    assert len(load_shapes("m-sweep")) > 100
    f = tmp_path / "shapes.jsonl"
    f.write_text('{"M": 8, "N": 16, "K": 32}\n')
    assert [(s.M, s.N, s.K) for s in load_shapes(str(f))] == [(8, 16, 32)]
    with pytest.raises(ValueError, match="not a file, not MxNxK and not a named set"):
        load_shapes("no-such-set")


def test_load_measurements_takes_one_path_or_many():
    from validation.measurements import load_measurements

    f = Path(__file__).resolve().parent.parent / "validation" / "data" / "h200" / "stages" / "stages.jsonl"
    one = load_measurements(str(f), gpu="h200")                    # a str is one file, not its characters
    assert len(one) == 1280 and load_measurements([f], gpu="h200") == one == load_measurements(f, gpu="h200")


def test_step_place_names_where_a_step_sits_in_the_wave_structure():
    from validation.staircase import step_place

    waves = [1, 1, 2, 2, 3, 4, 5, 6, 6]
    assert step_place(waves, 1, 2) == "inside the first wave, 1-2 CTAs/SM"
    assert step_place(waves, 2, 3) == "boundary into wave 2, 3+ CTAs/SM"
    assert step_place(waves, 3, 8) == "inside a later wave, 3+ CTAs/SM"
    assert [step_place(waves, i, 1).split(",")[0] for i in (4, 5, 6, 7)] == [
        "boundary into wave 3", "boundary into wave 4-5", "boundary into wave 4-5", "boundary into wave 6+"]


def test_jump_bias_pools_group_m_and_splits_by_place():
    """Two GROUP_M members of one tile (one family) at 1 CTA/SM: the boundary into wave 2 the simulator makes 10 points
    too small in both, a flat point inside the wave left out (under the floor), and the passes' own difference kept."""
    from validation.staircase import family_jumps, jump_bias

    def cfg(key, p1, p2, sim):
        return {"config": key, "ctas_per_sm": 1, "measured_ms": p1, "repeat": {"measured_ms": p2}, "M": [64, 128, 192, 256],
                "calibrated": {"sim_ms": sim, "waves": [1, 1, 2, 2]}}

    configs = [cfg("64x64x64_g8_w4_s3", [1.0, 1.0, 1.5, 1.5], [1.0, 1.0, 1.5, 1.52], [1.0, 1.0, 1.4, 1.4]),
               cfg("64x64x64_g1_w4_s3", [1.0, 1.0, 1.6, 1.6], [1.0, 1.0, 1.6, 1.6], [1.0, 1.0, 1.5, 1.5])]
    jumps = family_jumps(configs, "calibrated")
    assert len(jumps) == 6 and {j["family"] for j in jumps} == {"64x64x64_w4_s3"}
    (row,) = jump_bias(jumps)
    assert row["place"] == "boundary into wave 2, 1-2 CTAs/SM" and row["jumps"] == 2
    assert row["bias_median"] == pytest.approx(-0.10) and row["abs_error_median"] == pytest.approx(0.10)
    assert row["measured_median"] == pytest.approx(0.55) and row["pass_to_pass_median"] == pytest.approx(0.0)
    assert jump_bias(jumps, floor=0.7) == []
    # with the sweep's N and the SMs, a first-wave place says what the busiest SM did: M 64 -> 128 on N = 64 x 4 over
    # 4 SMs is 4 -> 8 tiles, the busiest SM 1 -> 2 CTAs; over 8 SMs more SMs at 1 CTA
    assert family_jumps(configs, "calibrated", 256, 4)[0]["place"] == "first wave, busiest SM 1 -> 2 CTAs"
    assert family_jumps(configs, "calibrated", 256, 8)[0]["place"] == "first wave, more SMs at 1 CTAs"


def test_jump_bias_by_measured_reads_the_same_jumps_for_any_model():
    """A jump the simulator makes (+30%) where the passes are flat counts in the default reading, not in by="measured";
    an unknown reading is named."""
    from validation.staircase import jump_bias

    jumps = [{"family": "f", "place": "p", "passes": (0.20, 0.22), "simulated": 0.10},
             {"family": "f", "place": "p", "passes": (0.01, 0.0), "simulated": 0.30}]
    (either,) = jump_bias(jumps)
    (measured,) = jump_bias(jumps, by="measured")
    assert either["jumps"] == 2 and measured["jumps"] == 1
    assert measured["bias_median"] == pytest.approx(-0.11)
    with pytest.raises(ValueError, match="'either' or 'measured'"):
        jump_bias(jumps, by="simulated")
