#!/usr/bin/env bash
# H200 collection (GPU machine, repository root; $OUT receives copies), session 19: fp32 (tf32) shapes of layers that no
# fp32 file has, measured to decide by a rule set before (NOTES session 19) whether the tf32 B copy counts in the CTA's
# chain (never fitted: they score it). Every config, two passes in different shuffled orders (the second for the
# noise floor), with cuBLAS.
DEFAULT_BUDGET=540 . "$(dirname "$0")/common.sh"
D=validation/data/h200/fresh29; mkdir -p $D
SHAPES=64x2048x2048,2048x2048x2048,256x11008x4096,4096x11008x4096,32x4096x11008,1024x4096x11008,512x1536x8960,8192x1536x8960,128x7168x5120,2048x7168x5120,1000x3584x3584,6000x3584x3584
P="python3 -m validation.cli profile --gpu h200 --dtype fp32 --shapes $SHAPES --configs broad+wave-study+grouping --target-ms 10 --max-reps 30"
$P --order-seed 58 --out $D/fp32_fresh29.jsonl --budget-s $(( $(left) / 2 + 60 ))
$P --order-seed 59 --no-cublas --out $D/fp32_fresh29_repeat.jsonl --budget-s $(( $(left) - 20 ))
cp $D/fp32_fresh29.jsonl $D/fp32_fresh29_repeat.jsonl "$OUT/"
ls -la "$OUT"
