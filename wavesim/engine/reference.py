"""The readable reference engine: a simpy controller process over explicit per-CTA state.

It implements the model of ``wavesim.engine`` (read that docstring first) in plain Python, with
the water-filling written as progressive filling (raise a common level until a CTA's cap stops
it), independently of the sorted water-filling of the fast engine, so that the two engines check
each other.

Structure: one simpy process, the *controller*, owns the state. Each loop iteration is one
*event round*: compute every fluid CTA's rate, find the next event time (a fixed phase ending or a
fluid CTA reaching progress 1), ``yield env.timeout(...)`` to it, apply all events at that time
(within a relative 1e-12, ``EPS_REL``), then dispatch. simpy's heap orders events by
(time, priority, sequence), and there is one pending event at a time, so the run is deterministic.
Times used in results come from the controller's own clock ``self.t`` (assigned, never summed from
delays), so simpy's float clock never feeds back into the model.

Single-stepping a test::

    eng = ReferenceEngine(workload)
    eng.env.step()            # the controller starts: first dispatch, first round scheduled
    eng.env.peek()            # time of the next event round (inf when finished)
    eng.env.step()            # apply one event round: ends, phase changes, dispatches
    eng.snapshot()            # {"t": ..., "sm": [[cta ids resident on SM 0], ...], "done": n}
    eng.env.run(until=t)      # or run until a time; eng.result() once eng.finished
"""
from __future__ import annotations

import math

import numpy as np

from ..result import SimResult, Trace
from .queueing import mva_cycle
from .workload import Workload

EPS_REL = 1e-12  # events within this relative time of the earliest one are simultaneous

FIXED, FLUID = "fixed", "fluid"


class _Cta:
    __slots__ = ("i", "sm", "start", "phase", "fixed_end", "rem", "end")

    def __init__(self, i: int, sm: int, start: float):
        self.i, self.sm, self.start = i, sm, start
        self.phase, self.fixed_end, self.rem, self.end = FIXED, math.inf, 1.0, math.nan


def water_fill(demands: list[float], capacity: float) -> list[float]:
    """Max-min fair shares of ``capacity``, each capped at its demand (progressive filling).

    Raise a common level; every claimant whose demand is below the level is satisfied and leaves,
    the capacity it took is removed, and the level is recomputed; when no remaining demand is
    below the level, all remaining claimants get the level. If the demands fit, everyone gets
    their demand.
    """
    alloc = [0.0] * len(demands)
    open_ = [k for k, d in enumerate(demands) if d > 0]
    cap = capacity
    while open_:
        level = cap / len(open_)
        sat = [k for k in open_ if demands[k] <= level]
        if not sat:
            for k in open_:
                alloc[k] = level
            break
        for k in sat:
            alloc[k] = demands[k]
            cap -= demands[k]
        open_ = [k for k in open_ if demands[k] > level]
        cap = max(cap, 0.0)
    return alloc


