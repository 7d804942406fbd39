#!/usr/bin/env bash
# Session-29 H200 collection (GPU machine, repository root; $OUT receives copies): deciding sets for the next model
# change, measured before any model is scored on them (fresh32 and fresh33 were spent on GC2 in session 29).
#   fresh35: a GROUP_M set like fresh33 (make_blind_set.py --seed 35 --group-m-siblings --shapes 20 --min-m 128), two
#            clean-flush passes;
#   fresh34: M sweeps (M = 64..2176 step 64) of the 17 sweep configs on two layers no sweep has, N x K = 11008 x 4096
#            (Llama-2-7B's MLP up-projection) and 5120 x 13824 (Llama-2-13B's down-projection), three shuffled passes
#            with the clean L2 eviction (issue 3's reference protocol since session 26), with the rest of the budget.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_fresh34.sh
DEFAULT_BUDGET=540 . "$(dirname "$0")/common.sh"
G=validation/data/h200/fresh35
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee $G/nvidia_smi_fresh35.txt
P="python3 -m validation.cli profile --gpu h200 --shapes $G/blind_shapes.jsonl --configs $G/blind_configs.jsonl --l2-flush read --target-ms 10 --max-reps 30"
$P --order-seed 70 --out $G/group_m_fresh35.jsonl --budget-s 90
$P --order-seed 71 --no-cublas --out $G/group_m_fresh35_repeat.jsonl --budget-s 90
cp $G/group_m_fresh35*.jsonl $G/nvidia_smi_fresh35.txt "$OUT/"
sweep_passes fresh34 read
