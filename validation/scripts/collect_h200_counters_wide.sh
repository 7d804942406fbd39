#!/usr/bin/env bash
# Session-21 H200 collection (GPU machine with Nsight Compute, repository root; $OUT receives copies): counters of lone
# first waves (one CTA per SM) on wide layers (few M-tiles by many N-tiles: 8192 x 4096 and 6144 x 4096 at M = 64, 128),
# where the simulator is 7-13% too fast, against narrow ones (2048 x 4096 at M = 512, 4096 x 4096 at M = 256), where it
# is right (NOTES session 21). Question: is it the same-line requests of A (the L2 coalescer's counters, L2 hit rate)
# or B streaming from DRAM without reuse (DRAM bytes)?
# usage: bash validation/scripts/collect_h200_counters_wide.sh
DEFAULT_BUDGET=300 . "$(dirname "$0")/common.sh"
C=validation/data/h200/counters
F="$OUT/counters_wide.jsonl"
python3 -m validation.counters collect --configs $C/configs_wide.jsonl --shapes 8192x4096,6144x4096 --M 64,128 --out "$F" || echo "wide: failed"
python3 -m validation.counters collect --configs $C/configs_wide.jsonl --shapes 2048x4096 --M 512 --out "$F" || echo "2048: failed"
python3 -m validation.counters collect --configs $C/configs_wide.jsonl --shapes 4096x4096 --M 256 --out "$F" || echo "4096: failed"
ls -la "$OUT"
