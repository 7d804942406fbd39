"""Build a DualTable: sample anchors per macro by wave structure, time them through a source, fit the
WaveModel on each macro's latency envelope (best micro per anchor), and fill the micro table.

One code path for both sources (tuner.sources): the simulator, or measurements (with the simulator as the
structural prior, corrected by the measured points the sampler snapped to).
"""

from __future__ import annotations

import math
import time
from typing import Iterable

import numpy as np

from hwspecs import GPUSpec
from wavetune.config import TIE_RTOL, GemmProblem, LaunchConfig, fastest

from .mapping import SIMULATED_BELOW_M, MacroGroup, band_of, group_space
from .model import WaveModel
from .sampling import GENERIC_DOMAIN, Domain, anchors_for_group, m1_anchors, snap_to_measured
from .sources import MeasurementSource, SimSource
from .table import N_L_BUCKETS, DualTable, MacroEntry, l_bucket, space_hash

MISSING_PENALTY = math.log(10.0)
MEASURED_WEIGHT = 1.0        # weight of measured anchors in the WaveModel fit, relative to prior (simulated) ones
MICRO_FROM_MEASURED = False  # stage II cells from measured anchors only  # a micro config with no value at an anchor counts as 10x slower


def triton_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("triton")
    except Exception:  # noqa: BLE001 - not installed is fine: the table just records None
        return None


def _micro_table(groups_w: np.ndarray, groups_b: np.ndarray, logreg: np.ndarray, w_tab: int,
                 micros=None) -> list[list[int]]:
    """Per (w, L bucket) cell the micro with the lowest mean log-regret over the cell's anchors (equal scores: the
    larger GROUP_M, then the first: wavetune.config.fastest; exact ties only, since a cell's mean over its anchors is
    no single simulated time that the 2% GROUP_M sibling tie is about); empty cells take the nearest filled cell (in
    |w - w'| / w + |b - b'|, ties to the smaller w then b)."""
    n_micro = logreg.shape[1]
    filled: dict[tuple[int, int], int] = {}
    for key in sorted(set(zip(groups_w.tolist(), groups_b.tolist()))):
        sel = (groups_w == key[0]) & (groups_b == key[1])
        filled[key] = fastest(np.exp(logreg[sel].mean(axis=0)), micros, TIE_RTOL)   # exp keeps the log-regrets' order
    # the overall best micro as the fallback for a macro with no anchors at all
    overall = fastest(np.exp(logreg.mean(axis=0)), micros, TIE_RTOL) if len(logreg) else 0
    keys = sorted(filled)
    out = []
    for w in range(1, w_tab + 1):
        row = []
        for b in range(N_L_BUCKETS):
            if (w, b) in filled:
                row.append(filled[(w, b)])
            elif keys:
                k = min(keys, key=lambda k: (abs(k[0] - w) / max(w, k[0]) + abs(k[1] - b), k))
                row.append(filled[k])
            else:
                row.append(overall)
        out.append(row)
    assert all(0 <= j < n_micro for r in out for j in r)
    return out


def build_table(configs: Iterable[LaunchConfig], source, spec: GPUSpec, *, gpu_id: str, kernel: str = "gemm",
                dtype: str = "bf16", domain: Domain | None = None, form: str = "per-wave",
                model_params: dict | None = None, measured_budget: int | None = None, measured_problems: list[GemmProblem] | None = None,
                fallback: bool = True) -> DualTable:
    """Fit a DualTable. For a MeasurementSource, `measured_problems` are the training shapes (default: all
    measured shapes of the source); the domain defaults to those shapes, else to GENERIC_DOMAIN. With a
    simulator prior and `fallback`, the table also gets fallback macros fitted on the simulator alone over
    GENERIC_DOMAIN, which serve the (N, K) layers that were not measured: k-fold by layer 1.037 against
    1.046 without them, never-fitted layers 1.037 against 1.033 (tuner/README.md)."""
    if kernel != "gemm":
        raise ValueError(f"kernel {kernel!r}: only 'gemm' has a kernel model so far")
    t0 = time.perf_counter()
    configs = list(dict.fromkeys(configs))
    if not configs:
        raise ValueError("no candidate configs")
    groups, unfit = group_space(configs, spec, dtype)
    if not groups:
        raise ValueError(f"none of the {len(configs)} configs can launch on {spec.name}")
    is_meas = isinstance(source, MeasurementSource)
    if is_meas:
        measured_problems = sorted(measured_problems if measured_problems is not None else source.measured_problems())
        if domain is None:
            domain = Domain.of_problems(measured_problems, dtype)
    domain = domain or GENERIC_DOMAIN
    entries: dict[str, list[MacroEntry]] = {"default": [], "m1": []}
    n_anchor_problems = 0
    # M == 1 is its own regime (Triton specializes it; the GEMM model has its same-row cost), so it
    # gets its own macro entries from either source rather than bending the default regime's fit.
    for regime in ("default", "m1"):
        if is_meas:
            # 1 < M < SIMULATED_BELOW_M is served by the simulator (DualTable.select_mnk): no anchor of either regime
            pool = [p for p in measured_problems if (p.M == 1) == (regime == "m1") and not 1 < p.M < SIMULATED_BELOW_M]
        for g in groups:
            anchors = anchors_for_group(g, domain) if regime == "default" else m1_anchors(domain)
            if is_meas:
                snapped = snap_to_measured(anchors, g, pool, measured_budget)
                source.use(snapped, g.configs)
                anchors = list(dict.fromkeys(snapped + anchors)) if source.prior is not None else snapped
            entries[regime].append(_fit_group(g, anchors, source, form, model_params or {}))
            n_anchor_problems += len(anchors)
    entries["fallback"] = []
    if is_meas and fallback and source.prior is not None:
        for g in groups:
            anchors = anchors_for_group(g, GENERIC_DOMAIN)
            entries["fallback"].append(_fit_group(g, anchors, source.prior, form, model_params or {}))
            n_anchor_problems += len(anchors)
    points = source.points_used
    exhaustive = domain.size() * sum(len(g.micros) for g in groups)
    stats = {"anchor_problems": n_anchor_problems, "points_sampled": points,
             "points_exhaustive_domain": exhaustive, "fraction_sampled": points / exhaustive,
             "tune_s": round(time.perf_counter() - t0, 3)}
    if is_meas:
        mset, cset = set(measured_problems), {c for g in groups for c in g.configs}
        total = sum(1 for p, c in source.times if p in mset and c in cset)
        stats.update(measured_points_available=total, fraction_of_measured=points / max(total, 1))
    triton = getattr(source, "triton_version", None) or triton_version()
    return DualTable(gpu=gpu_id, kernel=kernel, dtype=dtype, triton=triton, sm_count=spec.sm_count,
                     space_hash=space_hash(configs), space_size=len(configs), source=source.describe(),
                     macros=entries["default"], m1_macros=entries["m1"], fallback_macros=entries["fallback"],
                     domain=domain.to_dict(), model=_model_meta(form, model_params),
                     stats=stats, unfit=[{"config": u.config.to_dict(), "reason": u.reason} for u in unfit])


