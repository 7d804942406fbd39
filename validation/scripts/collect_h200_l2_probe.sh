#!/usr/bin/env bash
# Session-27 H200 collection (GPU machine, repository root): the L2 probe (validation/l2_probe.py): 132 x k programs over
# a resident set of tiles in a grouped and a scattered order, warm L2, per-CTA traces reduced to medians. Records go
# straight to $OUT/l2_probe.jsonl.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_l2_probe.sh
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_l2_probe.txt"
timeout $(( $(left) - 5 )) python3 -m validation.l2_probe collect --out "$OUT/l2_probe.jsonl"
ls -la "$OUT"
