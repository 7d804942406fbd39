"""How the H200 deals a later wave's tail at 2 CTAs/SM, from per-CTA traces (session 30; no GPU needed).

The simulator deals a partial wave breadth-first, one CTA per SM until every SM has one, so at 2 CTAs/SM a tail of
R <= sm_count CTAs runs alone on its SMs (a lone CTA takes about 0.65 of a paired one). Per traced launch this
prints the tail (the last R = grid mod (sm_count x slots) CTAs to start), how many SMs held two of them, the median
and slowest tail CTA, a full-wave CTA, the span, and the mean count of such SMs if the R slots were taken at random
among the sm_count x slots (R (R - 1) / (2 (2 S - 1)) at 2 slots). On 128x128x64 after 3 full waves on 3584 x 4096
the hardware puts two tail CTAs on 0 SMs at R = 20, 1-4 at 48, 12-37 at 104 (random: 0.7, 4.3, 20), and the span
follows the slowest tail CTA: it pays the paired time from the first paired SM on.

    python3 -m validation.tail_pairs validation/data/h200/traces/trace_tails_3584x4096.npz [--slots 2] [--only KEY]
"""

from __future__ import annotations

import argparse
import re
import sys

import numpy as np


def random_pairs(R: int, S: int) -> float:
    """Expected SMs holding two of R slots taken at random among the 2 S slots of S SMs."""
    return R * (R - 1) / (2.0 * (2 * S - 1)) if R >= 2 else 0.0


def tail_rows(path: str, gpu: str = "h200", slots: int = 2, only: str | None = None) -> list[dict]:
    """One row per traced launch with slots CTAs/SM and a partial last wave after at least one full wave."""
    import hwspecs
    from validation.trace import load_traces

    S = hwspecs.load_gpu(gpu).sm_count
    arrays, meta = load_traces(path)
    rows = []
    for key, a in sorted(arrays.items(), key=lambda kv: _order(kv[0])):
        if only and only not in key:
            continue
        sm, start, end = a[:, 0].astype(np.int64), a[:, 1], a[:, 2]
        G, W = len(sm), S * slots
        n_full, R = divmod(G, W)
        if n_full < 1 or R < 1 or sm.max() >= S:
            continue
        order = np.argsort(start, kind="stable")
        tail, first = order[-R:], order[:W]
        dur = (end - start) * 1e-3   # us
        paired = int(np.sum(np.bincount(sm[tail], minlength=S) >= 2))
        rows.append({"launch": key, "grid": G, "n_full": n_full, "R": R, "paired_sms": paired,
                     "random_pairs": random_pairs(R, S) if slots == 2 else float("nan"),
                     "tail_median_us": float(np.median(dur[tail])), "tail_max_us": float(dur[tail].max()),
                     "full_wave_median_us": float(np.median(dur[first])),
                     "span_us": float((end.max() - start.min()) * 1e-3)})
    if not rows:
        raise ValueError(f"{path}: no launch with {slots} CTAs/SM worth of full waves and a partial last wave "
                         f"(is --slots the config's occupancy?)")
    return rows


def _order(key: str) -> tuple:
    m = re.match(r"(.*)/M(\d+)/r(\d+)$", key)
    return (m.group(1), int(m.group(2)), int(m.group(3))) if m else (key, 0, 0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m validation.tail_pairs", description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", help="a trace file of `wavetune trace` (.npz with its .json sidecar)")
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--slots", type=int, default=2, help="CTAs per SM of the traced configs (default 2)")
    ap.add_argument("--only", help="only launches whose key contains this text (e.g. 128x128x64_g4)")
    a = ap.parse_args(argv)
    try:
        rows = tail_rows(a.traces, a.gpu, a.slots, a.only)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{'launch':40s} {'grid':>5s} {'full':>4s} {'R':>4s} {'paired SMs':>10s} {'random':>6s} "
          f"{'tail med':>8s} {'tail max':>8s} {'full CTA':>8s} {'span':>7s}  (us)")
    for r in rows:
        print(f"{r['launch']:40s} {r['grid']:5d} {r['n_full']:4d} {r['R']:4d} {r['paired_sms']:10d} "
              f"{r['random_pairs']:6.1f} {r['tail_median_us']:8.1f} {r['tail_max_us']:8.1f} "
              f"{r['full_wave_median_us']:8.1f} {r['span_us']:7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
