#!/usr/bin/env bash
# Third H200 collection (GPU machine, repository root; $OUT receives copies): configs never in any fitted
# space (tuner.space.unseen_space) on fitted and held-out layers, and fp32 (tf32 tensor cores) on a subset.
DEFAULT_BUDGET=330 . "$(dirname "$0")/common.sh"
H=validation/data/h200/holdout
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
python3 -m validation.cli profile --gpu h200 --shapes unseen-check --configs unseen --target-ms 10 --max-reps 30 --out $H/unseen_configs.jsonl --budget-s $(( $(left) - 150 ))
python3 -m validation.cli profile --gpu h200 --dtype fp32 --shapes llm-small --configs broad+wave-study+grouping --target-ms 10 --max-reps 30 --out $H/llm_fp32.jsonl --budget-s $(( $(left) - 10 ))
cp $H/unseen_configs.jsonl $H/llm_fp32.jsonl "$OUT/" 2>/dev/null
ls -la "$OUT"
