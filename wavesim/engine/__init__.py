"""wavesim engines: discrete-event SM/CTA scheduling with a fluid sharing model.

The engines know nothing of GEMM. A kernel model turns a problem + config into a ``Workload`` (G CTAs in
launch order and the machine they share) and calls ``run(workload, ...)``, which returns a ``SimResult``.

The model (all three engines implement exactly this)
----------------------------------------------------
Per CTA i: ``compute_s[i]`` seconds of math at its SM's whole math throughput; ``solo_frac[i]`` in (0, 1],
the most of the SM's math throughput it can use alone; ``l2_bytes[i]`` bytes it moves from L2 into its SM;
``dram_bytes[i]`` bytes from DRAM and ``mem_cap_Bps[i]`` the most DRAM bandwidth it can draw alone (bytes
in flight / latency, Little's law); ``fixed_s[i]`` slot-holding latency that uses no shared throughput
(prologue/pipeline fill + epilogue), spent first. Machine: ``sm_count`` SMs with ``slots_per_sm`` CTA slots
each, ``l2_Bps`` and ``dram_Bps`` shared by all SMs, ``launch_overhead_s`` added once, ``sm_throughput`` =
1.0 per SM.

Life of a CTA: dispatched to a slot at time t0 -> fixed phase until t0 + fixed_s[i] -> fluid phase, in
which its progress p grows from 0 to 1 at rate r_i(t) -> ends, freeing its slot.

Sharing (recomputed at every event): the fluid CTAs of one SM water-fill the SM's capacity 1.0 with caps
d_i = solo_frac[i] (if sum d_i <= 1 each gets d_i, else max-min fair shares capped at d_i): share c_i.
With ``sm_queueing`` (queueing.py) an SM with n >= 2 fluid CTAs also caps each at d_i / C(n, mean d): the
mean-value analysis of n CTAs queueing for the SM below its capacity (C = 1 for n = 1, so a lone CTA keeps
its solo fraction). Math-implied rate r_c = c_i / compute_s[i] (inf if compute_s is 0). Then the two
chip-wide pools, L2 first: L2 demand l2_bytes[i] * r_c, l2_Bps water-filled (max-min fair, capped at the
demand) over all fluid CTAs with l2_bytes > 0 on all SMs: l_i, and r_l = min(r_c, l_i / l2_bytes[i]) (r_c
if l2_bytes is 0). DRAM demand at that rate D_i = min(mem_cap_Bps[i], dram_bytes[i] * r_l); dram_Bps is water-filled the
same way: m_i. Progress rate r_i = min(r_l, m_i / dram_bytes[i]) (r_l if dram_bytes is 0; a CTA with no
math and no bytes ends the moment its fluid phase begins). The L2 pool is chip-wide because the L2 slices
and the crossbar serve every SM: in a partial wave an SM holding more CTAs draws more of it, so the
L2-bound time follows the total bytes rather than the busiest SM (a kernel model caps what one SM draws
through solo_frac and compute_s, e.g. the GEMM model's per-SM fill port).
A fixed-phase CTA holds its slot (and counts as resident) but takes no share.

Chip load (``load_slowdown`` kappa > 0): the chip runs a CTA's SM-side work slower the busier it is (per-CTA
traces: tail CTAs alone on a lightly loaded chip take 0.93 of a full-wave CTA's time; the in-kernel clock
explains 2-3 points of that, the lighter load on the shared L2 and crossbar the rest). After the rates
above, u = sum over fluid CTAs of r_i * compute_s[i] / sm_count (the fraction of the chip's SM math in use;
a CTA with compute_s 0 adds nothing) and the sharing is redone with every compute_s[i] x (1 + kappa u) and
l2_Bps / (1 + kappa u); DRAM (mem_cap_Bps, dram_Bps) is not scaled. kappa = 0, the default, leaves it out.

Dispatch: CTAs go one at a time in index order, each to the SM with a free slot and the FEWEST resident
CTAs, ties to the lowest SM index ("most room"; breadth-first in the first wave: CTA i < sm_count lands
on SM i). At t = 0 as many are dispatched as fit; afterwards dispatch happens only after all events of
an event time are applied.

Event rounds and ties: rates are piecewise constant between events. A round takes the earliest pending
event time t' (a fixed phase ending, or a fluid CTA's t + (1 - p)/r_i); every event at most
t' * (1 + EPS_REL) (EPS_REL = 1e-12) is applied at t' (identical CTAs that end "together" in real
arithmetic therefore end together in floating point too); fixed phases that end start their fluid phase
at t', fluid CTAs that end free their slots; then the free slots are refilled. CTAs dispatched in a round
take part from the next round on (a zero-work CTA dispatched at t ends in the next round, also at t).

Jitter (optional, seeded): one multiplicative factor per CTA with mean 1 and coefficient of variation
``jitter_cv`` (gamma by default, or lognormal) scales compute_s[i] and fixed_s[i]; drawn with
numpy.random.default_rng(seed) in CTA order (``Workload.with_jitter``), before any engine runs, so all
engines see the same jittered workload. dram_bytes is not jittered.

Engines
-------
``reference``   simpy controller process, readable, pure Python (single-stepping: see reference.py).
``fast``        the same event loop in numba (``@njit``); agrees with the reference to ~1e-15 relative.
``closed_form`` O(1) per launch, exact for identical CTAs without jitter (closed_form.py explains the
                phases); ``run_uniform_batch`` evaluates it over arrays of launches with numpy.
``auto``        closed_form when the CTAs are identical and there is no jitter, else fast.

De-synchronisation (``Workload.desync_rate`` > 0, desync.py): the expected loss of step of later waves at 2+
CTAs/SM, a closed-form term on top of the lockstep schedule above. The event engines take desync_rate = 0
only (they keep the lockstep schedule, or with jitter de-synchronise the waves themselves): ``run`` refuses
a workload with desync_rate > 0 on them, naming the fix.

SimResult: makespan_s, span_s, waves = ceil(G / (sm_count * slots_per_sm)), grid, ctas_per_sm,
per_sm_busy_s, tail_utilization (mean over SMs of busy time / span: the fraction of SM-time from the first
dispatch to the last end in which an SM held work), last_wave_fill, trace (sm, start_s, end_s per CTA,
times without launch overhead; only with trace=True), engine.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..result import SimResult, Trace
from . import closed_form as _closed_form
from . import reference as _reference
from .reference import EPS_REL, ReferenceEngine
from .workload import Workload, jitter_factors

ENGINES = ("auto", "reference", "fast", "closed_form")

__all__ = ["Workload", "SimResult", "Trace", "UniformBatch", "run", "run_uniform_batch", "jitter_factors",
           "ReferenceEngine", "ENGINES", "EPS_REL"]


def run(workload: Workload, *, engine: str = "auto", jitter_cv: float = 0.0, seed: int = 0, trace: bool = False,
        jitter_dist: str = "gamma") -> SimResult:
    """Simulate one launch. Deterministic: the same inputs and seed give the same result."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; choose one of {ENGINES}")
    wl = workload.with_jitter(jitter_cv, seed, jitter_dist)
    if engine == "auto":
        engine = "closed_form" if jitter_cv == 0 and wl.is_uniform() else "fast"
    if engine != "closed_form" and wl.desync_rate > 0:
        raise ValueError(f"engine {engine!r} keeps waves in lockstep (with jitter it de-synchronises them itself); "
                         "desync_rate is the closed form's expected de-synchronisation: use engine='closed_form' "
                         "(identical CTAs, no jitter) or dataclasses.replace(workload, desync_rate=0.0)")
    if engine == "closed_form":
        if jitter_cv:
            raise ValueError("the closed form has no jitter; use engine='fast' or 'reference'")
        return _closed_form.simulate(wl, trace)
    if engine == "fast":
        from . import fast  # numba: imported on first use (a third of a second that predict does not need)

        return fast.simulate(wl, trace)
    return _reference.simulate(wl, trace)


