"""Selection strategies in one registry: WaveTune tables and the baselines they are judged against.

A strategy is a class with `_options = dict(name=(doc, default))` (Kernel Tuner style), `__init__(**options)`,
`fit(ctx, train) -> self` (train: the training shapes; ctx: an EvalContext from tuner.evaluate, which
holds the candidates, the GPU spec and the recorded measurements used to "measure" on demand), and
`choose(problem) -> list[LaunchConfig]`: the configs the strategy would benchmark at decision time (one
for a model that needs no benchmarking); the pick is the measured best of them. After `fit`, every
strategy has `measured_points` (GPU measurements spent on training), `sim_points` (simulator calls) and
`tune_s`; `decision_measurements` is how many configs it benchmarks per new shape.

Registry (`STRATEGIES`):
  exhaustive       benchmark every candidate for each shape (the oracle)
  default          the Triton tutorial-style default config (tuner.space.DEFAULT_CONFIG)
  static-best      the single config with the best geo-mean regret on the training shapes
  random           a seeded uniform random candidate per shape (evaluate also reports the expectation)
  sim-top1/-top5   rank candidates by the simulator, benchmark the top k, keep the fastest
  wavetune-sim     DualTable fitted on the simulator alone (generic domain: no evaluation shape seen)
  wavetune-meas    DualTable fitted on the training shapes' measurements, simulator as the prior
"""

from __future__ import annotations

import math
import random as _random
import time
from typing import Any

import numpy as np

from wavetune.config import GemmProblem, LaunchConfig

from .space import DEFAULT_CONFIG


CAL_DOC = ("simulator parameters: 'none' (specs-only priors), 'train' (calibrated on the training shapes only), "
           "'auto' (the shipped calibration: in-sample if it was fitted on the evaluation data) or a file")


class Strategy:
    name = "strategy"
    _options: dict[str, tuple[str, Any]] = {}
    decision_measurements = 0

    def __init__(self, **options):
        unknown = sorted(set(options) - set(self._options))
        if unknown:
            raise ValueError(f"strategy {self.name!r}: unknown option(s) {unknown}; options: {sorted(self._options)}")
        self.options = {k: options.get(k, d) for k, (_, d) in self._options.items()}
        self.measured_points = 0
        self.sim_points = 0
        self.tune_s = 0.0

    def fit(self, ctx, train: list[GemmProblem]) -> "Strategy":
        return self

    def choose(self, problem: GemmProblem) -> list[LaunchConfig]:
        raise NotImplementedError


class Exhaustive(Strategy):
    name = "exhaustive"
    _options = {}

    def fit(self, ctx, train):
        self.ctx = ctx
        self.decision_measurements = len(ctx.candidates)
        return self

    def choose(self, problem):
        return list(self.ctx.candidates)


class Default(Strategy):
    name = "default"
    _options = dict(config=("the fixed config", DEFAULT_CONFIG))

    def choose(self, problem):
        return [self.options["config"]]


class StaticBest(Strategy):
    name = "static-best"
    _options = {}

    def fit(self, ctx, train):
        t0 = time.perf_counter()
        score = {}
        for c in ctx.candidates:
            logs = []
            for p in train:
                d = ctx.measured.get(p)
                if d:
                    logs.append(math.log(d.get(c, max(d.values())) / min(d.values())))
            score[c] = float(np.mean(logs)) if logs else math.inf
        self.best = min(ctx.candidates, key=lambda c: (score[c], c))
        self.measured_points = sum(len(ctx.measured.get(p, {})) for p in train)
        self.tune_s = time.perf_counter() - t0
        return self

    def choose(self, problem):
        return [self.best]


class RandomChoice(Strategy):
    name = "random"
    _options = dict(seed=("seed of the generator (numpy-free, random.Random)", 0))

    def fit(self, ctx, train):
        self.ctx = ctx
        self.rng = _random.Random(self.options["seed"])
        return self

    def choose(self, problem):
        return [self.rng.choice(self.ctx.candidates)]


class SimTopK(Strategy):
    name = "sim-topk"
    _options = dict(k=("how many of the simulator's best configs to benchmark", 1),
                    calibration=(CAL_DOC, "none"))

    def fit(self, ctx, train):
        from .sources import SimSource

        self.sim = SimSource(ctx.spec, ctx.dtype, ctx.calibration_for(self.options["calibration"], train), ctx.gpu_id)
        self.ctx = ctx
        self.decision_measurements = self.options["k"] if self.options["k"] > 1 else 0
        return self

    def choose(self, problem):
        t = self.sim.simulate_us([problem], self.ctx.candidates)[0]
        self.sim_points = self.sim.points_used
        order = sorted(range(len(t)), key=lambda i: (t[i], self.ctx.candidates[i]))
        return [self.ctx.candidates[i] for i in order[: self.options["k"]]]


