#!/usr/bin/env bash
# H200 collection of every config of the tuning space on a list of shapes, one shuffled pass with cuBLAS (GPU machine,
# repository root; $OUT receives a copy): the body of the collect_h200_unaligned_fresh17/21.sh scripts.
#   bash validation/scripts/collect_h200_shapes.sh OUT_FILE ORDER_SEED MxNxK,MxNxK,...
DEFAULT_BUDGET=500 . "$(dirname "$0")/common.sh"
F=$1; SEED=$2; SHAPES=$3
python3 -m validation.cli profile --gpu h200 --shapes $SHAPES --configs broad+wave-study+grouping --target-ms 10 \
    --max-reps 30 --order-seed $SEED --out $F --budget-s $(( $(left) - 20 ))
cp $F "$OUT/"
ls -la "$OUT"
