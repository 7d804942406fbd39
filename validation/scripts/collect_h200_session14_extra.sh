#!/usr/bin/env bash
# H200 collection (GPU machine, repository root; $OUT receives copies), session 14: data for two known weaknesses,
# measured after the model was fixed and not used by it yet.
# 1. the unaligned specialization (validation/shapesets.py unaligned-study): A alone unaligned, B and C alone, and
#    N = 4104 (8- but not 16-divisible); every config of the tuning space, shuffled order;
# 2. launch order: the whole broad space at GROUP_M 1 and 32 (fresh14/configs_groupm.jsonl) on two aligned fresh14
#    layers at M = 333..5000, to set against fresh14's GROUP_M 8 measurements of the same shapes.
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
D=validation/data/h200/fresh14
python3 -m validation.cli profile --gpu h200 --shapes unaligned-study --configs broad+wave-study+grouping --target-ms 10 \
    --max-reps 30 --out $D/unaligned_study.jsonl --budget-s $(( $(left) / 2 ))
python3 -m validation.cli profile --gpu h200 --shapes groupm-study --configs $D/configs_groupm.jsonl --target-ms 10 \
    --max-reps 30 --no-cublas --out $D/groupm_study.jsonl --budget-s $(( $(left) - 20 ))
cp $D/unaligned_study.jsonl $D/groupm_study.jsonl "$OUT/"
ls -la "$OUT"
