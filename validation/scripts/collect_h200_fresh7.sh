#!/usr/bin/env bash
# Session-12 H200 collection (GPU machine, repository root; $OUT receives copies), taken after that session's
# model (the L2 request overhead) was fixed: the M sweep (17 wave-study + grouping configs x M = 64..8192) on
# yi-34b.o (N = K = 7168), a layer no earlier sweep has (validation/shapesets.py FRESH7_LAYER),
# twice (the second pass gives the reproducible steps). The profiler resumes: run again to finish a pass.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_fresh7.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
F=validation/data/h200/fresh7; mkdir -p $F
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_fresh7.txt"
C="--gpu h200 --configs wave-study+grouping --no-cublas --shapes m-sweep-fresh7"
python3 -m validation.cli profile $C --out $F/m_sweep_fresh7.jsonl --budget-s $(( $(left) / 2 - 5 ))
python3 -m validation.cli profile $C --out $F/m_sweep_fresh7_repeat.jsonl --budget-s $(( $(left) - 10 ))
cp $F/m_sweep_fresh7*.jsonl "$OUT/" 2>/dev/null
ls -la "$OUT"
