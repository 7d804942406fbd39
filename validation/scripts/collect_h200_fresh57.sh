#!/usr/bin/env bash
# Session-37 H200 collection (GPU machine, repository root; $OUT receives copies): fresh57, a blind set drawn as
# fresh44 was (make_blind_set.py --seed 57 --configs 80 --shapes 24 --warps 1,1,2,4,8,16,16 --stages 1,1,2,3,4,5,6) at 13:00 of session 37, for deciding variants once by rules written
# before they are scored, sealed; two passes in shuffled orders with the clean L2 eviction.
# usage: bash validation/scripts/collect_h200_fresh57.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
blind_passes validation/data/h200/fresh57 blind_fresh57 110
