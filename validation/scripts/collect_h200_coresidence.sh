#!/usr/bin/env bash
# Session-21 H200 collection (GPU machine, repository root; $OUT receives copies): per-CTA traces of the first
# co-residence step of 128x128x64 s3 (GROUP_M 1, 4, 16) on a short and a long K loop, where the M sweeps show the
# step growing with the K loop and with GROUP_M (+0.06 at L = 32, GROUP_M 1, to +0.25 at L = 256; NOTES session 21):
# is it the cost of a second CTA on its SM (same launch) or the chip's load?
# usage: bash validation/scripts/collect_h200_coresidence.sh
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
C=$T/configs_coresidence.jsonl
python3 -m validation.trace trace --configs $C --N 8192 --K 2048 --M 192:512:64 --reps 2 --out $T/trace_coresidence_8192x2048.npz
python3 -m validation.trace trace --configs $C --N 3072 --K 16384 --M 576:896:64 --reps 2 --out $T/trace_coresidence_3072x16384.npz
cp $T/trace_coresidence_* "$OUT/"
ls -la "$OUT"
