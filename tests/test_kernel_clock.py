"""validation.kernel_clock: the in-kernel clock law is recovered from per-CTA traces, and bad input is named."""
import json
import math

import numpy as np
import pytest

from validation.kernel_clock import kernel_clock_law, main
from validation.trace import COLUMNS, trace_key

N, K = 4096, 2048


def _write_traces(path, law, launches):
    """A trace file whose CTAs run at the clock `law` gives for their launch's tensor rate: (intercept, slope), or
    (intercept, slope at 20 us, more per decade of span). launches: (config key, CTAs, CTA duration in ns); the CTAs
    of one launch start together, so the span is the duration."""
    arrays = {}
    for i, (cfg_key, ctas, dur_ns) in enumerate(launches):
        bm, bn, bk = (int(x) for x in cfg_key.split("_")[0].split("x"))
        pflops = 2.0 * bm * bn * bk * math.ceil(K / bk) * ctas / (dur_ns * 1e-9) / 1e15
        slope = law[1] + (law[2] * math.log10(dur_ns * 1e-9 / 20e-6) if len(law) > 2 else 0.0)
        mhz = law[0] - slope * pflops
        a = np.zeros((ctas, len(COLUMNS)), dtype=np.int64)
        a[:, 0] = np.arange(ctas) % 132
        a[:, 2] = dur_ns
        a[:, 3] = round(mhz * 1e6 * dur_ns * 1e-9)
        arrays[trace_key(cfg_key, 128 * (i + 1), 0)] = a
    np.savez(path, **arrays)
    path.with_suffix(".json").write_text(json.dumps({"N": N, "K": K, "columns": list(COLUMNS), "launches": {}}))


LAUNCHES = [("128x128x64_g8_w4_s3", 132, 40_000), ("128x128x64_g8_w4_s3", 264, 60_000), ("64x128x64_g8_w4_s3", 396, 50_000),
            ("128x256x64_g8_w8_s3", 132, 90_000), ("64x64x64_g8_w4_s4", 128, 20_000), ("128x64x32_g8_w4_s3", 528, 70_000),
            ("128x128x64_g1_w4_s3", 64, 30_000), ("64x128x64_g4_w4_s3", 792, 150_000), ("128x256x64_g8_w8_s3", 264, 200_000)]


def test_the_in_kernel_clock_law_is_recovered_from_traces(tmp_path):
    law = (1850.0, 400.0)
    path = tmp_path / "t.npz"
    _write_traces(path, law, LAUNCHES)
    r = kernel_clock_law([path])
    assert r["launches"] == len(LAUNCHES)
    assert [r["intercept_mhz"], r["mhz_per_pflops"]] == pytest.approx(law, rel=1e-3)
    assert r["r2"] == pytest.approx(1.0, abs=1e-4)
    assert r["files"]["t.npz"]["launches"] == len(LAUNCHES)


def test_a_slope_that_grows_with_the_launch_span_is_recovered_and_fits_better_than_one_slope(tmp_path):
    law = (1840.0, 220.0, 170.0)
    path = tmp_path / "t.npz"
    _write_traces(path, law, LAUNCHES)
    r = kernel_clock_law([path])
    b = r["by_span"]
    assert [b["intercept_mhz"], b["mhz_per_pflops_at_ref"], b["more_per_decade"]] == pytest.approx(law, rel=1e-3)
    assert b["rms_mhz"] < 0.01 < r["rms_mhz"]


def test_the_h200_clock_falls_further_per_pflops_the_longer_the_launch():
    """validation/data/h200/traces/*.npz: the slope grows with the span, and fits the launches better than one slope
    (session 30, 3148 launches: rms 53.4 against 59.0 MHz, 144 MHz per PFLOP/s more per decade of span; before its
    tails2 traces, 2677 launches: 54.7 against 61.7)."""
    from pathlib import Path

    traces = sorted((Path(__file__).resolve().parent.parent / "validation/data/h200/traces").glob("*.npz"))
    r = kernel_clock_law(traces)
    assert r["launches"] > 2000
    assert r["by_span"]["more_per_decade"] > 100
    assert r["by_span"]["rms_mhz"] < 0.95 * r["rms_mhz"]


def test_too_few_launches_or_a_missing_sidecar_is_named(tmp_path, capsys):
    few = tmp_path / "few.npz"
    _write_traces(few, (1850.0, 400.0), LAUNCHES[:3])
    assert main([str(few)]) == 2
    assert "too few to fit" in capsys.readouterr().err
    lone = tmp_path / "lone.npz"
    _write_traces(lone, (1850.0, 400.0), LAUNCHES)
    lone.with_suffix(".json").unlink()
    assert main([str(lone)]) == 2
    assert ".json sidecar" in capsys.readouterr().err
