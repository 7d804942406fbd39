#!/usr/bin/env bash
# H200 collection (GPU machine with Nsight Compute, repository root; $OUT receives copies): counters through the first
# wave's fill (session 15). 128x64x32 s3 (4 CTAs/SM) takes a chip-wide step when SMs get their 4th CTA (5120 x 5120:
# +4% at M = 576, +18-31% at M = 704, every CTA slowing), which no L2-slice model reproduces once reads merge;
# 64x128x64 s3 fills smoothly. The L2 slices, the coalescer and the crossbar-to-L1 delivery (which carries every
# sector) say which one saturates. Also the metric names this ncu has for the crossbar and the GPCs.
# usage: bash validation/scripts/collect_h200_counters_firstwave.sh
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
C=validation/data/h200/counters
ncu --query-metrics --chip gh100 | grep -i -E "^(l1tex__m_xbar2l1tex|l1tex__m_l1tex2xbar|gpc__|lrc__cycles|xbar)" | cut -c1-160 > "$OUT/ncu_xbar.txt" || true
python3 -m validation.counters collect --configs $C/configs_firstwave.jsonl --shapes 5120x5120 \
    --M 320,384,448,512,576,640,704,768,832 --out "$OUT/counters_firstwave.jsonl" || echo "5120: failed"
python3 -m validation.counters collect --configs $C/configs_firstwave.jsonl --shapes 4096x4096 \
    --M 256,384,512,640,768,896,1024 --out "$OUT/counters_firstwave.jsonl" || echo "4096: failed"
ls -la "$OUT"
