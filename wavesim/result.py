"""`SimResult`: what a wavesim engine returns for one launch."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class Trace:
    """Per-CTA placement and times (seconds from the start of the first CTA, no launch overhead).

    sm[i]: SM index of CTA i; start_s[i]: dispatch time (slot taken); end_s[i]: end (slot freed).
    """

    sm: np.ndarray
    start_s: np.ndarray
    end_s: np.ndarray

    def wave_of(self, capacity: int) -> np.ndarray:
        """Wave index of each CTA by launch order: i // (sm_count * slots_per_sm)."""
        return np.arange(self.sm.shape[0]) // int(capacity)


@dataclass(frozen=True, eq=False)
class SimResult:
    """One simulated launch.

    makespan_s        launch_overhead_s + the time the last CTA ends
    span_s            the time the last CTA ends (makespan without launch overhead)
    waves             ceil(grid / (sm_count * ctas_per_sm))  (0 for an empty grid)
    grid              number of CTAs G
    ctas_per_sm       slots per SM (occupancy)
    per_sm_busy_s     float array [sm_count]: time each SM held at least one CTA
    tail_utilization  mean over SMs of per_sm_busy_s / span_s: the fraction of SM-time, from the
                      first dispatch to the last end, in which an SM held work. 1.0 when every SM
                      is busy until the end (full waves, no jitter); a partial or ragged last wave
                      lowers it. 1.0 for an empty grid.
    last_wave_fill    slots the last wave fills / slots of a wave = (G - (waves-1)*cap) / cap,
                      a pure count (1.0 for full waves, 1/cap for one CTA in the last wave).
    trace             Trace or None (only when asked for)
    engine            "reference", "fast" or "closed_form"
    """

    makespan_s: float
    span_s: float
    waves: int
    grid: int
    ctas_per_sm: int
    per_sm_busy_s: np.ndarray
    tail_utilization: float
    last_wave_fill: float
    trace: Trace | None
    engine: str

    @staticmethod
    def build(*, span_s: float, launch_overhead_s: float, grid: int, sm_count: int, slots_per_sm: int,
              per_sm_busy_s: np.ndarray, trace: Trace | None, engine: str) -> "SimResult":
        cap = sm_count * slots_per_sm
        waves = -(-grid // cap)
        busy = np.asarray(per_sm_busy_s, dtype=np.float64)
        busy.setflags(write=False)
        util = float(np.mean(busy) / span_s) if span_s > 0 else 1.0
        fill = (grid - (waves - 1) * cap) / cap if grid > 0 else 1.0
        return SimResult(makespan_s=float(launch_overhead_s + span_s), span_s=float(span_s), waves=int(waves),
                         grid=int(grid), ctas_per_sm=int(slots_per_sm), per_sm_busy_s=busy,
                         tail_utilization=min(1.0, util), last_wave_fill=float(fill), trace=trace, engine=engine)
