#!/usr/bin/env bash
# Session-6 H200 collection (GPU machine, repository root; $OUT receives copies), taken after that session's
# model (queueing at the SM) was fixed: the M sweep (17 wave-study + grouping configs x M = 64..8192) on
# llama3-70b-tp4.o (N = 8192, K = 2048), a layer no earlier sweep has (validation/shapesets.py FRESH6_LAYER),
# twice (the second pass gives the reproducible steps). The profiler resumes: run again to finish a pass.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_fresh6.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
F=validation/data/h200/fresh6; mkdir -p $F
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_fresh6.txt"
C="--gpu h200 --configs wave-study+grouping --no-cublas --shapes m-sweep-fresh6"
python3 -m validation.cli profile $C --out $F/m_sweep_fresh6.jsonl --budget-s $(( $(left) / 2 - 5 ))
python3 -m validation.cli profile $C --out $F/m_sweep_fresh6_repeat.jsonl --budget-s $(( $(left) - 10 ))
cp $F/m_sweep_fresh6*.jsonl "$OUT/" 2>/dev/null
ls -la "$OUT"
