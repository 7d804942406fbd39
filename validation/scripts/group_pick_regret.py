"""Pick regret over the shapes of an M-sweep group or a pick set of the scorecard (no GPU): each pass's records through
validation.scorecard.pick_regrets (a pick set's files are its passes), the geometric mean over shapes per pass and the
worst shape, the median Kendall tau over shapes, and their mean (how sessions 30-31 decided T5 on fresh34, fresh36 and fresh37; NOTES.md).

    python3 validation/scripts/group_pick_regret.py GROUP [CALIBRATION]   (CALIBRATION: a JSON file or auto)
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

import hwspecs  # noqa: E402
from validation.scorecard import _load_pass, load_description, pick_regrets, shape_taus  # noqa: E402
from validation.suite import geomean  # noqa: E402
from wavesim.calibration import load_calibration  # noqa: E402


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 2:
        print(__doc__, file=sys.stderr)
        return 2
    group, cal = argv[0], argv[1] if len(argv) > 1 else "auto"
    spec = hwspecs.load_gpu("h200")
    params = load_calibration(cal, spec.id)
    doc = load_description(spec.id)
    if group in doc["sweep_groups"]:
        studies = doc["sweep_groups"][group]
        passes = [[f for st in studies for f in st["passes"][i]] for i in range(min(len(st["passes"]) for st in studies))]
    elif group in doc["pick_sets"]:
        passes = [[f] for f in doc["pick_sets"][group]]
    elif group in doc["group_m_sets"]:    # a list of files per pass
        passes = doc["group_m_sets"][group]
    else:
        print(f"no sweep group or pick set {group!r} in validation/data/h200/scorecard.json", file=sys.stderr)
        return 2
    per_pass, worst, taus = [], [], []
    for i, files in enumerate(passes):
        records = _load_pass(spec.id, files)
        regrets = pick_regrets(spec, records, params)
        per_pass.append(geomean(regrets.values()))
        worst.append(max(regrets.values()))
        taus.append(float(np.median(list(shape_taus(spec, records, params).values()))))
        shape = max(regrets, key=regrets.get)
        print(f"pass {i + 1}: {len(regrets)} shapes, regret {per_pass[-1]:.4f}, worst {worst[-1]:.4f} at {shape}, "
              f"median Kendall tau {taus[-1]:.3f}")
    print(f"mean over passes {np.mean(per_pass):.4f}, worst shape {max(worst):.4f}, median tau {np.mean(taus):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
