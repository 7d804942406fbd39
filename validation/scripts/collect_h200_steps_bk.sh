#!/usr/bin/env bash
# Session-23 H200 collection, third part (GPU machine, repository root; $OUT receives one tar): where a BLOCK_K 32 launch
# loses the 2-4% the M sweeps show against BLOCK_K 64 at large M when its K steps are exactly as fast (512 against 1024
# cycles, both tensor-bound: collect_h200_steps_tiles.sh). Per-step traces of 128x256x32 s5 and 128x256x64 s3 / s4 on
# 4096 x 4096 at M = 2048, 4096, 8192 (2-8 waves), and per-CTA traces (no steps, for size) on 28672 x 4096 at M = 2048.
# usage: bash validation/scripts/collect_h200_steps_bk.sh
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
python3 -m validation.trace trace --configs $T/configs_steps_bk.jsonl --N 4096 --K 4096 --M 2048,4096,8192 --reps 1 \
    --steps --out $T/trace_steps_bk_4096x4096.npz
python3 -m validation.trace trace --configs $T/configs_steps_bk.jsonl --N 28672 --K 4096 --M 2048 --reps 2 \
    --out $T/trace_bk_28672x4096.npz
tar cf "$OUT/steps_bk.tar" $T/trace_steps_bk_* $T/trace_bk_*
python3 -m validation.step_trace $T/trace_steps_bk_4096x4096.npz | tee "$OUT/step_profile_bk.txt"
python3 - <<'PY' | tee -a "$OUT/step_profile_bk.txt"
import json
for f in ("validation/data/h200/traces/trace_steps_bk_4096x4096.json", "validation/data/h200/traces/trace_bk_28672x4096.json"):
    for k, v in json.load(open(f))["launches"].items():
        print(f, k, "ms", round(v["ms"], 4), "traced", round(v["ms_traced"], 4))
PY
ls -la "$OUT"
