#!/usr/bin/env bash
# Session-25 H200 collection (GPU machine, repository root; $OUT receives one tar): M sweeps timed by the profiler with a
# clean L2 eviction (`--l2-flush read`) instead of the write flush of every earlier record, whose dirty lines slow short
# launches by 4-7 us and soften their first co-residence steps (validation/scripts/flush_probe.py). The 17 sweep configs
# (wave-study + grouping) at M = 64..2176 step 64 on three of the six sweeps' layers, two passes in shuffled orders.
# usage: bash validation/scripts/collect_h200_msweep_cleanflush.sh
DEFAULT_BUDGET=420 . "$(dirname "$0")/common.sh"
F=validation/data/h200/msweep_cleanflush; mkdir -p $F
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee $F/nvidia_smi_msweep_cleanflush.txt
for pass in 1 2; do
    for L in 4096x4096 8192x2048 5120x5120; do
        [ "$(left)" -gt 30 ] || { echo "budget spent before pass $pass $L"; break; }
        S=$(python3 -c "print(','.join(f'{m}x$L' for m in range(64, 2177, 64)))")
        python3 -m validation.cli profile --gpu h200 --configs wave-study+grouping --no-cublas --shapes $S \
            --order-seed $pass --l2-flush read --out $F/m_sweep_cleanflush_pass$pass.jsonl --budget-s $(( $(left) - 20 ))
    done
done
tar cf "$OUT/msweep_cleanflush.tar" $F
ls -la "$OUT"
