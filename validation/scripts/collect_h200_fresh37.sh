#!/usr/bin/env bash
# Session-30 H200 collection (GPU machine, repository root; $OUT receives copies): the blind set that decides T5 as a
# chooser once (NOTES.md, session 30, rule T5P, written before this set was made): make_blind_set.py --seed 37
# --configs 60 --shapes 30, two passes in shuffled orders with the clean L2 eviction.
# usage: bash validation/scripts/collect_h200_fresh37.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
blind_passes validation/data/h200/fresh37 blind_fresh37 74
