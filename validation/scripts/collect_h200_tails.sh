#!/usr/bin/env bash
# Session-5 H200 collection (GPU machine, repository root; $OUT receives copies): per-CTA traces of late-wave
# tails on the session-5 fresh layer (gemma2-9b.o, N = 3584, K = 4096) for the 1-2 CTAs/SM configs whose 5th-7th
# wave steps the simulator puts a few points above what the hardware measures
# (validation/reports/h200-fresh5/staircase): how long a tail CTA takes against the number of tail CTAs,
# which tiles it reads, and the in-kernel clock. GROUP_M 1 / 4 / 16 change what the last wave left in L2.
# usage: bash validation/scripts/collect_h200_tails.sh
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
python3 -m validation.trace trace --configs "$T/configs_tails.jsonl" --N 3584 --K 4096 --M 3520:6144:64 --reps 2 --out $T/trace_tails_3584x4096.npz
cp $T/trace_tails_3584x4096.* "$OUT/"
ls -la "$OUT"
