#!/usr/bin/env bash
# H200 collection (GPU machine with Nsight Compute, repository root; $OUT receives copies): hardware counters for
# later modelling (session 15, validation/counters.py), after collect_h200_counters.sh showed that requests merge
# before the L2 slices, more in a first wave than later and more in some launch orders than others.
#  1. the wave-study configs (1-8 CTAs/SM) on four Llama-3-8B layers, M = 256..8192: DRAM bytes and L2 sectors
#     per launch where the calibration's records are;
#  2. eight tiles at GROUP_M 1, 4, 8 and 32 on 9216 x 3072 (M = 1000, 5000) and 4096 x 4096 (M = 640, 4096): the
#     L2 requests by launch order, where the timings (fresh14/groupm_study.jsonl) show wide tiles 14% slower at
#     GROUP_M 1 and 5% faster at 32.
# usage: bash validation/scripts/collect_h200_counters_llm.sh
DEFAULT_BUDGET=480 . "$(dirname "$0")/common.sh"
C=validation/data/h200/counters
ncu --query-metrics --chip gh100 | grep -i -E "^(lrc|lts__t_(sectors|requests)_srcunit_tex_op_read_lookup)" > "$OUT/ncu_lrc.txt" || true
python3 -m validation.counters collect --configs wave-study --shapes 4096x4096,14336x4096,4096x14336,6144x4096 \
    --M 256,1024,4096,8192 --out "$OUT/counters_llm.jsonl" || echo "llm: failed"
echo "left $(left) s"
python3 -m validation.counters collect --configs $C/configs_groupm.jsonl --shapes 9216x3072 --M 1000,5000 \
    --out "$OUT/counters_groupm_study.jsonl" || echo "groupm 9216x3072: failed"
echo "left $(left) s"
python3 -m validation.counters collect --configs $C/configs_groupm.jsonl --shapes 4096x4096 --M 640,4096 \
    --out "$OUT/counters_groupm_study.jsonl" || echo "groupm 4096x4096: failed"
ls -la "$OUT"
