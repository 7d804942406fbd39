#!/usr/bin/env bash
# Session-30 H200 collection (GPU machine, repository root; $OUT receives copies): the set that decides variant T5 once
# (NOTES.md, session 30, the rule written before this ran): M sweeps (M = 64..2176 step 64) of the 17 sweep configs on
# three layers no sweep has, N x K = 14336 x 4096 (Llama-3-8B MLP up), 4096 x 14336 (its down) and 18944 x 3584
# (Qwen2-7B MLP up), three shuffled passes with the clean L2 eviction.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_fresh36.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
sweep_passes fresh36 read
