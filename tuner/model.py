"""WaveModel: latency of one macro config as a function of its physical coordinates (w, G, L).

Estimator contract (scikit-learn's): `__init__` stores hyperparameters only; `fit(X, y)` returns self and
sets `coef_`; `predict(X)` before `fit` raises `NotFittedError`. X is an (n, 3) array of columns
(w, G, L) (see tuner.mapping), y the latencies (any unit; the tuner uses microseconds).

Forms (hyperparameter `form`), all exported as per-wave rows theta_w = (a_w, b_w, c_w, d_w) of
T_w(G, L) = a_w + b_w*G + c_w*L + d_w*G*L so the DualTable stores one format:

``per-wave`` (the WaveTune form) one bilinear per wave band, fitted by weighted least squares (weights
             1/y: the loss is relative error, so short shapes count as much as long ones), ridge-shrunk
             toward the global fit's row for that band (alpha = `ridge`); a band with fewer than 4
             distinct (G, L) points is decided by the prior. Bands never sampled, with `cap` (tiles per
             wave): the neighbouring sampled bands' curves shifted by whole waves (each wave costing that
             band's mean wave time) and blended linearly in w; past the last sampled band the last band
             repeats periodically. Without `cap`: linear interpolation of rows, and the global fit's
             per-wave trend (e, f) past the end.
``global``   one bilinear in (w, G, L): T = a + b G + c L + d G L + e w + f w L (rows affine in w).
``wave-linear`` T = a + w (e + f L): a pure staircase, each wave costs e + f L (no within-wave slope).

Held-out comparison of the forms (H200, bf16, 186-config space; `python3 benchmarks/bench_tuner.py forms`):

  relative error of the macro envelope on simulator anchors, alternate wave bands and the middle K held out
      per-wave     median 0.010  p90 0.157      global   median 0.103  p90 0.356
      wave-linear  median 0.356  p90 0.622
  regret of tables built with each form, k-fold by LLM layer (geo-mean / worst, measured times)
      per-wave     sim 1.036 / 1.24   meas 1.053 / 1.64
      global       sim 1.041 / 1.42   meas 1.049 / 1.23
      wave-linear  sim 1.288 / 3.14   meas 1.139 / 2.15
The per-wave bilinear is the most accurate on held-out bands and the best simulator table; the pure
staircase (no within-wave slope) is clearly worse, so the within-wave G and L terms carry real signal.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import nnls

FORMS = ("per-wave", "global", "wave-linear")


class NotFittedError(ValueError, AttributeError):
    """predict/coef_table called before fit (same bases as sklearn.exceptions.NotFittedError)."""


def _wls(A: np.ndarray, y: np.ndarray, wts: np.ndarray, alpha: float, prior: np.ndarray | None = None) -> np.ndarray:
    """argmin_x sum wts*(A x - y)^2 + alpha' * |D (x - prior)|^2 subject to x[1:] >= 0.

    D scales the columns to unit RMS and alpha' = alpha * mean eigenvalue of the weighted design (ridge
    relative to the data). Every coefficient but the intercept is non-negative: latency never falls as
    the grid or the K loop grows, which keeps extrapolation to unseen waves and loop lengths monotone
    (an unconstrained per-band fit predicted negative latencies for 3.5x larger grids). Solved as NNLS
    with the intercept split into a positive and a negative part."""
    scale = np.sqrt(np.mean(A * A, axis=0)) + 1e-30
    As = A / scale
    sw = np.sqrt(wts)[:, None]
    Aw, yw = As * sw, y * sw[:, 0]
    n = A.shape[1]
    p = np.zeros(n) if prior is None else prior * scale
    alpha = alpha * max(float(np.trace(Aw.T @ Aw)) / n, 1e-300)
    ra = np.sqrt(alpha)
    # unknowns: x0+, x0-, x1.. ; ridge rows pull (x0+ - x0-) and x1.. toward the prior
    big = np.vstack([np.column_stack([Aw[:, :1], -Aw[:, :1], Aw[:, 1:]]),
                     ra * np.column_stack([np.eye(n)[:, :1], -np.eye(n)[:, :1], np.eye(n)[:, 1:]])])
    rhs = np.concatenate([yw, ra * np.concatenate([[p[0]], np.maximum(p[1:], 0.0)])])
    sol, _ = nnls(big, rhs, maxiter=50 * (n + 1))
    x = np.concatenate([[sol[0] - sol[1]], sol[2:]])
    return x / scale


def _bilinear_basis(G, L):
    return np.column_stack([np.ones_like(G), G, L, G * L])


class WaveModel:
    """Wave-aware bilinear latency model of one macro config. See the module docstring."""

    _options = dict(
        form=("model form, one of " + ", ".join(FORMS), "per-wave"),
        ridge=("ridge strength toward the prior row (relative to the mean eigenvalue of the design)", 1e-8),
        prior_ridge=("ridge strength for bands with fewer than 4 distinct (G, L) points", 1.0),
        relative=("weight samples by 1/y^2 (relative error loss) instead of uniformly", True),
        cap=("tiles per wave; given, waves past the last sampled band extend it periodically (else global trend)", None),
    )

    def __init__(self, form: str = "per-wave", ridge: float = 1e-5, prior_ridge: float = 1.0, relative: bool = True,
                 cap: float | None = None):
        self.form = form
        self.ridge = ridge
        self.prior_ridge = prior_ridge
        self.relative = relative
        self.cap = cap

    def get_params(self, deep: bool = True) -> dict:
        return {k: getattr(self, k) for k in self._options}

    def set_params(self, **params) -> "WaveModel":
        for k, v in params.items():
            if k not in self._options:
                raise ValueError(f"WaveModel has no parameter {k!r}; parameters: {sorted(self._options)}")
            setattr(self, k, v)
        return self

    # ---- fitting -------------------------------------------------------------------------------
    @staticmethod
    def _check_X(X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != 3:
            raise ValueError(f"X must have shape (n, 3) with columns (w, G, L); got {X.shape}")
        if not np.all(np.isfinite(X)) or np.any(X[:, 0] < 1):
            raise ValueError("X must be finite with w >= 1")
        return X[:, 0], X[:, 1], X[:, 2]

    def fit(self, X, y, sample_weight=None) -> "WaveModel":
        if self.form not in FORMS:
            raise ValueError(f"unknown WaveModel form {self.form!r}; choose one of {FORMS}")
        w, G, L = self._check_X(X)
        y = np.asarray(y, dtype=np.float64)
        if y.shape != w.shape or not np.all(np.isfinite(y)) or np.any(y <= 0):
            raise ValueError("y must be positive finite latencies, one per row of X")
        if len(y) == 0:
            raise ValueError("cannot fit a WaveModel on no samples")
        wts = 1.0 / y**2 if self.relative else np.ones_like(y)
        if sample_weight is not None:
            sw = np.asarray(sample_weight, dtype=np.float64)
            if sw.shape != y.shape or np.any(sw < 0) or not np.all(np.isfinite(sw)):
                raise ValueError("sample_weight must be non-negative and finite, one per sample")
            wts = wts * sw
        wi = np.rint(w).astype(np.int64)
        # Global fit: prior for every form; rows affine in w.
        if self.form == "wave-linear":
            A = np.column_stack([np.ones_like(G), w, w * L])
            a, e, f = _wls(A, y, wts, max(self.ridge, 1e-9))
            gcoef = np.array([a, 0.0, 0.0, 0.0, e, f])
        else:
            A = np.column_stack([np.ones_like(G), G, L, G * L, w, w * L])
            gcoef = _wls(A, y, wts, max(self.ridge, 1e-9))
        self.global_coef_ = gcoef
        waves = np.unique(wi)
        rows = np.array([self._global_row(float(v)) for v in waves])
        if self.form == "per-wave":
            for j, v in enumerate(waves):
                sel = wi == v
                distinct = len({(g, l) for g, l in zip(G[sel], L[sel])})
                alpha = self.ridge if distinct >= 4 else self.prior_ridge
                rows[j] = _wls(_bilinear_basis(G[sel], L[sel]), y[sel], wts[sel], alpha, prior=rows[j])
        self.waves_ = waves
        self.coef_ = rows
        self.n_samples_ = len(y)
        return self

    def _global_row(self, w: float) -> np.ndarray:
        a, b, c, d, e, f = self.global_coef_
        return np.array([a + e * w, b, c + f * w, d])

    def _check_fitted(self) -> None:
        if not hasattr(self, "coef_"):
            raise NotFittedError("this WaveModel is not fitted yet; call fit(X, y) first")

    # ---- export and prediction -------------------------------------------------------------------
    def _slope(self, cap: float | None) -> np.ndarray:
        """Change of theta per extra wave past the last sampled band.

        With `cap` (tiles per wave) the last band's bilinear is extended periodically: a grid of G tiles
        in band w_last + x costs what G - x*cap tiles cost in band w_last plus x waves, a wave costing the
        last band's average P(L) = T_last(w_last*cap, L) / w_last. In theta form that is
        slope = (P_a - b*cap, 0, P_c - d*cap, 0). Without cap: the global fit's per-wave terms (e, f)."""
        if cap is None:
            _, _, _, _, e, f = self.global_coef_
            return np.array([e, 0.0, f, 0.0])
        a, b, c, d = self.coef_[-1]
        wl = float(self.waves_[-1])
        W = wl * cap
        return np.array([(a + b * W) / wl - b * cap, 0.0, (c + d * W) / wl - d * cap, 0.0])

    def _shift(self, j: int, x: float, cap: float) -> np.ndarray:
        """Row of sampled band j moved by x waves: T'(G, L) = T_j(G - x*cap, L) + x * P_j(L), where
        P_j(L) = T_j(w_j*cap, L) / w_j is band j's mean wave time (linear in L)."""
        a, b, c, d = self.coef_[j]
        wj = float(self.waves_[j])
        W = wj * cap
        pa, pc = (a + b * W) / wj, (c + d * W) / wj
        return np.array([a - b * x * cap + x * pa, b, c - d * x * cap + x * pc, d])

    def coef_table(self, w_max: int | None = None, cap: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(rows, slope): rows[w-1] = theta_w for w = 1..w_max (interpolated/extrapolated where not sampled),
        and the per-wave slope that continues the table past w_max: theta_w = rows[-1] + (w - w_max) * slope
        (see _slope for `cap`)."""
        self._check_fitted()
        waves = self.waves_
        w_max = int(w_max or waves.max())
        slope = self._slope(cap if cap is not None else getattr(self, "cap", None))
        out = np.empty((w_max, 4))
        cap = cap if cap is not None else getattr(self, "cap", None)
        for v in range(1, w_max + 1):
            j = np.searchsorted(waves, v)
            if j < len(waves) and waves[j] == v:
                out[v - 1] = self.coef_[j]
            elif cap is not None:            # shift sampled bands' curves by whole waves (see _shift)
                if j == 0:
                    out[v - 1] = self._shift(0, v - waves[0], cap)
                elif j == len(waves):
                    out[v - 1] = self._shift(-1, v - waves[-1], cap)
                else:
                    lo, hi = waves[j - 1], waves[j]
                    t = (v - lo) / (hi - lo)
                    out[v - 1] = (1 - t) * self._shift(j - 1, v - lo, cap) + t * self._shift(j, v - hi, cap)
            elif j == 0:                     # before the first sampled band
                out[v - 1] = self.coef_[0] + (v - waves[0]) * slope
            elif j == len(waves):            # past the last sampled band
                out[v - 1] = self.coef_[-1] + (v - waves[-1]) * slope
            else:                            # between two sampled bands
                lo, hi = waves[j - 1], waves[j]
                t = (v - lo) / (hi - lo)
                out[v - 1] = (1 - t) * self.coef_[j - 1] + t * self.coef_[j]
        return out, slope

    def predict(self, X) -> np.ndarray:
        self._check_fitted()
        w, G, L = self._check_X(X)
        wi = np.rint(w).astype(np.int64)
        w_max = int(max(self.waves_.max(), 1))
        rows, slope = self.coef_table(w_max, self.cap)
        idx = np.clip(wi, 1, w_max) - 1
        theta = rows[idx] + np.maximum(wi - w_max, 0)[:, None] * slope
        return theta[:, 0] + theta[:, 1] * G + theta[:, 2] * L + theta[:, 3] * G * L


MODELS = {"wave": WaveModel}
