"""Sample sources: where anchor latencies come from. One interface, so the tuner has one code path.

``SimSource``          latency = wavesim closed-form makespan (GemmBatch + simulate_batch); `calibration`
                       is "none" (specs-only priors), "auto" (wavesim.calibration.load_calibration: the
                       shipped calibration of the GPU, else priors), a calibration file, or GemmParams
                       (e.g. `fit_calibration` on training shapes only, for honest held-out figures).
``MeasurementSource``  latency = the measured time where the (problem, config) point was measured, and
                       elsewhere the simulator corrected by measurements: sim * exp(r_c(G, L)), where r_c
                       is a ridge-regularised fit of log(measured / simulated) per config on the measured
                       points the sampler used (features 1, log G, log L, (log G)^2, [M == 1]; shrunk toward 0,
                       i.e. toward the simulator). With prior=None there is no simulator: unmeasured
                       points are NaN and the model is fitted on whatever was measured (the pure-measurement
                       bilinear the guide warns about; kept for the comparison in tuner/README.md).

`latency_us(problems, configs)` returns an (n_problems, n_configs) array in microseconds, NaN where a
point has no value. `points_used` counts the (config, shape) points that cost a simulation or a
measurement, for the sampled-fraction figure.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Iterable

import numpy as np

from hwspecs import GPUSpec
from wavetune.config import GemmProblem, LaunchConfig


def load_params(calibration, gpu_id: str):
    """GemmParams for the simulator: None (priors) for 'none'; 'auto' -> wavesim.calibration if present;
    a GemmParams object as is; else a calibration file."""
    if calibration in (None, "none", "priors"):
        return None
    if not isinstance(calibration, str):
        return calibration
    if calibration == "auto":
        try:
            from wavesim.calibration import load_calibration  # optional module
        except ImportError:
            return None
        try:
            return load_calibration("auto", gpu_id)
        except (ValueError, OSError):
            return None
    p = Path(calibration)
    if not p.exists():
        raise ValueError(f"calibration {calibration!r}: not 'none', 'auto' or an existing JSON file")
    from wavesim.kernels.gemm import GemmParams

    d = json.loads(p.read_text())
    return GemmParams.from_dict(d.get("params", d), str(p))


def fit_calibration(spec: GPUSpec, paths: list[str], problems, gpu: str, dtype: str = "bf16"):
    """GemmParams fitted (wavesim.calibration.fit) on the measurements of `problems` only."""
    from validation.measurements import dedupe_latest, load_measurements
    from wavesim.calibration import build_dataset, fit

    keep = {(p.M, p.N, p.K) for p in problems}
    ds = build_dataset(spec, dedupe_latest(load_measurements(paths, gpu=gpu)), dtype, keep=lambda s: s in keep)
    return fit(spec, ds)[0]


class SimSource:
    kind = "sim"

    def __init__(self, spec: GPUSpec, dtype: str = "bf16", calibration: str | None = "none", gpu_id: str | None = None):
        self.spec = spec
        self.dtype = dtype
        self.params = load_params(calibration, gpu_id or spec.id)
        self.calibration = calibration if isinstance(calibration, str) or calibration is None else "fitted"
        self.calibration = self.calibration or "none"
        self.points_used = 0

    def describe(self) -> dict:
        d = {"kind": "sim", "calibration": self.calibration, "calibrated": self.params is not None}
        if self.params is not None:
            d["params"] = self.params.to_dict()
        return d

    def simulate_us(self, problems: list[GemmProblem], configs: list[LaunchConfig], count: bool = True) -> np.ndarray:
        from wavesim.kernels.gemm import GemmBatch, simulate_batch

        if not problems or not configs:
            return np.zeros((len(problems), len(configs)))
        P, C = len(problems), len(configs)
        M = np.repeat([p.M for p in problems], C)
        N = np.repeat([p.N for p in problems], C)
        K = np.repeat([p.K for p in problems], C)
        b = GemmBatch.build(self.spec, self.dtype, M, N, K, list(configs) * P)
        if count:
            self.points_used += P * C
        return (simulate_batch(b, self.params).makespan_s * 1e6).reshape(P, C)

    def latency_us(self, problems, configs) -> np.ndarray:
        return self.simulate_us(list(problems), list(configs))

    def measured_mask(self, problems, configs) -> np.ndarray:
        return np.zeros((len(problems), len(configs)), dtype=bool)


def _corr_features(G: np.ndarray, L: np.ndarray, m1: np.ndarray) -> np.ndarray:
    lg, ll = np.log(G), np.log(L)
    return np.column_stack([np.ones_like(lg), lg, ll, lg * lg / 10.0, m1])


class MeasurementSource:
    kind = "measurements"

    def __init__(self, paths: Iterable[str], spec: GPUSpec, dtype: str = "bf16", gpu: str = "h200",
                 prior: SimSource | None = None, ridge: float = 1.0, problems: Iterable[GemmProblem] | None = None):
        from validation.measurements import dedupe_latest, load_measurements

        self.paths = [str(p) for p in paths]
        if not self.paths:
            raise ValueError("--measurements needs at least one file")
        ms = dedupe_latest(load_measurements(self.paths, gpu=gpu))
        keep = None if problems is None else set(problems)
        self.times: dict[tuple[GemmProblem, LaunchConfig], float] = {}
        self.failed: dict[tuple[GemmProblem, LaunchConfig], str] = {}
        self.triton_version = None
        for m in ms:
            if m.problem.dtype != dtype or (keep is not None and m.problem not in keep):
                continue
            if m.ok:
                self.times[(m.problem, m.config)] = m.ms * 1e3
            else:
                self.failed[(m.problem, m.config)] = m.status
            self.triton_version = self.triton_version or (m.record.get("env") or {}).get("triton")
        if not self.times:
            raise ValueError(f"no usable {dtype} measurements for gpu {gpu!r} in {self.paths}")
        self.spec, self.dtype, self.gpu = spec, dtype, gpu
        self.prior = prior
        self.ridge = ridge
        self.corr: dict[LaunchConfig, np.ndarray] = {}
        self.points_used = 0
        self.used: set[tuple[GemmProblem, LaunchConfig]] = set()

    def describe(self) -> dict:
        return {"kind": "measurements", "files": self.paths, "prior": None if self.prior is None else self.prior.describe(),
                "correction_ridge": self.ridge}

    def measured_problems(self) -> list[GemmProblem]:
        return sorted({p for p, _ in self.times})

    def _coords(self, problems: list[GemmProblem], cfg: LaunchConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        G = np.array([math.ceil(p.M / cfg.BLOCK_M) * math.ceil(p.N / cfg.BLOCK_N) for p in problems], float)
        L = np.array([math.ceil(p.K / cfg.BLOCK_K) for p in problems], float)
        return G, L, np.array([p.M == 1 for p in problems], float)

    def use(self, problems: list[GemmProblem], configs: list[LaunchConfig]) -> None:
        """Mark measured points as sampled and (re)fit the per-config corrections of those configs."""
        new = {(p, c) for p in problems for c in configs if (p, c) in self.times} - self.used
        self.used |= new
        self.points_used = len(self.used)
        if self.prior is None:
            return
        for c in configs:
            pts = sorted(p for p, cc in self.used if cc == c)
            if not pts:
                continue
            sim = self.prior.simulate_us(pts, [c], count=False)[:, 0]
            r = np.log(np.array([self.times[(p, c)] for p in pts]) / sim)
            A = _corr_features(*self._coords(pts, c))
            n = A.shape[1]
            self.corr[c] = np.linalg.solve(A.T @ A + self.ridge * np.eye(n), A.T @ r)

    def measured_mask(self, problems, configs) -> np.ndarray:
        """True where the value is a measurement the sampler used (or a failure it recorded)."""
        return np.array([[(p, c) in self.used for c in configs] for p in problems], dtype=bool).reshape(len(problems), len(configs))

    def latency_us(self, problems, configs) -> np.ndarray:
        problems, configs = list(problems), list(configs)
        out = np.full((len(problems), len(configs)), np.nan)
        if self.prior is not None:
            sim = self.prior.simulate_us(problems, configs, count=False)
            for j, c in enumerate(configs):
                if c in self.corr:
                    out[:, j] = sim[:, j] * np.exp(_corr_features(*self._coords(problems, c)) @ self.corr[c])
                else:
                    out[:, j] = sim[:, j]
        for i, p in enumerate(problems):
            for j, c in enumerate(configs):
                t = self.times.get((p, c))
                if t is not None and (p, c) in self.used:
                    out[i, j] = t
                elif (p, c) in self.failed and (p, c) in self.used:
                    out[i, j] = np.nan
        return out
