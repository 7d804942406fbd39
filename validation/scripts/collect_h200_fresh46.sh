#!/usr/bin/env bash
# Session-34 H200 collection (GPU machine, repository root; $OUT receives copies): fresh46, a blind set drawn as
# fresh44 was (make_blind_set.py --seed 46 --configs 80 --shapes 24 --warps 1,1,2,4,8,16,16 --stages 1,1,2,3,4,5,6) at
# 00:56 of session 34, before variant SM1's code was written, to decide it once (NOTES.md, session 34); two passes in
# shuffled orders with the clean L2 eviction.
# usage: bash validation/scripts/collect_h200_fresh46.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
blind_passes validation/data/h200/fresh46 blind_fresh46 92
