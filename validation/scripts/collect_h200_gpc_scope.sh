#!/usr/bin/env bash
# Session-27 H200 collection (GPU machine, repository root): the GPC-scope probe (validation/gpc_scope.py). The same
# tiles in flight in one wave, taken in the canonical order and in permuted ones: if the grouped order's first-wave
# gain is coalescing among the CTAs of one GPC, scattering the order takes it away; if it is the chip's, nothing
# changes. Records go straight to $OUT/gpc_scope.jsonl.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_gpc_scope.sh
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_gpc_scope.txt"
timeout $(( $(left) - 5 )) python3 -m validation.gpc_scope collect --out "$OUT/gpc_scope.jsonl"
ls -la "$OUT"
