#!/usr/bin/env bash
# Session-34 H200 collection (GPU machine, repository root; $OUT receives copies), one call:
# 1. fresh44, the blind set drawn in session 33 (collect_h200_fresh44.sh: 1 and 16 warps and one stage over-sampled),
#    two shuffled passes with the clean L2 eviction, to decide rule S1 once (NOTES.md, session 33);
# 2. fresh45, M sweeps (M = 64..2176 step 64) of the 17 sweep configs on two layers no sweep has, N x K = 3072 x 8192
#    (Llama-3.2-3B down_proj) and 12288 x 3072 (a 4x MLP up-projection of a 3072-wide model), three shuffled passes with
#    the clean eviction: an unseen step set for the next staircase variant (NOTES.md, session 34), never fitted.
# fresh44 comes first and may use what it needs of the budget; fresh45 gets the rest.
# usage: bash validation/scripts/collect_h200_session34.sh
DEFAULT_BUDGET=540 . "$(dirname "$0")/common.sh"
blind_passes validation/data/h200/fresh44 blind_fresh44 88
sweep_passes fresh45 read
