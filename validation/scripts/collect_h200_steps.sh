#!/usr/bin/env bash
# Session-23 H200 collection (GPU machine, repository root; $OUT receives one tar): per-step traces
# (`wavetune trace --steps`: the SM cycles of every K step of each CTA) to see what a lone CTA's K step and a
# co-resident CTA cost step by step, where the simulator is furthest off:
#   * 128x128x64 s3 on N = 4096 at K = 1024..16384, M = 512 / 640 / 1024 (128 lone CTAs; 28 and 124 SMs doubled):
#     the hardware's first co-residence costs 1.06-1.30 by layer (the K loop?), the model 1.23-1.29;
#   * 4096 x 4096 with 128x256x64 s3 and s4 and 64x128x64 s3 beside it, M = 16..4096: the 4th stage buys the hardware
#     nothing from M = 512 on and the model 6%; are later waves' steps faster than the first wave's?
#   * 8192 x 2048 (a wide, short-K layer): lone steps the model makes too fast.
# usage: bash validation/scripts/collect_h200_steps.sh
DEFAULT_BUDGET=420 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
for K in 1024 2048 8192 16384; do
    python3 -m validation.trace trace --configs $T/configs_steps_k.jsonl --N 4096 --K $K --M 512,640,1024 --reps 1 \
        --steps --out $T/trace_steps_4096x$K.npz
done
python3 -m validation.trace trace --configs $T/configs_steps.jsonl --N 4096 --K 4096 --M 16,256,512,640,1024,2048,4096 \
    --reps 1 --steps --out $T/trace_steps_4096x4096.npz
python3 -m validation.trace trace --configs $T/configs_steps.jsonl --N 8192 --K 2048 --M 128,192,256,320,512 --reps 1 \
    --steps --out $T/trace_steps_8192x2048.npz
tar cf "$OUT/steps.tar" $T/trace_steps_*
python3 -m validation.step_trace $T/trace_steps_*x*[0-9].npz | tee "$OUT/step_profile.txt"
ls -la "$OUT"
