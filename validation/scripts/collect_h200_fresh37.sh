#!/usr/bin/env bash
# Session-30 H200 collection (GPU machine, repository root; $OUT receives copies): the blind set that decides T5 as a
# chooser once (NOTES.md, session 30, rule T5P, written before this set was made): make_blind_set.py --seed 37
# --configs 60 --shapes 30, two passes in shuffled orders with the clean L2 eviction.
# usage: bash validation/scripts/collect_h200_fresh37.sh
D=validation/data/h200/fresh37
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_fresh37.txt" $D/nvidia_smi_fresh37.txt
P="python3 -m validation.cli profile --gpu h200 --shapes $D/blind_shapes.jsonl --configs $D/blind_configs.jsonl --l2-flush read --target-ms 10 --max-reps 30"
$P --order-seed 74 --out $D/blind_fresh37.jsonl --budget-s $(( $(left) / 2 + 20 ))
$P --order-seed 75 --no-cublas --out $D/blind_fresh37_repeat.jsonl --budget-s $(( $(left) - 20 ))
cp $D/blind_fresh37.jsonl $D/blind_fresh37_repeat.jsonl "$OUT/"
ls -la "$OUT"
