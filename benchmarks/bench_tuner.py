"""Tuner figures (tuner/README.md): regret of every strategy on held-out LLM layers, model-form comparison,
decision time, sampled fraction, macro/micro split. CPU only: recorded H200 measurements + the simulator.

    python3 benchmarks/bench_tuner.py eval        # k-fold by layer, all strategies (~1-2 min)
    python3 benchmarks/bench_tuner.py forms       # WaveModel forms: held-out relative error and regret
    python3 benchmarks/bench_tuner.py decision    # select() latency over 20000 random problems
    python3 benchmarks/bench_tuner.py split       # macro vs micro share of the per-shape spread
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LLM = "validation/data/h200/gemm/llm.jsonl"
# the other committed H200 bf16 files: training data only, minus shapes of held-out layers' (N, K)
EXTRA = ("validation/data/h200/gemm/m_sweep.jsonl", "validation/data/h200/gemm/k_sweep.jsonl",
         "validation/data/h200/gemm/resume_check.jsonl")


def cmd_eval(a) -> None:
    from tuner.evaluate import EvalContext, evaluate, format_rows

    ctx = EvalContext.load([LLM], "h200")
    runs = [("exhaustive", {}), ("default", {}), ("static-best", {}), ("random", {}),
            ("sim-top1", {}), ("sim-top5", {}), ("sim-top1", {"calibration": "train"}),
            ("sim-top5", {"calibration": "train"}),
            ("wavetune-sim", {}), ("wavetune-sim", {"calibration": "train"}),
            ("wavetune-meas", {"prior": False}), ("wavetune-meas", {}), ("wavetune-meas", {"calibration": "train"}),
            ("wavetune-meas", {"budget": 2}), ("wavetune-meas", {"budget": 4}), ("wavetune-meas", {"budget": 6}),
            ("wavetune-meas", {"extra": EXTRA}), ("wavetune-meas", {"extra": EXTRA, "calibration": "train"}),
            ("wavetune-meas", {"extra": EXTRA, "fallback": False})]
    rows = []
    for name, opts in runs:
        r = evaluate(ctx, [name], options={name: opts}, timing_repeats=a.repeats)[0]
        if opts:
            r["strategy"] = name + "[" + ",".join(f"{k}={'sweeps' if k == 'extra' else v}" for k, v in opts.items()) + "]"
        rows.append(r)
        print(format_rows([r]).split("\n")[1], flush=True)
    print(format_rows(rows))
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))


def cmd_forms(a) -> None:
    """Held-out relative error of each form on simulator anchors (every other sampled wave band and the
    middle K held out), and the k-fold regret of tables built with each form."""
    import hwspecs
    from tuner.evaluate import EvalContext, evaluate, format_rows
    from tuner.mapping import group_space
    from tuner.model import FORMS, WaveModel
    from tuner.sampling import GENERIC_DOMAIN, anchors_for_group
    from tuner.sources import SimSource
    from tuner.space import load_space

    spec = hwspecs.load_gpu("h200")
    groups, _ = group_space(load_space("broad+wave-study+grouping"), spec, "bf16")
    src = SimSource(spec)
    errs = {f: [] for f in FORMS}
    for g in groups:
        anchors = anchors_for_group(g, GENERIC_DOMAIN)
        lat = np.nanmin(src.simulate_us(anchors, g.configs), axis=1)
        co = np.array([g.coords(p) for p in anchors], float)
        X = np.column_stack([co[:, 2], co[:, 0], co[:, 1]])
        waves = np.unique(co[:, 2])
        held_w = set(waves[1::2][:-1])          # alternate bands, keeping the last for range
        mid_L = np.unique(co[:, 1])[1]
        test = np.array([(w in held_w) or (L == mid_L) for w, L in zip(co[:, 2], co[:, 1])])
        for f in FORMS:
            m = WaveModel(form=f, cap=g.cap).fit(X[~test], lat[~test])
            errs[f].extend(np.abs(m.predict(X[test]) / lat[test] - 1).tolist())
    print("held-out relative error of the macro envelope (simulator anchors, alternate bands + middle K held out)")
    for f in FORMS:
        e = np.array(errs[f])
        print(f"  {f:<12} median {np.median(e):.3f}  p90 {np.quantile(e, 0.9):.3f}  max {e.max():.3f}  (n={len(e)})")
    ctx = EvalContext.load([LLM], "h200")
    rows = []
    for f in FORMS:
        for name in ("wavetune-sim", "wavetune-meas"):
            r = evaluate(ctx, [name], options={name: {"form": f}}, timing_repeats=1)[0]
            r["strategy"] = f"{name}[{f}]"
            rows.append(r)
    print(format_rows(rows))


def cmd_decision(a) -> None:
    import hwspecs
    from tuner.space import load_space
    from tuner.tune import build_table, make_source

    spec = hwspecs.load_gpu("h200")
    t = build_table(load_space("broad+wave-study+grouping"), make_source("sim", spec, gpu_id="h200"), spec, gpu_id="h200")
    rng = np.random.default_rng(0)
    # the table's hot path: shapes its macros serve (the others go to the simulator once per shape: below)
    drawn = list(zip(rng.integers(1, 16385, a.n).tolist(), (16 * rng.integers(16, 2049, a.n)).tolist(),
                     (16 * rng.integers(16, 1025, a.n)).tolist()))
    probs = [p for p in drawn if not t.simulated_shape(*p)]
    ts = []
    for M, N, K in probs:
        t0 = time.perf_counter_ns()
        t.select_mnk(M, N, K)
        ts.append(time.perf_counter_ns() - t0)
    ts = np.array(ts) / 1e3
    print(f"select_mnk over {len(probs)} random problems the macros serve (of {a.n} drawn; the rest: 1 < M < 16 or K "
          f"below the table's anchors), {len(t.macros)} macros: median {np.median(ts):.2f} us, "
          f"p90 {np.quantile(ts, 0.9):.2f} us, p99 {np.quantile(ts, 0.99):.2f} us")
    from wavetune.config import GemmProblem

    ps = [GemmProblem(M, N, K) for M, N, K in probs[:2000]]
    ts = []
    for p in ps:
        t0 = time.perf_counter_ns()
        t.select(p)
        ts.append(time.perf_counter_ns() - t0)
    print(f"select(GemmProblem) median {statistics.median(ts) / 1e3:.2f} us")
    # the simulator's picks: N odd (Triton's unaligned kernel); short K loops and 1 < M < 16 cost the same
    odd = [(M, N | 1, K) for M, N, K in probs[:50]]
    first, again = [], []
    for M, N, K in odd:
        for out in (first, again):
            t0 = time.perf_counter_ns()
            t.select_mnk(M, N, K)
            out.append(time.perf_counter_ns() - t0)
    print(f"select_mnk, N not a multiple of 16 ({len(odd)} shapes): first decision median "
          f"{statistics.median(first) / 1e6:.2f} ms (simulator), memoised {statistics.median(again) / 1e3:.2f} us")


def cmd_split(a) -> None:
    from tuner.mapping import split_evidence

    print(json.dumps(split_evidence([LLM]), indent=1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("eval")
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--json", default=None)
    p.set_defaults(func=cmd_eval)
    sub.add_parser("forms").set_defaults(func=cmd_forms)
    p = sub.add_parser("decision")
    p.add_argument("-n", type=int, default=20000)
    p.set_defaults(func=cmd_decision)
    sub.add_parser("split").set_defaults(func=cmd_split)
    a = ap.parse_args(argv)
    a.func(a)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
