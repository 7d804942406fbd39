"""Evaluation harness: every strategy of tuner.baselines scored the same way on recorded measurements.

Regret of a pick = measured time of the pick / measured best over the candidates at that shape (a pick
with no successful measurement is charged the slowest measured time of the shape and counted in
`failed`). Reported per strategy: geometric-mean, median and worst regret over the test shapes;
`train_meas` = GPU measurements used to build it / measuring every candidate on every training shape;
`per_shape` = configs it benchmarks for each new shape (exhaustive: all; top-5: 5); `sim_pts` = simulator
calls per fold; tuning time per fold; median decision time (time.perf_counter_ns around `choose`, per
shape, median of repeats). Simulator-only tables also record the fraction of (config, shape) points they
simulated against exhaustive search over their dense domain (`table_fraction_sampled_of_domain`).

Protocol `kfold-layer` (default): the 8 LLM layers of validation/shapesets.py in 4 folds of 2 (layer i
and i+4: one Llama-3-8B, one 70B-TP8), fit on the other 6 layers' shapes, score the 2 held-out layers'
12 M values each, rotate; figures pool the 96 held-out shapes.

    python3 -m tuner.evaluate --measurements validation/data/h200/gemm/llm.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from dataclasses import dataclass

import numpy as np

from hwspecs import GPUSpec
from wavetune.config import GemmProblem, LaunchConfig

from .baselines import STRATEGIES, RandomChoice, make_strategy


@dataclass
class EvalContext:
    spec: GPUSpec
    gpu_id: str
    dtype: str
    candidates: list[LaunchConfig]
    measured: dict[GemmProblem, dict[LaunchConfig, float]]   # ms of every ok measurement
    measurement_paths: list[str]

    def __post_init__(self) -> None:
        self._calibrations: dict = {}

    def calibration_for(self, option, train: list[GemmProblem]):
        """Resolve a strategy's calibration option: 'train' fits the simulator on the training shapes'
        measurements only (cached per training set); anything else passes through (tuner.sources)."""
        if option != "train":
            return option
        key = frozenset(train)
        if key not in self._calibrations:
            from .sources import fit_calibration

            self._calibrations[key] = fit_calibration(self.spec, self.measurement_paths, train, self.gpu_id, self.dtype)
        return self._calibrations[key]

    @classmethod
    def load(cls, measurement_paths: list[str], gpu_id: str = "h200", space: str = "broad+wave-study+grouping",
             dtype: str = "bf16") -> "EvalContext":
        import hwspecs
        from validation.measurements import dedupe_latest, load_measurements
        from wavesim.kernels.gemm import config_occupancy

        from .space import load_space

        spec = hwspecs.load_gpu(gpu_id)
        cands = [c for c in load_space(space) if config_occupancy(spec, c, dtype)[0].ctas_per_sm > 0]
        cset = set(cands)
        measured: dict[GemmProblem, dict[LaunchConfig, float]] = {}
        for m in dedupe_latest(load_measurements(measurement_paths, gpu=gpu_id)):
            if m.ok and m.config in cset and m.problem.dtype == dtype:
                measured.setdefault(m.problem, {})[m.config] = m.ms
        return cls(spec, gpu_id, dtype, cands, measured, list(measurement_paths))


def layer_folds(n_folds: int = 4) -> list[tuple[list[str], list[str]]]:
    """(train layer names, test layer names) per fold."""
    from validation.shapesets import LLM_LAYERS

    names = [n for n, _, _ in LLM_LAYERS]
    step = len(names) // n_folds
    folds = []
    for i in range(n_folds):
        test = [names[j] for j in range(i, len(names), n_folds)][: max(1, step)]
        folds.append(([n for n in names if n not in test], test))
    return folds


def layer_shapes(names: list[str], measured) -> list[GemmProblem]:
    from validation.shapesets import LLM_LAYERS

    nk = {(n, k) for name, n, k in LLM_LAYERS if name in names}
    return sorted(p for p in measured if (p.N, p.K) in nk)


def _regret(ctx: EvalContext, p: GemmProblem, picks: list[LaunchConfig]) -> tuple[float, bool]:
    d = ctx.measured[p]
    best = min(d.values())
    times = [d[c] for c in picks if c in d]
    if not times:
        return max(d.values()) / best, True
    return min(times) / best, False


def decision_ns(strategy, problems: list[GemmProblem], repeats: int = 20) -> float:
    """Median over problems of the median over repeats of one choose() call, in ns."""
    per = []
    for p in problems:
        ts = []
        for _ in range(repeats):
            t0 = time.perf_counter_ns()
            strategy.choose(p)
            ts.append(time.perf_counter_ns() - t0)
        per.append(statistics.median(ts))
    return float(statistics.median(per))


def summarize(regrets: list[float]) -> dict[str, float]:
    r = np.asarray(regrets)
    return {"geomean": float(np.exp(np.log(r).mean())), "median": float(np.median(r)), "worst": float(r.max()),
            "within_5pct": float(np.mean(r <= 1.05))}


def evaluate(ctx: EvalContext, strategies: list[str], folds=None, options: dict[str, dict] | None = None,
             timing_repeats: int = 20) -> list[dict]:
    folds = folds or layer_folds()
    options = options or {}
    out = []
    for name in strategies:
        regrets, failed, tune_s, mpts, spts, dec, exh_train, exp_rand = [], 0, 0.0, 0, 0, [], 0, []
        per_shape, dom_frac = [], []
        for train_names, test_names in folds:
            train = layer_shapes(train_names, ctx.measured)
            test = layer_shapes(test_names, ctx.measured)
            s = make_strategy(name, **options.get(name, {}))
            s.fit(ctx, train)
            tune_s += s.tune_s
            mpts += s.measured_points
            exh_train += len(ctx.candidates) * len(train)
            for p in test:
                r, f = _regret(ctx, p, s.choose(p))
                regrets.append(r)
                failed += f
                per_shape.append({"M": p.M, "N": p.N, "K": p.K, "regret": r})
                if isinstance(s, RandomChoice):
                    d = ctx.measured[p]
                    exp_rand.append(math.exp(np.mean([math.log(d.get(c, max(d.values())) / min(d.values()))
                                                      for c in ctx.candidates])))
            spts += s.sim_points
            if hasattr(s, "table"):
                dom_frac.append(s.table.stats.get("fraction_sampled", float("nan")))
            dec.append(decision_ns(s, test[:: max(1, len(test) // 8)], timing_repeats))
        row = {"strategy": name, **{f"regret_{k}": v for k, v in summarize(regrets).items()},
               "failed": failed, "shapes": len(regrets),
               # GPU measurements used to build the strategy, against measuring every candidate on every
               # training shape; and measurements it needs per new shape at decision time
               "train_measured_points": mpts / len(folds), "fraction_of_train_exhaustive": mpts / exh_train,
               "measurements_per_new_shape": s.decision_measurements,
               "sim_points": spts / len(folds),
               "tune_s": tune_s / len(folds), "decision_us": statistics.median(dec) / 1e3}
        if dom_frac:
            row["table_fraction_sampled_of_domain"] = float(np.mean(dom_frac))
        if exp_rand:
            row["expected_regret_geomean"] = float(np.exp(np.mean(np.log(exp_rand))))
        row["worst_shapes"] = sorted(per_shape, key=lambda x: -x["regret"])[:3]
        out.append(row)
    return out


def format_rows(rows: list[dict]) -> str:
    head = (f"{'strategy':<34}{'geomean':>8}{'median':>8}{'worst':>8}{'<=5%':>6}{'train_meas':>11}"
            f"{'per_shape':>10}{'sim_pts':>9}{'tune_s':>8}{'decide_us':>10}")
    lines = [head]
    for r in rows:
        extra = f"  (expected {r['expected_regret_geomean']:.3f})" if "expected_regret_geomean" in r else ""
        lines.append(f"{r['strategy']:<34}{r['regret_geomean']:>8.3f}{r['regret_median']:>8.3f}{r['regret_worst']:>8.3f}"
                     f"{r['regret_within_5pct']:>6.2f}{r['fraction_of_train_exhaustive']:>11.3f}"
                     f"{r['measurements_per_new_shape']:>10d}{r['sim_points']:>9.0f}"
                     f"{r['tune_s']:>8.2f}{r['decision_us']:>10.1f}{extra}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--measurements", nargs="+", default=["validation/data/h200/gemm/llm.jsonl"])
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    ctx = EvalContext.load(a.measurements, a.gpu)
    rows = evaluate(ctx, a.strategies.split(","))
    print(json.dumps(rows, indent=1) if a.json else format_rows(rows))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
