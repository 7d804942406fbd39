"""The validation suite: how closely the simulator's optima (and a tuner's choices) match measured ones.

    validate(gpu, measurement_paths, calibration="cv", table=None, folds=4, m_range=(1, 16384)) -> dict

Per shape (a measured (M, N, K) with at least `min_configs` ok Triton configs, M inside m_range):
  regret_sim      measured time of the simulator's argmin / measured best (1.0 = perfect pick)
  regret_table    the same for a DualTable's select() (if --table is given and the pick was measured)
  regret_repeat   the same for the best config of another measured pass (`repeat` files, >= min_configs of the
                  shape's configs in both): the floor that measurement noise sets for any selector
  tau             Kendall tau (scipy.stats.kendalltau, tau-b) between simulated and measured times
  top1            the measured best is the simulator's pick
  top5            the measured best is among the simulator's 5 fastest
  pick_in_top5    the simulator's pick is among the 5 measured fastest
  err_median      median |sim / meas - 1| over the shape's configs
  err_scaled      the same after one per-shape scale factor (geomean of meas / sim): shape of the curve
  speedup_default measured time of tuner.space.DEFAULT_CONFIG / measured time of the pick
  cublas_ratio    measured time of the pick / measured torch.matmul time (< 1: faster than cuBLAS)

Every figure is computed twice: with the calibrated simulator and with specs alone (GemmParams priors).

Calibration modes:
  "cv"      k-fold by (N, K) layer. The (N, K) groups of the evaluated shapes are ordered as in
            validation.shapesets.LLM_LAYERS (others after, sorted) and group j goes to fold j % folds, so
            with the 8 LLM layers and 4 folds fold i holds out layers i and i+4 (one Llama-3-8B layer, one
            70B-TP8 layer). Each fold fits wavesim.calibration.fit on every ok record whose (N, K) is not
            held out (M and K sweeps included) and scores only its held-out shapes.
  "auto"    the shipped calibration of the GPU; a path: that calibration file. Shapes whose (N, K) the file
            was fitted on (the (N, K) of its "fit" -> "measurement_files", less its "holdout_nk"; when those
            files cannot be read, everything not in holdout_nk) are flagged in_sample;
            aggregates are over the out-of-sample shapes when there are any, else over all of them with a
            warning that the figures are in-sample.
  None/"none"  specs only.

The staircase analysis (validation.staircase) runs on the M-sweep records found among the measurements.
In "cv" mode its calibrated curve uses the fold that held out the sweep's (N, K).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from wavetune.config import fastest

# M regimes of the report: small M is latency/bandwidth bound, large M is compute bound.
REGIMES = (("M<=64", 0, 64), ("64<M<=1024", 64, 1024), ("M>1024", 1024, math.inf))
# The shapes whose N and K are multiples of 16: the Triton specialization the model covers (a subset only when the
# measurements have others).
ALIGNED_SUBSET = "N,K%16==0"
# The issue-3 window (LLM GEMMs with M from 16 to 8192) gets its own aggregate.
WINDOW_16_8192 = (16, 8192)
TOP_K = 5
DECISION_REPS = 50


# ============================================================================ metric functions (pure)
def regret(meas: Sequence[float], pick: int) -> float:
    """Measured time of config `pick` over the measured best."""
    meas = np.asarray(meas, dtype=np.float64)
    return float(meas[pick] / meas.min())


def top_k_hits(sim: Sequence[float], meas: Sequence[float], k: int = TOP_K, pick: int | None = None) -> dict[str, bool]:
    """top1: measured best == sim's pick (default: its first smallest); topk: measured best among the sim's k
    fastest; pick_in_topk: the sim's pick among the k measured fastest. Ties in measured time count as hits."""
    sim = np.asarray(sim, dtype=np.float64)
    meas = np.asarray(meas, dtype=np.float64)
    pick = int(np.argmin(sim)) if pick is None else pick
    best_t = meas.min()
    sim_top = np.argsort(sim, kind="stable")[:k]
    meas_kth = np.sort(meas)[min(k, meas.size) - 1]
    return {"top1": bool(meas[pick] <= best_t), f"top{k}": bool(np.any(meas[sim_top] <= best_t)),
            f"pick_in_top{k}": bool(meas[pick] <= meas_kth)}


