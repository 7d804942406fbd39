#!/usr/bin/env bash
# Collect the H200 measurements committed under validation/data/h200/ (run on the GPU machine from the
# repository root; $OUT receives copies). Resumable: rerun and only missing records are measured.
# With 2 GPUs, GPU 1 measures every other LLM shape in parallel with GPU 0.
# usage: BUDGET=seconds bash validation/scripts/collect_h200.sh PHASE
#   PHASE 1: probe, kill-and-resume check on the M sweep, K sweep, then LLM shapes; PHASE 2: LLM shapes only
DEFAULT_BUDGET=480 . "$(dirname "$0")/common.sh"
D=validation/data/h200/gemm
NGPU=$(nvidia-smi -L | wc -l)
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi.txt"
LLM="--gpu h200 --shapes llm --configs broad+wave-study+grouping --target-ms 10 --max-reps 30"
if [ "$NGPU" -ge 2 ]; then
  CUDA_VISIBLE_DEVICES=1 python3 -m validation.cli profile $LLM --shard 1/2 --out $D/llm.shard1.jsonl --budget-s $((BUDGET - 20)) > "$OUT/gpu1.log" 2>&1 &
  SHARD="--shard 0/2"; LLMOUT=$D/llm.shard0.jsonl
else
  SHARD=""; LLMOUT=$D/llm.jsonl
fi
export CUDA_VISIBLE_DEVICES=0
if [ "${1:-1}" = 1 ]; then
  python3 -m validation.probe --out "$OUT/device_query.json" 2>&1 | tail -2
  # Kill-and-resume check on the M sweep: kill -9 mid-run, restart, then check no duplicate / no loss.
  timeout -s KILL 40 python3 -m validation.cli profile --gpu h200 --shapes m-sweep --configs wave-study --out $D/m_sweep.jsonl --no-cublas
  echo "lines after kill: $(wc -l < $D/m_sweep.jsonl)" | tee "$OUT/resume_check.txt"
  python3 -m validation.cli profile --gpu h200 --shapes m-sweep --configs wave-study --out $D/m_sweep.jsonl --no-cublas --budget-s $(left)
  python3 -m validation.resume_check --out $D/m_sweep.jsonl --shapes m-sweep --configs wave-study --gpu h200 | tee -a "$OUT/resume_check.txt"
  python3 -m validation.cli profile --gpu h200 --shapes k-sweep --configs wave-study --out $D/k_sweep.jsonl --no-cublas --budget-s $(left)
fi
python3 -m validation.cli profile $LLM $SHARD --out $LLMOUT --budget-s $(( $(left) - 20 ))
wait
cp $D/*.jsonl "$OUT/" 2>/dev/null
tail -3 "$OUT/gpu1.log" 2>/dev/null
ls -la "$OUT"
