#!/usr/bin/env bash
# Session-36 H200 collection (GPU machine, repository root; $OUT receives copies): fresh56, a blind set drawn as
# fresh37 was (make_blind_set.py --seed 56 --configs 60 --shapes 30: the wide space's own weights) at 04:49 of
# session 36, after rule IS2 failed on fresh54, for the next session's deciding, sealed; two passes in shuffled orders
# with the clean L2 eviction.
# usage: bash validation/scripts/collect_h200_fresh56.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
blind_passes validation/data/h200/fresh56 blind_fresh56 112
