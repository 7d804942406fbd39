#!/usr/bin/env bash
# Session-28 H200 collection (GPU machine with Nsight Compute, repository root): DRAM and L2 counters of launches whose
# last wave is a partial one after a full wave, where the sweeps step and the simulator does not (64x128x64 GROUP_M 1
# and 64x64x64 s4 GROUP_M 8 on 5120^2, M = 576..1088): does the tail re-read from DRAM what the full wave read?
# usage: bash validation/scripts/collect_h200_counters_tail.sh
DEFAULT_BUDGET=240 . "$(dirname "$0")/common.sh"
C=validation/data/h200/counters
python3 -m validation.counters collect --configs $C/configs_tail.jsonl --shapes 5120x5120 \
    --M 256,320,384,448,512,576,640,704,768,832,896,960,1088 --out "$OUT/counters_tail.jsonl" || echo "5120: failed"
ls -la "$OUT"