def kendall_tau(sim: Sequence[float], meas: Sequence[float]) -> float:
    from scipy.stats import kendalltau

    if len(sim) < 2:
        return float("nan")
    r = kendalltau(sim, meas)
    return float(getattr(r, "statistic", r[0]))


def scale_factor(sim: Sequence[float], meas: Sequence[float]) -> float:
    """The one factor s minimising the squared log error of s * sim against meas: geomean(meas / sim)."""
    r = np.asarray(meas, dtype=np.float64) / np.asarray(sim, dtype=np.float64)
    return float(np.exp(np.mean(np.log(r))))


def latency_errors(sim: Sequence[float], meas: Sequence[float]) -> tuple[float, float, float]:
    """(median |sim/meas - 1|, the same after one scale factor, the scale factor)."""
    sim = np.asarray(sim, dtype=np.float64)
    meas = np.asarray(meas, dtype=np.float64)
    s = scale_factor(sim, meas)
    return float(np.median(np.abs(sim / meas - 1))), float(np.median(np.abs(s * sim / meas - 1))), s


def geomean(x: Iterable[float]) -> float:
    a = np.asarray([v for v in x if v is not None and math.isfinite(v)], dtype=np.float64)
    return float(np.exp(np.mean(np.log(a)))) if a.size else float("nan")


def _median(x: Iterable[float]) -> float:
    a = np.asarray([v for v in x if v is not None and math.isfinite(v)], dtype=np.float64)
    return float(np.median(a)) if a.size else float("nan")


def _rate(x: Iterable[bool | None]) -> float:
    a = [bool(v) for v in x if v is not None]
    return float(np.mean(a)) if a else float("nan")


def regime_of(M: int) -> str:
    for name, lo, hi in REGIMES:
        if lo < M <= hi:
            return name
    return REGIMES[0][0]


def shape_metrics(sim: np.ndarray, meas: np.ndarray, default_idx: int | None = None,
                  cublas_ms: float | None = None, configs=None) -> dict[str, Any]:
    """All per-shape figures of one simulator variant (sim and meas over the same configs); the pick is the
    simulator's fastest, ties to the larger GROUP_M when the configs are given (wavetune.config.fastest)."""
    pick = fastest(sim, configs)
    err, err_scaled, scale = latency_errors(sim, meas)
    out = {"pick": pick, "regret": regret(meas, pick), "tau": kendall_tau(sim, meas),
           **top_k_hits(sim, meas, pick=pick),
           "err_median": err, "err_scaled": err_scaled, "scale": scale,
           "speedup_default": float(meas[default_idx] / meas[pick]) if default_idx is not None else None,
           "cublas_ratio": float(meas[pick] / cublas_ms) if cublas_ms else None}
    return out


def aggregate(rows: list[dict[str, Any]], variant: str) -> dict[str, Any]:
    """Geomean/worst regret, median tau, top-k rates, median errors, over rows[i][variant]."""
    vs = [r[variant] for r in rows]
    if not vs:
        return {"shapes": 0}
    return {"shapes": len(vs), "regret_geomean": geomean(v["regret"] for v in vs),
            "regret_worst": max(v["regret"] for v in vs), "regret_median": _median(v["regret"] for v in vs),
            "tau_median": _median(v["tau"] for v in vs), "top1_rate": _rate(v["top1"] for v in vs),
            f"top{TOP_K}_rate": _rate(v[f"top{TOP_K}"] for v in vs),
            f"pick_in_top{TOP_K}_rate": _rate(v[f"pick_in_top{TOP_K}"] for v in vs),
            "err_median": _median(v["err_median"] for v in vs), "err_scaled_median": _median(v["err_scaled"] for v in vs),
            "speedup_default_geomean": geomean(v["speedup_default"] for v in vs if v["speedup_default"]),
            "cublas_ratio_geomean": geomean(v["cublas_ratio"] for v in vs if v["cublas_ratio"]),
            "cublas_ratio_worst": max((v["cublas_ratio"] for v in vs if v["cublas_ratio"]), default=None)}


