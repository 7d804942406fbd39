#!/usr/bin/env bash
# Session-35 H200 collection (GPU machine, repository root; $OUT receives copies): fresh49, a blind set drawn as
# fresh44 was (make_blind_set.py --seed 49 --configs 80 --shapes 24 --warps 1,1,2,4,8,16,16 --stages 1,1,2,3,4,5,6) at
# 01:58 of session 35, after SL1 shipped and before any later variant was written, kept sealed for the next warp or
# stage variant (NOTES.md, session 35); two passes in shuffled orders with the clean L2 eviction.
# usage: bash validation/scripts/collect_h200_fresh49.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
blind_passes validation/data/h200/fresh49 blind_fresh49 98
