#!/usr/bin/env bash
# Session-26 H200 collection (GPU machine, repository root): the calibration's short launches timed again with a clean
# L2 eviction (`--l2-flush read`). Every earlier calibration record was taken after the write flush, whose dirty lines
# add 4-7 us to a short launch (validation/scripts/flush_probe.py); a calibration on those carries that cost. Here:
# the LLM shapes whose median record is under 0.1 ms (cleanflush/llm_short_shapes.jsonl, 42 of the 96: chosen from
# the committed llm.jsonl) with llm.jsonl's configs and timing settings, then the K sweep. Records go straight to
# $OUT (a call cut short keeps them); copy them into validation/data/h200/cleanflush/ afterwards.
# usage: bash validation/scripts/collect_h200_calib_cleanflush.sh
DEFAULT_BUDGET=540 . "$(dirname "$0")/common.sh"
F=validation/data/h200/cleanflush
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_calib_cleanflush.txt"
python3 -m validation.cli profile --gpu h200 --shapes k-sweep --configs wave-study --no-cublas --l2-flush read \
    --out "$OUT/k_sweep_cleanflush.jsonl" --budget-s 60
python3 -m validation.cli profile --gpu h200 --shapes $F/llm_short_shapes.jsonl --configs broad+wave-study+grouping \
    --target-ms 10 --max-reps 30 --no-cublas --l2-flush read --order-seed 1 \
    --out "$OUT/llm_short_cleanflush.jsonl" --budget-s $(( $(left) - 10 ))
ls -la "$OUT"
