#!/usr/bin/env bash
# Session-25 H200 collection (GPU machine with Nsight Compute, repository root; $OUT receives copies): a yardstick for
# picks at large M. The profiler's single passes rank launches of M > 1024 only to a few percent (held at the power cap,
# two passes differ by a p90 of 6-15%: NOTES session 25), so the pick sets' measured best there is partly luck. This
# times each shape's candidates (validation/data/h200/large_m_ncu/cases.jsonl, written by make_large_m_cases.py: the
# shipped simulator's three fastest and pick, the pick set's three fastest) under ncu, one launch at a time with the
# caches flushed and the clocks left alone, time and SM clock only (one ncu pass). In chunks of 60 cases, each its own
# file, so a rerun measures only the chunks that are missing. PASS (default 1) names a pass: PASS=2 times them again.
# usage: [PASS=2] bash validation/scripts/collect_h200_large_m_ncu.sh
DEFAULT_BUDGET=540 . "$(dirname "$0")/common.sh"
F=validation/data/h200/large_m_ncu
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_large_m_ncu.txt"
tmp=$(mktemp -d)
split -l 60 -d -a 2 $F/cases.jsonl $tmp/part
for part in $tmp/part*; do
    out=$F/counters_large_m_pass${PASS:-1}_${part##*/}.jsonl
    [ -s "$out" ] && continue
    [ "$(left)" -gt 60 ] || { echo "budget spent before ${part##*/}"; break; }
    python3 -m validation.counters collect --cases $part --time-only --out $out || echo "${part##*/}: failed"
    echo "left $(left) s"
done
tar cf "$OUT/large_m_ncu_pass${PASS:-1}.tar" $F/counters_large_m_pass${PASS:-1}_part*.jsonl
ls -la "$OUT"
