#!/usr/bin/env bash
# Session-22 H200 collection (GPU machine, repository root; $OUT receives copies): per-CTA traces of 48 of the blind
# configs (validation/data/h200/fresh19/blind_configs.jsonl: 1-16 warps, 16-256-row tiles, mma.sync and wgmma) on
# N = K = 4096 at three M, to check the in-kernel clock law (validation/kernel_clock.py), fitted on traces of
# wave-study tiles only, on configs it never saw.
# usage: bash validation/scripts/collect_h200_clock_blind.sh
DEFAULT_BUDGET=480 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
python3 -m validation.trace trace --configs $T/configs_clock_blind.jsonl --N 4096 --K 4096 --M 256,1024,4096 --reps 1 \
    --out $T/trace_clock_blind_4096.npz
cp $T/trace_clock_blind_4096.* "$OUT/"
ls -la "$OUT"
