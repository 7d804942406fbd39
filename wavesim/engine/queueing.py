"""Queueing of co-resident CTAs at their SM below its capacity (``Workload.sm_queueing``).

Fair sharing alone (``min(solo_frac, 1/n)`` for n alike CTAs) says co-resident CTAs cost nothing until their
solo fractions add up to the SM, then split it: a sharp knee. A CTA's K loop alternates latency (waiting on
its loads) and service at the SM (its math and port transfers), so co-resident CTAs also collide before the
SM is full, and the knee is rounded. That is a closed queueing network: n customers, each cycling through a
delay Z = 1 - f and a service D = f at one station, in units of a lone CTA's K step (f = solo_frac: a lone
CTA is at the SM for f of its step). Exact mean-value analysis with deterministic service (the customer in
service has D / 2 left on average, Reiser's residual correction):

    R_k = D (1 + Q_{k-1} - U_{k-1} / 2),   X_k = k / (Z + R_k),   Q_k = X_k R_k,   U_k = X_k D    (Q_0 = U_0 = 0)

and a CTA's step takes C(n, f) = Z + R_n lone steps: 1 for n = 1, growing smoothly with n. A CTA then gets
at most f / C(n, f) of its SM, besides its fair share (the asymptotic bound, which C alone undershoots).
Measured on the H200 (validation/data/h200/gemm/m_sweep.jsonl, 32x64x64_g8_w4_s3, N = K = 4096): with 1..7
CTAs on every SM in one wave (M = 64..448) the launch takes 37.0, 38.7, 42.4, 47.0, 55.5, 64.8, 74.9 us,
rounded where fair sharing has a corner (flat, then linear).

For CTAs that differ, the engines use the mean solo fraction of the SM's fluid CTAs for C (exact when they
are alike, which is when the closed form applies).
"""
from __future__ import annotations

import numpy as np


def mva_cycle(n: int, f: float) -> float:
    """C(n, f) >= 1: a CTA's step, in lone steps, with n alike CTAs of solo fraction f at one SM (n >= 1)."""
    z, d = 1.0 - f, f
    q = u = 0.0
    r = d
    for k in range(1, n + 1):
        r = d * (1.0 + q - 0.5 * u)
        x = k / (z + r)
        q = x * r
        u = x * d
    return z + r


def mva_cycles(f, n) -> np.ndarray:
    """mva_cycle over numpy-broadcast arrays of solo fractions f and CTA counts n (n <= 0 counts as 1)."""
    f, n = np.broadcast_arrays(np.asarray(f, dtype=np.float64), np.asarray(n, dtype=np.float64))
    z, d = 1.0 - f, f
    q = np.zeros(f.shape)
    u = np.zeros(f.shape)
    r = d.copy()
    for k in range(1, int(n.max()) + 1 if n.size else 1):
        live = k <= n
        rk = d * (1.0 + q - 0.5 * u)
        x = k / (z + rk)
        r = np.where(live, rk, r)
        q = np.where(live, x * rk, q)
        u = np.where(live, x * d, u)
    return z + r
