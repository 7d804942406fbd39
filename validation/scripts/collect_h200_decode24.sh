#!/usr/bin/env bash
# H200 collection (GPU machine, repository root; $OUT receives copies), session 18: decode batch sizes again, after
# fresh23 had shipped the wrapped-rows cost. M = 2, 3, 4, 6, 8, 10, 12, 14, 16, 24, 32 on four layers no file has
# (Llama-3.1-405B o_proj at TP 8: 16384 x 2048, Phi-3-medium qkv 7680 x 5120, Mistral-Nemo qkv 6144 x 5120,
# Llama-3-70B down 8192 x 28672), every config of the tuning space, bf16, two passes in different shuffled orders
# (cuBLAS in the first). Measured to decide, by a rule written before it was taken (NOTES session 18), whether the
# first copies of a wrapped row are free; never fitted.
#   bash validation/scripts/collect_h200_decode24.sh
DEFAULT_BUDGET=540 . "$(dirname "$0")/common.sh"
D=validation/data/h200/fresh24; mkdir -p $D
S=""
for nk in 16384x2048 7680x5120 6144x5120 8192x28672; do
  for m in 2 3 4 6 8 10 12 14 16 24 32; do S="$S${S:+,}${m}x${nk}"; done
done
P="python3 -m validation.cli profile --gpu h200 --shapes $S --configs broad+wave-study+grouping --target-ms 10 --max-reps 30"
$P --order-seed 48 --out $D/decode_fresh24.jsonl --budget-s $(( $(left) / 2 + 30 ))
$P --order-seed 49 --no-cublas --out $D/decode_fresh24_repeat.jsonl --budget-s $(( $(left) - 20 ))
cp $D/decode_fresh24.jsonl $D/decode_fresh24_repeat.jsonl "$OUT/"
ls -la "$OUT"
