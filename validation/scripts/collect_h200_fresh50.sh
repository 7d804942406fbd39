#!/usr/bin/env bash
# Session-35 H200 collection (GPU machine, repository root; $OUT receives copies): fresh50, a blind set drawn as
# fresh37 was (make_blind_set.py --seed 50 --configs 60 --shapes 30: the wide space's own weights) at 01:58 of
# session 35, before any later variant was written, kept sealed to decide one as a chooser (NOTES.md, session 35);
# two passes in shuffled orders with the clean L2 eviction.
# usage: bash validation/scripts/collect_h200_fresh50.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
blind_passes validation/data/h200/fresh50 blind_fresh50 100
