#!/usr/bin/env bash
# Session-5 H200 collection (GPU machine, repository root; $OUT receives copies), taken after that session's
# model (the chip-load slowdown) was fixed:
#   1. the committed records whose timed repeats spread too much, timed again (`--retime-unstable`; the two
#      files have since been committed gzip-compressed: decompress one into a new file to add records);
#   2. the M sweep (17 wave-study + grouping configs x M = 64..8192) on gemma2-9b.o (N = 3584, K = 4096),
#      a layer no earlier sweep has (validation/shapesets.py FRESH5_LAYER);
#   3. (PHASE 2) a second pass of the sweep, for its reproducible steps.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_fresh5.sh [PHASE]
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
F=validation/data/h200/fresh5; mkdir -p $F
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_fresh5_${1:-1}.txt"
C="--gpu h200 --configs wave-study+grouping --no-cublas --shapes m-sweep-fresh5"
if [ "${1:-1}" = 1 ]; then
  for f in validation/data/h200/gemm/llm.jsonl validation/data/h200/holdout/llm_holdout.jsonl; do
    python3 -m validation.cli profile --gpu h200 --out $f --retime-unstable --budget-s 60
    cp $f "$OUT/$(basename $(dirname $f))_$(basename $f)"
  done
  python3 -m validation.cli profile $C --out $F/m_sweep_fresh5.jsonl --budget-s $(( $(left) - 10 ))
  cp $F/m_sweep_fresh5.jsonl "$OUT/" 2>/dev/null
else
  python3 -m validation.cli profile $C --out $F/m_sweep_fresh5_repeat.jsonl --budget-s $(( $(left) - 10 ))
  cp $F/m_sweep_fresh5_repeat.jsonl "$OUT/" 2>/dev/null
fi
ls -la "$OUT"
