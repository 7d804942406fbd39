#!/usr/bin/env bash
# Session-35 H200 collection (GPU machine, repository root; $OUT receives copies): a study, not a deciding set, of the
# two biases the blind sets leave (NOTES.md session 35): one stage (synchronous LDG + STS loads) and few warps on large
# mma.sync warp tiles (64 x 128 x 64 on 2 warps measured 1.6x faster than simulated on fresh48). Four tiles x warps
# 2 / 4 / 8 x stages 1 / 2 / 3, GROUP_M 8, on two layers (10752 x 4096, 4096 x 14080) at M = 64..8192; two passes in
# shuffled orders with the clean L2 eviction.
# usage: bash validation/scripts/collect_h200_stages_warps.sh
DEFAULT_BUDGET=400 . "$(dirname "$0")/common.sh"
D=validation/data/h200/stages_warps
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_stages_warps.txt" "$D/nvidia_smi_stages_warps.txt"
P="python3 -m validation.cli profile --gpu h200 --shapes $D/shapes.jsonl --configs $D/configs.jsonl --l2-flush read --target-ms 10 --max-reps 30"
$P --order-seed 351 --out "$D/stages_warps.jsonl" --budget-s $(( $(left) / 2 + 20 ))
$P --order-seed 352 --no-cublas --out "$D/stages_warps_repeat.jsonl" --budget-s $(( $(left) - 20 ))
cp "$D"/stages_warps*.jsonl "$OUT/"
