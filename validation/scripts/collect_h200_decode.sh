#!/usr/bin/env bash
# H200 collection (GPU machine, repository root; $OUT receives copies), session 18: decode batch sizes. M = 1, 2, 3,
# 4, 5, 6, 8, 12, 16 on four LLM layers no file has (Llama-3-70B qkv 10240 x 8192, Qwen2.5-14B qkv 7168 x 5120,
# Gemma-2-9B down 3584 x 14336, Qwen2.5-7B gate+up 37888 x 3584), every config of the tuning space, bf16. Two
# passes in different shuffled orders (the second for the noise floor), cuBLAS in the first. Measured to decide, by
# a rule written before it was taken (NOTES session 18), how the cost of A's wrapped rows (offs_am % M: BLOCK_M / M
# copies of each row) carries from M = 1 to the M between 1 and BLOCK_M; never fitted.
#   bash validation/scripts/collect_h200_decode.sh
DEFAULT_BUDGET=540 . "$(dirname "$0")/common.sh"
D=validation/data/h200/fresh23; mkdir -p $D
S=""
for nk in 10240x8192 7168x5120 3584x14336 37888x3584; do
  for m in 1 2 3 4 5 6 8 12 16; do S="$S${S:+,}${m}x${nk}"; done
done
P="python3 -m validation.cli profile --gpu h200 --shapes $S --configs broad+wave-study+grouping --target-ms 10 --max-reps 30"
$P --order-seed 46 --out $D/decode_fresh23.jsonl --budget-s $(( $(left) / 2 + 30 ))
$P --order-seed 47 --no-cublas --out $D/decode_fresh23_repeat.jsonl --budget-s $(( $(left) - 20 ))
cp $D/decode_fresh23.jsonl $D/decode_fresh23_repeat.jsonl "$OUT/"
ls -la "$OUT"