def pick_metrics(meas: np.ndarray, j: int | None, dflt: int | None, cub: float | None) -> dict[str, Any]:
    """Regret and friends of picking config j (None: a pick that was not measured at this shape)."""
    return {"regret": regret(meas, j) if j is not None else None,
            f"pick_in_top{TOP_K}": bool(meas[j] <= np.sort(meas)[min(TOP_K, meas.size) - 1]) if j is not None else None,
            "speedup_default": float(meas[dflt] / meas[j]) if j is not None and dflt is not None else None,
            "cublas_ratio": float(meas[j] / cub) if j is not None and cub else None}


def aggregate_picks(rows: list[dict[str, Any]], variant: str = "table") -> dict[str, Any]:
    """Aggregates of a variant that only picks (a table, another measured pass): no ranking, no times."""
    t = [r[variant] for r in rows if r.get(variant) and r[variant].get("regret") is not None]
    unmeasured = sum(1 for r in rows if r.get(variant) and r[variant].get("regret") is None)
    if not t:
        return {"shapes": 0, "picks_not_measured": unmeasured}
    return {"shapes": len(t), "picks_not_measured": unmeasured, "regret_geomean": geomean(v["regret"] for v in t),
            "regret_worst": max(v["regret"] for v in t), "regret_median": _median(v["regret"] for v in t),
            "top1_rate": _rate(v["regret"] <= 1.0 for v in t),
            f"pick_in_top{TOP_K}_rate": _rate(v[f"pick_in_top{TOP_K}"] for v in t),
            "speedup_default_geomean": geomean(v["speedup_default"] for v in t if v["speedup_default"]),
            "cublas_ratio_geomean": geomean(v["cublas_ratio"] for v in t if v["cublas_ratio"])}


