#!/usr/bin/env bash
# Session-33 H200 collection (GPU machine, repository root; $OUT receives copies): fresh44, a blind set that
# over-samples the warps and stages no fitted space holds (make_blind_set.py --seed 44 --configs 80 --shapes 24
# --warps 1,1,2,4,8,16,16 --stages 1,1,2,3,4,5,6), drawn before any warp or stage correction was written, to decide one
# once (NOTES.md, session 33, "Next"); two passes in shuffled orders with the clean L2 eviction.
# usage: bash validation/scripts/collect_h200_fresh44.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
blind_passes validation/data/h200/fresh44 blind_fresh44 88
