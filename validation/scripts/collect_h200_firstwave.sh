#!/usr/bin/env bash
# Session-4 H200 collection (GPU machine, repository root; $OUT receives copies): per-CTA traces of the first
# waves on the fresh layer (N = K = 5120), for the configs whose partial first waves the simulator steps
# through where the hardware does not (validation/reports/h200-fresh/staircase): which SMs get the extra
# co-resident CTAs, how long their CTAs take, and what sets the makespan.
# usage: bash validation/scripts/collect_h200_firstwave.sh
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
python3 -m validation.trace trace --configs "$T/configs_firstwave.jsonl" --N 5120 --K 5120 --M 64:1536:64 --reps 2 --out $T/trace_firstwave_5120.npz
cp $T/trace_firstwave_5120.* "$OUT/"
ls -la "$OUT"
