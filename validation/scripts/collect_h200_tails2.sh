#!/usr/bin/env bash
# Session-30 H200 collection (GPU machine, repository root; $OUT receives copies): per-CTA traces of the partial waves
# after 1..6 full waves on 4096^2 (a six_clean layer), clean L2 eviction, to measure how the dispatch deals a tail
# into the slots that free: how many SMs get two (or more) of its CTAs against R and the full waves before it
# (`python3 -m validation.tail_dealing FILE`). 128x128x64 at 2 CTAs/SM (M = 1088..7040, every half tile
# row) and 64x128x64 at 3 (M = 832..4800).
# usage: bash validation/scripts/collect_h200_tails2.sh
DEFAULT_BUDGET=480 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_tails2.txt"
python3 -m validation.trace trace --configs $T/configs_tails2_2sm.jsonl --N 4096 --K 4096 --M 1088:7040:64 --reps 3 \
    --l2-flush read --out $T/trace_tails2_4096_2sm.npz
python3 -m validation.trace trace --configs $T/configs_tails2_3sm.jsonl --N 4096 --K 4096 --M 832:4800:64 --reps 3 \
    --l2-flush read --out $T/trace_tails2_4096_3sm.npz
cp $T/trace_tails2_4096_* "$OUT/"
ls -la "$OUT"
