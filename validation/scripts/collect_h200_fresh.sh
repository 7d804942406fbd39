#!/usr/bin/env bash
# Session-4 H200 collection (GPU machine, repository root; $OUT receives copies), taken after that session's
# model (M = 1 same-row cost, wave de-synchronisation) was fixed, on a layer no earlier set has
# (validation/shapesets.py FRESH_LAYERS), so nothing was fitted or tuned on it:
#   1. the M sweep (17 wave-study + grouping configs x M = 64..8192) on llama2-13b.o (N = K = 5120);
#   2. M = 1 and M = 16 on the three llama2-13b layers, every broad config (the M = 1 cost out of sample);
#   3. (PHASE 2) a second pass of the sweep, for its reproducible steps.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_fresh.sh [PHASE]
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
F=validation/data/h200/fresh; mkdir -p $F
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_5.txt"
C="--gpu h200 --configs wave-study+grouping --no-cublas"
if [ "${1:-1}" = 1 ]; then
  python3 -m validation.cli profile --gpu h200 --shapes m1-fresh --configs broad --out $F/m1_fresh.jsonl --budget-s $(( $(left) / 3 ))
  python3 -m validation.cli profile $C --shapes m-sweep-fresh --out $F/m_sweep_fresh.jsonl --budget-s $(( $(left) - 10 ))
  cp $F/m1_fresh.jsonl $F/m_sweep_fresh.jsonl "$OUT/" 2>/dev/null
else
  python3 -m validation.cli profile $C --shapes m-sweep-fresh --out $F/m_sweep_fresh_repeat.jsonl --budget-s $(( $(left) - 10 ))
  cp $F/m_sweep_fresh_repeat.jsonl "$OUT/" 2>/dev/null
fi
ls -la "$OUT"
