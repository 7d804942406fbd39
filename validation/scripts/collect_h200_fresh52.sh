#!/usr/bin/env bash
# Session-35 H200 collection (GPU machine, repository root; $OUT receives copies): fresh52, a blind set drawn as
# fresh44 was (make_blind_set.py --seed 52 --configs 80 --shapes 24 --warps 1,1,2,4,8,16,16 --stages 1,1,2,3,4,5,6) at
# 02:51 of session 35, after LR1 shipped, for the next session's deciding (the wgmma-copies lead or
# another; NOTES.md, session 35), sealed; two passes in shuffled orders with the clean L2 eviction.
# usage: bash validation/scripts/collect_h200_fresh52.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
blind_passes validation/data/h200/fresh52 blind_fresh52 104
