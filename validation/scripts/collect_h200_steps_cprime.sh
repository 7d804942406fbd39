#!/usr/bin/env bash
# Session-25 H200 collection (GPU machine, repository root; $OUT receives one tar): what sets the idle part of a small
# tile's K step once its SM is saturated. Session 24's traces (collect_h200_steps_small.sh) give a step of about
# n x s + c' with n CTAs on an SM: c' 90-190 cycles for mma.sync tiles, 12-40 for wgmma ones, where the simulator's SM
# queueing has none. Per-step traces of the same layer (N = 3072, K = 1024) for mma.sync tiles that differ in warps
# (2 / 4 / 8) and stages (2-5), and two wgmma tiles, at M from one CTA per SM to a full first wave: c' against the
# warps that share a barrier and the stages in flight.
# usage: bash validation/scripts/collect_h200_steps_cprime.sh
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
trace_tile() {   # trace_tile KEY MLIST
    python3 -c "import json, sys; from wavetune.config import LaunchConfig; print(json.dumps(LaunchConfig.from_key(sys.argv[1]).to_dict()))" "$1" > "$OUT/cfg.jsonl"
    python3 -m validation.trace trace --configs "$OUT/cfg.jsonl" --N 3072 --K 1024 --M "$2" --reps 1 --steps \
        --out $T/trace_steps_cprime_$1.npz
}
for s in 2 3 5; do trace_tile 32x64x64_g8_w4_s$s 32,96,176,256,384,512; done
for w in 2 8; do trace_tile 32x64x64_g8_w${w}_s4 32,96,176,256,384,512; done
for w in 2 8; do trace_tile 16x128x64_g8_w${w}_s4 48,96,192,272,352; done
for s in 3 5; do trace_tile 64x64x32_g8_w4_s$s 128,192,384,512,768; done
rm -f "$OUT/cfg.jsonl"
tar cf "$OUT/steps_cprime.tar" $T/trace_steps_cprime_*
python3 -m validation.step_trace $T/trace_steps_cprime_*.npz > "$OUT/step_profile_cprime.txt" 2>&1
ls -la "$OUT"
