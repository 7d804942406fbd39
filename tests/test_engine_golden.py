"""Golden files for the engines: fixed workloads, their makespans stored in tests/golden/engine_*.json.

A change to the model that moves any of these numbers must be deliberate. Regenerate with

    python3 tests/test_engine_golden.py --regen

and commit the JSON diff with the reason. The test never rewrites a golden file.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

GOLDEN_DIR = Path(__file__).parent / "golden"

# name -> (workload builder args, run kwargs). Synthetic model inputs, not hardware claims.
CASES = {
    "uniform_staircase": dict(kind="uniform", grid=300, compute_s=1e-5, solo_frac=1.0, dram_bytes=0.0,
                              mem_cap_Bps=1.0, fixed_s=0.0, sm_count=132, slots_per_sm=1, dram_Bps=1.0,
                              launch_overhead_s=3e-6, jitter_cv=0.0),
    "uniform_dram_bound_partial": dict(kind="uniform", grid=1000, compute_s=2e-6, solo_frac=0.4, dram_bytes=6.5e4,
                                       mem_cap_Bps=2e10, fixed_s=1e-6, sm_count=132, slots_per_sm=4,
                                       dram_Bps=4.0e12, launch_overhead_s=3e-6, jitter_cv=0.0),
    "random_mixed": dict(kind="random", seed=7, grid=400, sm_count=16, slots_per_sm=3, dram_Bps=40.0,
                         launch_overhead_s=0.0, jitter_cv=0.0),
    "random_jitter": dict(kind="random", seed=11, grid=250, sm_count=10, slots_per_sm=2, dram_Bps=15.0,
                          launch_overhead_s=0.5, jitter_cv=0.4),
    "uniform_jitter_fig4": dict(kind="uniform", grid=500, compute_s=1.0, solo_frac=1.0, dram_bytes=0.0,
                                mem_cap_Bps=1.0, fixed_s=0.0, sm_count=132, slots_per_sm=1, dram_Bps=1.0,
                                launch_overhead_s=0.0, jitter_cv=0.3),
}


def build(case: dict):
    from wavesim.engine import Workload

    if case["kind"] == "uniform":
        keys = ("compute_s", "solo_frac", "dram_bytes", "mem_cap_Bps", "fixed_s", "sm_count", "slots_per_sm",
                "dram_Bps", "launch_overhead_s")
        return Workload.uniform(case["grid"], **{k: case[k] for k in keys})
    rng = np.random.default_rng(case["seed"])
    G = case["grid"]
    return Workload(rng.uniform(0.2, 2, G), rng.uniform(0.1, 1, G), rng.uniform(0, 4, G) * (rng.random(G) < 0.7),
                    rng.uniform(0.5, 3, G), rng.uniform(0, 0.5, G) * (rng.random(G) < 0.5), case["sm_count"],
                    case["slots_per_sm"], case["dram_Bps"], case["launch_overhead_s"])


def compute(case: dict) -> dict:
    from wavesim.engine import run

    r = run(build(case), engine="fast", jitter_cv=case["jitter_cv"], seed=case.get("seed", 0))
    return {"makespan_s": r.makespan_s, "waves": r.waves, "grid": r.grid, "ctas_per_sm": r.ctas_per_sm,
            "tail_utilization": r.tail_utilization}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name):
    from wavesim.engine import run

    path = GOLDEN_DIR / f"engine_{name}.json"
    assert path.exists(), f"missing {path}; generate deliberately with: python3 tests/test_engine_golden.py --regen"
    gold = json.loads(path.read_text())
    assert gold["case"] == CASES[name], "the case changed; regenerate the golden file deliberately"
    case = CASES[name]
    wl = build(case)
    engines = ["fast", "reference", "auto"] + (["closed_form"] if case["jitter_cv"] == 0 and wl.is_uniform() else [])
    for engine in engines:
        r = run(wl, engine=engine, jitter_cv=case["jitter_cv"], seed=case.get("seed", 0))
        assert r.makespan_s == pytest.approx(gold["result"]["makespan_s"], rel=1e-9, abs=0), engine
        assert r.waves == gold["result"]["waves"]
        assert r.tail_utilization == pytest.approx(gold["result"]["tail_utilization"], rel=1e-9)


def regen() -> int:
    GOLDEN_DIR.mkdir(exist_ok=True)
    for name, case in sorted(CASES.items()):
        path = GOLDEN_DIR / f"engine_{name}.json"
        new = {"case": case, "result": compute(case)}
        old = json.loads(path.read_text()) if path.exists() else None
        path.write_text(json.dumps(new, indent=2, sort_keys=True) + "\n")
        status = "new" if old is None else ("unchanged" if old == new else "CHANGED")
        print(f"{status:9s} {path.name}: makespan_s={new['result']['makespan_s']!r}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    if "--regen" not in sys.argv[1:]:
        print(__doc__)
        raise SystemExit(2)
    raise SystemExit(regen())