class WaveTuneSim(Strategy):
    name = "wavetune-sim"
    _options = dict(form=("WaveModel form (tuner.model.FORMS)", "per-wave"),
                    model_params=("other WaveModel hyperparameters (dict)", None),
                    calibration=(CAL_DOC, "none"),
                    domain=("'generic' (tuner.sampling.GENERIC_DOMAIN) or 'train' (the training shapes' N, K)", "generic"))

    def fit(self, ctx, train):
        from .sampling import Domain
        from .tune import build_table, make_source

        t0 = time.perf_counter()
        src = make_source("sim", ctx.spec, gpu_id=ctx.gpu_id, dtype=ctx.dtype,
                          calibration=ctx.calibration_for(self.options["calibration"], train))
        dom = Domain.of_problems(train, ctx.dtype) if self.options["domain"] == "train" else None
        self.table = build_table(ctx.candidates, src, ctx.spec, gpu_id=ctx.gpu_id, dtype=ctx.dtype, domain=dom,
                                 form=self.options["form"], model_params=self.options["model_params"])
        self.sim_points = src.points_used
        self.tune_s = time.perf_counter() - t0
        return self

    def choose(self, problem):
        return [self.table.select(problem)]


class WaveTuneMeas(Strategy):
    name = "wavetune-meas"
    _options = dict(form=("WaveModel form (tuner.model.FORMS)", "per-wave"),
                    model_params=("other WaveModel hyperparameters (dict)", None),
                    budget=("most measured M values per (macro, N, K) used (spread over M); None: every snapped one", None),
                    prior=("use the simulator as the structural prior (False: pure measured bilinear)", True),
                    calibration=(CAL_DOC, "none"),
                    ridge=("ridge strength of the per-config log(measured/simulated) correction", 1.0),
                    extra=("more measurement files to train on (e.g. m_sweep.jsonl); their shapes whose (N, K) is an "
                           "evaluation layer not in the training set are left out", ()),
                    fallback=("serve unmeasured (N, K) layers from a simulator-only fit (tuner.tune.build_table)", True))

    def fit(self, ctx, train):
        from .tune import build_table, make_source

        t0 = time.perf_counter()
        paths = list(ctx.measurement_paths)
        problems = [p for p in train if p in ctx.measured]
        if self.options["extra"]:
            from validation.measurements import load_measurements

            train_nk = {(p.N, p.K) for p in train}
            held_nk = {(p.N, p.K) for p in ctx.measured} - train_nk
            extra = {m.problem for m in load_measurements(self.options["extra"], gpu=ctx.gpu_id)
                     if m.ok and m.problem.dtype == ctx.dtype and (m.problem.N, m.problem.K) not in held_nk}
            problems = sorted(set(problems) | extra)
            paths += [str(x) for x in self.options["extra"]]
        src = make_source("measurements", ctx.spec, gpu_id=ctx.gpu_id, dtype=ctx.dtype,
                          calibration=ctx.calibration_for(self.options["calibration"], train),
                          measurements=paths, prior=self.options["prior"], problems=problems,
                          ridge=self.options["ridge"])
        self.table = build_table(ctx.candidates, src, ctx.spec, gpu_id=ctx.gpu_id, dtype=ctx.dtype,
                                 form=self.options["form"], model_params=self.options["model_params"],
                                 measured_budget=self.options["budget"], measured_problems=problems,
                                 fallback=self.options["fallback"])
        self.measured_points = src.points_used
        self.sim_points = getattr(src.prior, "points_used", 0) if src.prior else 0
        self.tune_s = time.perf_counter() - t0
        return self

    def choose(self, problem):
        return [self.table.select(problem)]


STRATEGIES: dict[str, tuple[type[Strategy], dict[str, Any]]] = {
    "exhaustive": (Exhaustive, {}),
    "default": (Default, {}),
    "static-best": (StaticBest, {}),
    "random": (RandomChoice, {}),
    "sim-top1": (SimTopK, {"k": 1}),
    "sim-top5": (SimTopK, {"k": 5}),
    "wavetune-sim": (WaveTuneSim, {}),
    "wavetune-meas": (WaveTuneMeas, {}),
}


def make_strategy(name: str, **options) -> Strategy:
    if name not in STRATEGIES:
        raise ValueError(f"unknown strategy {name!r}; registered: {sorted(STRATEGIES)}")
    cls, preset = STRATEGIES[name]
    s = cls(**{**preset, **options})
    s.name = name
    return s
