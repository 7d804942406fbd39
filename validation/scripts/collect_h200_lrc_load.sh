#!/usr/bin/env bash
# H200 collection (GPU machine with Nsight Compute, repository root; $OUT receives copies): the L2 request coalescer
# probe under load (session 15; `python3 -m validation.counters probe --load`): SMs of a GPC, or of a TPC, sharing their
# reads in step, at 1-8 CTAs/SM and 2-5 stages with full-line and half-line rows, to find where merging gives out
# (128x64x32 s3 lost it at its 4th CTA per SM, 64x128x64 s3 and 64x64x32 s2 did not).
# usage: bash validation/scripts/collect_h200_lrc_load.sh
DEFAULT_BUDGET=240 . "$(dirname "$0")/common.sh"
python3 -m validation.counters probe --load --out "$OUT/lrc_probe_load.jsonl" || echo "probe --load: failed"
ls -la "$OUT"
