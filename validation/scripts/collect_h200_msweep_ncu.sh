#!/usr/bin/env bash
# Session-25 H200 collection (GPU machine with Nsight Compute, repository root; $OUT receives copies): an M sweep timed
# under ncu, one launch at a time with the caches flushed and the clocks left alone (time and SM clock only), to tell
# the staircase's steps that belong to the hardware from those of the profiler's regime (50-launch bursts). The 17
# sweep configs (wave-study + grouping) on a layer of the six sweeps, M = 64..2176 step 64; LAYER=NxK (default
# 8192x2048, llama3-70b-tp4.o, where four of the simulator's ten missed steps are). In chunks, each its own file.
# usage: [LAYER=8192x2048] bash validation/scripts/collect_h200_msweep_ncu.sh
DEFAULT_BUDGET=540 . "$(dirname "$0")/common.sh"
F=validation/data/h200/msweep_ncu; mkdir -p $F
L=${LAYER:-8192x2048}
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_msweep_ncu.txt"
for part in 64:704:64 768:1408:64 1472:2176:64; do
    out=$F/counters_msweep_${L}_M${part%%:*}.jsonl
    [ -s "$out" ] && continue
    [ "$(left)" -gt 60 ] || { echo "budget spent before M ${part}"; break; }
    python3 -m validation.counters collect --configs wave-study+grouping --shapes $L --M $part --time-only --out $out \
        || echo "M $part: failed"
    echo "left $(left) s"
done
tar cf "$OUT/msweep_ncu_${L}.tar" $F/counters_msweep_${L}_M*.jsonl
ls -la "$OUT"
