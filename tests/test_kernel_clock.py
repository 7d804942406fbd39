"""validation.kernel_clock: the in-kernel clock law is recovered from per-CTA traces, and bad input is named."""
import json
import math

import numpy as np
import pytest

from validation.kernel_clock import kernel_clock_law, main
from validation.trace import COLUMNS, trace_key

N, K = 4096, 2048


def _write_traces(path, law, launches):
    """A trace file whose CTAs run at the clock `law` gives for their launch's tensor rate. launches: (config key,
    CTAs, CTA duration in ns); the CTAs of one launch start together, so the span is the duration."""
    arrays = {}
    for i, (cfg_key, ctas, dur_ns) in enumerate(launches):
        bm, bn, bk = (int(x) for x in cfg_key.split("_")[0].split("x"))
        pflops = 2.0 * bm * bn * bk * math.ceil(K / bk) * ctas / (dur_ns * 1e-9) / 1e15
        mhz = law[0] - law[1] * pflops
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
