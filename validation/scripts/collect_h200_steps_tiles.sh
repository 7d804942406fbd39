#!/usr/bin/env bash
# Session-23 H200 collection, second part (GPU machine, repository root; $OUT receives one tar): per-step traces of 16
# tile shapes (wgmma and mma.sync, BLOCK_K 32-128, 4 and 8 warps) on N = 4096, K = 2048 at M = 256 and 1024, so that
# each runs lone and with its SMs full: what an SM-bound K step costs per tile (the first part found 128x256x64 and
# a pair of 128x128x64 at exactly the tile's math at 4096 FLOP per cycle: 1024 cycles).
# usage: bash validation/scripts/collect_h200_steps_tiles.sh
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
python3 -m validation.trace trace --configs $T/configs_steps_tiles.jsonl --N 4096 --K 2048 --M 256,1024 --reps 1 \
    --steps --out $T/trace_steps_tiles_4096x2048.npz
tar cf "$OUT/steps_tiles.tar" $T/trace_steps_tiles_*
python3 -m validation.step_trace $T/trace_steps_tiles_4096x2048.npz | tee "$OUT/step_profile_tiles.txt"
ls -la "$OUT"
