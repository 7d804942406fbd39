"""Calibration: recovers known parameters from synthetic data, files round-trip, errors are clear."""

import json

import numpy as np
import pytest

import hwspecs
from tuner.space import load_space
from validation.measurements import Measurement
from wavesim.calibration import build_dataset, fit, load_calibration, save_calibration, simulate_ms
from wavesim.kernels.gemm import GemmParams, config_occupancy
from wavetune.config import GemmProblem

H200 = hwspecs.load_gpu("h200")


def synthetic(params, shapes, configs):
    """Measurements made by the model itself with known parameters."""
    out = []
    for M, N, K in shapes:
        for c in configs:
            if config_occupancy(H200, c, "bf16")[0].ctas_per_sm:
                out.append(Measurement("h200", "gemm", "triton", GemmProblem(M, N, K), c, "ok", 1.0, {}))
    ds = build_dataset(H200, out)
    ms = simulate_ms(ds, params)
    return [Measurement(m.gpu, m.kernel, m.backend, m.problem, m.config, "ok", float(t), {})
            for m, t in zip([m for m in out], ms)]


def test_fit_recovers_a_known_parameter_set():
    truth = GemmParams.from_dict({"dram_latency_cycles": 1500.0, "l2_latency_cycles": 700.0, "mma_v2_efficiency": 0.3})
    configs = load_space("wave-study") + load_space("broad")[::9]
    shapes = [(m, n, k) for m in (16, 256, 2048) for n, k in ((4096, 4096), (1280, 8192))]
    data = synthetic(truth, shapes, configs)
    ds = build_dataset(H200, data)
    prior_err = np.median(np.abs(simulate_ms(ds, None) / ds.ms - 1))
    params, report = fit(H200, ds, free=["dram_latency_cycles", "l2_latency_cycles", "mma_v2_efficiency"],
                         prior_weight=0.0)
    err = np.median(np.abs(simulate_ms(ds, params) / ds.ms - 1))
    assert err < 1e-3 < prior_err
    assert report["loss_end"] < report["loss_start"]


def test_calibration_file_round_trip_and_errors(tmp_path):
    p = GemmParams.from_dict({"dram_latency_cycles": 1234.0})
    path = tmp_path / "cal.json"
    save_calibration(path, "h200", p, {"note": "test"})
    assert load_calibration(str(path), "h200") == p
    with pytest.raises(ValueError, match="not 'h100-sxm'"):
        load_calibration(str(path), "h100-sxm")
    doc = json.loads(path.read_text())
    doc["schema"] = 99
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="schema"):
        load_calibration(str(path), "h200")
    with pytest.raises(FileNotFoundError, match="wavetune calibrate"):
        load_calibration(str(tmp_path / "none.json"), "h200")
    assert load_calibration(None, "h200") is None
    assert load_calibration("auto", "t4") is None  # no shipped calibration: specs alone


def test_shipped_h200_calibration_loads_and_differs_from_priors():
    p = load_calibration("auto", "h200")
    assert p is not None and p != GemmParams.priors()


