#!/usr/bin/env bash
# Session-22 H200 collection (GPU machine, repository root; $OUT receives copies): M sweeps (M = 64..2176 step 64) of
# the 17 wave-study + grouping configs on two layers no earlier sweep has, N x K = 2560 x 8192 (a narrow layer with a
# long K loop, L = 128 at BLOCK_K 64) and 13824 x 5120 (an MLP up-projection of a 5120-wide model, 108 column tiles of
# 128), three profiler passes in shuffled orders. Measured to decide the next model change by a rule set before it is
# scored on them (NOTES session 22); not looked at in session 22 beyond their record counts; never fitted. The
# profiler resumes: run again to finish a pass.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_fresh32.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
F=validation/data/h200/fresh32
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_fresh32.txt"
C="--gpu h200 --configs wave-study+grouping --no-cublas --shapes $F/shapes.jsonl"
for pass in 1 2 3; do
    python3 -m validation.cli profile $C --order-seed $pass --out $F/m_sweep_fresh32_pass$pass.jsonl \
        --budget-s $(( $(left) / (4 - pass) - 5 ))
done
cp $F/m_sweep_fresh32_pass*.jsonl "$OUT/"
ls -la "$OUT"
