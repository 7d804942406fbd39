#!/usr/bin/env bash
# Second H200 collection (run on the GPU machine from the repository root; $OUT receives copies):
# 1. the profiler killed with SIGKILL mid-run and restarted must end with no duplicate and no lost record;
# 2. held-out layers of other models at token counts that are not multiples of 16 (never used for fitting);
# 3. fp16 on a subset, to check a second dtype.
DEFAULT_BUDGET=500 . "$(dirname "$0")/common.sh"
D=validation/data/h200/gemm
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_2.txt"
R=$D/resume_check.jsonl; rm -f $R
P="--gpu h200 --shapes m-sweep --configs grouping --out $R --no-cublas"
timeout -s KILL 25 python3 -m validation.cli profile $P; echo "records after SIGKILL at 25 s: $(wc -l < $R)" | tee "$OUT/resume_check_2.txt"
tail -c 120 $R | tee -a "$OUT/resume_check_2.txt"; echo | tee -a "$OUT/resume_check_2.txt"
python3 -m validation.cli profile $P 2>&1 | tee -a "$OUT/resume_check_2.txt"
python3 -m validation.resume_check --out $R --shapes m-sweep --configs grouping --gpu h200 | tee -a "$OUT/resume_check_2.txt"
python3 -m validation.cli profile --gpu h200 --shapes llm-holdout --configs broad+wave-study+grouping --target-ms 10 --max-reps 30 --out validation/data/h200/holdout/llm_holdout.jsonl --budget-s $(( $(left) - 80 ))
python3 -m validation.cli profile --gpu h200 --dtype fp16 --shapes llm-small --configs broad+wave-study+grouping --target-ms 10 --max-reps 30 --out $D/llm_fp16.jsonl --budget-s $(( $(left) - 10 ))
cp $R validation/data/h200/holdout/llm_holdout.jsonl $D/llm_fp16.jsonl "$OUT/" 2>/dev/null
ls -la "$OUT"
