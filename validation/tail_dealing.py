"""Where a launch's partial last wave lands, from per-CTA traces (session 28's evidence; NOTES.md).

After n >= 1 full waves the hardware deals the last R CTAs to slots as they free. When an SM's co-resident CTAs end
together and SMs end at spread-out times, the SMs that free first take k CTAs each (depth-first) and the tail costs a
k-CTA SM's time even for a small R; when an SM's CTAs end spread out, the tail goes one CTA per SM (breadth-first), as
the simulator deals it (its lockstep waves free every slot at once). Per traced launch with a partial wave after full
ones it gives:

  * the SMs the tail used against breadth-first min(R, S) and depth-first ceil(R / k), and the depth share
    (breadth - used) / (breadth - depth): 0 breadth-first, 1 depth-first;
  * the spread of the last full wave's end times within an SM (median over SMs of last minus first end) and across
    SMs (p10 to p90 of each SM's first end), both over the wave's median CTA time;
  * with the GPU's measured GPC layout, the mean end time of each GPC's SMs over the wave's median end, and where
    the tail went, GPC by GPC.

On the H200 traces (validation/data/h200/traces/) the tail is dealt depth-first where the across-SM spread exceeds
the within-SM one: 128x64x32 at 4 CTAs/SM (across 0.09-0.18, within 0.02-0.03: depth share 0.44-0.95), 64x128x64
GROUP_M 1 at 3/SM on 5120^2 (0.07-0.12 against 0.02: 0.5-0.85), and breadth-first where the CTAs of an SM end
spread out (32x64x64 at 7/SM, within 0.12-0.20: 0.00-0.04) or both spreads are small (128x128x64 at 2/SM: 0-0.21).
The across-SM spread is GPC by GPC: the SMs of a GPC end together, the GPCs at different times. At 2 CTAs/SM
(trace_tails2_4096_2sm, session 30) the first SM that takes two of a tail's R <= 132 CTAs comes at R ~ 1.0 x 132 /
n_full (--onset), and from it the launch pays that SM's paired time (slowest tail CTA ~43 us against ~31 alone).

    python3 -m validation.tail_dealing TRACE.npz [TRACE.npz ...] [--gpu h200] [--only REGEX] [--onset [--elapsed [CAL]]]

--onset fits where 2-CTA/SM tails start to pair (paired_onset): on the three 128x128x64 trace files (`--only
'^128x128x64_' trace_tails2_4096_2sm.npz trace_tails_3584x4096.npz trace_half_tile_4096.npz`, 256 launches) the share
with a paired SM is 1 / (1 + exp(-(R n / S - 1.01) / 0.22)). Per file the midpoint falls with K (1.0-1.4 at K = 2048,
0.25-0.45 at K = 8192: trace_tails3_*, trace_tails4_*, session 31); --elapsed fits against the full waves' elapsed
time instead, R n t_full / S with the simulator's t_full: over all 13 files with 128x128x64 at 2/SM (768 launches)
38.8 us, width 11.2, negative log-likelihood 242.6 against 288.6 for R n / S.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

import numpy as np


def tail_dealing(sm: np.ndarray, start: np.ndarray, end: np.ndarray, slots: int, sm_count: int,
                 gpc_of_sm: np.ndarray | None = None) -> dict[str, Any] | None:
    """The partial wave's placement and the last full wave's end spreads of one launch (CTAs in program order,
    `slots` CTAs per SM); None without a full wave or a partial one."""
    sm = np.asarray(sm, dtype=np.int64)
    start, end = np.asarray(start, dtype=np.float64), np.asarray(end, dtype=np.float64)
    wave = slots * sm_count
    n_full, tail = divmod(len(sm), wave)
    if n_full < 1 or tail == 0:
        return None
    last = slice((n_full - 1) * wave, n_full * wave)
    w_sm, w_end = sm[last], end[last]
    cta_time = float(np.median(w_end - start[last]))
    firsts, within = [], []
    for s in np.unique(w_sm):
        e = np.sort(w_end[w_sm == s])
        firsts.append(e[0])
        within.append(e[-1] - e[0])
    t_sm = sm[n_full * wave:]
    used = len(np.unique(t_sm))
    breadth, depth = min(tail, sm_count), -(-tail // slots)
    out: dict[str, Any] = {
        "full_waves": n_full, "tail_ctas": tail, "sms_used": used, "breadth_first": breadth, "depth_first": depth,
        "depth_share": (breadth - used) / (breadth - depth) if breadth > depth else 0.0,
        "within_sm_spread": float(np.median(within)) / cta_time,
        "across_sm_spread": float(np.percentile(firsts, 90) - np.percentile(firsts, 10)) / cta_time,
        "cta_us": cta_time / 1e3, "tail_max_us": float(np.max(end[n_full * wave:] - start[n_full * wave:])) / 1e3,
        "span_us": float(end.max() - start.min()) / 1e3}
    if gpc_of_sm is not None:
        med = float(np.median(w_end))
        gpcs = gpc_of_sm[w_sm]
        out["gpc_end"] = {int(g): float(np.mean(w_end[gpcs == g])) / med for g in np.unique(gpcs)}
        out["gpc_tail"] = {int(g): int(n) for g, n in zip(*np.unique(gpc_of_sm[t_sm], return_counts=True))}
    return out


def trace_tails(paths: list[str], gpu: str = "h200", only: str | None = None) -> list[dict[str, Any]]:
    """tail_dealing for every launch of the trace files (all repetitions), the config's CTAs/SM from the model's
    occupancy on `gpu`; the GPC columns where the GPU's layout is measured."""
    import hwspecs
    from validation.first_wave import gpc_of_sm
    from validation.trace import traced_launches

    spec = hwspecs.load_gpu(gpu)
    try:
        gpcs = gpc_of_sm(spec.id)
    except FileNotFoundError:
        gpcs = None
    pattern = re.compile(only) if only else None
    rows = []
    for path, arrays, meta, key, cfg, M, slots in traced_launches(paths, spec):
        if pattern and not pattern.search(key):
            continue
        a = arrays[key]
        r = tail_dealing(a[:, 0], a[:, 1], a[:, 2], slots, spec.sm_count, gpcs)
        if r is not None:
            rows.append({"file": str(path), "launch": key, "ctas_per_sm": slots, "config": cfg, "M": M,
                         "N": int(meta["N"]), "K": int(meta["K"]), **r})
    return rows


