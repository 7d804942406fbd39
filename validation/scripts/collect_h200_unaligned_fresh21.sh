#!/usr/bin/env bash
# H200 collection (GPU machine, repository root; $OUT receives copies), session 17: shapes whose N or K is not a
# multiple of 16 that no file has, measured after the unaligned kernel's B cost was moved to the SM-shared work (a
# rule set beforehand decided whether that ships; it did not: NOTES session 17), never fitted: vocabulary heads (N = 50257 x K =
# 1600 and 1024, N = 30522 x K = 768, N = 32005 x K = 4096 at M = 64), N = 3000 x K = 4096, K = 1000, and both (N =
# 12001 x K = 2500, N = K = 1000); every config, shuffled order, one pass with cuBLAS.
exec bash "$(dirname "$0")/collect_h200_shapes.sh" validation/data/h200/fresh21/unaligned_fresh21.jsonl 21 \
    256x50257x1600,2048x50257x1024,4096x30522x768,1000x3000x4096,3000x5120x1000,777x12001x2500,2048x1000x1000,64x32005x4096
