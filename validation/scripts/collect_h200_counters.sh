#!/usr/bin/env bash
# H200 collection (GPU machine with Nsight Compute, repository root; $OUT receives copies): hardware counters of
# the canonical GEMM (session 15, validation/counters.py). Two questions the timings raised:
#  1. In every trace, 3-CTA/SM configs (64x128x64 s3, 64x64x64 s4) run their later waves 1.1-1.5x slower per CTA
#     than the first (cycles, so not the clock); 1-2 CTA/SM configs do not. Is it DRAM traffic, and does it depend
#     on whether B fits in the L2? Four configs on layers whose B is 8 MB (fits) to 98 MB, M from one wave to many.
#  2. GROUP_M 1 costs 64x128x64 11-17% even inside one wave, where every order runs the same tiles. Do the L2's
#     hit rate or its traffic between partitions follow the order?
# Then per-CTA traces of two configs on the 8-MB-B layers (later / first wave CTA time where B fits).
# usage: bash validation/scripts/collect_h200_counters.sh
DEFAULT_BUDGET=420 . "$(dirname "$0")/common.sh"
C=validation/data/h200/counters
T=validation/data/h200/traces
ncu --version | tail -1
ncu --query-metrics --chip gh100 | grep -E "^(dram__bytes|lts__t_sectors_srcunit|lts__t_requests_srcunit|sm__pipe_tensor_op|lts__t_sector_op)" \
    > "$OUT/ncu_metrics.txt" || echo "query failed"
python3 -m validation.counters collect --configs $C/configs_waves.jsonl \
    --shapes 4096x4096,1024x4096,4096x1024,7168x7168 --M 768,1536,3072,6144 --out "$OUT/counters_waves.jsonl" \
    || echo "waves: failed"
echo "left $(left) s"
python3 -m validation.counters collect --configs $T/configs_grouping.jsonl --shapes 4096x4096 --M 640,1024,4096 \
    --out "$OUT/counters_groupm.jsonl" || echo "groupm: failed"
echo "left $(left) s"
for NK in "1024 4096" "4096 1024"; do
    set -- $NK
    python3 -m validation.trace trace --configs $C/configs_waves.jsonl --N $1 --K $2 --M 8192 --reps 1 \
        --out $T/trace_smallb_${1}x${2}.npz || echo "trace $1x$2 failed"
done
cp $T/trace_smallb_* "$OUT/"
ls -la "$OUT"