# ============================================================================ folds
def layer_groups(nks: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """(N, K) groups in fold order: LLM_LAYERS order first, then any others sorted."""
    from validation.shapesets import LLM_LAYERS

    nks = set(nks)
    known = [(n, k) for _, n, k in LLM_LAYERS if (n, k) in nks]
    return known + sorted(nks - set(known))


def fold_of_groups(groups: Sequence[tuple[int, int]], folds: int) -> dict[tuple[int, int], int]:
    if folds < 2:
        raise ValueError(f"--folds {folds}: cross-validation needs at least 2 folds")
    if len(groups) < folds:
        raise ValueError(f"{len(groups)} (N, K) groups cannot make {folds} folds; use --folds {max(2, len(groups))} "
                         f"or give a calibration file")
    return {g: j % folds for j, g in enumerate(groups)}


def layer_names() -> dict[tuple[int, int], str]:
    from validation import shapesets

    layers = tuple(shapesets.LLM_LAYERS) + tuple(getattr(shapesets, "LLM_HOLDOUT_LAYERS", ()))
    return {(n, k): name for name, n, k in layers}


# ============================================================================ the suite
@dataclass
class _Data:
    spec: Any
    dtype: str
    triton: list          # Measurement, ok, triton backend, deduped
    cublas: dict          # (M, N, K) -> ms
    paths: list[str]


def _load(gpu: str, paths: Sequence[str | Path], dtype: str) -> _Data:
    import hwspecs
    from validation.measurements import dedupe_latest, load_measurements

    spec = hwspecs.load_gpu(gpu)
    allm = dedupe_latest(load_measurements(paths, gpu=spec.id, backend=None))
    tri = [m for m in allm if m.backend == "triton" and m.ok and m.problem.dtype == dtype and m.config is not None]
    cub = {(m.problem.M, m.problem.N, m.problem.K): m.ms for m in allm
           if m.backend == "cublas" and m.ok and m.problem.dtype == dtype}
    if not tri:
        raise ValueError(f"no ok {dtype} Triton measurements for {spec.id} in {list(map(str, paths))}")
    return _Data(spec, dtype, tri, cub, [str(p) for p in paths])


def _calibration_doc(calibration: str | Path, gpu: str) -> tuple[Path | None, dict]:
    from wavesim.calibration import shipped_calibration_path

    p = shipped_calibration_path(gpu) if calibration == "auto" else Path(calibration)
    if calibration == "auto" and not p.exists():
        return None, {}
    try:
        return p, json.loads(p.read_text())
    except (OSError, json.JSONDecodeError):
        return p, {}


def _fit_nk(files, gpu: str, dtype: str) -> set[tuple[int, int]] | None:
    """(N, K) of the ok Triton records in a calibration's measurement files; None if any is unreadable."""
    from validation.measurements import load_measurements

    if not files:
        return None
    try:
        ms = load_measurements(files, gpu=gpu)
    except (OSError, ValueError):
        return None
    return {(m.problem.N, m.problem.K) for m in ms if m.ok and m.problem.dtype == dtype}


def calibration_seen_nk(calibration: str | Path, gpu: str, dtype: str) -> set[tuple[int, int]] | None:
    """The (N, K) a calibration file was fitted on: those of its measurement files less its holdout_nk;
    None when the file does not say or its measurement files cannot be read."""
    _, doc = _calibration_doc(calibration, gpu)
    fit = doc.get("fit", {}) if isinstance(doc, dict) else {}
    nk = _fit_nk(fit.get("measurement_files"), gpu, dtype)
    if nk is None:
        return None
    return nk - {tuple(int(x) for x in s.split("x")) for s in fit.get("holdout_nk") or []}


def validate(gpu: str, measurement_paths: Sequence[str | Path], calibration: str | Path | None = "cv",
             table: str | Path | None = None, folds: int = 4, m_range: tuple[int, int] = (1, 16384),
             dtype: str = "bf16", min_configs: int = 20, staircase: bool = True,
             log: Callable[[str], None] | None = None,
             repeat: Sequence[str | Path] | None = None) -> dict[str, Any]:
    """Run the suite; returns a JSON-ready dict (see the module docstring). Private arrays for plots are
    under result["_points"] (records of the evaluated shapes: measured and simulated ms, shape index)."""
    from tuner.space import DEFAULT_CONFIG
    from wavesim.calibration import build_dataset, fit, load_calibration, simulate_ms
    from wavesim.kernels.gemm import TRITON_DIVISIBILITY, unaligned_strides

    log = log or (lambda s: None)
    t_start = time.perf_counter()
    data = _load(gpu, measurement_paths, dtype)
    spec = data.spec
    notes: list[str] = []
    # another measured pass of the same shapes and configs: its picks, scored on the main pass, are the noise floor
    repeat_ms: dict[tuple[int, int, int], dict] = {}
    for m in _load(gpu, repeat, dtype).triton if repeat else ():
        repeat_ms.setdefault((m.problem.M, m.problem.N, m.problem.K), {})[m.config] = m.ms

    # ---- evaluated shapes: enough configs, M in range
    count: dict[tuple[int, int, int], int] = {}
    for m in data.triton:
        s = (m.problem.M, m.problem.N, m.problem.K)
        count[s] = count.get(s, 0) + 1
    eval_shapes = {s for s, c in count.items() if c >= min_configs and m_range[0] <= s[0] <= m_range[1]}
    if not eval_shapes:
        raise ValueError(f"no shape has >= {min_configs} measured configs with M in {m_range}")
    ev = build_dataset(spec, data.triton, dtype, keep=lambda s: s in eval_shapes)
    if ev.skipped:
        notes.append(f"{ev.skipped} ok records of evaluated shapes have configs the model says cannot launch; "
                     "they are left out of the per-shape figures")
    sim_specs = simulate_ms(ev, None)

    # ---- calibrated predictions per record of `ev`
    cal_mode = "none" if calibration in (None, "none") else ("cv" if calibration == "cv" else "file")
    sim_cal = np.full(len(ev.ms), np.nan)
    in_sample = np.zeros(len(ev.shapes), dtype=bool)
    fold_of_shape = np.full(len(ev.shapes), -1)
    cal_info: dict[str, Any] = {"mode": cal_mode}
    fold_params: dict[int, Any] = {}
    groups = layer_groups({(n, k) for _, n, k in ev.shapes})
    if cal_mode == "cv":
        fmap = fold_of_groups(groups, folds)
        cal_info.update(folds=folds, fold_holdout={i: [f"{n}x{k}" for (n, k), f in fmap.items() if f == i]
                                                   for i in range(folds)}, fits=[])
        for i in range(folds):
            held = {g for g, f in fmap.items() if f == i}
            train = build_dataset(spec, data.triton, dtype, keep=lambda s, h=held: (s[1], s[2]) not in h)
            params, rep = fit(spec, train)
            fold_params[i] = params
            sid = np.array([fmap[(n, k)] == i for _, n, k in ev.shapes])
            rows = sid[ev.shape_id]
            sim_cal[rows] = simulate_ms(ev, params)[rows]
            fold_of_shape[sid] = i
            cal_info["fits"].append({"fold": i, "holdout_nk": sorted(f"{n}x{k}" for n, k in held),
                                     "train_records": rep["records"], "train_shapes": rep["shapes"],
                                     "seconds": rep["seconds"], "params": params.to_dict()})
            log(f"fold {i}: held out {sorted(held)}; fit on {rep['records']} records in {rep['seconds']} s")
        cal_info["fold_of_nk"] = {f"{n}x{k}": f for (n, k), f in fmap.items()}
    elif cal_mode == "file":
        params = load_calibration(calibration, spec.id)
        path, doc = _calibration_doc(calibration, spec.id)
        cal_info.update(path=str(path) if path else None)
        if params is None:
            notes.append(f"no shipped calibration for {spec.id}: the 'calibrated' figures are specs-only")
            in_sample[:] = False
        else:
            fitinfo = doc.get("fit", {}) if isinstance(doc, dict) else {}
            holdout = fitinfo.get("holdout_nk")
            files = fitinfo.get("measurement_files")
            cal_info.update(fit_files=files, holdout_nk=holdout)
            seen = calibration_seen_nk(calibration, spec.id, dtype)
            if seen is not None:
                in_sample[:] = [(n, k) in seen for _, n, k in ev.shapes]
                cal_info["fit_nk"] = sorted(f"{n}x{k}" for n, k in seen)
            elif holdout is None:
                notes.append("the calibration file does not say which shapes it was fitted on; all shapes are "
                             "treated as in-sample")
                in_sample[:] = True
            else:
                notes.append("the calibration's measurement files cannot be read: every shape not in its "
                             "holdout_nk is treated as in-sample")
                ho = {tuple(int(x) for x in s.split("x")) for s in holdout}
                in_sample[:] = [(n, k) not in ho for _, n, k in ev.shapes]
        sim_cal[:] = simulate_ms(ev, params)
        fold_params[0] = params
    else:
        sim_cal[:] = sim_specs

    # ---- tuner table
    tbl = None
    table_nk: set = set()
    table_info: dict[str, Any] | None = None
    if table is not None:
        try:
            from tuner.table import DualTable
        except ImportError as e:  # the tuner package is written concurrently; the suite works without it
            notes.append(f"--table given but tuner.table cannot be imported ({e}); the table column is skipped")
        else:
            tbl = DualTable.load(table)
            table_nk = {tuple(nk) for nk in (tbl.domain or {}).get("NK", [])}
            table_info = {"path": str(table), "gpu": tbl.gpu, "source": tbl.source,
                          "domain_nk": sorted(f"{n}x{k}" for n, k in table_nk)}
            if tbl.gpu != spec.id:
                notes.append(f"table is for GPU {tbl.gpu!r}, suite runs on {spec.id!r}")
            overlap = {(n, k) for _, n, k in ev.shapes} & table_nk
            if overlap:
                notes.append(f"the table was fitted on shapes with {len(overlap)} of the evaluated (N, K) "
                             f"(its domain): its regret on those shapes is IN-SAMPLE (fit quality, not "
                             f"generalisation; tuner/evaluate.py scores tables k-fold)")

    # ---- per shape
    names = layer_names()
    default = DEFAULT_CONFIG
    rows_out: list[dict[str, Any]] = []
    order = np.argsort(ev.shape_id, kind="stable")
    bounds = np.searchsorted(ev.shape_id[order], np.arange(len(ev.shapes) + 1))
    for si, (M, N, K) in enumerate(ev.shapes):
        idx = order[bounds[si]:bounds[si + 1]]
        meas = ev.ms[idx]
        cfgs = [ev.configs[j] for j in idx]
        dflt = next((j for j, c in enumerate(cfgs) if c == default), None)
        cub = data.cublas.get((M, N, K))
        best = int(np.argmin(meas))
        row = {"M": M, "N": N, "K": K, "layer": names.get((N, K), f"{N}x{K}"), "regime": regime_of(M),
               "configs": int(len(idx)), "fold": int(fold_of_shape[si]), "in_sample": bool(in_sample[si]),
               "best_config": cfgs[best].key, "best_ms": float(meas[best]), "cublas_ms": cub,
               "default_ms": float(meas[dflt]) if dflt is not None else None,
               "best_cublas_ratio": float(meas[best] / cub) if cub else None}
        for name, sim in (("calibrated", sim_cal[idx]), ("specs", sim_specs[idx])):
            met = shape_metrics(sim, meas, dflt, cub, cfgs)
            met["pick_config"] = cfgs[met.pop("pick")].key
            row[name] = met
        if tbl is not None:
            from wavetune.config import GemmProblem

            prob = GemmProblem(M, N, K, dtype)
            pick = tbl.select(prob)
            dts = []
            for _ in range(DECISION_REPS):  # median of repeated calls: one cold call measures the cache, not select
                t0 = time.perf_counter_ns()
                tbl.select(prob)
                dts.append(time.perf_counter_ns() - t0)
            dt_us = float(np.median(dts)) / 1e3
            j = next((j for j, c in enumerate(cfgs) if c == pick), None)
            row["table"] = {"pick_config": pick.key, "decision_us": dt_us, "in_table_domain": (N, K) in table_nk,
                            **pick_metrics(meas, j, dflt, cub)}
        other = repeat_ms.get((M, N, K), {})
        both = [j for j, c in enumerate(cfgs) if c in other]
        if len(both) >= min_configs:  # the measurement-noise floor: pick by another pass, score on this one
            j = min(both, key=lambda j: other[cfgs[j]])
            row["repeat"] = {"pick_config": cfgs[j].key, "configs": len(both), **pick_metrics(meas, j, dflt, cub)}
        rows_out.append(row)

    # ---- aggregates
    scored = [r for r in rows_out if not r["in_sample"]]
    if cal_mode == "file" and not scored:
        notes.append("every evaluated shape was used to fit the calibration: calibrated figures are IN-SAMPLE")
        scored = rows_out
    lo16, hi16 = WINDOW_16_8192
    subsets = {"all": scored, f"M{lo16}-{hi16}": [r for r in scored if lo16 <= r["M"] <= hi16]}
    for name, lo, hi in REGIMES:
        subsets[name] = [r for r in scored if lo < r["M"] <= hi]
    unaligned = sorted({r["layer"] for r in scored if unaligned_strides(r["N"], r["K"])})
    if unaligned:
        subsets[ALIGNED_SUBSET] = [r for r in scored if not unaligned_strides(r["N"], r["K"])]
        notes.append(f"layers {unaligned} have N or K not a multiple of {TRITON_DIVISIBILITY}: Triton compiles them with "
                     f"2-byte unpipelined loads, another kernel that the model prices more coarsely "
                     f"(wavesim.kernels.gemm.alignment_note); the '{ALIGNED_SUBSET}' rows aggregate the other shapes")
    agg = {sub: {"calibrated": aggregate(rs, "calibrated"), "specs": aggregate(rs, "specs"),
                 **({"table": aggregate_picks(rs, "table")} if tbl is not None else {}),
                 **({"repeat": aggregate_picks(rs, "repeat")} if repeat_ms else {})} for sub, rs in subsets.items()}
    agg["all"]["best_measured_cublas_ratio_geomean"] = geomean(r["best_cublas_ratio"] for r in scored
                                                                if r["best_cublas_ratio"])
    if tbl is not None:
        dts = sorted(r["table"]["decision_us"] for r in rows_out)
        agg["all"]["table"]["decision_us_median"] = dts[len(dts) // 2]

    result: dict[str, Any] = {
        "gpu": spec.id, "dtype": dtype, "measurement_files": data.paths,
        "repeat_files": [str(p) for p in repeat] if repeat else [], "m_range": list(m_range),
        "min_configs": min_configs, "calibration": cal_info, "table": table_info, "notes": notes,
        "evaluated_shapes": len(rows_out), "scored_shapes": len(scored), "aggregates": agg, "shapes": rows_out,
    }

    # ---- staircase (M sweep records among the measurements)
    if staircase:
        from validation.staircase import find_sweeps, staircase_analysis

        sweeps = find_sweeps(data.triton)
        if sweeps:
            n, k = sweeps[0]
            params, label = None, "none"
            if cal_mode == "cv":
                f = cal_info["fold_of_nk"].get(f"{n}x{k}")
                if f is None:  # the sweep's layer was not among the evaluated groups: hold it out alone
                    train = build_dataset(spec, data.triton, dtype, keep=lambda s: (s[1], s[2]) != (n, k))
                    params = fit(spec, train)[0]
                    label = f"fit without N={n}, K={k}"
                else:
                    params, label = fold_params[f], f"fold {f} (held out N={n}, K={k})"
            elif cal_mode == "file":
                params, label = fold_params.get(0), f"calibration file {cal_info.get('path')}"
            result["staircase"] = staircase_analysis(spec, data.triton, n, k, params, dtype=dtype,
                                                     calibration_label=label)
        else:
            result["staircase"] = None
            notes.append("no M sweep among the measurements (one (N, K), one config, >= 8 M values): no staircase")

    result["seconds"] = round(time.perf_counter() - t_start, 1)
    result["_points"] = {"meas": ev.ms, "sim_cal": sim_cal, "sim_specs": sim_specs,
                         "in_sample": in_sample[ev.shape_id], "M": ev.batch.M}
    return result


def to_json(result: dict[str, Any]) -> dict[str, Any]:
    """The result without private arrays, with non-finite floats as null."""

    def clean(x):
        if isinstance(x, dict):
            return {str(k): clean(v) for k, v in x.items() if not str(k).startswith("_")}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        if isinstance(x, (np.floating, float)):
            return float(x) if math.isfinite(x) else None
        if isinstance(x, (np.integer,)):
            return int(x)
        if isinstance(x, np.bool_):
            return bool(x)
        return x

    return clean(result)
