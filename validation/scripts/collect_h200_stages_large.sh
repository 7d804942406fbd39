#!/usr/bin/env bash
# Session-25 H200 collection (GPU machine with Nsight Compute, repository root; $OUT receives copies): why 128x256x64
# with 4 stages runs 0-18% slower than with 3 on large LLM launches (every pick set: the simulator picks s4, 6% faster
# in its chain) and how GROUP_M moves the same tile there. 7 configs (validation/data/h200/stages_large/configs.jsonl:
# 128x256x64 w8 s3 / s4 at GROUP_M 4 and 8, s3 at 16; 128x128x64 w4 s3 / s4) on five large launches of the pick sets:
#  1. timed by the profiler, two passes in shuffled orders (stages_large_pass{1,2}.jsonl);
#  2. under ncu (validation/counters.py, clocks left alone): the SM clock, DRAM bytes, L2 hits and misses, L2 / DRAM /
#     tensor-pipe busy of each launch (counters_stages_large.jsonl).
# usage: bash validation/scripts/collect_h200_stages_large.sh
DEFAULT_BUDGET=420 . "$(dirname "$0")/common.sh"
F=validation/data/h200/stages_large
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_stages_large.txt"
S=16384x8192x3584,4096x16384x3072,8192x28672x4096,4096x4096x4096,6000x16384x6656
for pass in 1 2; do
    python3 -m validation.cli profile --gpu h200 --configs $F/configs.jsonl --no-cublas --shapes $S --order-seed $pass \
        --out $F/stages_large_pass$pass.jsonl --budget-s $(( $(left) / 4 ))
done
cp $F/stages_large_pass*.jsonl "$OUT/"
echo "left $(left) s"
for nkm in 8192x3584:16384 16384x3072:4096 28672x4096:8192 4096x4096:4096 16384x6656:6000; do
    python3 -m validation.counters collect --configs $F/configs.jsonl --shapes ${nkm%%:*} --M ${nkm##*:} \
        --out $F/counters_stages_large.jsonl || echo "$nkm: failed"
    echo "left $(left) s"
    [ "$(left)" -gt 40 ] || break
done
cp $F/counters_stages_large.jsonl "$OUT/" 2>/dev/null
ls -la "$OUT"
