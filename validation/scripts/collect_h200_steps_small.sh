#!/usr/bin/env bash
# Session-24 H200 collection (GPU machine, repository root; $OUT receives one tar): what a small tile's K step costs as
# more of its CTAs share an SM inside the first wave. On the 3072 x 3072 stages study the hardware jumps 19-38% where
# 16x128x64 s4, 32x64x64 s4 or 128x64x32 s3 take their next CTA per SM, which the trace-derived model forms of session
# 24 price at 9-14%. Per-step traces on N = 3072, K = 1024 at M from under one CTA per SM to a full first wave, one
# tile at a time (each with its own M; the configs are written below).
# usage: bash validation/scripts/collect_h200_steps_small.sh
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
trace_tile() {   # trace_tile KEY MLIST
    python3 -c "import json, sys; from wavetune.config import LaunchConfig; print(json.dumps(LaunchConfig.from_key(sys.argv[1]).to_dict()))" "$1" > "$OUT/cfg.jsonl"
    python3 -m validation.trace trace --configs "$OUT/cfg.jsonl" --N 3072 --K 1024 --M "$2" --reps 1 --steps \
        --out $T/trace_steps_small_${1%%_*}.npz
}
trace_tile 128x64x32_g8_w4_s3 128,384,704,1088,1408
trace_tile 32x64x64_g8_w4_s4 32,96,176,256,384,512
trace_tile 16x128x64_g8_w4_s4 48,96,192,272,352
trace_tile 64x64x64_g8_w4_s4 128,192,384,512
rm -f "$OUT/cfg.jsonl"
tar cf "$OUT/steps_small.tar" $T/trace_steps_small_*
python3 -m validation.step_trace $T/trace_steps_small_*.npz | tee "$OUT/step_profile_small.txt"
for f in $T/trace_steps_small_*.json; do python3 -c "
import json, sys
for k, v in json.load(open(sys.argv[1]))['launches'].items(): print(k, 'ms', round(v['ms'], 4), 'traced', round(v['ms_traced'], 4))
" $f; done | tee -a "$OUT/step_profile_small.txt"
ls -la "$OUT"
