#!/usr/bin/env bash
# Session-31 H200 collection (GPU machine, repository root; $OUT receives copies): the set that decides variant T6 once
# (NOTES.md, session 31, the rule written before this ran): M sweeps (M = 64..2176 step 64) of the 17 sweep configs on
# three layers no sweep has, whose K spans the 2-CTA/SM tail onset's law, N x K = 8192 x 8192 (Llama-3-70B o_proj),
# 8192 x 3072 (Llama-3.2-3B gate/up) and 8960 x 1536 (Qwen2.5-1.5B gate/up), three shuffled passes with the clean L2
# eviction.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_fresh38.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
sweep_passes fresh38 read
