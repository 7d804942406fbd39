"""Calibration of the GEMM model's free parameters (GemmParams) against measurements.

The loss is the weighted squared log error log(simulated / measured) over the training records,
with weights that favour each shape's fast configs: w = floor + exp(-log(t / t_best) / temperature).
(The GUIDE's lesson: an unweighted fit lets slow configs dominate and bends the near-optimal region,
which is the only region a tuner cares about.) Parameters are fitted in log space within bounds by
scipy's trust-region least squares; all records are one GemmBatch, so an evaluation is one numpy pass.

A calibration file is JSON: {"schema": 1, "kind": "wavetune-calibration", "gpu", "kernel", "dtype",
"params": {...}, "fit": {...how it was made: files, shapes, loss, figures}}. The shipped H200
calibration lives at wavesim/data/calibration/h200.json; `load_calibration("auto", gpu)` finds it.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Collection, Iterable, Sequence

import numpy as np

from hwspecs import GPUSpec
from wavesim.kernels.gemm import (DESYNC_LOAD_MIN_CTAS, DESYNC_RATE_FIELDS, GemmBatch, GemmParams, config_occupancy,
                                  desync_rate_field, simulate_batch, workload_arrays)
from wavetune.records import open_text

CALIBRATION_DIR = Path(__file__).resolve().parent / "data" / "calibration"
SCHEMA = 1

# Fitted by default: every parameter that no measurement pins directly. dram_efficiency is the probe's
# measured copy bandwidth over the datasheet (gemm_priors.toml), so it stays, and so does
# single_row_l2_fraction (measured directly by validation/single_row.py), l2_request_overhead_bytes (measured
# directly by validation/l2_requests.py), dram_queueing (measured by validation/dram_queueing.py from the memory
# probe), and desync_rate is measured by
# `fit` on the M sweeps' steps among its records (desync_rate_from_sweeps); load_slowdown is measured on
# per-CTA traces (validation.trace.load_slowdown_from_traces); l2_fit_fraction is a threshold (a step in
# the loss that least squares cannot follow); the unaligned kernel's costs are measured on shapes whose N or K is
# not a multiple of 16 (validation/unaligned.py), which calibration records do not hold; mma_v2_sm_efficiency is
# measured on the stages_warps study (validation/scripts/fit_mma_sync_sm_rate.py): the calibration's mma.sync tiles are
# bound by their fragment reads, which cannot tell it.
DEFAULT_FREE = ("mma_efficiency", "wgmma_n_half", "mma_v2_efficiency", "l2_bytes_per_clock_per_sm",
                "l2_latency_cycles", "dram_latency_cycles", "dram_segment_half_bytes", "k_step_overhead_cycles", "cta_overhead_cycles",
                "launch_overhead_s", "l2_port_ratio", "wgmma_k16_chain_cycles", "mma_v2_k16_chain_cycles",
                "mma_in_load_chain")

# (low, high) bounds of each parameter during fitting: physically plausible ranges, wide on purpose.
BOUNDS = {
    # above 1: hwspecs derives FLOP/clk/SM from the datasheet peak at the boost clock (3786 on H100/H200),
    # while the architecture does 4096 per clock (NVIDIA quotes the peak at 1830 MHz): up to 1.08x more.
    "mma_efficiency": (0.3, 1.25),
    "wgmma_n_half": (1.0, 256.0),
    "mma_v2_efficiency": (0.05, 1.0),
    "l2_bytes_per_clock_per_sm": (8.0, 256.0),
    "l2_latency_cycles": (50.0, 2000.0),
    "dram_latency_cycles": (100.0, 5000.0),
    "dram_queueing": (0.0, 1.0),
    "dram_efficiency": (0.3, 1.0),
    "dram_segment_half_bytes": (1.0, 1024.0),
    "k_step_overhead_cycles": (1.0, 2000.0),
    "wgmma_k16_chain_cycles": (1.0, 500.0),
    "mma_v2_k16_chain_cycles": (1.0, 500.0),
    "mma_in_load_chain": (0.01, 1.0),
    "cta_overhead_cycles": (10.0, 20000.0),
    "launch_overhead_s": (1e-7, 3e-5),
    "l2_fit_fraction": (0.05, 2.0),
    "l2_port_ratio": (1.0, 4.0),
    "single_row_l2_fraction": (0.01, 1.0),
    "l2_request_overhead_bytes": (1.0, 1024.0),
    "desync_rate": (0.01, 5.0),
    "desync_contention_exponent": (0.0, 6.0),
    "desync_rate_two_ctas": (0.01, 5.0),
    "load_slowdown": (0.0, 2.0),
    "unaligned_a_element_cycles": (0.0, 2000.0),
    "unaligned_b_element_cycles": (0.0, 20.0),
    "spill_word_cycles": (0.0, 2000.0),
    "tf32_b_element_cycles": (0.0, 20.0),
}


@dataclass(frozen=True)
class Dataset:
    """Measured records of one GPU/dtype as a model batch plus measured times and shape groups."""

    batch: GemmBatch
    ms: np.ndarray
    shape_id: np.ndarray          # records of the same (M, N, K) share an id
    shapes: list[tuple[int, int, int]]
    configs: list
    skipped: int                  # ok records whose config cannot launch per the model (kept out, counted)


def build_dataset(spec: GPUSpec, measurements: Iterable, dtype: str = "bf16",
                  keep: Callable[[tuple[int, int, int]], bool] | None = None) -> Dataset:
    """`measurements`: validation.measurements.Measurement objects (ok ones are used)."""
    rows, skipped = [], 0
    for m in measurements:
        if not m.ok or m.problem.dtype != dtype or m.config is None:
            continue
        shape = (m.problem.M, m.problem.N, m.problem.K)
        if keep is not None and not keep(shape):
            continue
        if config_occupancy(spec, m.config, dtype, m.problem.N, m.problem.K)[0].ctas_per_sm == 0:
            skipped += 1
            continue
        rows.append((shape, m.config, m.ms))
    if not rows:
        raise ValueError(f"no usable {dtype} measurements for {spec.id} (after filtering): nothing to calibrate on")
    shapes = sorted({r[0] for r in rows})
    index = {s: i for i, s in enumerate(shapes)}
    arr = np.array([r[0] for r in rows], dtype=np.float64)
    configs = [r[1] for r in rows]
    batch = GemmBatch.build(spec, dtype, arr[:, 0], arr[:, 1], arr[:, 2], configs)
    return Dataset(batch, np.array([r[2] for r in rows]), np.array([index[r[0]] for r in rows]), shapes, configs,
                   skipped)


def simulate_ms(ds: Dataset, params: GemmParams | None) -> np.ndarray:
    return simulate_batch(ds.batch, params).makespan_s * 1e3


def fast_end_weights(ds: Dataset, temperature: float = 0.15, floor: float = 0.05) -> np.ndarray:
    best = np.full(len(ds.shapes), np.inf)
    np.minimum.at(best, ds.shape_id, ds.ms)
    return floor + np.exp(-np.log(ds.ms / best[ds.shape_id]) / temperature)


FIT_STARTS = 4          # least-squares starts of `fit` (its docstring says why more than one)
MIN_SWEEP_POINTS = 32   # a config measured at this many M of one (N, K) is an M sweep
EXPONENT_GRID_STEP = 0.5  # desync_rate_from_sweeps' grid over desync_contention_exponent (then refined)


def desync_rate_from_sweeps(spec: GPUSpec, sweeps, params: GemmParams, dtype: str = "bf16",
                            field: str = "desync_rate", fit_exponent: bool = True) -> dict | None:
    """A de-synchronisation rate (wavesim/engine/desync.py; `field`: desync_rate, the one at 3+ CTAs/SM, or
    desync_rate_two_ctas) that best reproduces measured M sweeps' steps: a least squares of the model's log
    jumps against the measured ones (averaged over passes) at the wave boundaries after 1+ full waves of the
    configs whose occupancy uses that rate (the steps the rate softens; fitted on the whole later bands instead,
    where the hardware also ramps up within a band, it comes out about 3x larger and over-smooths the steps:
    N = K = 4096 sweep 0.66 against 0.19 with specs alone). For desync_rate, with `fit_exponent`, the rate and
    its growth with the SM's load (desync_contention_exponent, wavesim/kernels/gemm.py desync_rates) are fitted
    together: a grid over the exponent, the rate fitted at each; without it (one config: no spread of loads to
    tell them apart) the exponent stays params'.
    `sweeps`: [(config, N, K, Ms sorted and distinct, [measured times at Ms, one array per pass])]. Returns
    {"value", "exponent" (desync_rate only), "points", "sweeps"}; None when no sweep has such a band."""
    from dataclasses import replace

    from scipy.optimize import minimize_scalar

    Ms, Ns, Ks, cfgs, hw, pairs = [], [], [], [], [], []
    for cfg, N, K, ms, passes in sweeps:
        if desync_rate_field(config_occupancy(spec, cfg, dtype)[0].ctas_per_sm) != field:
            continue
        off = len(Ms)
        Ms += list(ms)
        Ns += [N] * len(ms)
        Ks += [K] * len(ms)
        cfgs += [cfg] * len(ms)
        logs = np.mean([np.log(np.asarray(p, dtype=np.float64)) for p in passes], axis=0)
        for i in range(1, len(ms)):
            pairs.append((off + i - 1, off + i))
            hw.append(logs[i] - logs[i - 1])
    if not pairs:
        return None
    batch = GemmBatch.build(spec, dtype, Ms, Ns, Ks, cfgs)
    later = np.array([batch.waves[j] >= 2 and batch.waves[j] == batch.waves[i] + 1 for i, j in pairs])
    if not later.any():
        return None
    a, b = np.array(pairs)[later].T
    hw = np.array(hw)[later]

    def best_rate(**fixed):
        def loss(rate):
            t = np.log(simulate_batch(batch, replace(params, **fixed, **{field: rate})).makespan_s)
            return float(np.sum((t[b] - t[a] - hw) ** 2))
        res = minimize_scalar(loss, bounds=(0.0, BOUNDS[field][1]), method="bounded", options={"xatol": 1e-3})
        return float(res.fun), float(res.x)

    out = {"points": int(later.sum()), "sweeps": len({(c, n, k) for c, n, k in zip(cfgs, Ns, Ks)})}
    if field != "desync_rate" or not fit_exponent:
        return {"value": best_rate()[1], **out}
    lo, hi = BOUNDS["desync_contention_exponent"]
    grid = np.arange(lo, hi + 1e-9, EXPONENT_GRID_STEP)
    fits = [best_rate(desync_contention_exponent=float(e)) for e in grid]
    i = int(np.argmin([f[0] for f in fits]))
    # refine between the grid's neighbours of the best point
    res = minimize_scalar(lambda e: best_rate(desync_contention_exponent=float(e))[0], method="bounded",
                          bounds=(grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]), options={"xatol": 1e-2})
    exponent = float(res.x) if res.fun < fits[i][0] else float(grid[i])
    return {"value": best_rate(desync_contention_exponent=exponent)[1], "exponent": exponent, **out}


def desync_start(spec: GPUSpec, passes: Sequence[Sequence], start: GemmParams, dtype: str = "bf16",
                 layers: Collection[tuple[int, int]] | None = None) -> tuple[GemmParams, dict]:
    """`start` with its de-synchronisation rates measured (desync_rate_from_sweeps) on the M sweeps of `passes` (one
    list of measurements per measured pass of the same sweeps), the model's other parameters as in `start`: what a
    calibration whose records hold no M sweep (a hold-out of the sweep layer) keeps. The priors' rates were measured
    so on the N = 4608 sweep under the model of their time (gemm_priors.toml); a change to the model's form shifts
    the SM loads and the steps they soften, so a calibration that judges such a change measures them again with it.
    `layers`: the (N, K) whose sweeps are used (None: every layer in the files). Returns (params, {field: {"value",
    "points", "sweeps"[, "exponent"]}}); a field with no band to measure on keeps start's."""
    from dataclasses import replace

    times: list[dict] = []
    for ms in passes:
        t: dict = {}
        for m in ms:
            if m.ok and m.problem.dtype == dtype and (layers is None or (m.problem.N, m.problem.K) in layers):
                t.setdefault((m.config, m.problem.N, m.problem.K), {})[m.problem.M] = m.ms
        times.append(t)
    sweeps = []
    for key, first in times[0].items():
        Ms = sorted(set(first).intersection(*(t.get(key, {}) for t in times[1:])))
        if len(Ms) >= MIN_SWEEP_POINTS:
            sweeps.append((*key, Ms, [[t[key][m] for m in Ms] for t in times]))
    if not sweeps:
        raise ValueError(f"no M sweep ({MIN_SWEEP_POINTS}+ values of M for one config and layer, in every one of the "
                         f"{len(passes)} pass(es)) to measure the de-synchronisation rates on; give the files of a "
                         "measured sweep, one per pass (e.g. validation/data/h200/holdout/m_sweep_holdout*.jsonl)")
    params, report = start, {}
    for field in DESYNC_RATE_FIELDS:
        measured = desync_rate_from_sweeps(spec, sweeps, params, dtype, field)
        if measured is None:
            continue
        extra = {"desync_contention_exponent": measured["exponent"]} if "exponent" in measured else {}
        params = replace(params, **{field: measured["value"]}, **extra)
        report[field] = measured
    return params, report


