#!/usr/bin/env bash
# Session-35 H200 collection (GPU machine, repository root; $OUT receives copies): fresh54, a blind set drawn as
# fresh44 was (make_blind_set.py --seed 54 --configs 80 --shapes 24 --warps 1,1,2,4,8,16,16 --stages 1,1,2,3,4,5,6) at
# 03:28 of session 35, after MS1 shipped and W2 failed rule W2b, for the next session's deciding (W2 or
# another; NOTES.md, session 35), sealed; two passes in shuffled orders with the clean L2 eviction.
# usage: bash validation/scripts/collect_h200_fresh54.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
blind_passes validation/data/h200/fresh54 blind_fresh54 108
