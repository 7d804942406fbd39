#!/usr/bin/env bash
# H200 collection (GPU machine, repository root; $OUT receives copies), session 16, after fresh16: more shapes whose
# N or K is not a multiple of 16, to choose between two forms of the unaligned kernel's per-step cost (per thread or
# per warp scheduler: NOTES session 16) on shapes neither was fitted on: vocabulary heads (N = 50257, K = 768;
# N = 32003, K = 5120), N = 11001 x K = 4096, K unaligned (N = 4096, K = 11001) and both (N = 6001, K = 3001), at
# large M where the two forms disagree most; every config, shuffled order, one pass with cuBLAS.
DEFAULT_BUDGET=500 . "$(dirname "$0")/common.sh"
D=validation/data/h200/fresh17
SHAPES=1024x50257x768,4096x50257x768,4096x32003x5120,2048x11001x4096,512x4096x11001,4096x4096x11001,2000x6001x3001,333x6001x3001
python3 -m validation.cli profile --gpu h200 --shapes $SHAPES --configs broad+wave-study+grouping --target-ms 10 \
    --max-reps 30 --order-seed 2 --out $D/unaligned_fresh17.jsonl --budget-s $(( $(left) - 20 ))
cp $D/unaligned_fresh17.jsonl "$OUT/"
ls -la "$OUT"
