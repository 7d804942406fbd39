#!/usr/bin/env bash
# H200 collection (GPU machine with Nsight Compute, repository root; $OUT receives copies): the L2 request
# coalescer's own counters (session 15, validation/counters.py METRICS, lrc__*) where collect_h200_counters*.sh
# found the L2's read sectors to depend on the launch order and on the wave: the eight GROUP_M tiles on
# 4096 x 4096 at one wave (M = 640) and five (M = 4096), and the four wave configs on an L2-bound layer
# (4096 x 4096) and a small-B one (4096 x 1024) at one wave and eight.
# usage: bash validation/scripts/collect_h200_counters_lrc.sh
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
C=validation/data/h200/counters
python3 -m validation.counters collect --configs $C/configs_groupm.jsonl --shapes 4096x4096 --M 640,4096 \
    --out "$OUT/counters_lrc.jsonl" || echo "groupm: failed"
python3 -m validation.counters collect --configs $C/configs_waves.jsonl --shapes 4096x4096,4096x1024 --M 768,6144 \
    --out "$OUT/counters_lrc.jsonl" || echo "waves: failed"
ls -la "$OUT"
