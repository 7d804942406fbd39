#!/usr/bin/env bash
# H200 collection (GPU machine, repository root; $OUT receives copies), session 17: a seeded random blind set
# (validation/scripts/make_blind_set.py --seed 19: 160 configs from a space wider than any the model was fitted on,
# 12 log-uniform shapes, one with N not a multiple of 16), bf16, never fitted. A first version of the set had tiles
# whose accumulators spill thousands of registers: their compiles hung the profiler past its budget and the device
# call's limit (nothing came back); the generator now skips them and the profiler's compile phase keeps the budget. Two passes in different shuffled
# orders (the second for the noise floor), cuBLAS in the first.
DEFAULT_BUDGET=480 . "$(dirname "$0")/common.sh"
D=validation/data/h200/fresh19
P="python3 -m validation.cli profile --gpu h200 --shapes $D/blind_shapes.jsonl --configs $D/blind_configs.jsonl --target-ms 10 --max-reps 30"
$P --order-seed 5 --out $D/blind_fresh19.jsonl --budget-s $(( $(left) / 2 + 60 ))
$P --order-seed 6 --no-cublas --out $D/blind_fresh19_repeat.jsonl --budget-s $(( $(left) - 20 ))
cp $D/blind_fresh19.jsonl $D/blind_fresh19_repeat.jsonl "$OUT/"
ls -la "$OUT"
