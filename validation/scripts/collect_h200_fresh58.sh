#!/usr/bin/env bash
# Session-37 H200 collection (GPU machine, repository root; $OUT receives copies): fresh58, a blind set drawn as
# fresh37 was (make_blind_set.py --seed 58 --configs 60 --shapes 30: the wide space's own weights) at 13:00 of session 37, for deciding variants once by rules written
# before they are scored, sealed; two passes in shuffled orders with the clean L2 eviction.
# usage: bash validation/scripts/collect_h200_fresh58.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
blind_passes validation/data/h200/fresh58 blind_fresh58 112
