#!/usr/bin/env bash
# Session-24 H200 collection (GPU machine, repository root; $OUT receives one tar): why 256x128x64 w8 (two warpgroups,
# two m64n128 wgmma each per K slice) runs its full-SM K steps above the tile's math when a pair of 128x128x64 w4 (one
# warpgroup each, the same instructions) does not (collect_h200_steps_wg.sh). Per-step traces at full load (N = 4096,
# K = 2048, M = 4096) of the same tiles with 16 warps (one m-slice per warpgroup), 256x64 tiles with 4 and 8 warps,
# and the 4-stage references.
# usage: bash validation/scripts/collect_h200_steps_wg2.sh
DEFAULT_BUDGET=240 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
python3 -m validation.trace trace --configs $T/configs_steps_wg2.jsonl --N 4096 --K 2048 --M 4096 --reps 1 \
    --steps --out $T/trace_steps_wg2_4096x2048.npz
tar cf "$OUT/steps_wg2.tar" $T/trace_steps_wg2_*
python3 -m validation.step_trace $T/trace_steps_wg2_4096x2048.npz | tee "$OUT/step_profile_wg2.txt"
python3 - <<'PY' | tee -a "$OUT/step_profile_wg2.txt"
import json
for k, v in json.load(open("validation/data/h200/traces/trace_steps_wg2_4096x2048.json"))["launches"].items():
    print(k, "ms", round(v["ms"], 4), "traced", round(v["ms_traced"], 4))
PY
ls -la "$OUT"
