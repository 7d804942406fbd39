#!/usr/bin/env bash
# H200 collection (GPU machine, repository root; $OUT receives copies), session 14: every config of the tuning space
# on four layers no earlier set has (validation/shapesets.py FRESH14_LAYERS: ragged K and N, M not multiples of 16),
# measured after session 13's model was fixed, in shuffled order: config selection out of sample.
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
D=validation/data/h200/fresh14; mkdir -p $D
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_fresh14.txt"
python3 -m validation.cli profile --gpu h200 --shapes llm-fresh14 --configs broad+wave-study+grouping --target-ms 10 \
    --max-reps 30 --out $D/llm_fresh14.jsonl --budget-s $(( $(left) - 20 ))
cp $D/llm_fresh14.jsonl "$OUT/"
ls -la "$OUT"
