#!/usr/bin/env bash
# Session-27 H200 collection (GPU machine, repository root): the same-tile probe (validation/sm_side.py) over the broad
# and unseen config spaces (tuner/space.py), to fit an SM-side law per tile (NOTES session 27, Next (2)) and check it on
# configs it did not see. Records go straight to $OUT/sm_side_SPACE.jsonl (a call cut short keeps them).
# usage: BUDGET=seconds bash validation/scripts/collect_h200_sm_side_broad.sh SPACE...
DEFAULT_BUDGET=540 . "$(dirname "$0")/common.sh"
for space in "$@"; do
    timeout $(( $(left) - 5 )) python3 -m validation.sm_side collect --configs "$space" --reps 3 --out "$OUT/sm_side_$space.jsonl"
done
ls -la "$OUT"
