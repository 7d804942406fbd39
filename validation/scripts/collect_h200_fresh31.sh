#!/usr/bin/env bash
# Session-21 H200 collection (GPU machine, repository root; $OUT receives copies): M sweeps (M = 64..2176 step 64) of
# the 17 wave-study + grouping configs on two layers no earlier sweep has, N x K = 6144 x 4096 (a fused QKV of a
# 4096-wide model with 8 KV heads) and 10240 x 2560 (an MLP up-projection of a 2560-wide model), three profiler
# passes in shuffled orders. Measured to decide by a rule set before (NOTES session 21) whether the model variant of
# that session ships; never fitted. The profiler resumes: run again to finish a pass.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_fresh31.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
F=validation/data/h200/fresh31
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_fresh31.txt"
C="--gpu h200 --configs wave-study+grouping --no-cublas --shapes $F/shapes.jsonl"
for pass in 1 2 3; do
    python3 -m validation.cli profile $C --order-seed $pass --out $F/m_sweep_fresh31_pass$pass.jsonl \
        --budget-s $(( $(left) / (4 - pass) - 5 ))
done
cp $F/m_sweep_fresh31_pass*.jsonl "$OUT/"
ls -la "$OUT"
