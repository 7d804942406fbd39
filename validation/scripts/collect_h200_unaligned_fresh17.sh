#!/usr/bin/env bash
# H200 collection (GPU machine, repository root; $OUT receives copies), session 16, after fresh16: more shapes whose
# N or K is not a multiple of 16, to choose between two forms of the unaligned kernel's per-step cost (per thread or
# per warp scheduler: NOTES session 16) on shapes neither was fitted on: vocabulary heads (N = 50257, K = 768;
# N = 32003, K = 5120), N = 11001 x K = 4096, K unaligned (N = 4096, K = 11001) and both (N = 6001, K = 3001), at
# large M where the two forms disagree most; every config, shuffled order, one pass with cuBLAS.
exec bash "$(dirname "$0")/collect_h200_shapes.sh" validation/data/h200/fresh17/unaligned_fresh17.jsonl 2 \
    1024x50257x768,4096x50257x768,4096x32003x5120,2048x11001x4096,512x4096x11001,4096x4096x11001,2000x6001x3001,333x6001x3001
