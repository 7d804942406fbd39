"""What the scripts that derive a GEMM model prior from measurement files share (validation/single_row.py,
validation/l2_requests.py, validation/unaligned.py, validation/tf32.py): the command line (`--gpu`, `--dtype`, the
files; a bad input exits 2 with the derivation's message, which says what to measure), loading the records, fitting
some costs with the rest of the model fixed, and scoring the simulator's picks."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Callable

import numpy as np

import hwspecs
from validation.measurements import Measurement, load_measurements
from validation.suite import geomean, kendall_tau, regret
from wavesim.kernels.gemm import GemmBatch, GemmParams, config_occupancy, simulate_batch
from wavetune.config import fastest


def load_records(gpu: str, paths: list[str | Path], dtype: str, where: Callable[[Measurement], bool] = lambda m: True,
                 what: str = "", hint: str = ""):
    """(batch, measured seconds, shapes, configs) of the records of `dtype` (and `where`) whose config launches on
    the kernel its shape gets (configs that cannot launch are skipped, as calibration does). None found: a
    ValueError that names `what` was looked for and `hint`, what measures it."""
    spec = hwspecs.load_gpu(gpu)
    keep = [m for m in load_measurements(paths, gpu=spec.id) if m.ok and m.config is not None
            and m.problem.dtype == dtype and where(m)
            and config_occupancy(spec, m.config, dtype, m.problem.N, m.problem.K)[0].ctas_per_sm > 0]
    if not keep:
        raise ValueError(f"no {dtype} records{what} for {spec.id} in {[str(p) for p in paths]}: measure some ({hint})")
    shapes = [(m.problem.M, m.problem.N, m.problem.K) for m in keep]
    configs = [m.config for m in keep]
    b = GemmBatch.build(spec, dtype, *(np.array([s[i] for s in shapes], dtype=np.float64) for i in range(3)), configs)
    return b, np.array([m.ms * 1e-3 for m in keep]), shapes, configs


def score(sim: np.ndarray, meas: np.ndarray, shapes: list, configs: list, sel: np.ndarray) -> dict:
    """Regret of the simulator's pick (geomean, worst), median Kendall tau and median |log error| over the
    shapes of the selected records."""
    regrets, taus, errs = [], [], []
    for s in sorted({shapes[i] for i in np.flatnonzero(sel)}):
        idx = [i for i in np.flatnonzero(sel) if shapes[i] == s]
        t, m = sim[idx], meas[idx]
        regrets.append(regret(m, fastest(t, [configs[i] for i in idx])))
        taus.append(kendall_tau(t, m))
        errs.append(float(np.median(np.abs(np.log(t / m)))))
    return {"shapes": len(regrets), "regret_geomean": geomean(regrets), "regret_worst": max(regrets),
            "tau_median": float(np.median(taus)), "log_err_median": float(np.median(errs))}


def fit_costs(b: GemmBatch, meas: np.ndarray, params: GemmParams, sel: np.ndarray,
              names: tuple[str, ...]) -> GemmParams:
    """`names` fitted on the selected records with the rest of `params` fixed: least squares of the log time ratio,
    soft L1 (the few configs that spill thousands of words, 70-140x slower, must not drive the fit)."""
    from scipy.optimize import least_squares

    from wavesim.calibration import BOUNDS

    lo, hi = np.array([BOUNDS[f][0] for f in names]), np.array([BOUNDS[f][1] for f in names])
    # from inside the bounds: at a bound (a prior of 0: not priced yet) the first step may not move
    x0 = np.clip([getattr(params, f) for f in names], lo + 1e-3 * (hi - lo), hi)

    def resid(x):
        p = replace(params, **dict(zip(names, x)))
        return np.log(simulate_batch(b, p).makespan_s[sel] / meas[sel])

    r = least_squares(resid, x0, bounds=(lo, hi), loss="soft_l1", f_scale=0.1)
    return replace(params, **dict(zip(names, r.x.tolist())))


def derivation_main(argv: list[str] | None, prog: str, doc: str, derive: Callable[[str, list[str], str], dict],
                    show: Callable[[dict], None]) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0])
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("measurements", nargs="+")
    a = ap.parse_args(argv)
    try:
        r = derive(a.gpu, a.measurements, a.dtype)
    except (ValueError, FileNotFoundError, hwspecs.UnknownGPUError) as e:
        ap.exit(2, f"error: {e}\n")
    show(r)
    return 0
