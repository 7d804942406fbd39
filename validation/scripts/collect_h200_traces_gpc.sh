#!/usr/bin/env bash
# Session-27 H200 collection (GPU machine, repository root): per-CTA traces timed after a clean L2 eviction
# (`--l2-flush read`) for two questions. (1) Session 26's clear staircase misses, partial waves at 3-4 CTAs/SM that the
# hardware pays +19-29% for and the model +4-12%: 128x64x32 and 64x64x64 s4 on 5120^2 (M = 320..768), 64x64x64 s4 and
# 32x64x64 on 8192 x 2048 (M = 64..192, 768..896), 64x128x64 GROUP_M 1 / 8 / 16 on 7168^2 (M = 256..448). (2) Whether
# the first wave's per-GPC coalescing (NOTES session 27: the grouped order's gain on 64x128x64) holds for other tiles:
# 128x64x32 and 64x64x64 s4 at GROUP_M 1 and 8 over several waves (5120^2 M = 1536, 2560; 8192 x 2048 M = 2048).
# Each part writes $OUT/trace_gpc_<part>.npz and its .json straight away (a call cut short keeps the parts done).
# usage: BUDGET=seconds bash validation/scripts/collect_h200_traces_gpc.sh
DEFAULT_BUDGET=540 . "$(dirname "$0")/common.sh"
T=validation/data/h200/traces
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_traces_gpc.txt"
part() {  # NAME CONFIGS N K M
    timeout $(( $(left) - 5 )) python3 -m validation.trace trace --configs "$T/$2" --N $3 --K $4 --M $5 --reps 2 \
        --l2-flush read --out "$OUT/trace_gpc_$1.npz" || echo "part $1 did not finish"
}
part 5120x5120 configs_gpc_a.jsonl 5120 5120 320,384,448,512,576,640,704,768,1536,2560
part 8192x2048 configs_gpc_b.jsonl 8192 2048 64,128,192,768,832,896,2048
part 7168x7168 configs_gpc_c.jsonl 7168 7168 256,320,384,448,1024
ls -la "$OUT"