def summary(rows: list[dict[str, Any]], ratio: float = 2.0) -> dict[str, Any]:
    """Median depth share where the across-SM spread exceeds `ratio` x the within-SM one, and where it does not, over
    the tails that depth-first dealing would put on at most half the SMs (a longer tail fills most SMs either way)."""
    told = [r for r in rows if 2 * r["depth_first"] <= r["breadth_first"]]
    apart = [r["depth_share"] for r in told if r["across_sm_spread"] > ratio * r["within_sm_spread"]]
    rest = [r["depth_share"] for r in told if r["across_sm_spread"] <= ratio * r["within_sm_spread"]]
    med = lambda v: float(np.median(v)) if v else float("nan")  # noqa: E731
    return {"ratio": ratio, "apart": {"launches": len(apart), "depth_share": med(apart)},
            "together": {"launches": len(rest), "depth_share": med(rest)}}


def paired_onset(rows: list[dict[str, Any]], spec, params=None) -> dict[str, Any]:
    """Where a 2-CTA/SM tail starts to pair: over the launches with 2 CTAs/SM and a tail of 2..S CTAs after n >= 1
    full waves, the share with an SM holding two tail CTAs against x = R n / S, fitted by maximum likelihood with a
    logistic 1 / (1 + exp(-(x - x0) / width)); with the observed and fitted shares in bins of x (quantiles of x when
    `params` is given). With `params` (a GemmParams), x = R n t_full / S in microseconds instead, t_full the simulator's
    full-wave time of the launch: the elapsed time of the full waves, which the phases' drift follows (NOTES session
    31)."""
    from scipy.optimize import minimize

    S = spec.sm_count
    use = [r for r in rows if r["ctas_per_sm"] == 2 and 2 <= r["tail_ctas"] <= S]
    paired = np.array([float(r["sms_used"] < r["tail_ctas"]) for r in use])
    if len(use) < 10 or len(set(paired)) < 2:
        raise ValueError(f"{len(use)} launches with 2 CTAs/SM and a tail of at most one CTA per SM, not all alike: too "
                         f"few to fit where pairing starts (trace more M around the later waves' tails)")
    x = np.array([r["tail_ctas"] * r["full_waves"] / S for r in use])
    if params is not None:
        from wavesim.kernels.gemm import GemmBatch, simulate_batch

        b = GemmBatch.build(spec, "bf16", *([r[k] for r in use] for k in ("M", "N", "K")), [r["config"] for r in use])
        x = x * simulate_batch(b, params).full_wave_s * 1e6

    def share(p, xs):
        return 1.0 / (1.0 + np.exp(-(xs - p[0]) / np.exp(p[1])))

    def nll(p):
        q = np.clip(share(p, x), 1e-9, 1 - 1e-9)
        return -float(np.sum(paired * np.log(q) + (1 - paired) * np.log(1 - q)))

    start = [1.0, np.log(0.2)] if params is None else [float(np.median(x)), np.log(float(np.std(x)) / 4)]
    fit = minimize(nll, start, method="Nelder-Mead")
    edges = (0.0, 0.5, 0.7, 0.85, 1.0, 1.3, np.inf) if params is None else (0.0, *np.quantile(x, [0.2, 0.4, 0.6, 0.8]), np.inf)
    bins = [{"x": (lo, hi), "launches": int(m.sum()), "paired": float(paired[m].mean()),
             "fitted": float(share(fit.x, x[m]).mean())}
            for lo, hi in zip(edges, edges[1:]) if (m := (x >= lo) & (x < hi)).any()]
    return {"launches": len(x), "x0": float(fit.x[0]), "width": float(np.exp(fit.x[1])), "nll": float(fit.fun),
            "bins": bins}


