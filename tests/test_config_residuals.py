"""validation/config_residuals.py: the per-field mispricing it reports is the one put into the measurements."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import hwspecs
from validation import config_residuals
from validation.measurements import load_measurements
from wavesim.calibration import build_dataset, load_calibration, simulate_ms

BLIND = Path(__file__).resolve().parent.parent / "validation/data/h200/fresh19/blind_fresh19.jsonl"


def test_a_field_priced_off_by_a_factor_reads_that_factor():
    """Measured times replaced by the model's own, with 16-warp configs 1.25x slower: 16 warps read 0.80, the rest 1
    (the per-shape scale takes out what the 16-warp records move in their shape's median)."""
    spec, params = hwspecs.load_gpu("h200"), load_calibration("auto", "h200")
    ms = [m for m in load_measurements([str(BLIND)], gpu="h200") if m.ok and m.config is not None
          and m.problem.N % 16 == 0 and m.problem.K % 16 == 0][:400]
    ds = build_dataset(spec, ms, "bf16")
    sim = simulate_ms(ds, params)
    by_key = {(c.key, ds.shapes[int(s)]): t for c, s, t in zip(ds.configs, ds.shape_id, sim)}
    fake = [dataclasses.replace(m, ms=by_key[(m.config.key, (m.problem.M, m.problem.N, m.problem.K))]
                                * (1.25 if m.config.num_warps == 16 else 1.0)) for m in ms
            if (m.config.key, (m.problem.M, m.problem.N, m.problem.K)) in by_key]
    got = config_residuals.residuals(spec, fake, params, ["num_warps"])["num_warps"]
    med = {w: float(np.exp(np.median(x))) for w, x in got.items()}
    assert med[16] == pytest.approx(0.8, rel=1e-6) and len(med) >= 4
    assert all(v == pytest.approx(1.0, rel=1e-6) for w, v in med.items() if w != 16)


def test_an_unknown_field_is_refused(capsys):
    with pytest.raises(SystemExit):
        config_residuals.main([str(BLIND), "--by", "num_warp"])
    assert "unknown field(s) ['num_warp']" in capsys.readouterr().err
