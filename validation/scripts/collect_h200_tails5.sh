#!/usr/bin/env bash
# Session-31 H200 collection (GPU machine, repository root; $OUT receives one tar): the card spread of the 2-CTA/SM
# tail onset. Per-CTA traces of 128x128x64 GROUP_M 8 at 2 CTAs/SM (validation/data/h200/traces/configs_tails2_2sm.jsonl)
# after 1..4 full waves on 4096^2, 4096 x 8192 and 8192 x 4096, clean flush, 2 reps, into files named by the card's
# serial, so that runs on several machines (each cold call may bring another card) compare the same layers
# (`python3 -m validation.tail_dealing --onset [--elapsed] --only '^128x128x64_' FILE`).
# usage: bash validation/scripts/collect_h200_tails5.sh
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
C=$T/configs_tails2_2sm.jsonl
SERIAL=$(nvidia-smi --query-gpu=serial --format=csv,noheader | head -1 | tr -dc '0-9')
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv | tee "$T/nvidia_smi_tails5_$SERIAL.txt"
tr() { python3 -m validation.trace trace --configs $C --N $1 --K $2 --M $3 --reps 2 --l2-flush read --out $T/trace_tails5_${SERIAL}_$1x$2.npz; }
tr 4096 4096 1088:4480:64
tr 4096 8192 1088:4480:64
tr 8192 4096 576:2240:32
tar -cf "$OUT/tails5_$SERIAL.tar" -C $T $(cd $T && ls trace_tails5_${SERIAL}_* nvidia_smi_tails5_$SERIAL.txt)
ls -la "$OUT"
