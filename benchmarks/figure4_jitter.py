"""The WaveTune paper's Figure 4 experiment, on the wavesim engines.

    python3 benchmarks/figure4_jitter.py OUT.png [--max-ctas 700] [--seeds 8] [--cvs 0,0.1,0.3,0.5] [--json]

132 SMs, 1 CTA slot per SM, compute-only CTAs with a fixed mean block latency (1 time unit), and the
block latency jittered per CTA (gamma, mean 1, coefficient of variation cv). Latency (makespan in units
of the mean block latency) against the number of CTAs 1..max: with cv = 0 it is a staircase with steps
at multiples of 132; as cv grows the steps soften (the last wave starts early on SMs whose earlier CTAs
were short, and the max over SMs of a sum of jittered latencies grows smoothly with the grid).
Jittered curves are the mean over --seeds seeds (seed s draws the same per-CTA factors for every grid
size, so each seed's curve is a consistent launch-by-launch prefix). Synthetic inputs, no hardware
numbers beyond the SM count the paper's figure uses.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wavesim.engine import Workload, run  # noqa: E402
from wavesim.plots import plot_staircase  # noqa: E402

SMS = 132  # the figure's machine: 132 SMs (an experiment parameter, not a hardware table)


def curves(max_ctas: int, cvs: list[float], seeds: int, sms: int = SMS) -> tuple[np.ndarray, dict[float, np.ndarray]]:
    grids = np.arange(1, max_ctas + 1)
    out = {}
    for cv in cvs:
        ys = np.zeros(len(grids))
        n_seeds = 1 if cv == 0 else seeds
        for seed in range(n_seeds):
            for k, g in enumerate(grids):
                wl = Workload.uniform(int(g), compute_s=1.0, solo_frac=1.0, sm_count=sms, slots_per_sm=1)
                ys[k] += run(wl, engine="auto" if cv == 0 else "fast", jitter_cv=cv, seed=seed).makespan_s
        out[cv] = ys / n_seeds
    return grids, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="WaveTune Figure 4: the wave staircase softens with block-latency jitter")
    ap.add_argument("png", help="output PNG path")
    ap.add_argument("--max-ctas", type=int, default=700)
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--cvs", default="0,0.1,0.3,0.5")
    ap.add_argument("--sms", type=int, default=SMS)
    ap.add_argument("--json", action="store_true", help="also print the curves as one JSON object")
    a = ap.parse_args(argv)
    cvs = [float(x) for x in a.cvs.split(",")]
    grids, ys = curves(a.max_ctas, cvs, a.seeds, a.sms)
    plot_staircase(grids, {f"cv = {cv:g}": ys[cv] for cv in cvs}, a.png, "number of CTAs",
                   "latency / mean block latency",
                   title=f"{a.sms} SMs, 1 CTA/SM, compute-only CTAs: the staircase softens with jitter")
    show = [g for g in (1, a.sms // 2, a.sms, a.sms + 1, 2 * a.sms, 2 * a.sms + 1, 3 * a.sms, 3 * a.sms + 1,
                        4 * a.sms, 5 * a.sms, a.max_ctas) if 1 <= g <= a.max_ctas]
    show = sorted(set(show))
    print(f"latency (units of the mean block latency), {a.sms} SMs x 1 slot, mean of {a.seeds} seeds for cv > 0")
    print("  CTAs " + "".join(f"  cv={cv:<5g}" for cv in cvs))
    for g in show:
        print(f"{g:6d} " + "".join(f"  {ys[cv][g - 1]:8.3f}" for cv in cvs))
    # step height at the first wave boundary, relative to the flat staircase (1.0 = a full step)
    if a.max_ctas > a.sms:
        print("step at CTAs %d->%d: " % (a.sms, a.sms + 1)
              + ", ".join(f"cv={cv:g}: {ys[cv][a.sms] - ys[cv][a.sms - 1]:.3f}" for cv in cvs))
    print(f"wrote {a.png}")
    if a.json:
        print(json.dumps({"grids": grids.tolist(), "curves": {str(cv): ys[cv].tolist() for cv in cvs}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
