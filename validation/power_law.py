"""The SM clock a GEMM launch runs at under the board power cap, from the power probe's records (no GPU needed).

    python3 -m validation.power_law validation/data/h200/power/power_probe.jsonl \
        validation/data/h200/power/power_probe_broad.jsonl validation/data/h200/power/power_probe_light.jsonl

Held back to back (validation/power_probe.py), a launch that moves more work per second draws more power, and once the
board sits at its cap the power management lowers the clock until it fits. Least squares over the capped records
(NVML reason 0x4, M >= 1024, clock below the boost clock less one 15 MHz step) of

    clock_MHz = intercept - a x PFLOP/s - b x PB/s through L2 - c x PB/s from DRAM

with the rates of each launch as the simulator counts its work (tensor FLOPs of its tiles, the L2-to-SM bytes of its
K steps, its DRAM bytes; wavesim.kernels.gemm.workload_arrays with the shipped calibration) over the measured time.
On the H200's three session-20 probe files (power_probe, power_probe_broad, power_probe_light): 179 launches,
clock = 2245 MHz - 698 per PFLOP/s - 32,215 per PB/s through L2 - 51,461 per PB/s from DRAM, R^2 0.70. The simulator
does not use it yet (a launch clock built on it was tried and not shipped: NOTES.md, session 21).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

POWER_CAP_REASON = 0x4        # NVML clocks-event reason: software power cap
CLOCK_STEP_MHZ = 15           # NVML reports the H200's SM clock in steps of ~7.5-15 MHz
MIN_M = 1024                  # lighter launches stay below the cap (power_probe_light.jsonl)


def fit_power_law(gpu: str, paths: list[str | Path], calibration: str | None = "auto") -> dict:
    from hwspecs import load_gpu
    from wavesim.calibration import load_calibration
    from wavesim.kernels.gemm import GemmBatch, GemmParams, workload_arrays
    from wavetune.config import LaunchConfig
    from wavetune.records import read_jsonl_file

    spec = load_gpu(gpu)
    params = load_calibration(calibration, gpu) or GemmParams.priors()
    rows = []
    for path in paths:
        for i, r in enumerate(read_jsonl_file(path)):
            if r.get("kind") != "power_probe":
                raise ValueError(f"{path}:{i + 1}: not a power_probe record (validation/power_probe.py writes them)")
            if r.get("status") != "ok" or not r["reasons"] & POWER_CAP_REASON or r["M"] < MIN_M:
                continue
            if r["sm_mhz"] > spec.boost_clock_hz / 1e6 - CLOCK_STEP_MHZ:
                continue
            rows.append(r)
    if len(rows) < 8:
        raise ValueError(f"{len(rows)} capped records in {[str(p) for p in paths]}: too few to fit a clock law")
    b = GemmBatch.build(spec, rows[0]["dtype"], [r["M"] for r in rows], [r["N"] for r in rows], [r["K"] for r in rows],
                        [LaunchConfig.from_dict(r["config"]) for r in rows])
    w = workload_arrays(b, params)
    seconds = np.array([r["ms"] for r in rows]) * 1e-3
    flops = 2.0 * b.bm * b.bn * b.bk * b.k_steps * w["grid"]
    X = np.column_stack([np.ones(len(rows)), flops / seconds / 1e15, w["l2_bytes"] * w["grid"] / seconds / 1e15,
                         w["dram_bytes"] * w["grid"] / seconds / 1e15])
    y = np.array([r["sm_mhz"] for r in rows], dtype=np.float64)
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ coef
    return {"records": len(rows), "intercept_mhz": float(coef[0]), "mhz_per_pflops": float(-coef[1]),
            "mhz_per_l2_pbs": float(-coef[2]), "mhz_per_dram_pbs": float(-coef[3]),
            "r2": float(1.0 - np.sum(resid ** 2) / np.sum((y - y.mean()) ** 2)),
            "rms_mhz": float(np.sqrt(np.mean(resid ** 2)))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("probe_files", nargs="+")
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--calibration", default="auto", help="'auto' (the shipped one), a calibration JSON, or 'none'")
    a = ap.parse_args(argv)
    try:
        r = fit_power_law(a.gpu, a.probe_files, None if a.calibration == "none" else a.calibration)
    except (ValueError, OSError) as e:
        print(f"validation.power_law: {e}", file=sys.stderr)
        return 2
    print(f"{r['records']} capped launches: clock = {r['intercept_mhz']:.0f} MHz - {r['mhz_per_pflops']:.0f} per "
          f"PFLOP/s - {r['mhz_per_l2_pbs']:.0f} per PB/s through L2 - {r['mhz_per_dram_pbs']:.0f} per PB/s from DRAM "
          f"(R^2 {r['r2']:.2f}, rms {r['rms_mhz']:.0f} MHz)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
