#!/usr/bin/env bash
# Session-31 H200 collection (GPU machine, repository root; $OUT receives one tar of the traces): per-CTA traces of
# 128x128x64 GROUP_M 8 at 2 CTAs/SM (validation/data/h200/traces/configs_tails2_2sm.jsonl) after 1..4 full waves on five
# layers in one call, so that one card shows them all: 4096^2 and 7168^2 (onsets 0.88 and 0.60 on session 30's and an
# earlier card), and again the three layers of collect_h200_tails3.sh (onsets 1.01, 0.25 and every tail paired on
# session 31's first card). It says whether the onset moves with the layer or with the card
# (`python3 -m validation.tail_dealing --onset --only '^128x128x64_' FILE`). Clean flush, 2 reps.
# usage: bash validation/scripts/collect_h200_tails4.sh
DEFAULT_BUDGET=540 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
C=$T/configs_tails2_2sm.jsonl
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv | tee "$T/nvidia_smi_tails4.txt"
tr() { python3 -m validation.trace trace --configs $C --N $1 --K $2 --M $3 --reps 2 --l2-flush read --out $T/trace_tails4_$1x$2.npz; }
tr 4096 4096 1088:4480:64
tr 7168 7168 640:2976:32
tr 4096 2048 1088:4480:64
tr 4096 8192 1088:4480:64
tr 8192 4096 576:2240:32
tar -cf "$OUT/tails4.tar" -C $T $(cd $T && ls trace_tails4_* nvidia_smi_tails4.txt)
ls -la "$OUT"
