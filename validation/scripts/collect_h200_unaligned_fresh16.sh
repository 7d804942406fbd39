#!/usr/bin/env bash
# H200 collection (GPU machine, repository root; $OUT receives copies), session 16: shapes whose N or K is not a
# multiple of 16, measured after the unaligned kernel's model was fitted (on fresh14/unaligned_study.jsonl) and
# never fitted: an lm_head with a padded vocabulary (N = 32001: B and C unaligned), the input gradient of a 50257-word
# vocabulary (K = 50257: A unaligned) and one layer with both unaligned (N = 3001, K = 5003); every config of the
# tuning space, shuffled order, one pass with cuBLAS alongside.
DEFAULT_BUDGET=540 . "$(dirname "$0")/common.sh"
D=validation/data/h200/fresh16
SHAPES=16x32001x4096,512x32001x4096,2048x32001x4096,256x768x50257,2048x768x50257,64x3001x5003,1000x3001x5003,4000x3001x5003
python3 -m validation.cli profile --gpu h200 --shapes $SHAPES --configs broad+wave-study+grouping --target-ms 10 \
    --max-reps 30 --out $D/unaligned_fresh16.jsonl --budget-s $(( $(left) - 20 ))
cp $D/unaligned_fresh16.jsonl "$OUT/"
nvidia-smi --query-gpu=name,serial,driver_version,clocks.max.sm,power.limit --format=csv > "$OUT/nvidia_smi_fresh16.txt"
ls -la "$OUT"
