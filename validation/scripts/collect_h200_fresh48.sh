#!/usr/bin/env bash
# Session-34 H200 collection (GPU machine, repository root; $OUT receives copies): fresh48, a blind set drawn as
# fresh44 was (make_blind_set.py --seed 48 --configs 80 --shapes 24 --warps 1,1,2,4,8,16,16 --stages 1,1,2,3,4,5,6) at
# 01:27 of session 34, kept sealed for the next warp or stage variant (NOTES.md, session 34); two passes in
# shuffled orders with the clean L2 eviction.
# usage: bash validation/scripts/collect_h200_fresh48.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
blind_passes validation/data/h200/fresh48 blind_fresh48 96
