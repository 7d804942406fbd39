#!/usr/bin/env bash
# H200 collection (GPU machine, repository root; $OUT receives copies): per-CTA traces of the first waves of
# the configs whose partial first waves the simulator steps through where the hardware does not: which SMs
# get the extra co-resident CTAs, how long their CTAs take, and what sets the makespan.
#   session 4: the fresh layer (N = K = 5120), M = 64..1536      -> trace_firstwave_5120.npz (the defaults)
#   session 6: llama3-70b-tp4.o (N = 8192, K = 2048), M = 64..768 -> trace_firstwave_8192x2048.npz
# usage: bash validation/scripts/collect_h200_firstwave.sh [N K M_RANGE]
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
N=${1:-5120}; K=${2:-5120}; MR=${3:-64:1536:64}
T=validation/data/h200/traces
NAME=trace_firstwave_${N}x${K}; [ "$N$K" = "51205120" ] && NAME=trace_firstwave_5120
python3 -m validation.trace trace --configs "$T/configs_firstwave.jsonl" --N $N --K $K --M $MR --reps 2 --out $T/$NAME.npz
cp $T/$NAME.* "$OUT/"
ls -la "$OUT"
