#!/usr/bin/env bash
# H200 collection (GPU machine, repository root; $OUT receives copies), session 18: decode batch sizes, every config
# of the tuning space, bf16, on the layers and M given; two passes in different shuffled orders (the second for the
# noise floor), cuBLAS in the first.
#   bash validation/scripts/collect_h200_decode.sh DIR NAME ORDER_SEED "M M ..." "NxK NxK ..."
# fresh23 (measured to decide, by a rule written before it was taken, how the cost of A's wrapped rows, offs_am % M:
# BLOCK_M / M copies of each row, carries from M = 1 to the M between 1 and BLOCK_M; NOTES session 18): four layers
# no file had, Llama-3-70B qkv, Qwen2.5-14B qkv, Gemma-2-9B down, Qwen2.5-7B gate+up:
#   bash validation/scripts/collect_h200_decode.sh validation/data/h200/fresh23 decode_fresh23 46 \
#       "1 2 3 4 5 6 8 12 16" "10240x8192 7168x5120 3584x14336 37888x3584"
# fresh24 (after fresh23's form shipped, to decide a variant by a rule written before; four other new layers:
# Llama-3.1-405B o_proj at TP 8, Phi-3-medium qkv, Mistral-Nemo qkv, Llama-3-70B down):
#   bash validation/scripts/collect_h200_decode.sh validation/data/h200/fresh24 decode_fresh24 48 \
#       "2 3 4 6 8 10 12 14 16 24 32" "16384x2048 7680x5120 6144x5120 8192x28672"
DEFAULT_BUDGET=540 . "$(dirname "$0")/common.sh"
D=$1; NAME=$2; SEED=$3; MS=$4; LAYERS=$5
mkdir -p $D
S=""
for nk in $LAYERS; do
  for m in $MS; do S="$S${S:+,}${m}x${nk}"; done
done
P="python3 -m validation.cli profile --gpu h200 --shapes $S --configs broad+wave-study+grouping --target-ms 10 --max-reps 30"
$P --order-seed $SEED --out $D/$NAME.jsonl --budget-s $(( $(left) / 2 + 30 ))
$P --order-seed $(( SEED + 1 )) --no-cublas --out $D/${NAME}_repeat.jsonl --budget-s $(( $(left) - 20 ))
cp $D/$NAME.jsonl $D/${NAME}_repeat.jsonl "$OUT/"
ls -la "$OUT"
