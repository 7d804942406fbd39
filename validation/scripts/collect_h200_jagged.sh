#!/usr/bin/env bash
# Session-12 H200 collection (GPU machine, repository root; $OUT receives copies): per-CTA traces of the fresh7
# layer (yi-34b.o, N = K = 7168) where its M sweep is jagged at 1 CTA/SM (128x256x64: M = 4032 takes 1.10x
# M = 4096 at the same grid, all four passes) and where late wave boundaries jump more than a wave's share
# (128x128x64 s4 at M = 2752, 5184; 64x64x32 s2 at 1856, 2432): are all CTAs slower, the tail's, or some SMs'?
# usage: BUDGET=seconds bash validation/scripts/collect_h200_jagged.sh
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_jagged.txt"
python3 -m validation.trace trace --configs "$T/configs_jagged.jsonl" --N 7168 --K 7168 --reps 2 \
    --M 1792,1856,1920,2368,2432,2496,2624,2688,2752,2816,2880,3968,4032,4096,4160,4224,5120,5184,5248 \
    --out $T/trace_jagged_7168.npz
cp $T/trace_jagged_7168.* "$OUT/"
ls -la "$OUT"
