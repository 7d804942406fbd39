#!/usr/bin/env bash
# Session-24 H200 collection (GPU machine, repository root; $OUT receives one tar): what sets a K step when the SM is
# full. Over whole launches at large M, 256x128x64 w8 runs 8-10% slower than 128x256x64 w8 (the M sweeps: the same
# bytes per FLOP and the same warpgroups, two m64n128 wgmma per warpgroup against one m64n256) and a pair of 128x128x64
# 7% slower, though a pair's steps were exactly the tile's math in a single wave (collect_h200_steps_tiles.sh).
# Per-step traces of 12 tensor-core tiles on N = 4096, K = 2048 at M = 1024 (one wave) and 4096 (several).
# usage: bash validation/scripts/collect_h200_steps_wg.sh
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
python3 -m validation.trace trace --configs $T/configs_steps_wg.jsonl --N 4096 --K 2048 --M 1024,4096 --reps 1 \
    --steps --out $T/trace_steps_wg_4096x2048.npz
tar cf "$OUT/steps_wg.tar" $T/trace_steps_wg_*
python3 -m validation.step_trace $T/trace_steps_wg_4096x2048.npz | tee "$OUT/step_profile_wg.txt"
python3 - <<'PY' | tee -a "$OUT/step_profile_wg.txt"
import json
for k, v in json.load(open("validation/data/h200/traces/trace_steps_wg_4096x2048.json"))["launches"].items():
    print(k, "ms", round(v["ms"], 4), "traced", round(v["ms_traced"], 4))
PY
ls -la "$OUT"
