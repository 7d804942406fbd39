#!/usr/bin/env bash
# Session-30 H200 collection, not yet run (GPU machine, repository root; $OUT receives copies): per-CTA traces of
# 128x128x64 GROUP_M 8 at 2 CTAs/SM (validation/data/h200/traces/configs_tails2_2sm.jsonl) after 1..4 full waves on
# three layers that vary K and N apart, N x K = 4096 x 2048, 4096 x 8192 and 8192 x 4096, clean flush, 2 reps: where a
# later tail starts to pair against R n / S on each (`python3 -m validation.tail_dealing --onset FILE`). Session 30 found
# the onset near 1.0 on 4096^2 and 0.6-0.7 on 7168^2 and 5120^2 (NOTES): this says whether K, N or neither moves it.
# usage: bash validation/scripts/collect_h200_tails3.sh
DEFAULT_BUDGET=540 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
C=$T/configs_tails2_2sm.jsonl
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_tails3.txt"
python3 -m validation.trace trace --configs $C --N 4096 --K 2048 --M 1088:4480:64 --reps 2 --l2-flush read --out $T/trace_tails3_4096x2048.npz
python3 -m validation.trace trace --configs $C --N 4096 --K 8192 --M 1088:4480:64 --reps 2 --l2-flush read --out $T/trace_tails3_4096x8192.npz
python3 -m validation.trace trace --configs $C --N 8192 --K 4096 --M 576:2240:32 --reps 2 --l2-flush read --out $T/trace_tails3_8192x4096.npz
cp $T/trace_tails3_* "$OUT/"
ls -la "$OUT"
