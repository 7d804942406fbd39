#!/usr/bin/env bash
# Session-28 H200 collection (GPU machine, repository root), two probes of issue 3's reference:
#  1. validation/step_protocol.py: the two launches of every step where the simulator and the six_clean sweeps
#     disagree (and of 24 agreed ones) timed config-major, two passes -> $OUT/step_protocol.jsonl;
#  2. per-CTA traces (clean flush) of 128x128x64 GROUP_M 16 / 1 on N = K = 4096, M = 1216..1664: in the partial second
#     wave the sweeps time GROUP_M 16 10-13% slower when the last tile row is half full (M = 1344, 1472) than at the
#     next M with the same grid -> $OUT/trace_half_tile_4096.{npz,json}.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_step_protocol.sh
DEFAULT_BUDGET=420 . "$(dirname "$0")/common.sh"
D=validation/data/h200
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_step_protocol.txt"
timeout $(( $(left) - 90 )) python3 -m validation.step_protocol collect --points $D/step_protocol/points.json --out "$OUT/step_protocol.jsonl"
timeout $(( $(left) - 5 )) python3 -m validation.trace trace --configs $D/traces/configs_half_tile.jsonl --N 4096 --K 4096 \
    --M 1216:1664:64 --reps 2 --l2-flush read --out "$OUT/trace_half_tile_4096.npz"
ls -la "$OUT"
