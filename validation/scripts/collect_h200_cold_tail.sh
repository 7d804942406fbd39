#!/usr/bin/env bash
# Session-28 H200 collection (GPU machine, repository root): the cold-tail probe (validation/cold_tail.py). n = 4..132
# programs of one CTA per SM over 64x128x64 GROUP_M 1 and 64x64x64 s4 tiles of 5120^2, in the grouped order and
# scattered, with the L2 emptied before each launch and with A and B resident -> $OUT/cold_tail.jsonl.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_cold_tail.sh
DEFAULT_BUDGET=240 . "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_cold_tail.txt"
timeout $(( $(left) - 5 )) python3 -m validation.cold_tail collect --out "$OUT/cold_tail.jsonl"
ls -la "$OUT"
