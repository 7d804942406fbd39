"""The cases of the large-M ncu yardstick (validation/data/h200/large_m_ncu/): per aligned shape with M > 1024 in the
scorecard's pick sets, the configs a model might pick and the ones the profiler measured best.

    python3 validation/scripts/make_large_m_cases.py > validation/data/h200/large_m_ncu/cases.jsonl

Candidates per shape: the shipped simulator's three fastest and its pick (wavetune.config.fastest), and the three
fastest by the pick set's measurements (median over its passes). The profiler's single passes rank large launches
only to a few percent (NOTES session 25); collect_h200_large_m_ncu.sh times these candidates under ncu instead.
"""
from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import hwspecs  # noqa: E402
from validation import scorecard  # noqa: E402
from wavesim.calibration import build_dataset, load_calibration, simulate_ms  # noqa: E402
from wavetune.config import fastest  # noqa: E402

TOP = 3


def large_m_cases(gpu: str = "h200", calibration: str = "auto") -> list[dict]:
    spec = hwspecs.load_gpu(gpu)
    params = load_calibration(calibration, spec.id)
    doc = scorecard.load_description(gpu)
    cands: dict[tuple[int, int, int], dict] = {}
    for files in doc["pick_sets"].values():
        keep = (lambda s: s[0] > scorecard.LARGE_M and s[1] % scorecard.ALIGNMENT == 0
                and s[2] % scorecard.ALIGNMENT == 0)
        try:
            ds = build_dataset(spec, scorecard._load_pass(spec.id, files), "bf16", keep=keep)
        except ValueError:   # a set with no such shape
            continue
        sim = simulate_ms(ds, params)
        per: dict = defaultdict(lambda: defaultdict(list))
        for i, c in enumerate(ds.configs):
            per[ds.shapes[int(ds.shape_id[i])]][c].append((ds.ms[i], sim[i]))
        for shape, by_cfg in per.items():
            cfgs = list(by_cfg)
            if len(cfgs) < 2:
                continue
            meas = [float(np.median([x[0] for x in by_cfg[c]])) for c in cfgs]
            simt = [by_cfg[c][0][1] for c in cfgs]
            chosen = {cfgs[i] for i in np.argsort(simt)[:TOP]} | {cfgs[i] for i in np.argsort(meas)[:TOP]}
            chosen.add(cfgs[fastest(simt, cfgs)])
            cands.setdefault(tuple(int(x) for x in shape), {}).update({c.key: c for c in chosen})
    return [{"M": M, "N": N, "K": K, "config": c.to_dict()}
            for (M, N, K), by_key in sorted(cands.items()) for _, c in sorted(by_key.items())]


if __name__ == "__main__":
    for case in large_m_cases():
        print(json.dumps(case))
