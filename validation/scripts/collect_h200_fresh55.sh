#!/usr/bin/env bash
# Session-36 H200 collection (GPU machine, repository root; $OUT receives copies): fresh55, a blind set drawn as
# fresh44 was (make_blind_set.py --seed 55 --configs 80 --shapes 24 --warps 1,1,2,4,8,16,16 --stages 1,1,2,3,4,5,6) at
# 04:49 of session 36, after rule IS2 failed on fresh54, for deciding IS2 by its second rule, IS2b (NOTES.md, session
# 36), sealed; two passes in shuffled orders with the clean L2 eviction.
# usage: bash validation/scripts/collect_h200_fresh55.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
blind_passes validation/data/h200/fresh55 blind_fresh55 110