def load_shift(ds: Dataset, before: GemmParams, after: GemmParams) -> float:
    """How far a change of parameters moves the SM loads n x solo_frac of the records at 3+ CTAs/SM (the loads
    desync_rate is scaled by): the geometric median of load(before) / load(after); 1.0 without such records."""
    w0, w1 = workload_arrays(ds.batch, before), workload_arrays(ds.batch, after)
    sel = w0["slots_per_sm"] >= DESYNC_LOAD_MIN_CTAS
    if not sel.any():
        return 1.0
    return float(np.exp(np.median(np.log(w0["solo_frac"][sel] / w1["solo_frac"][sel]))))


def sweep_desync_rate(ds: Dataset, params: GemmParams, field: str = "desync_rate",
                      fit_exponent: bool = True) -> dict | None:
    """desync_rate_from_sweeps on the M sweeps among a dataset's records (>= MIN_SWEEP_POINTS M values of one
    config and (N, K))."""
    groups: dict[tuple, dict[float, float]] = {}
    for i, c in enumerate(ds.configs):
        groups.setdefault((c, ds.batch.N[i], ds.batch.K[i]), {})[ds.batch.M[i]] = ds.ms[i]
    sweeps = [(c, N, K, sorted(t), [[t[m] for m in sorted(t)]]) for (c, N, K), t in groups.items()
              if len(t) >= MIN_SWEEP_POINTS]
    return (desync_rate_from_sweeps(ds.batch.spec, sweeps, params, ds.batch.dtype, field, fit_exponent)
            if sweeps else None)