def main(argv: list[str] | None = None) -> int:
    import hwspecs

    ap = argparse.ArgumentParser(prog="python3 -m validation.tail_dealing", description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+", help="per-CTA trace .npz files (`wavetune trace`), each with its .json")
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--only", help="only the launches whose key (config/M.../r...) matches this regex")
    ap.add_argument("--onset", action="store_true", help="only the fit of where 2-CTA/SM tails start to pair")
    ap.add_argument("--elapsed", nargs="?", const="auto", metavar="CALIBRATION",
                    help="with --onset: against the full waves' elapsed time, R n t_full / S in us, t_full simulated "
                         "with CALIBRATION (a JSON file; default auto, the shipped one)")
    a = ap.parse_args(argv)
    try:
        rows = trace_tails(a.traces, a.gpu, a.only)
        spec = hwspecs.load_gpu(a.gpu)
        params = None
        if a.elapsed:
            from wavesim.calibration import load_calibration

            params = load_calibration(a.elapsed, spec.id)
        onset = paired_onset(rows, spec, params) if a.onset else None
    except (ValueError, FileNotFoundError) as e:
        print(f"validation.tail_dealing: {e}", file=sys.stderr)
        return 2
    if onset:
        x = "R n t_full / S (us)" if a.elapsed else "R n / S"
        print(f"{onset['launches']} launches at 2 CTAs/SM with a tail of at most one CTA per SM: share with a paired SM "
              f"= 1 / (1 + exp(-({x} - {onset['x0']:.2f}) / {onset['width']:.2f})), negative log-likelihood "
              f"{onset['nll']:.1f}")
        for b in onset["bins"]:
            print(f"  {x} in [{b['x'][0]:.2f}, {b['x'][1]:.2f}): {b['launches']:3d} launches, paired {b['paired']:.2f}, "
                  f"fitted {b['fitted']:.2f}")
        return 0
    for r in rows:
        gpc = ""
        if "gpc_end" in r:
            gpc = "  GPC end/tail " + " ".join(f"{g}:{e:.2f}/{r['gpc_tail'].get(g, 0)}" for g, e in r["gpc_end"].items())
        print(f"{r['launch']:32s} {r['ctas_per_sm']:2d}/SM tail {r['tail_ctas']:4d} CTAs on {r['sms_used']:3d} SMs "
              f"(breadth {r['breadth_first']:3d}, depth {r['depth_first']:3d}): depth share {r['depth_share']:.2f}; "
              f"end spread within SM {r['within_sm_spread']:.3f}, across SMs {r['across_sm_spread']:.3f}; slowest tail CTA "
              f"{r['tail_max_us']:.1f} us (last full wave's CTA {r['cta_us']:.1f}), span {r['span_us']:.1f} us{gpc}")
    if not rows:
        print("no launch with a full wave and a partial one")
        return 0
    s = summary(rows)
    print(f"{len(rows)} launches; of the tails depth-first would put on at most half the SMs, depth share median "
          f"{s['apart']['depth_share']:.2f} over {s['apart']['launches']} where the across-SM spread > {s['ratio']:g} x "
          f"the within-SM one, {s['together']['depth_share']:.2f} over {s['together']['launches']} elsewhere")
    return 0


if __name__ == "__main__":
    sys.exit(main())
