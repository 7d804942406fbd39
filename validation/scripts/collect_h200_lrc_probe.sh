#!/usr/bin/env bash
# H200 collection (GPU machine with Nsight Compute, repository root; $OUT receives copies): the L2 request
# coalescer probe (session 15; validation/kernels/lrc_probe.py, `python3 -m validation.counters probe`). One CTA
# per SM reads its group's 256 KB region (L2-resident) 16 times through the GEMM's cp.async pipeline; groups are
# nobody / everybody / a GPC / one SM per GPC / a TPC / two SMs of neighbouring GPCs, started together or
# staggered by 500-8000 cycles per sharer. The coalescer's counters say which sharers merge and how close in time.
# usage: bash validation/scripts/collect_h200_lrc_probe.sh
DEFAULT_BUDGET=240 . "$(dirname "$0")/common.sh"
python3 -m validation.counters probe --out "$OUT/lrc_probe.jsonl" || echo "probe: failed"
ls -la "$OUT"