def fit(spec: GPUSpec, ds: Dataset, *, start: GemmParams | None = None, free: Sequence[str] | None = None,
        temperature: float = 0.15, floor: float = 0.05, prior_weight: float = 0.02,
        max_nfev: int = 400, starts: int = FIT_STARTS) -> tuple[GemmParams, dict]:
    """Fit the free parameters; returns (params, report).

    prior_weight adds prior_weight * sqrt(records) * log(value / prior) per parameter to the residuals
    (ridge in log space, anchored at `start`): a parameter moves far from its prior only when many records ask
    for it, which keeps fits on a few layers from trading physical sense for training error.
    starts: least squares from `start` and from starts - 1 seeded perturbations of it (x e^N(0, 0.3) per
    parameter), keeping the lowest loss. The model is piecewise smooth (max, min, wave counts) and has more
    than one basin: from the priors alone the H200 fit of the 2-CTA de-synchronisation change stopped at a
    loss of 37.2, from perturbed starts at 36.5."""
    from scipy.optimize import least_squares

    start = start or GemmParams.priors()
    names = list(free or DEFAULT_FREE)
    unknown = set(names) - set(BOUNDS)
    if unknown:
        raise ValueError(f"cannot fit {sorted(unknown)}: not a GemmParams field with bounds; known: {sorted(BOUNDS)}")
    base = start.to_dict()
    lo = np.log([BOUNDS[n][0] for n in names])
    hi = np.log([BOUNDS[n][1] for n in names])
    x0 = np.clip(np.log([base[n] for n in names]), lo + 1e-9, hi - 1e-9)
    sw = np.sqrt(fast_end_weights(ds, temperature, floor))
    log_meas = np.log(ds.ms)

    def params_of(x) -> GemmParams:
        return GemmParams(**{**base, **dict(zip(names, np.exp(x)))})

    x_prior = np.log([base[n] for n in names])
    ridge = prior_weight * math.sqrt(float(np.sum(sw ** 2)))

    def residuals(x):
        return np.concatenate([sw * (np.log(simulate_ms(ds, params_of(x))) - log_meas), ridge * (x - x_prior)])

    def solve(x):
        return least_squares(residuals, x, bounds=(lo, hi), x_scale=1.0, diff_step=1e-3, max_nfev=max_nfev)

    t0 = time.perf_counter()
    loss_start = float(np.sum(residuals(x0) ** 2))
    rng = np.random.default_rng(0)
    sols = [solve(x0)] + [solve(np.clip(x0 + rng.normal(0.0, 0.3, x0.size), lo + 1e-9, hi - 1e-9))
                          for _ in range(starts - 1)]
    nfev = sum(int(s.nfev) for s in sols)
    sol = min(sols, key=lambda s: s.cost)
    rates, measured_any = {}, False
    for field in DESYNC_RATE_FIELDS:
        rates[field] = {"value": base[field], "from": "start (no M sweep at that occupancy in the records)"}
        if field in names:
            continue
        # the full least squares hardly sees a rate (it moves a few points of a sweep): fit it on the
        # sweeps' jumps alone with the rest fixed, then refit the rest once with the rates
        measured = sweep_desync_rate(ds, params_of(sol.x), field, "desync_contention_exponent" not in names)
        if measured is not None:
            base[field], measured_any = measured["value"], True
            rates[field] = {"value": measured["value"], "from": f"{measured['points']} wave boundaries of "
                                                                f"{measured['sweeps']} swept configs in the records"}
            if "exponent" in measured:
                base["desync_contention_exponent"] = rates[field]["exponent"] = measured["exponent"]
        elif field == "desync_rate":
            # no sweep to measure it on: keep the start's rate per config. The rate multiplies the SM load
            # n x solo_frac, which the fit moves (H200: the fitted loads are ~0.6x the priors'), so the start's
            # rate at load 1 is rescaled by how far the records' loads moved.
            shift = load_shift(ds, start, params_of(sol.x))
            base[field] = start.desync_rate * shift ** start.desync_contention_exponent
            measured_any = shift != 1.0
            rates[field] = {"value": base[field], "from": f"start, rescaled to the fitted SM loads (x {shift:.3f} "
                                                          "** exponent; no M sweep at 3+ CTAs/SM in the records)"}
    if measured_any:
        sol = solve(sol.x)
        nfev += int(sol.nfev)
    params = params_of(sol.x)
    report = {"records": int(len(ds.ms)), "shapes": len(ds.shapes), "free": names, "temperature": temperature,
              "floor": floor, "starts": starts, "loss_start": loss_start, "loss_end": float(2 * sol.cost),
              "nfev": nfev, "seconds": round(time.perf_counter() - t0, 2), **rates,
              "skipped_records_config_cannot_launch": ds.skipped}
    return params, report


