"""Throughput of the wavesim engines.

    python3 benchmarks/bench_engines.py [--repeats 5] [--json]

Reports the median of several runs of:
  * reference engine (simpy, pure Python): CTA events per second
  * fast engine (numba): CTA events per second (compile time excluded: one warm-up run first)
  * batched closed form (numpy): uniform launches priced per second

A "CTA event" is a dispatch or an end, so one CTA is 2 events; "rounds" (event times the engine stops at,
each with a rate recomputation) are reported too. The workloads are synthetic: random per-CTA arrays
with DRAM contention and fixed latency, on a machine of --sms SMs x --slots slots.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wavesim.engine import Workload, run_uniform_batch  # noqa: E402
from wavesim.engine import fast as fast_engine  # noqa: E402
from wavesim.engine.reference import ReferenceEngine  # noqa: E402


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}; {os.cpu_count()} logical CPUs visible (shared); Python {platform.python_version()}"


def random_workload(G: int, S: int, K: int, seed: int = 0) -> Workload:
    rng = np.random.default_rng(seed)
    return Workload(rng.uniform(0.5, 2, G), rng.uniform(0.2, 1, G), rng.uniform(0, 4, G), rng.uniform(0.5, 2, G),
                    rng.uniform(0, 0.5, G), S, K, dram_Bps=0.6 * S * K)


def _median_time(fn, repeats: int) -> float:
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def bench(repeats: int, sms: int, slots: int, ref_grid: int, fast_grid: int, batch_n: int) -> dict:
    out = {"machine": machine(), "repeats": repeats, "sms": sms, "slots_per_sm": slots}

    wl = random_workload(ref_grid, sms, slots)
    rounds = {}

    def ref():
        eng = ReferenceEngine(wl)
        eng.env.run()
        rounds["ref"] = eng.rounds

    t = _median_time(ref, repeats)
    out["reference"] = {"grid": ref_grid, "seconds": t, "rounds": rounds["ref"], "cta_events_per_s": 2 * ref_grid / t,
                        "rounds_per_s": rounds["ref"] / t}

    wl = random_workload(fast_grid, sms, slots)
    fast_engine.simulate_arrays(random_workload(10, sms, slots))  # compile / load the cache

    def fst():
        rounds["fast"] = fast_engine.simulate_arrays(wl)[4]

    t = _median_time(fst, repeats)
    out["fast"] = {"grid": fast_grid, "seconds": t, "rounds": int(rounds["fast"]),
                   "cta_events_per_s": 2 * fast_grid / t, "rounds_per_s": rounds["fast"] / t}

    rng = np.random.default_rng(1)
    n = batch_n
    args = dict(grid=rng.integers(1, 20000, n), sm_count=rng.integers(16, 200, n), slots_per_sm=rng.integers(1, 9, n),
                compute_s=rng.uniform(1e-6, 1e-4, n), solo_frac=rng.uniform(0.1, 1, n),
                dram_bytes=rng.uniform(0, 1e6, n), mem_cap_Bps=rng.uniform(1e9, 5e10, n),
                fixed_s=rng.uniform(0, 5e-6, n), dram_Bps=rng.uniform(1e12, 8e12, n), launch_overhead_s=3e-6)
    run_uniform_batch(**{k: (v[:10] if isinstance(v, np.ndarray) else v) for k, v in args.items()})
    t = _median_time(lambda: run_uniform_batch(**args), repeats)
    out["closed_form_batch"] = {"launches": n, "seconds": t, "launches_per_s": n / t}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--slots", type=int, default=2)
    ap.add_argument("--ref-grid", type=int, default=2000)
    ap.add_argument("--fast-grid", type=int, default=50000)
    ap.add_argument("--batch", type=int, default=1_000_000)
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    a = ap.parse_args(argv)
    r = bench(a.repeats, a.sms, a.slots, a.ref_grid, a.fast_grid, a.batch)
    if a.json:
        print(json.dumps(r))
        return 0
    print(f"machine: {r['machine']}")
    print(f"workload: random CTAs with DRAM contention, {a.sms} SMs x {a.slots} slots; median of {a.repeats} runs")
    for name in ("reference", "fast"):
        e = r[name]
        print(f"{name:10s} G={e['grid']:>7d}  {e['seconds']:8.4f} s  {e['cta_events_per_s']:12.4g} CTA events/s  "
              f"({e['rounds']} rounds, {e['rounds_per_s']:.4g} rounds/s)")
    b = r["closed_form_batch"]
    print(f"closed form batch  n={b['launches']:>7d}  {b['seconds']:8.4f} s  {b['launches_per_s']:12.4g} launches/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
