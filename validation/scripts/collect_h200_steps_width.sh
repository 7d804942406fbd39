#!/usr/bin/env bash
# Session-24 H200 collection (GPU machine, repository root; $OUT receives one tar): what sets a lone CTA's K step besides
# its tile. Session 23 found 128x128x64's lone step longer on N = 8192 (978 cycles) than on N = 4096 (770-863 at any
# K), and 256x128x64's is longer than 128x256x64's with the same bytes (collect_h200_steps_wg.sh). Per-step traces of
# four tiles on layers N = 2048 ... 16384 (K = 2048) at M = 128 and 256: 8-256 CTAs, so from a few lone CTAs streaming
# B to the whole chip's SMs doing so.
# usage: bash validation/scripts/collect_h200_steps_width.sh
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
for N in 2048 4096 8192 16384; do
    python3 -m validation.trace trace --configs $T/configs_steps_width.jsonl --N $N --K 2048 --M 128,256 --reps 1 \
        --steps --out $T/trace_steps_width_${N}x2048.npz
done
tar cf "$OUT/steps_width.tar" $T/trace_steps_width_*
python3 -m validation.step_trace $T/trace_steps_width_*.npz | tee "$OUT/step_profile_width.txt"
ls -la "$OUT"
