#!/usr/bin/env bash
# H200 collection (GPU machine, repository root; $OUT receives copies), session 17: shapes whose N or K is not a
# multiple of 16 that no file has, measured after the unaligned kernel's B cost was refitted as SM-shared work with
# fresh21 in the fit (a rule set beforehand decides whether it ships: NOTES session 17), never fitted: vocabulary
# heads (N = 100277 x K = 4096 at M = 256, N = 50257 x K = 4096 at M = 32, N = 32001 x K = 2048), N = 7001, 1001 and
# 12289 (B), K = 7001 (A), N = 2001 x K = 6001 (both); every config, shuffled order, one pass with cuBLAS.
exec bash "$(dirname "$0")/collect_h200_shapes.sh" validation/data/h200/fresh22/unaligned_fresh22.jsonl 22 \
    256x100277x4096,32x50257x4096,4096x32001x2048,1500x7001x4096,2048x4096x7001,600x2001x6001,8192x1001x4096,128x12289x3072
