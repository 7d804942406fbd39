#!/usr/bin/env bash
# Third H200 collection (run on the GPU machine from the repository root; $OUT receives copies): staircases.
# 1. the M sweep on a never-fitted layer (N=4608, K=3584): the staircase check out of sample;
# 2. the N = K = 4096 M sweep measured a second time, in a separate pass: how far the hardware agrees with
#    itself on which >15% steps exist (a floor for any model's step count);
# 3. (PHASE 2) a second pass of the never-fitted layer's sweep.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_staircase.sh [PHASE]
DEFAULT_BUDGET=520 . "$(dirname "$0")/common.sh"
H=validation/data/h200/holdout
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_3.txt"
C="--gpu h200 --configs wave-study+grouping --no-cublas"
if [ "${1:-1}" = 1 ]; then
  python3 -m validation.cli profile $C --shapes m-sweep-holdout --out $H/m_sweep_holdout.jsonl --budget-s $(( $(left) / 2 ))
  python3 -m validation.cli profile $C --shapes m-sweep --out $H/m_sweep_repeat.jsonl --budget-s $(( $(left) - 10 ))
  cp $H/m_sweep_holdout.jsonl $H/m_sweep_repeat.jsonl "$OUT/" 2>/dev/null
else
  python3 -m validation.cli profile $C --shapes m-sweep-holdout --out $H/m_sweep_holdout_repeat.jsonl --budget-s $(( $(left) - 10 ))
  cp $H/m_sweep_holdout_repeat.jsonl "$OUT/" 2>/dev/null
fi
ls -la "$OUT"
