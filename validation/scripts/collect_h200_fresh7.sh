#!/usr/bin/env bash
# Session-12 H200 collection (GPU machine, repository root; $OUT receives copies), taken after that session's
# model (the L2 request overhead) was fixed: the M sweep (17 wave-study + grouping configs x M = 64..8192) on
# yi-34b.o (N = K = 7168), a layer no earlier sweep has (validation/shapesets.py FRESH7_LAYER),
# twice (the second pass gives the reproducible steps). The profiler resumes: run again to finish a pass.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_fresh7.sh
exec bash "$(dirname "$0")/collect_h200_m_sweep.sh" fresh7
