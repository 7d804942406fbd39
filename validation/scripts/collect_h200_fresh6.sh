#!/usr/bin/env bash
# Session-6 H200 collection (GPU machine, repository root; $OUT receives copies), taken after that session's
# model (queueing at the SM) was fixed: the M sweep (17 wave-study + grouping configs x M = 64..8192) on
# llama3-70b-tp4.o (N = 8192, K = 2048), a layer no earlier sweep has (validation/shapesets.py FRESH6_LAYER),
# twice (the second pass gives the reproducible steps). The profiler resumes: run again to finish a pass.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_fresh6.sh
exec bash "$(dirname "$0")/collect_h200_m_sweep.sh" fresh6
