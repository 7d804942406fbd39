#!/usr/bin/env bash
# Session-33 H200 collection (GPU machine, repository root; the profiler writes straight into $OUT so that a call cut
# short by the lease still brings back what it measured): the two sets that decide GC2T5 (NOTES.md, session 33), drawn
# before the model existed: fresh42, a GROUP_M set (make_blind_set.py --seed 42 --group-m-siblings --shapes 20
# --min-m 128), then fresh43, a blind set (--seed 43 --configs 60 --shapes 30); each two passes in shuffled orders with
# the clean L2 eviction (cuBLAS in the first).
# usage: bash validation/scripts/collect_h200_fresh42.sh
DEFAULT_BUDGET=220 . "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_fresh42.txt"
for set in "fresh42 group_m_fresh42 84 $(( BUDGET * 2 / 5 ))" "fresh43 blind_fresh43 86 0"; do
    read -r tag name seed share <<< "$set"
    D=validation/data/h200/$tag
    [ "$share" = 0 ] && share=$(( $(left) - 10 ))
    P="python3 -m validation.cli profile --gpu h200 --shapes $D/blind_shapes.jsonl --configs $D/blind_configs.jsonl --l2-flush read --target-ms 10 --max-reps 30"
    $P --order-seed "$seed" --out "$OUT/$name.jsonl" --budget-s $(( share / 2 + 10 ))
    $P --order-seed $(( seed + 1 )) --no-cublas --out "$OUT/${name}_repeat.jsonl" --budget-s $(( share / 2 - 10 ))
done
ls -la "$OUT"
