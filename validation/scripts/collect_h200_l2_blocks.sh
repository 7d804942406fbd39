#!/usr/bin/env bash
# Session-27 H200 collection (GPU machine, repository root): the block study of the L2 probe (validation/l2_probe.py
# collect-blocks): blocks of 1..32 consecutive programs keep the grouped order's tiles and the blocks are scattered, to
# find how near in the dispatch order CTAs must be for their shared reads to be served once. $OUT/l2_blocks.jsonl.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_l2_blocks.sh
DEFAULT_BUDGET=200 . "$(dirname "$0")/common.sh"
timeout $(( $(left) - 5 )) python3 -m validation.l2_probe collect-blocks --out "$OUT/l2_blocks.jsonl"
ls -la "$OUT"
