#!/usr/bin/env bash
# An H200 M sweep of a fresh layer (GPU machine, repository root; $OUT receives copies): the 17 wave-study +
# grouping configs x the shape set m-sweep-NAME (validation/shapesets.py, M = 64..8192) into
# validation/data/h200/NAME/, twice (the second pass gives the reproducible steps). The profiler resumes: run
# again to finish a pass. Each collect_h200_freshN.sh says when and why its layer was swept.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_m_sweep.sh NAME   (NAME: fresh6, fresh7, ...)
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
N=${1:?usage: bash validation/scripts/collect_h200_m_sweep.sh NAME (a shape set m-sweep-NAME)}
F=validation/data/h200/$N; mkdir -p $F
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_$N.txt"
C="--gpu h200 --configs wave-study+grouping --no-cublas --shapes m-sweep-$N"
python3 -m validation.cli profile $C --out $F/m_sweep_$N.jsonl --budget-s $(( $(left) / 2 - 5 ))
python3 -m validation.cli profile $C --out $F/m_sweep_${N}_repeat.jsonl --budget-s $(( $(left) - 10 ))
cp $F/m_sweep_$N*.jsonl "$OUT/" 2>/dev/null
ls -la "$OUT"
