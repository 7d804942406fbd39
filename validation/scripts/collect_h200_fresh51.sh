#!/usr/bin/env bash
# Session-35 H200 collection (GPU machine, repository root; $OUT receives copies): fresh51, a blind set drawn at 02:31
# of session 35 for deciding a one-stage variant as a chooser (LR1 failed its rules on fresh49 and fresh50, where no
# one-stage config was anyone's pick): make_blind_set.py --seed 51 --configs 80 --shapes 24 --stages 1,1,1,2,3,4,5,6
# --min-m 128 (one stage drawn three times as often, M from 128, where one-stage configs can win); two passes in
# shuffled orders with the clean L2 eviction. Sealed (NOTES.md, session 35).
# usage: bash validation/scripts/collect_h200_fresh51.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
blind_passes validation/data/h200/fresh51 blind_fresh51 102