def _model_meta(form: str, model_params: dict | None) -> dict:
    """The table's record of its model: WaveModel's hyperparameters plus the measured-anchor weight."""
    mp = dict(model_params or {})
    mw = float(mp.pop("measured_weight", MEASURED_WEIGHT))
    return {"name": "wave", **WaveModel(form=form, **mp).get_params(), "measured_weight": mw}


def _fit_group(g: MacroGroup, anchors: list[GemmProblem], source, form: str, model_params: dict) -> MacroEntry:
    cfgs = g.configs
    lat = source.latency_us(anchors, cfgs) if anchors else np.zeros((0, len(cfgs)))
    measured = source.measured_mask(anchors, cfgs).any(axis=1) if anchors else np.zeros(0, bool)
    ok = np.isfinite(lat).any(axis=1)
    anchors = [a for a, k in zip(anchors, ok) if k]
    lat, measured = lat[ok], measured[ok]
    micros = [u._asdict() for u in g.micros]
    if not anchors:  # no data for this macro: a table entry that never wins, recorded as such
        return MacroEntry(g.macro.BLOCK_M, g.macro.BLOCK_N, g.ref_ctas_per_sm, g.cap, [[1e30, 0.0, 0.0, 0.0]],
                          [0.0] * 4, micros, [[0] * N_L_BUCKETS])
    env = np.nanmin(lat, axis=1)
    logreg = np.where(np.isfinite(lat), np.log(lat / env[:, None]), MISSING_PENALTY)
    co = np.array([g.coords(a) for a in anchors], dtype=np.float64)  # (G, L, w)
    band = np.array([band_of(int(G), g.cap) for G in co[:, 0]], dtype=np.float64)
    X = np.column_stack([band, co[:, 0], co[:, 1]])
    mp = {"cap": g.cap, **model_params}
    mw = float(mp.pop("measured_weight", MEASURED_WEIGHT))
    model = WaveModel(form=form, **mp).fit(X, env, sample_weight=np.where(measured, mw, 1.0))
    w_tab = int(band.max())
    rows, slope = model.coef_table(w_tab)
    wi = band.astype(np.int64)
    bi = np.array([l_bucket(int(L)) for L in co[:, 1]], dtype=np.int64)
    if measured.any() and MICRO_FROM_MEASURED:  # stage II from measured anchors only, where there are any
        mt = _micro_table(wi[measured], bi[measured], logreg[measured], w_tab, g.micros)
    else:
        mt = _micro_table(wi, bi, logreg, w_tab, g.micros)
    return MacroEntry(g.macro.BLOCK_M, g.macro.BLOCK_N, g.ref_ctas_per_sm, g.cap, rows.tolist(), slope.tolist(), micros, mt)


def make_source(kind: str, spec: GPUSpec, *, gpu_id: str, dtype: str = "bf16", calibration: str = "none",
                measurements: list[str] | None = None, prior: bool = True, problems=None, ridge: float = 1.0):
    sim = SimSource(spec, dtype, calibration, gpu_id)
    if kind == "sim":
        return sim
    if kind == "measurements":
        return MeasurementSource(measurements or [], spec, dtype, gpu_id, prior=sim if prior else None,
                                 problems=problems, ridge=ridge)
    raise ValueError(f"unknown source {kind!r}; choose 'sim' or 'measurements'")
