#!/usr/bin/env bash
# Session-35 H200 collection (GPU machine, repository root; $OUT receives copies): fresh53, a blind set drawn as
# fresh37 was (make_blind_set.py --seed 53 --configs 60 --shapes 30: the wide space's own weights) at
# 02:51 of session 35, after LR1 shipped, for the next session's deciding (the wgmma-copies lead or
# another; NOTES.md, session 35), sealed; two passes in shuffled orders with the clean L2 eviction.
# usage: bash validation/scripts/collect_h200_fresh53.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
blind_passes validation/data/h200/fresh53 blind_fresh53 106