# --------------------------------------------------------------------------------------------- files
def save_calibration(path: str | Path, gpu: str, params: GemmParams, fit_info: dict, dtype: str = "bf16") -> None:
    doc = {"schema": SCHEMA, "kind": "wavetune-calibration", "gpu": gpu, "kernel": "gemm", "dtype": dtype,
           "params": params.to_dict(), "fit": fit_info}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")


def shipped_calibration_path(gpu: str) -> Path:
    return CALIBRATION_DIR / f"{gpu}.json"


def load_calibration(source: str | Path | None, gpu: str) -> GemmParams | None:
    """None/"none": specs alone (priors). "auto": the shipped calibration of `gpu` if there is one, else
    priors (None). A path: that file, which must be for `gpu`."""
    if source in (None, "none"):
        return None
    if source == "auto":
        p = shipped_calibration_path(gpu)
        if not p.exists():
            return None
    else:
        p = Path(source)
        if not p.exists():
            raise FileNotFoundError(f"calibration file {p} does not exist (make one with `wavetune calibrate`, "
                                    f"or use --calibration auto for the shipped one)")
    try:
        doc = json.loads(p.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{p}: not valid JSON ({e.msg} at line {e.lineno}); regenerate it with `wavetune calibrate`") from None
    if not isinstance(doc, dict) or doc.get("kind") != "wavetune-calibration":
        raise ValueError(f"{p}: not a wavetune calibration file (missing kind: wavetune-calibration)")
    if doc.get("schema") != SCHEMA:
        raise ValueError(f"{p}: calibration schema {doc.get('schema')!r} is not supported (this wavetune reads {SCHEMA})")
    if doc.get("gpu") != gpu:
        raise ValueError(f"{p}: calibration is for GPU {doc.get('gpu')!r}, not {gpu!r}; calibrate for {gpu} or drop --calibration")
    return GemmParams.from_dict(doc.get("params", {}), where=str(p))


def dataset_hash(paths: Iterable[str | Path]) -> str:
    """Of the files' contents (decompressed: a file gzip-compressed later keeps its hash)."""
    h = hashlib.sha256()
    for p in sorted(str(x) for x in paths):
        with open_text(p) as f:
            h.update(f.read().encode())
    return h.hexdigest()[:16]


def geomean(x) -> float:
    x = np.asarray(x, dtype=np.float64)
    return float(math.exp(np.mean(np.log(x)))) if x.size else float("nan")
