"""`Workload`: what a kernel model hands to the engines (see wavesim.engine for the model)."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

_ARRAYS = ("compute_s", "solo_frac", "dram_bytes", "mem_cap_Bps", "fixed_s", "l2_bytes")


def _as_array(x, n: int | None, name: str) -> np.ndarray:
    a = np.array(x, dtype=np.float64, copy=True)
    if a.ndim == 0:
        if n is None:
            raise ValueError(f"{name}: a scalar needs the grid size (pass an array for compute_s)")
        a = np.full(n, float(a))
    if a.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array, got shape {a.shape}")
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Workload:
    """G CTAs in launch order (index order) plus the machine they share.

    Per-CTA arrays (float64, length G, read-only):
      compute_s    seconds of math if the CTA had its SM's whole math throughput (>= 0)
      solo_frac    (0, 1]: the most of its SM's math throughput the CTA can use alone
      dram_bytes   bytes moved from DRAM after L2 reuse (>= 0)
      mem_cap_Bps  the most DRAM bandwidth the CTA can draw alone (> 0 where dram_bytes > 0)
      fixed_s      slot-holding latency with no shared throughput, before the fluid phase (>= 0)
      l2_bytes     bytes moved from L2 into the SM (>= 0; 0, the default, leaves the L2 pool out)
    Scalars: sm_count, slots_per_sm (>= 1), dram_Bps (> 0, shared by all SMs),
    launch_overhead_s (added once to the makespan), sm_throughput (capacity unit of an SM, 1.0),
    l2_Bps (> 0, the L2-to-SM bandwidth shared by all SMs), desync_rate (>= 0: the expected
    de-synchronisation of later waves, a closed-form term, desync.py; 0, the default, is lockstep),
    load_slowdown (>= 0: kappa of the chip-load rule, wavesim.engine; 0, the default, leaves it out),
    sm_queueing (True: co-resident CTAs also queue for their SM below its capacity, queueing.py; False, the
    default, is fair sharing alone).

    Scalars given for a per-CTA field are broadcast to the grid size (taken from compute_s).
    """

    compute_s: np.ndarray
    solo_frac: np.ndarray
    dram_bytes: np.ndarray
    mem_cap_Bps: np.ndarray
    fixed_s: np.ndarray
    sm_count: int
    slots_per_sm: int
    dram_Bps: float
    launch_overhead_s: float = 0.0
    sm_throughput: float = 1.0
    l2_bytes: np.ndarray | float = 0.0
    l2_Bps: float = 1.0
    desync_rate: float = 0.0
    load_slowdown: float = 0.0
    sm_queueing: bool = False

    def __post_init__(self):
        n = None
        cs = np.asarray(self.compute_s)
        if cs.ndim == 1:
            n = cs.shape[0]
        arrays = {name: _as_array(getattr(self, name), n, name) for name in _ARRAYS}
        n = arrays["compute_s"].shape[0]
        for name, a in arrays.items():
            if a.shape[0] != n:
                raise ValueError(f"{name}: length {a.shape[0]} != grid size {n}")
            if not np.all(np.isfinite(a)):
                raise ValueError(f"{name}: values must be finite")
            object.__setattr__(self, name, a)
        object.__setattr__(self, "sm_count", int(self.sm_count))
        object.__setattr__(self, "slots_per_sm", int(self.slots_per_sm))
        object.__setattr__(self, "dram_Bps", float(self.dram_Bps))
        object.__setattr__(self, "launch_overhead_s", float(self.launch_overhead_s))
        object.__setattr__(self, "sm_throughput", float(self.sm_throughput))
        object.__setattr__(self, "l2_Bps", float(self.l2_Bps))
        object.__setattr__(self, "desync_rate", float(self.desync_rate))
        object.__setattr__(self, "load_slowdown", float(self.load_slowdown))
        if not isinstance(self.sm_queueing, (bool, np.bool_)):
            raise ValueError(f"sm_queueing must be True or False, got {self.sm_queueing!r}")
        object.__setattr__(self, "sm_queueing", bool(self.sm_queueing))
        if self.sm_count < 1:
            raise ValueError("sm_count must be >= 1")
        if self.slots_per_sm < 1:
            raise ValueError("slots_per_sm must be >= 1")
        if not self.dram_Bps > 0:
            raise ValueError("dram_Bps must be > 0")
        if not self.l2_Bps > 0:
            raise ValueError("l2_Bps must be > 0")
        if self.sm_throughput != 1.0:
            raise ValueError("sm_throughput is the capacity unit of an SM and must be 1.0")
        if self.launch_overhead_s < 0:
            raise ValueError("launch_overhead_s must be >= 0")
        for name in ("desync_rate", "load_slowdown"):
            if not (getattr(self, name) >= 0 and np.isfinite(getattr(self, name))):
                raise ValueError(f"{name} must be a finite number >= 0")
        a = arrays
        if any(np.any(a[k] < 0) for k in ("compute_s", "dram_bytes", "fixed_s", "l2_bytes")):
            raise ValueError("compute_s, dram_bytes, fixed_s and l2_bytes must be >= 0")
        if np.any(a["solo_frac"] <= 0) or np.any(a["solo_frac"] > 1):
            raise ValueError("solo_frac must lie in (0, 1]")
        if np.any((a["dram_bytes"] > 0) & ~(a["mem_cap_Bps"] > 0)):
            raise ValueError("mem_cap_Bps must be > 0 where dram_bytes > 0")

    # ------------------------------------------------------------------ helpers
    @property
    def grid(self) -> int:
        return int(self.compute_s.shape[0])

    @property
    def capacity(self) -> int:
        """CTAs resident at once when every slot is full: sm_count * slots_per_sm."""
        return self.sm_count * self.slots_per_sm

    @property
    def waves(self) -> int:
        return -(-self.grid // self.capacity)

    @classmethod
    def uniform(cls, grid: int, *, compute_s: float, solo_frac: float = 1.0, dram_bytes: float = 0.0,
                mem_cap_Bps: float = 1.0, fixed_s: float = 0.0, sm_count: int, slots_per_sm: int = 1,
                dram_Bps: float = 1.0, launch_overhead_s: float = 0.0, l2_bytes: float = 0.0,
                l2_Bps: float = 1.0, desync_rate: float = 0.0, load_slowdown: float = 0.0,
                sm_queueing: bool = False) -> "Workload":
        """G identical CTAs."""
        g = int(grid)
        return cls(np.full(g, float(compute_s)), np.full(g, float(solo_frac)), np.full(g, float(dram_bytes)),
                   np.full(g, float(mem_cap_Bps)), np.full(g, float(fixed_s)), sm_count, slots_per_sm,
                   dram_Bps, launch_overhead_s, l2_bytes=np.full(g, float(l2_bytes)), l2_Bps=l2_Bps,
                   desync_rate=desync_rate, load_slowdown=load_slowdown, sm_queueing=sm_queueing)

    def is_uniform(self) -> bool:
        """True when every per-CTA array is constant (then the closed form is exact)."""
        if self.grid == 0:
            return True
        return all(bool(np.all(getattr(self, n) == getattr(self, n)[0])) for n in _ARRAYS)

    def with_jitter(self, cv: float, seed: int = 0, dist: str = "gamma") -> "Workload":
        """A copy whose compute_s and fixed_s are scaled by one seeded factor per CTA.

        The factors have mean 1 and coefficient of variation ``cv``; they are drawn with
        ``numpy.random.default_rng(seed)`` in CTA order, ``grid`` draws in one call, so the first
        n CTAs of a longer launch get the same factors as a launch of n CTAs. Both engines run
        the jittered copy, so their answers stay identical. dram_bytes is not jittered.
        """
        if cv < 0:
            raise ValueError("jitter cv must be >= 0")
        if cv == 0 or self.grid == 0:
            return self
        f = jitter_factors(self.grid, cv, seed, dist)
        return replace(self, compute_s=self.compute_s * f, fixed_s=self.fixed_s * f)


def jitter_factors(n: int, cv: float, seed: int = 0, dist: str = "gamma") -> np.ndarray:
    """n multiplicative factors, mean 1, coefficient of variation cv, from Generator(seed)."""
    rng = np.random.default_rng(seed)
    if cv == 0:
        return np.ones(n)
    if dist == "gamma":
        k = 1.0 / (cv * cv)  # shape; scale 1/k gives mean 1, var 1/k = cv^2
        return rng.gamma(k, 1.0 / k, size=n)
    if dist == "lognormal":
        s2 = np.log1p(cv * cv)
        return rng.lognormal(-0.5 * s2, np.sqrt(s2), size=n)
    raise ValueError(f"unknown jitter distribution {dist!r} (gamma, lognormal)")