class ReferenceEngine:
    """One launch of ``workload`` (already jittered), simulated by a simpy controller process."""

    name = "reference"

    def __init__(self, workload: Workload):
        self.wl = wl = workload
        self.G, self.S, self.K = wl.grid, wl.sm_count, wl.slots_per_sm
        self.t = 0.0
        self.next_cta = 0
        self.resident: list[list[_Cta]] = [[] for _ in range(self.S)]  # per SM, in dispatch order
        self.busy = [0.0] * self.S
        self.busy_since = [0.0] * self.S
        self.sm_of = np.full(self.G, -1, dtype=np.int64)
        self.start = np.full(self.G, np.nan)
        self.end = np.full(self.G, np.nan)
        self.done = 0
        self.rounds = 0
        import simpy  # here, not at the top: the closed form and the fast engine (table_autotune on a GPU image
        # without simpy) import this package too

        self.env = simpy.Environment()
        self.process = self.env.process(self._controller())

    # ----------------------------------------------------------------- the model, step by step
    def _zero_work(self, i: int) -> bool:
        return self.wl.compute_s[i] == 0.0 and self.wl.dram_bytes[i] == 0.0 and self.wl.l2_bytes[i] == 0.0

    def _dispatch(self) -> None:
        """Next CTAs in launch order, each to the free-slotted SM with the fewest residents (lowest index)."""
        while self.next_cta < self.G:
            best = -1
            for s in range(self.S):
                n = len(self.resident[s])
                if n < self.K and (best < 0 or n < len(self.resident[best])):
                    best = s
            if best < 0:
                return
            i = self.next_cta
            self.next_cta += 1
            c = _Cta(i, best, self.t)
            if self.wl.fixed_s[i] > 0:
                c.fixed_end = self.t + self.wl.fixed_s[i]
            else:
                c.phase = FLUID
            if not self.resident[best]:
                self.busy_since[best] = self.t
            self.resident[best].append(c)
            self.sm_of[i], self.start[i] = best, self.t

    def _rates(self) -> dict[int, float]:
        """Progress rate (fraction of the CTA per second) of every fluid CTA, by CTA index."""
        wl = self.wl
        by_sm = [[c for c in self.resident[s] if c.phase == FLUID] for s in range(self.S)]
        rate = self._shared_rates(by_sm, 1.0)
        if wl.load_slowdown > 0:
            # chip load u: the fraction of the chip's SM math in use at these rates; redo the sharing slower
            u = sum(rate[c.i] * wl.compute_s[c.i] for ctas in by_sm for c in ctas if wl.compute_s[c.i] > 0) / self.S
            rate = self._shared_rates(by_sm, 1.0 + wl.load_slowdown * u)
        return rate

    def _shared_rates(self, by_sm: list[list[_Cta]], slow: float) -> dict[int, float]:
        """Rates of the fluid CTAs (by SM) with every compute_s x slow and the L2 pool / slow: per-SM math
        water-filling, then the L2 pool (demand at the math rate), then DRAM at the rate the L2 leaves."""
        wl = self.wl
        r_c: dict[int, float] = {}
        for ctas in by_sm:
            solo = [wl.solo_frac[c.i] for c in ctas]
            shares = water_fill(solo, wl.sm_throughput)
            if wl.sm_queueing and len(ctas) > 1:
                cycle = mva_cycle(len(ctas), sum(solo) / len(solo))
                shares = [min(share, f / cycle) for share, f in zip(shares, solo)]
            for c, share in zip(ctas, shares):
                r_c[c.i] = share / (wl.compute_s[c.i] * slow) if wl.compute_s[c.i] > 0 else math.inf
        fluid = [c for ctas in by_sm for c in ctas]
        rate = dict(r_c)
        l2 = [c for c in fluid if wl.l2_bytes[c.i] > 0]
        got = water_fill([wl.l2_bytes[c.i] * r_c[c.i] for c in l2], wl.l2_Bps / slow)
        for c, m in zip(l2, got):
            rate[c.i] = min(rate[c.i], m / wl.l2_bytes[c.i])
        mem = [c for c in fluid if wl.dram_bytes[c.i] > 0]
        demand = [min(wl.mem_cap_Bps[c.i], wl.dram_bytes[c.i] * rate[c.i]) for c in mem]
        got = water_fill(demand, wl.dram_Bps)
        for c, m in zip(mem, got):
            rate[c.i] = min(rate[c.i], m / wl.dram_bytes[c.i])
        return rate

    def _finish(self, c: _Cta, t: float) -> None:
        c.end = t
        self.end[c.i] = t
        self.done += 1
        self.resident[c.sm].remove(c)
        if not self.resident[c.sm]:
            self.busy[c.sm] += t - self.busy_since[c.sm]

    def _controller(self):
        self._dispatch()
        while any(self.resident):
            rate = self._rates()
            cand: dict[int, float] = {}
            for res in self.resident:
                for c in res:
                    if c.phase == FIXED:
                        cand[c.i] = c.fixed_end
                    else:
                        r = rate[c.i]
                        cand[c.i] = self.t if r == math.inf else self.t + c.rem / r
            t_next = min(cand.values())
            yield self.env.timeout(max(0.0, t_next - self.env.now))
            thr = t_next * (1.0 + EPS_REL)
            dt = t_next - self.t
            for res in self.resident:
                for c in list(res):
                    if c.phase == FIXED:
                        if c.fixed_end <= thr:
                            c.phase = FLUID  # progress starts at t_next
                            if self._zero_work(c.i):
                                self._finish(c, t_next)
                    elif cand[c.i] <= thr:
                        self._finish(c, t_next)
                    else:
                        c.rem -= rate[c.i] * dt
            self.t = t_next
            self.rounds += 1
            self._dispatch()

    # ----------------------------------------------------------------- inspection and results
    @property
    def finished(self) -> bool:
        return self.done == self.G

    def snapshot(self) -> dict:
        return {"t": self.t, "done": self.done, "next_cta": self.next_cta,
                "sm": [[c.i for c in res] for res in self.resident],
                "phase": [[c.phase for c in res] for res in self.resident]}

    def result(self, trace: bool = False) -> SimResult:
        if not self.finished:
            raise RuntimeError("the simulation has not finished; call env.run() first")
        span = float(np.max(self.end)) if self.G else 0.0
        tr = Trace(self.sm_of.copy(), self.start.copy(), self.end.copy()) if trace else None
        return SimResult.build(span_s=span, launch_overhead_s=self.wl.launch_overhead_s, grid=self.G,
                               sm_count=self.S, slots_per_sm=self.K, per_sm_busy_s=np.array(self.busy),
                               trace=tr, engine=self.name)


def simulate(workload: Workload, trace: bool = False) -> SimResult:
    eng = ReferenceEngine(workload)
    eng.env.run()
    return eng.result(trace)
