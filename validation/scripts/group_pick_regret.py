"""Pick regret over the shapes of an M-sweep group of the scorecard (no GPU): each pass's records through
validation.scorecard.pick_regrets, the geometric mean over shapes per pass, and their mean (how session 30 decided T5 on
fresh34 and fresh36; NOTES.md).

    python3 validation/scripts/group_pick_regret.py GROUP [CALIBRATION]   (CALIBRATION: a JSON file or auto)
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

import hwspecs  # noqa: E402
from validation.scorecard import _load_pass, load_description, pick_regrets  # noqa: E402
from wavesim.calibration import load_calibration  # noqa: E402


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 2:
        print(__doc__, file=sys.stderr)
        return 2
    group, cal = argv[0], argv[1] if len(argv) > 1 else "auto"
    spec = hwspecs.load_gpu("h200")
    params = load_calibration(cal, spec.id)
    studies = load_description(spec.id)["sweep_groups"].get(group)
    if not studies:
        print(f"no sweep group {group!r} in validation/data/h200/scorecard.json", file=sys.stderr)
        return 2
    per_pass = []
    for i in range(min(len(st["passes"]) for st in studies)):
        regrets = pick_regrets(spec, [m for st in studies for m in _load_pass(spec.id, st["passes"][i])], params)
        per_pass.append(float(np.exp(np.mean(np.log(list(regrets.values()))))))
        print(f"pass {i + 1}: {len(regrets)} shapes, regret {per_pass[-1]:.4f}")
    print(f"mean over passes {np.mean(per_pass):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
