"""How the measurement table's choices hold up off its training layers, by candidate space and simulator
prior: regret scored against the measured best over ALL measured configs of each shape.

  * 4-fold by LLM layer (tuner.evaluate.layer_folds): fit on the gemm/ measurements of 6 layers, score
    the other 2 (every gemm/ file is training data, minus shapes of the held-out layers' (N, K)), with the
    uncalibrated simulator as prior and with one calibrated on the same training data (the shipped
    calibration would leak here: it was fitted on every layer);
  * never-fitted holdout: fit on all of gemm/, score validation/data/h200/holdout/llm_holdout.jsonl, with
    the uncalibrated simulator as prior and with the shipped calibration (`--calibration auto`, the
    `wavetune tune` default).

    python3 benchmarks/bench_table_candidates.py [SPACE ...]   (default: broad+wave-study+grouping broad+wave-study)
"""

from __future__ import annotations

import glob
import math
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def regrets(table, measured, keep):
    out = []
    for p, d in measured.items():
        if keep(p):
            c = table.select(p).key
            if c in d:
                out.append(d[c] / min(d.values()))
    return out


def main(spaces: list[str]) -> None:
    import hwspecs
    from tuner.evaluate import layer_folds
    from tuner.space import load_space
    from tuner.tune import build_table, make_source
    from validation.measurements import dedupe_latest, load_measurements
    from validation.shapesets import LLM_LAYERS, LLM_M
    from wavesim.calibration import build_dataset, fit, save_calibration

    spec = hwspecs.load_gpu("h200")
    files = sorted(glob.glob(str(ROOT / "validation/data/h200/gemm/*.jsonl")))
    train_all = [m for m in load_measurements(files, gpu="h200") if m.ok and m.problem.dtype == "bf16"]
    hold = [m for m in load_measurements([ROOT / "validation/data/h200/holdout/llm_holdout.jsonl"], gpu="h200") if m.ok]

    def by_shape(ms):
        d: dict = {}
        for m in ms:
            d.setdefault(m.problem, {})[m.config.key] = m.ms
        return d

    layers = {(n, k) for _, n, k in LLM_LAYERS}
    llm = by_shape(m for m in train_all if (m.problem.N, m.problem.K) in layers and m.problem.M in LLM_M)
    nk = {name: (n, k) for name, n, k in LLM_LAYERS}
    folds = [{nk[t] for t in test} for _, test in layer_folds(4)]
    # the simulator calibrated on each fold's training data (wavetune calibrate --holdout-nk ...)
    tmp = tempfile.TemporaryDirectory()
    fold_cal = []
    everything = dedupe_latest(load_measurements(files, gpu="h200"))
    for i, test_nk in enumerate(folds):
        params, info = fit(spec, build_dataset(spec, everything, "bf16", keep=lambda s, h=test_nk: (s[1], s[2]) not in h))
        fold_cal.append(f"{tmp.name}/fold{i}.json")
        save_calibration(fold_cal[-1], "h200", params, info)
    for space in spaces:
        cands = load_space(space)
        line = f"{space:28s}"
        for prior in ("none", "fold"):
            kf = []
            for test_nk, cal in zip(folds, fold_cal):
                train = sorted({m.problem for m in train_all if (m.problem.N, m.problem.K) not in test_nk})
                src = make_source("measurements", spec, gpu_id="h200", measurements=files, problems=train,
                                  calibration=cal if prior == "fold" else "none")
                t = build_table(cands, src, spec, gpu_id="h200", measured_problems=train)
                kf += regrets(t, llm, lambda p, h=test_nk: (p.N, p.K) in h)
            label = "calibrated on the training folds" if prior == "fold" else "none"
            line += f" | k-fold by layer, prior {label}: {geomean(kf):.4f} (worst {max(kf):.3f}, {len(kf)} shapes)"
        for cal in ("none", "auto"):
            src = make_source("measurements", spec, gpu_id="h200", measurements=files, calibration=cal)
            ho = regrets(build_table(cands, src, spec, gpu_id="h200"), by_shape(hold), lambda p: True)
            line += f" | holdout, prior {cal}: {geomean(ho):.4f} (worst {max(ho):.3f}, {len(ho)} shapes)"
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:] or ["broad+wave-study+grouping", "broad+wave-study"])
