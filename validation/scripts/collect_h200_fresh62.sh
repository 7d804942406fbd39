#!/usr/bin/env bash
# Session-39 H200 collection (GPU machine, repository root; $OUT receives copies): fresh62, a blind set drawn as fresh37 was (make_blind_set.py --seed 62 --configs 60 --shapes 30: the wide space's own weights), drawn at 11:06 of session 39, for deciding variants once by rules written before they are
# scored, sealed; two passes in shuffled orders with the clean L2 eviction.
# usage: bash validation/scripts/collect_h200_fresh62.sh
DEFAULT_BUDGET=280 . "$(dirname "$0")/common.sh"
blind_passes validation/data/h200/fresh62 blind_fresh62 124
