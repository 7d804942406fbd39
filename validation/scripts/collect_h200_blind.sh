#!/usr/bin/env bash
# H200 collection (GPU machine, repository root; $OUT receives copies), session 17: a seeded random blind set made
# by validation/scripts/make_blind_set.py (160 configs from a space wider than any the model was fitted on, 12
# log-uniform shapes, one with N not a multiple of 16), bf16, never fitted. Two passes in different shuffled orders
# (the second for the noise floor), cuBLAS in the first.
#   bash validation/scripts/collect_h200_blind.sh validation/data/h200/fresh19 19   # after session 17's fp32 model
#     (measured with order seeds 5 and 6, before this script took the seed from the set's)
#   bash validation/scripts/collect_h200_blind.sh validation/data/h200/fresh20 20   # after the fixes fresh19 showed
# A first version of fresh19 had tiles whose accumulators spill thousands of registers: their compiles hung the
# profiler past its budget and the device call's limit (nothing came back); the generator now skips them and the
# profiler's compile phase keeps the budget.
D=$1; SEED=$2
DEFAULT_BUDGET=480 . "$(dirname "$0")/common.sh"
[ -f $D/blind_configs.jsonl ] || python3 validation/scripts/make_blind_set.py --seed $SEED --out $D
P="python3 -m validation.cli profile --gpu h200 --shapes $D/blind_shapes.jsonl --configs $D/blind_configs.jsonl --target-ms 10 --max-reps 30"
$P --order-seed $(( 2 * SEED )) --out $D/blind_$(basename $D).jsonl --budget-s $(( $(left) / 2 + 60 ))
$P --order-seed $(( 2 * SEED + 1 )) --no-cublas --out $D/blind_$(basename $D)_repeat.jsonl --budget-s $(( $(left) - 20 ))
cp $D/blind_$(basename $D).jsonl $D/blind_$(basename $D)_repeat.jsonl "$OUT/"
ls -la "$OUT"
