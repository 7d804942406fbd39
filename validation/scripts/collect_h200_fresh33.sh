#!/usr/bin/env bash
# H200 collection (GPU machine, repository root; $OUT receives copies), session 29: fresh33, a seeded GROUP_M set made by
# validation/scripts/make_blind_set.py --group-m-siblings (the Triton tutorial's Hopper tiles and the three wave-study
# tiles, each at GROUP_M 1 / 4 / 8 / 16, on 20 aligned log-uniform shapes with M >= 128). Two passes in different shuffled
# orders with the clean L2 eviction (cuBLAS in the first). Measured before any GROUP_M-aware model is scored on it, to
# decide the next such model once, by a rule written before (NOTES.md session 29).
#   bash validation/scripts/collect_h200_fresh33.sh
D=validation/data/h200/fresh33
DEFAULT_BUDGET=540 . "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_fresh33.txt" $D/nvidia_smi_fresh33.txt
P="python3 -m validation.cli profile --gpu h200 --shapes $D/blind_shapes.jsonl --configs $D/blind_configs.jsonl --l2-flush read --target-ms 10 --max-reps 30"
$P --order-seed 66 --out $D/group_m_fresh33.jsonl --budget-s $(( $(left) / 2 + 30 ))
$P --order-seed 67 --no-cublas --out $D/group_m_fresh33_repeat.jsonl --budget-s $(( $(left) - 20 ))
cp $D/group_m_fresh33.jsonl $D/group_m_fresh33_repeat.jsonl "$OUT/"
ls -la "$OUT"