def test_calibrate_cli(tmp_path):
    from wavetune.cli import main

    out = tmp_path / "cal.json"
    assert main(["calibrate", "--gpu", "h200", "--measurements", "validation/data/h200/gemm/m_sweep.jsonl",
                 "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["gpu"] == "h200" and doc["fit"]["records"] == 1024
    assert load_calibration(str(out), "h200") is not None


def test_calibrate_cli_measures_the_start_desync_on_one_layer_of_passes_split_over_files(tmp_path, capsys):
    """--desync-sweeps takes one pass per argument (files of a pass joined by ','), --desync-nk the layer to use of
    files that sweep several (the clean-flush passes hold the six sweeps' layers); a malformed layer names the flag."""
    from wavetune.cli import main

    d = "validation/data/h200/cleanflush/six_cleanflush_pass"
    out = tmp_path / "cal.json"
    args = ["calibrate", "--gpu", "h200", "--measurements", "validation/data/h200/gemm/m_sweep.jsonl", "--out", str(out),
            "--desync-sweeps", f"{d}1_64.jsonl.gz,{d}1_2240.jsonl.gz", f"{d}2_64.jsonl.gz,{d}2_2240.jsonl.gz"]
    assert main(args + ["--desync-nk", "4608x3584"]) == 0
    start = json.loads(out.read_text())["fit"]["desync_start"]
    assert start["layers"] == ["4608x3584"] and start["desync_rate"]["sweeps"] == 8
    with pytest.raises(SystemExit, match="--desync-nk: '4608' is not NxK"):
        main(args + ["--desync-nk", "4608"])
    with pytest.raises(SystemExit, match="give the sweep files too"):
        main(args[:7] + ["--desync-nk", "4608x3584"])


def test_fit_measures_the_desync_rate_on_m_sweeps():
    """The fit measures desync_rate and its contention exponent on the M sweeps among the records (the steps at
    later wave boundaries of 3+ CTAs/SM configs, whose SM loads differ) and recovers the pair that made them;
    without a sweep it keeps its start."""
    from tuner.space import WAVE_STUDY

    truth = GemmParams.from_dict({"desync_rate": 0.15, "desync_contention_exponent": 3.0})
    sweep = [c for c in WAVE_STUDY if config_occupancy(H200, c, "bf16")[0].ctas_per_sm >= 3]
    data = synthetic(truth, [(m, 4096, 4096) for m in range(64, 8193, 64)], sweep)
    params, report = fit(H200, build_dataset(H200, data), free=["l2_latency_cycles"], starts=1)
    assert "wave boundaries" in report["desync_rate"]["from"]
    assert params.desync_rate == pytest.approx(0.15, rel=0.1) and params.desync_rate == report["desync_rate"]["value"]
    assert params.desync_contention_exponent == pytest.approx(3.0, abs=0.3)
    assert params.desync_contention_exponent == report["desync_rate"]["exponent"]
    lock = synthetic(GemmParams.from_dict({"desync_rate": 0.0}), [(m, 4096, 4096) for m in range(64, 8193, 64)], sweep)
    assert fit(H200, build_dataset(H200, lock), free=["l2_latency_cycles"], starts=1)[0].desync_rate < 0.03
    # the rate at 2 CTAs/SM is measured on the 2-CTA configs' sweeps alone
    pairs = [c for c in WAVE_STUDY if config_occupancy(H200, c, "bf16")[0].ctas_per_sm == 2][:2]
    two = synthetic(GemmParams.from_dict({"desync_rate_two_ctas": 0.3}), [(m, 4096, 4096) for m in range(64, 8193, 64)],
                    pairs)
    params, report = fit(H200, build_dataset(H200, two), free=["l2_latency_cycles"], starts=1)
    assert params.desync_rate_two_ctas == pytest.approx(0.3, rel=0.05) and "wave boundaries" in \
        report["desync_rate_two_ctas"]["from"]
    assert params.desync_rate == GemmParams.priors().desync_rate     # no 3+ CTAs/SM sweep in these records
    few = synthetic(truth, [(m, 4096, 4096) for m in (256, 2048, 8192)], sweep)
    params, report = fit(H200, build_dataset(H200, few), free=["l2_latency_cycles"])
    assert params.desync_rate == GemmParams.priors().desync_rate and "no M sweep" in report["desync_rate"]["from"]


def test_more_starts_never_end_at_a_higher_loss():
    """fit keeps the lowest loss over its starts (the priors first), so more starts cannot do worse than one."""
    from tuner.space import WAVE_STUDY

    truth = GemmParams.from_dict({"l2_latency_cycles": 450.0, "mma_efficiency": 0.9})
    data = synthetic(truth, [(m, 4096, 4096) for m in (16, 256, 1024, 4096)], list(WAVE_STUDY[:6]))
    ds = build_dataset(H200, data)
    one = fit(H200, ds, free=["l2_latency_cycles", "mma_efficiency"], starts=1)[1]
    three = fit(H200, ds, free=["l2_latency_cycles", "mma_efficiency"], starts=3)[1]
    assert one["starts"] == 1 and three["starts"] == 3
    assert three["loss_end"] <= one["loss_end"] * (1 + 1e-9)


def test_the_start_desync_rates_are_measured_on_given_sweep_passes_and_kept_by_a_fit_without_sweeps():
    """desync_start measures desync_rate and its exponent on sweeps given as passes (the model's own steps made with
    known rates come back), a fit on records without a sweep keeps them, and files without a sweep are named."""
    from tuner.space import WAVE_STUDY
    from wavesim.calibration import desync_start

    truth = GemmParams.from_dict({"desync_rate": 0.15, "desync_contention_exponent": 3.0})
    sweep = [c for c in WAVE_STUDY if config_occupancy(H200, c, "bf16")[0].ctas_per_sm >= 3]
    one_pass = synthetic(truth, [(m, 4096, 4096) for m in range(64, 8193, 64)], sweep)
    start, report = desync_start(H200, [one_pass, one_pass], GemmParams.priors())
    assert start.desync_rate == pytest.approx(0.15, rel=0.1) and report["desync_rate"]["value"] == start.desync_rate
    assert start.desync_contention_exponent == pytest.approx(3.0, abs=0.3)
    assert "desync_rate_two_ctas" not in report and start.desync_rate_two_ctas == GemmParams.priors().desync_rate_two_ctas
    few = synthetic(truth, [(m, 4096, 4096) for m in (256, 2048, 8192)], sweep)
    params, fitted = fit(H200, build_dataset(H200, few), start=start, free=["l2_latency_cycles"], starts=1)
    assert params.desync_rate == pytest.approx(start.desync_rate, rel=0.1) and "no M sweep" in fitted["desync_rate"]["from"]
    with pytest.raises(ValueError, match="no M sweep"):
        desync_start(H200, [few], GemmParams.priors())
    # files holding several layers' sweeps: `layers` keeps only the named ones (here a layer swept with other rates)
    other = synthetic(GemmParams.from_dict({"desync_rate": 0.6, "desync_contention_exponent": 1.0}),
                      [(m, 2048, 8192) for m in range(64, 8193, 64)], sweep)
    both = [one_pass + other, one_pass + other]
    only = desync_start(H200, both, GemmParams.priors(), layers={(4096, 4096)})[0]
    assert only.desync_rate == pytest.approx(start.desync_rate, rel=1e-9)
    assert desync_start(H200, both, GemmParams.priors())[0].desync_rate != pytest.approx(start.desync_rate, rel=0.02)
    with pytest.raises(ValueError, match="no M sweep"):
        desync_start(H200, both, GemmParams.priors(), layers={(1024, 1024)})
