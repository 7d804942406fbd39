#!/usr/bin/env bash
# Session-39 H200 collection (GPU machine, repository root; $OUT receives copies): fresh61, a decode blind set (make_blind_set.py --seed 61 --configs 80 --shapes 24 --max-m 64: M 1..64, the wide space's own weights), drawn at 11:06 of session 39, for deciding variants once by rules written before they are
# scored, sealed; two passes in shuffled orders with the clean L2 eviction.
# usage: bash validation/scripts/collect_h200_fresh61.sh
DEFAULT_BUDGET=280 . "$(dirname "$0")/common.sh"
blind_passes validation/data/h200/fresh61 blind_fresh61 122
