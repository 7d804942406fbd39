#!/usr/bin/env bash
# Session-21 H200 collection (GPU machine, repository root; $OUT receives copies): M sweeps (M = 64..2176 step 64) of
# the 17 wave-study + grouping configs on two layers no earlier sweep has, N x K = 6144 x 4096 (a fused QKV of a
# 4096-wide model with 8 KV heads) and 10240 x 2560 (an MLP up-projection of a 2560-wide model), three profiler
# passes in shuffled orders. Measured to decide by a rule set before (NOTES session 21) whether the model variant of
# that session ships; never fitted. The profiler resumes: run again to finish a pass.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_fresh31.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
sweep_passes fresh31
