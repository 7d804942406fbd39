#!/usr/bin/env bash
# Session-22 H200 collection (GPU machine, repository root; $OUT receives copies): M sweeps (M = 64..2176 step 64) of
# the 17 wave-study + grouping configs on two layers no earlier sweep has, N x K = 2560 x 8192 (a narrow layer with a
# long K loop, L = 128 at BLOCK_K 64) and 13824 x 5120 (an MLP up-projection of a 5120-wide model, 108 column tiles of
# 128), three profiler passes in shuffled orders. Measured to decide the next model change by a rule set before it is
# scored on them (NOTES session 22); not looked at in session 22 beyond their record counts; never fitted. The
# profiler resumes: run again to finish a pass.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_fresh32.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
sweep_passes fresh32
