#!/usr/bin/env bash
# Session-11 H200 collection (GPU machine, repository root; $OUT receives copies): bytes or L2 requests?
# Pairs of configs that move the same bytes per K element with the same smem (so the same CTAs/SM) but differ
# in BLOCK_K: a BK = 32 bf16 row of A is a 64-B segment (half an L2 line), a BK = 64 row a whole 128-B line, so
# per K element the BK = 32 config issues 5/3 (128x64) or 4/3 (64x128) as many L2 requests (validation/data/h200/
# requests/configs.jsonl: 128x64 and 64x128 at s5 vs s3, 3 CTAs/SM, the same K depth in flight; 128x64 at s4 vs
# s2, 4 CTAs/SM). If an SM's loads are limited by bytes, the pairs take the same time once load-bound; if by
# requests, BK = 32 takes up to that much longer (NOTES session 11: first waves at saturation move 0.6 requests/clk
# per SM whatever their bytes). The M sweep (partial first waves up to several waves) shows whether the cost
# appears per SM (a jump at the first SM that takes one more CTA) or chip-wide (growing with the loaded SMs).
# The stage study's layer (N = K = 3072, A and B stay in L2), M = 64..3072 in steps of 64, twice.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_requests.sh
DEFAULT_BUDGET=400 . "$(dirname "$0")/common.sh"
F=validation/data/h200/requests; mkdir -p $F
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_requests.txt"
S=$(python3 -c "print(','.join(f'{m}x3072x3072' for m in range(64, 3072 + 1, 64)))")
C="--gpu h200 --configs $F/configs.jsonl --no-cublas --shapes $S"
python3 -m validation.cli profile $C --out $F/requests.jsonl --budget-s $(( $(left) / 2 - 5 ))
python3 -m validation.cli profile $C --out $F/requests_repeat.jsonl --budget-s $(( $(left) - 10 ))
cp $F/requests*.jsonl "$OUT/" 2>/dev/null
ls -la "$OUT"
