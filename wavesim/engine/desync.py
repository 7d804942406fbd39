"""Expected de-synchronisation of later waves: a closed-form term on top of the lockstep schedule.

The engines deal identical CTAs in lockstep: every full wave starts and ends together, and a partial last
wave of R CTAs starts together after them. On the H200 that holds at 1 CTA/SM; co-resident CTAs fall out of
step (per-CTA traces, validation/reports/h200/traces/TRACES.md: at 3+ CTAs/SM the last wave's starts spread
over 16-31% of a CTA time; validation/data/h200/traces/trace_dense_*_4096.npz: at 7-10 CTAs/SM of 3-stage
wgmma tiles the first wave's earliest 5% of CTAs already end at 0.7 of the median CTA time), the slots free at
spread-out times, and the partial wave streams in as they free instead of waiting for the whole wave.
Measured latency then ramps up within a wave band and its steps shrink from wave to wave
(validation/reports/h200/staircase/: +15% at the 3rd wave, +8% at the 4th and +4% at the 5th for 64x128x64 at
3 CTAs/SM, where lockstep gives +30%, +18%, +14%). At 2 CTAs/SM the drift is slower but there (128x128x64 at
2 CTAs/SM on N = K = 4096: the tail after the 1st..7th full wave costs 0.63, 0.56, 0.48, 0.40, .., 0.26, 0.10
of a wave, lockstep 0.71 throughout); at 1 CTA/SM the sweeps show none.

Model: after n_full >= 1 full waves, a fraction phi = 1 - exp(-desync_rate * n_full) of the launch is out of
step, and that fraction of the partial wave takes its share of a full wave, R / W * T_full, instead of its
lockstep time t_part:

    t_part' = (1 - phi) * t_part + phi * R / W * T_full          (slots_per_sm >= DESYNC_MIN_SLOTS)

The rate depends on the occupancy and, at 3+ CTAs/SM, on how far the CTAs oversubscribe their SM (the kernel
model passes each record its own: wavesim/kernels/gemm.py desync_rates). It is an expected value over the
hardware's variation, not an event: the event engines either keep the lockstep schedule or, with jitter,
de-synchronise the waves themselves, so they take no desync_rate.

The rates are measured on M sweeps (wavesim.calibration.desync_rate_from_sweeps: the rate whose steps best
match the measured ones at the later wave boundaries); `wavetune calibrate` does that on the sweeps among
its records, `wavetune staircase` reports what one sweep implies.
"""
from __future__ import annotations

import numpy as np

# Slots per SM at which a de-synchronised tail deals some SM two of its CTAs (paired_tail_probability).
PAIRED_TAIL_SLOTS = 2
# R x n_full / S from which a 2-CTA/SM tail has a paired SM: the midpoint of a logistic fitted by maximum likelihood to
# the share of 256 traced launches of 128x128x64 whose tail had one (`python3 -m validation.tail_dealing --onset --only
# '^128x128x64_' validation/data/h200/traces/trace_tails2_4096_2sm.npz trace_tails_3584x4096.npz trace_half_tile_4096.npz`:
# 1.01, width 0.22; NOTES session 30). Shipped by a rule set before its deciding set (session 31). The onset moves with
# the layer (trace_tails3_*.npz: 1.01 at K = 2048, 0.25 at K = 8192, every traced tail paired on 8192 x 4096; NOTES
# session 31), which one constant cannot follow.
PAIR_ONSET = 1.01

# Co-resident CTAs per SM from which later waves lose step: one CTA per SM has nothing to drift against
# (H200 M sweeps: a rate of 0.01 at 1 CTA/SM, 0.06-0.13 at 2, 0.3-0.6 at 3; wavesim/data/gemm_priors.toml).
DESYNC_MIN_SLOTS = 2


def out_of_step_fraction(n_full, slots_per_sm, desync_rate) -> np.ndarray:
    """phi: the fraction of the slots that free out of step when the partial wave starts."""
    n_full = np.asarray(n_full, dtype=np.float64)
    rate = np.asarray(desync_rate, dtype=np.float64)
    on = (np.asarray(slots_per_sm) >= DESYNC_MIN_SLOTS) & (n_full >= 1) & (rate > 0)
    return np.where(on, -np.expm1(-rate * n_full), 0.0)


def partial_wave_time(t_part, R, W, t_full, phi) -> np.ndarray:
    """The partial wave's time with a fraction phi of it streaming in (0 where there is no partial wave)."""
    t_part = np.asarray(t_part, dtype=np.float64)
    R = np.asarray(R, dtype=np.float64)
    return np.where(R > 0, (1.0 - phi) * t_part + phi * R / np.asarray(W, dtype=np.float64) * t_full, 0.0)


def paired_tail_probability(R, S, K, n_full, desync_rate) -> np.ndarray:
    """At 2 slots per SM, 1 where a partial wave of 2 <= R <= S CTAs after n_full >= 1 full waves has an SM holding two
    of them, else 0. Lockstep dealing gives every SM at most one (breadth-first), and a lone tail CTA takes about 0.65
    of a paired one; after full waves the slots free in an order in which, measured, the first paired SM comes at R =
    PAIR_ONSET x S / n_full (a knife edge: earlier in some launches, later in others), and from it the launch pays the
    paired time. On only where the workload is out of step (desync_rate > 0), like the streaming term: the event
    engines deal lockstep waves and take no desync_rate."""
    R = np.asarray(R, dtype=np.float64)
    S = np.asarray(S, dtype=np.float64)
    n = np.asarray(n_full, dtype=np.float64)
    on = (np.asarray(K) == PAIRED_TAIL_SLOTS) & (n >= 1) & (R >= 2) & (R <= S) & (np.asarray(desync_rate) > 0)
    return np.where(on & (R * n >= PAIR_ONSET * S), 1.0, 0.0)
