#!/usr/bin/env bash
# Session-25 H200 collection (GPU machine, repository root; $OUT receives copies): where 256x128x64 w8 loses to
# 128x256x64 w8 (the same bytes and math per K step; 8-13% slower over whole launches at M >= 2048 in the M sweeps,
# only +1.4% per K step in the per-step traces). Launch time against the K loop's length separates a per-step cost
# (the slope) from a per-CTA one (the intercept: prologue, first step, epilogue). 8 configs
# (validation/data/h200/kslope/configs.jsonl: the pair at s3 / s4 and w16, 128x128x64 w4 / w8 as controls) on
# N = 4096, K = 512 ... 8192, M = 1024 (128 or 256 CTAs: one wave) and 4096 (several), two passes in shuffled orders.
# usage: bash validation/scripts/collect_h200_kslope.sh
DEFAULT_BUDGET=400 . "$(dirname "$0")/common.sh"
F=validation/data/h200/kslope
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_kslope.txt"
S=$(python3 -c "print(','.join(f'{m}x4096x{k}' for m in (1024, 4096) for k in (512, 1024, 2048, 4096, 8192)))")
for pass in 1 2; do
    python3 -m validation.cli profile --gpu h200 --configs $F/configs.jsonl --no-cublas --shapes $S --order-seed $pass \
        --out $F/kslope_pass$pass.jsonl --budget-s $(( $(left) / (3 - pass) - 5 ))
done
cp $F/kslope_pass*.jsonl "$OUT/"
ls -la "$OUT"
