#!/usr/bin/env bash
# H200 collection (GPU machine, repository root; $OUT receives copies), session 17: fp32 (tf32) shapes that no fp32
# file has, measured after the model's tf32 B-copy cost was fitted on holdout/llm_fp32.jsonl (never fitted: they
# score it). Every config, two passes in different shuffled orders (the second for the noise floor), with cuBLAS.
DEFAULT_BUDGET=540 . "$(dirname "$0")/common.sh"
D=validation/data/h200/fresh18; mkdir -p $D
SHAPES=16x6144x4096,128x6144x4096,2048x6144x4096,64x4096x14336,1024x4096x14336,4096x4096x14336,512x8192x8192,4096x8192x8192,32x3072x3072,256x3072x3072,4096x3072x3072,8192x1024x4096,2000x5120x5120,333x2560x2560
P="python3 -m validation.cli profile --gpu h200 --dtype fp32 --shapes $SHAPES --configs broad+wave-study+grouping --target-ms 10 --max-reps 30"
$P --order-seed 3 --out $D/fp32_fresh18.jsonl --budget-s $(( $(left) / 2 + 60 ))
$P --order-seed 4 --no-cublas --out $D/fp32_fresh18_repeat.jsonl --budget-s $(( $(left) - 20 ))
cp $D/fp32_fresh18.jsonl $D/fp32_fresh18_repeat.jsonl "$OUT/"
ls -la "$OUT"
