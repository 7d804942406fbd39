#!/usr/bin/env bash
# Session-26 H200 collection (GPU machine, repository root): issue 3's six LLM-layer M sweeps (the 17 configs of
# wave-study + grouping, M = 64..8192 step 64) timed with a clean L2 eviction (`--l2-flush read`), the reference the
# staircase is judged on from session 26 (the write flush of the earlier passes softens first co-residence steps:
# validation/scripts/flush_probe.py). msweep_cleanflush/ already holds M <= 2176 of 4096^2, 8192x2048 and 5120^2.
# Each PART is PASS:LAYERS:MLO:MHI (LAYERS: NxK joined by '+'); one profiler run per part, shapes shuffled by
# --order-seed PASS; records go straight to $OUT/six_cleanflush_passPASS_MLO.jsonl (a call cut short keeps them).
# usage: BUDGET=seconds bash validation/scripts/collect_h200_six_cleanflush.sh PART...
DEFAULT_BUDGET=540 . "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_six_cleanflush.txt"
n=$#
for part in "$@"; do
    IFS=: read -r pass layers lo hi <<< "$part"
    S=$(python3 -c "print(','.join(f'{m}x{l}' for l in '$layers'.split('+') for m in range($lo, $hi + 1, 64)))")
    python3 -m validation.cli profile --gpu h200 --configs wave-study+grouping --no-cublas --shapes $S \
        --order-seed $pass --l2-flush read --out "$OUT/six_cleanflush_pass${pass}_$lo.jsonl" \
        --budget-s $(( ($(left) - 10) / n ))
    n=$(( n - 1 ))
done
ls -la "$OUT"
