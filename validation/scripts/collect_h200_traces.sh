#!/usr/bin/env bash
# Fourth H200 collection (GPU machine, repository root; $OUT receives copies): per-CTA traces of the 8
# wave-study configs on the N = K = 4096 M sweep (validation/trace.py), to see the block scheduler itself:
# dispatch order, how synchronous each wave is, CTA time by wave, SM-to-SM speed.
# usage: bash validation/scripts/collect_h200_traces.sh
DEFAULT_BUDGET=500 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_4.txt"
# 1, 2 and 3 CTAs/SM configs, then the 3-8 CTAs/SM ones (two files: each stays under the 16 MiB a file may bring back)
python3 -m validation.trace trace --configs "$T/configs_a.jsonl" --N 4096 --K 4096 --M 256:8192:256 --reps 2 --out $T/trace_4096_a.npz
python3 -m validation.trace trace --configs "$T/configs_b.jsonl" --N 4096 --K 4096 --M 256:8192:256 --reps 2 --out $T/trace_4096_b.npz
cp $T/trace_4096_* "$OUT/"
ls -la "$OUT"
