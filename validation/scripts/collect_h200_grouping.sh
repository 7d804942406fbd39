#!/usr/bin/env bash
# H200 collection (GPU machine, repository root; $OUT receives copies): per-CTA traces of the launch-order study
# (session 14). In every M sweep 64x128x64 s3 (3 CTAs/SM) runs 11-17% slower with GROUP_M = 1 than with 16 (up to
# 33%, already inside the first wave, where both orders run the same set of tiles), and its later waves fall out
# of step 3-5x faster; 128x128x64 s3 (2 CTAs/SM) does not care. The simulator gives every GROUP_M the same time.
# Traces of both tiles at GROUP_M 1..16 show where the time goes.
# usage: bash validation/scripts/collect_h200_grouping.sh [N K M_RANGE]
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
N=${1:-4096}; K=${2:-4096}; MR=${3:-256:2048:128}
T=validation/data/h200/traces
NAME=trace_grouping_${N}x${K}
python3 -m validation.trace trace --configs "$T/configs_grouping.jsonl" --N $N --K $K --M $MR --reps 2 --out $T/$NAME.npz
cp $T/$NAME.* "$OUT/"
ls -la "$OUT"
