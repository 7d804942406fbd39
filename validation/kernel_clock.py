"""The SM clock inside GEMM launches timed as the profiler times them, from per-CTA traces (no GPU needed).

    python3 -m validation.kernel_clock validation/data/h200/traces/*.npz

Every traced CTA stores its clock64 cycles and its globaltimer nanoseconds (validation/kernels/gemm_trace.py, L2
flushed before each launch as in validation/profiler.py), so cycles / ns is the SM clock it ran at. NVML, read between
launches, mostly reports the boost clock; inside the kernel the clock follows the launch's tensor work within
microseconds, long before the board reaches its power cap (validation/power_law.py: the held, capped regime).
Least squares over the launches (each: the median clock of its CTAs) of

    clock_MHz = intercept - slope x PFLOP/s

with a launch's tensor FLOPs (2 x BM x BN x BK per K step per traced CTA: the tiles' work, as the simulator counts it)
over its traced span; and the same with the slope growing per decade of the launch's span (below). On the H200's
traces taken up to session 21: 2128 launches, clock = 1854 MHz - 413 per PFLOP/s, R^2 0.55, rms 65 MHz; files'
medians 1537-1772 MHz, against NVML's 1980. On 48 configs it never saw (session 22,
trace_clock_blind_4096.npz) its residuals are -14 MHz mean, 41 rms; over all the committed traces: 2252 launches,
1848 MHz - 401 per PFLOP/s (2359 with session 23's per-step traces: 1847 - 394). The method is exact at a steady
clock (a spinning CTA reads 1980 MHz, as NVML), and on a held GEMM NVML reads 1515 MHz where the kernel runs at 1352
(validation/scripts/clock_crosscheck.py). The slope depends on how long the launch runs: over the 2415 launches
committed by session 24, clock = 1842 MHz - (223 + 170 x log10(span / 20 us)) per PFLOP/s, rms 55 MHz against 64 for
one slope (spans of 20 us to 1.3 ms: the clock falls with the tensor work over tens to hundreds of microseconds, so
a short launch runs faster per FLOP than one slope says). The simulator assumes the boost clock throughout (its
calibrated efficiencies absorb the mean); a launch clock on these laws was tried and not shipped (NOTES.md, sessions
22 and 24).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

from validation.trace import load_traces
from wavetune.config import LaunchConfig

MIN_LAUNCHES = 8  # a line through fewer launches says little
# The span the law by span is referred to (its slope at this span): about the shortest traced launches.
SPAN_REF_S = 20e-6


def launch_clocks(trace_files: list[str | Path]) -> list[dict]:
    """One row per traced launch: file, key, median in-kernel clock (MHz), traced span (s), tensor PFLOP/s."""
    rows = []
    for f in trace_files:
        arrays, meta = load_traces(f)
        if "N" not in meta or "K" not in meta:
            raise ValueError(f"{f}: the trace's .json sidecar has no N and K (`wavetune trace` writes them)")
        for key, a in sorted(arrays.items()):
            cfg = LaunchConfig.from_key(key.split("/")[0])
            start, end, cycles = a[:, 1].astype(np.float64), a[:, 2].astype(np.float64), a[:, 3].astype(np.float64)
            dur = end - start
            ok = dur > 0
            if not ok.any():
                continue
            span_s = (end.max() - start.min()) * 1e-9
            flops = 2.0 * cfg.BLOCK_M * cfg.BLOCK_N * cfg.BLOCK_K * math.ceil(meta["K"] / cfg.BLOCK_K) * len(a)
            rows.append({"file": Path(f).name, "key": key, "mhz": float(np.median(cycles[ok] / dur[ok]) * 1e3),
                         "span_s": float(span_s), "pflops": flops / span_s / 1e15})
    return rows


def kernel_clock_law(trace_files: list[str | Path]) -> dict:
    """The least-squares line clock_MHz = intercept - slope x PFLOP/s over the traced launches, with per-file
    medians."""
    rows = launch_clocks(trace_files)
    if len(rows) < MIN_LAUNCHES:
        raise ValueError(f"{len(rows)} traced launches in {[str(f) for f in trace_files]}: too few to fit a clock law "
                         f"(need {MIN_LAUNCHES}; collect more with `wavetune trace`)")
    mhz = np.array([r["mhz"] for r in rows])
    pflops = np.array([r["pflops"] for r in rows])
    X = np.column_stack([np.ones(len(rows)), pflops])
    coef, *_ = np.linalg.lstsq(X, mhz, rcond=None)
    resid = mhz - X @ coef
    # The same line with a slope that grows with the launch's span: the clock follows the tensor work with a lag, so
    # a short launch ends before it has fallen as far as a long one's (session 24: 223 + 170 per decade of span).
    decades = np.log10(np.maximum([r["span_s"] for r in rows], 1e-9) / SPAN_REF_S)
    Xs = np.column_stack([np.ones(len(rows)), pflops, pflops * decades])
    coef_s, *_ = np.linalg.lstsq(Xs, mhz, rcond=None)
    resid_s = mhz - Xs @ coef_s
    files = {}
    for name in dict.fromkeys(r["file"] for r in rows):
        mine = [r for r in rows if r["file"] == name]
        files[name] = {"launches": len(mine), "mhz_median": float(np.median([r["mhz"] for r in mine])),
                       "pflops_median": float(np.median([r["pflops"] for r in mine]))}
    return {"launches": len(rows), "intercept_mhz": float(coef[0]), "mhz_per_pflops": float(-coef[1]),
            "r2": float(1.0 - resid.var() / mhz.var()) if mhz.var() > 0 else 1.0,
            "rms_mhz": float(np.sqrt(np.mean(resid ** 2))), "files": files,
            "by_span": {"intercept_mhz": float(coef_s[0]), "mhz_per_pflops_at_ref": float(-coef_s[1]),
                        "more_per_decade": float(-coef_s[2]), "span_ref_s": SPAN_REF_S,
                        "rms_mhz": float(np.sqrt(np.mean(resid_s ** 2)))}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m validation.kernel_clock", description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+", help="trace .npz files (each with its .json sidecar)")
    a = ap.parse_args(argv)
    try:
        r = kernel_clock_law(a.traces)
    except (ValueError, OSError) as e:
        print(f"validation.kernel_clock: {e}", file=sys.stderr)
        return 2
    for name, f in r["files"].items():
        print(f"{name}: {f['launches']} launches, in-kernel clock median {f['mhz_median']:.0f} MHz at "
              f"{f['pflops_median']:.2f} PFLOP/s")
    print(f"{r['launches']} launches: clock = {r['intercept_mhz']:.0f} MHz - {r['mhz_per_pflops']:.0f} per PFLOP/s "
          f"(R^2 {r['r2']:.2f}, rms {r['rms_mhz']:.0f} MHz)")
    b = r["by_span"]
    print(f"by span: clock = {b['intercept_mhz']:.0f} MHz - ({b['mhz_per_pflops_at_ref']:.0f} + {b['more_per_decade']:.0f} x "
          f"log10(span / {b['span_ref_s'] * 1e6:.0f} us)) per PFLOP/s (rms {b['rms_mhz']:.0f} MHz)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
