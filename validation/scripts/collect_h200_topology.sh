#!/usr/bin/env bash
# Fifth H200 collection (GPU machine, repository root; $OUT receives copies): which SMs share a GPC
# (thread-block clusters, validation/probe.py --gpcs), and per-CTA traces of the wave-study configs on the
# never-fitted layer N = 4608, K = 3584 (one launch per M), to check the N = K = 4096 trace findings.
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
python3 -m validation.probe --gpcs --out validation/data/h200/gpc_layout.json
cp validation/data/h200/gpc_layout.json "$OUT/"
python3 -m validation.trace trace --configs wave-study --N 4608 --K 3584 --M 256:8192:256 --reps 1 --out $T/trace_4608x3584.npz
cp $T/trace_4608x3584.* "$OUT/"
ls -la "$OUT"