@dataclass(frozen=True, eq=False)
class UniformBatch:
    """Closed-form results of many uniform launches (arrays of the broadcast shape of the inputs)."""

    makespan_s: np.ndarray
    span_s: np.ndarray
    waves: np.ndarray
    last_wave_fill: np.ndarray
    tail_utilization: np.ndarray
    full_wave_s: np.ndarray  # one full wave's time (every slot busy), whether or not the launch has one


def run_uniform_batch(grid, *, sm_count, slots_per_sm, compute_s, solo_frac=1.0, dram_bytes=0.0, mem_cap_Bps=1.0,
                      fixed_s=0.0, dram_Bps=1.0, launch_overhead_s=0.0, l2_bytes=0.0, l2_Bps=1.0,
                      desync_rate=0.0, load_slowdown=0.0, sm_queueing=False) -> UniformBatch:
    """The closed form over many launches at once; every argument is a scalar or a numpy-broadcastable array.

    Each element is one launch of `grid` identical CTAs with the given per-CTA parameters on a machine of
    `sm_count` SMs x `slots_per_sm` slots; identical to ``run(Workload.uniform(...)).makespan_s``. desync_rate:
    the expected de-synchronisation of later waves (desync.py; 0 is lockstep); load_slowdown: kappa of the
    chip-load rule (module docstring; 0 leaves it out); sm_queueing: queueing at the SM (queueing.py).
    """
    return UniformBatch(**_closed_form.uniform_batch(grid, sm_count, slots_per_sm, compute_s, solo_frac, dram_bytes,
                                                     mem_cap_Bps, fixed_s, dram_Bps, launch_overhead_s,
                                                     l2_bytes, l2_Bps, desync_rate, load_slowdown,
                                                     sm_queueing))
