"""The SM-wide mma.sync rate (GemmParams.mma_v2_sm_efficiency) from the stages_warps study (no GPU): the value at which
the study's mma.sync configs sit where its wgmma configs do, shape by shape (the median over mma.sync records of
log(simulated / measured) minus the median over the same shape's wgmma records is 0), at M >= 1024 where co-resident
CTAs fill the SMs, two and three stages (one stage is its own question: the loop's load rounds). Bisection on the
shipped calibration's other parameters.

    python3 validation/scripts/fit_mma_sync_sm_rate.py
"""
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

import hwspecs  # noqa: E402
from validation.measurements import dedupe_latest, load_measurements  # noqa: E402
from wavesim.calibration import build_dataset, load_calibration, simulate_ms  # noqa: E402
from wavesim.kernels.gemm import uses_wgmma  # noqa: E402

STUDY = Path(__file__).resolve().parents[1] / "data" / "h200" / "stages_warps"
MIN_M = 1024


def offset(ds, params, wgmma: np.ndarray) -> float:
    """Median over mma.sync records of log(sim / measured) minus their shape's wgmma median."""
    r = np.log(simulate_ms(ds, params) / ds.ms)
    out = []
    for sid in np.unique(ds.shape_id):
        sel = ds.shape_id == sid
        out.extend(r[sel & ~wgmma] - np.median(r[sel & wgmma]))
    return float(np.median(out))


def main() -> int:
    spec = hwspecs.load_gpu("h200")
    params = load_calibration("auto", spec.id)
    records = [m for f in ("stages_warps.jsonl.gz", "stages_warps_repeat.jsonl.gz")
               for m in dedupe_latest(load_measurements([STUDY / f], gpu=spec.id))]
    ds = build_dataset(spec, [m for m in records if m.config is None or m.config.num_stages > 1], "bf16",
                       keep=lambda s: s[0] >= MIN_M)
    wgmma = np.array([uses_wgmma(spec, c) for c in ds.configs])
    lo, hi = 0.2, 1.0
    for _ in range(30):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if offset(ds, replace(params, mma_v2_sm_efficiency=mid), wgmma) > 0 else (lo, mid)
    print(f"mma_v2_sm_efficiency {lo:.3f} ({int((~wgmma).sum())} mma.sync and {int(wgmma.sum())} wgmma records, "
          f"M >= {MIN_M}, 2-3 stages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
