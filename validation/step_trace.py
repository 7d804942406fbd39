"""What each K step of a CTA took, from per-step traces (no GPU needed to read them).

    wavetune trace --configs C.jsonl --N 4096 --K 4096 --M 512,640 --reps 1 --steps --out T.npz   # GPU
    python3 -m validation.step_trace T.npz [...]                                                  # anywhere

`wavetune trace --steps` stores, with the per-CTA trace, the SM cycles each K step of each CTA took, between
%clock64 reads right after a step's dot is issued and the previous step's MMA has completed, before the next loads
go out (validation/kernels/gemm.py; the pipelined loop is otherwise the plain kernel's); the first counts from the
CTA's start. Per launch this gives the first step (the prologue's loads: num_stages - 1 stages of DRAM and L2
latency), the steady step (the median interval from the third step on: what the simulator calls a lone CTA's step, or
its share of a busy SM), the early and late quarters of the loop (does a CTA speed up once its wave falls out of
step?), the epilogue, and the steady step by how many CTAs the SM holds (in one-wave launches, how much a co-resident
CTA costs per step). Over all the launches given it fits the lone CTA's step law (lone_step_law): the fixed latency
and the fill rate of a stage's loads, the chain a CTA alone on its SM waits on where its math does not bind.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from validation.trace import load_trace_file

STEADY_FROM = 2   # the first two intervals carry the prologue (pipeline fill); the steady step starts after them


def launch_steps(trace: np.ndarray, steps: np.ndarray) -> dict:
    """One launch: `trace` CTAs x (smid, start_ns, end_ns, cycles), `steps` CTAs x L (the cycles of each K step, the
    first from the CTA's start). Medians over CTAs, in SM cycles (clock_mhz converts them)."""
    if steps.ndim != 2 or steps.shape[0] != trace.shape[0]:
        raise ValueError(f"steps of shape {steps.shape} do not match a trace of {trace.shape[0]} CTAs")
    L = steps.shape[1]
    steady = steps[:, STEADY_FROM:] if L > STEADY_FROM else steps[:, 1:]
    per_cta = np.median(steady, axis=1) if steady.shape[1] else np.full(len(trace), np.nan)
    q = max(1, steady.shape[1] // 4)
    sm = trace[:, 0].astype(int)
    on_sm = np.bincount(sm)[sm]
    dur_ns = (trace[:, 2] - trace[:, 1]).astype(np.float64)
    return {"ctas": int(len(trace)), "k_steps": int(L),
            "first_step_cycles": float(np.median(steps[:, 0])),
            "steady_step_cycles": float(np.median(per_cta)),
            "early_quarter_cycles": float(np.median(steady[:, :q])) if steady.size else float("nan"),
            "late_quarter_cycles": float(np.median(steady[:, -q:])) if steady.size else float("nan"),
            "epilogue_cycles": float(np.median(trace[:, 3] - steps.astype(np.int64).sum(axis=1))),
            "steady_by_ctas_on_sm": {str(n): float(np.median(per_cta[on_sm == n])) for n in np.unique(on_sm)},
            "clock_mhz": float(np.median(trace[:, 3] / np.maximum(dur_ns, 1.0)) * 1e3)}


def step_profile(path: str | Path) -> list[dict]:
    """launch_steps of every traced launch of a trace file collected with `wavetune trace --steps`."""
    arrays, steps, meta = load_trace_file(path)
    if not steps:
        raise ValueError(f"{path}: no per-step arrays; collect with `wavetune trace --steps`")
    rows = []
    for key in sorted(steps, key=lambda k: (k.split("/")[0], int(k.split("/")[1][1:]), k)):
        if key not in arrays:
            raise ValueError(f"{path}: per-step launch {key!r} has no trace row")
        cfg, m, rep = key.split("/")
        rows.append({"N": meta["N"], "K": meta["K"], "config": cfg, "M": int(m[1:]), "rep": int(rep[1:]),
                     **launch_steps(arrays[key], steps[key])})
    return rows


# The H200's warpgroup MMA does 4096 bf16 FLOP per SM cycle: every tensor-bound K step in the committed per-step
# traces (validation/data/h200/traces/trace_steps_*.npz) takes BM x BN x BK x 2 / 4096 cycles (tests/test_step_trace).
WGMMA_FLOP_PER_CYCLE = 4096


def lone_step_law(rows: list[dict]) -> dict:
    """The K step of a CTA alone on its SM, fitted over launches (rows of step_profile; wgmma tiles: BLOCK_M >= 64,
    warps a multiple of 4): step = max(the tile's math, (c0 + the step's load bytes / fill) / stages in flight), in ns
    at each launch's own clock. A stage is refilled only once its MMA is done, so each of the min(num_stages - 1, L)
    stages in flight cycles through a fixed latency c0 and its bytes at a fill rate; least squares in log space."""
    from scipy.optimize import least_squares

    from wavetune.config import DTYPE_BYTES, LaunchConfig

    pts = []
    for r in rows:
        c = LaunchConfig.from_key(r["config"])
        lone = r["steady_by_ctas_on_sm"].get("1")
        if lone is None or c.BLOCK_M < 64 or c.num_warps % 4:
            continue
        ns_per_cycle = 1e3 / r["clock_mhz"]
        pts.append((lone * ns_per_cycle, 2 * c.BLOCK_M * c.BLOCK_N * c.BLOCK_K / WGMMA_FLOP_PER_CYCLE * ns_per_cycle,
                    (c.BLOCK_M + c.BLOCK_N) * c.BLOCK_K * DTYPE_BYTES["bf16"],
                    max(min(c.num_stages - 1, r["k_steps"]), 1)))
    if len(pts) < 3 or len({p[2] for p in pts}) < 2:
        raise ValueError(f"{len(pts)} launches with a wgmma CTA alone on its SM, of {len({p[2] for p in pts})} load "
                         "size(s); the law needs at least 3 launches of at least 2 sizes (tiles of different bytes per "
                         "K step) to tell the latency from the fill rate")
    step, math, nbytes, in_flight = map(np.array, zip(*pts))

    def law(q):
        return np.maximum(math, (q[0] + nbytes / q[1]) / in_flight)

    fit = least_squares(lambda q: np.log(law(q) / step), [500.0, 100.0], bounds=([0.0, 1.0], [1e4, 1e4]))
    err = np.log(law(fit.x) / step)
    return {"launches": len(pts), "c0_ns": float(fit.x[0]), "fill_bytes_per_ns": float(fit.x[1]),
            "rms_log_error": float(np.sqrt(np.mean(err ** 2))), "max_abs_log_error": float(np.abs(err).max())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m validation.step_trace", description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+", help="trace .npz files collected with `wavetune trace --steps`")
    a = ap.parse_args(argv)
    try:
        rows = [r for p in a.traces for r in step_profile(p)]
    except (ValueError, OSError) as e:
        print(f"validation.step_trace: {e}", file=sys.stderr)
        return 2
    print("N x K | config | M | CTAs | L | first step | steady step | early / late quarter | epilogue | steady by CTAs "
          "on SM | MHz   (SM cycles)")
    for r in rows:
        by = ", ".join(f"{n}: {v:.0f}" for n, v in r["steady_by_ctas_on_sm"].items())
        print(f"{r['N']}x{r['K']} | {r['config']} | {r['M']} | {r['ctas']} | {r['k_steps']} | {r['first_step_cycles']:.0f} | "
              f"{r['steady_step_cycles']:.0f} | {r['early_quarter_cycles']:.0f} / {r['late_quarter_cycles']:.0f} | "
              f"{r['epilogue_cycles']:.0f} | {by} | {r['clock_mhz']:.0f}")
    try:
        law = lone_step_law(rows)
    except ValueError as e:
        print(f"lone step law: {e}")
    else:
        print(f"lone step law over {law['launches']} launches (a wgmma CTA alone on its SM): max(math, ({law['c0_ns']:.0f} ns "
              f"+ load bytes / {law['fill_bytes_per_ns']:.1f} B/ns) / stages in flight), rms {law['rms_log_error']:.3f} "
              f"(log), worst {law['max_abs_log_error']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
