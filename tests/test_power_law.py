"""validation.power_law: the clock law at the power cap is recovered from probe records, and bad input is named."""
import json

import numpy as np
import pytest

from validation.power_law import fit_power_law, main


def _probe_records(law):
    """Capped probe records whose clock follows `law` exactly, at the rates the simulator counts (priors)."""
    from hwspecs import load_gpu
    from wavesim.kernels.gemm import GemmBatch, GemmParams, workload_arrays
    from wavetune.config import LaunchConfig

    spec = load_gpu("h200")
    cfgs = [LaunchConfig(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=w, num_stages=s)
            for bm, bn, bk, w, s in ((128, 256, 64, 8, 3), (128, 128, 64, 4, 3), (64, 128, 64, 4, 4), (128, 64, 32, 4, 3))]
    shapes = [(4096, 8192, 3584), (16384, 7168, 8192), (8192, 12288, 64)]
    rng = np.random.default_rng(0)
    pairs = [(s, c) for s in shapes for c in cfgs]
    b = GemmBatch.build(spec, "bf16", [s[0] for s, _ in pairs], [s[1] for s, _ in pairs], [s[2] for s, _ in pairs],
                        [c for _, c in pairs])
    w = workload_arrays(b, GemmParams.priors())
    recs = []
    for i, ((M, N, K), c) in enumerate(pairs):
        flops = 2.0 * b.bm[i] * b.bn[i] * b.bk[i] * b.k_steps[i] * w["grid"][i]
        sec = float(flops / (rng.uniform(0.4, 0.7) * 1e15))   # 400-700 TFLOP/s: heavy enough to sit at the cap
        pf = flops / sec / 1e15
        l2 = w["l2_bytes"][i] * w["grid"][i] / sec / 1e15
        dr = w["dram_bytes"][i] * w["grid"][i] / sec / 1e15
        mhz = law[0] - law[1] * pf - law[2] * l2 - law[3] * dr
        recs.append({"schema": 1, "kind": "power_probe", "gpu": "h200", "dtype": "bf16", "M": M, "N": N, "K": K,
                     "config": c.to_dict(), "seed": 0, "status": "ok", "ms": sec * 1e3, "sm_mhz": mhz,
                     "power_w": 690.0, "reasons": 4})
    return recs


def test_the_clock_law_at_the_power_cap_is_recovered_from_capped_probe_records(tmp_path):
    law = (2300.0, 700.0, 30000.0, 50000.0)
    recs = _probe_records(law)
    # records that are not at the cap (no 0x4 reason, or light M) must not enter the fit
    recs.append({**recs[0], "reasons": 0, "sm_mhz": 100.0})
    recs.append({**recs[1], "M": 256, "sm_mhz": 100.0})
    recs.append({**recs[2], "status": "error", "ms": None})
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    r = fit_power_law("h200", [path], calibration=None)
    assert r["records"] == 12
    assert [r["intercept_mhz"], r["mhz_per_pflops"], r["mhz_per_l2_pbs"], r["mhz_per_dram_pbs"]] == pytest.approx(law, rel=1e-6)
    assert r["r2"] == pytest.approx(1.0)


def test_a_file_that_is_not_the_probes_or_has_too_few_capped_launches_is_named(tmp_path, capsys):
    bad = tmp_path / "m.jsonl"
    bad.write_text(json.dumps({"kind": "gemm", "M": 4096}) + "\n")
    assert main([str(bad), "--calibration", "none"]) == 2
    assert "not a power_probe record" in capsys.readouterr().err
    few = tmp_path / "few.jsonl"
    few.write_text("".join(json.dumps(r) + "\n" for r in _probe_records((2300.0, 700.0, 3e4, 5e4))[:3]))
    assert main([str(few), "--calibration", "none"]) == 2
    assert "too few to fit" in capsys.readouterr().err
