#!/usr/bin/env bash
# Session-27 H200 collection (GPU machine, repository root): the same-tile probe (validation/sm_side.py): every CTA of
# 132 x k computes the same tile, so the L2 serves next to nothing while each SM runs k CTAs; per-CTA cycles and clock
# for the staircase study's tiles at 1..max CTAs/SM. Records go straight to $OUT/sm_side.jsonl.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_sm_side.sh
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_sm_side.txt"
timeout $(( $(left) - 5 )) python3 -m validation.sm_side collect --out "$OUT/sm_side.jsonl"
ls -la "$OUT"
