#!/usr/bin/env bash
# Session-20 H200 collection (GPU machine, repository root; $OUT receives copies): clock, power and time of 8 configs
# that differ in num_stages (and 2 -> 1 CTAs/SM) under sustained load, on light and full-chip shapes, two passes in
# shuffled orders (validation/power_probe.py). Question: at full load the hardware gains nothing from the stage that
# the model says is worth 5-10% (NOTES session 19); is the deeper pipeline's gain eaten by a lower clock?
# usage: BUDGET=seconds bash validation/scripts/collect_h200_power.sh
DEFAULT_BUDGET=420 . "$(dirname "$0")/common.sh"
P=validation/data/h200/power
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_power.txt"
SHAPES=256x8192x3584,1024x8192x3584,4096x8192x3584,16384x8192x3584,16384x7168x8192,8192x28672x4096
for seed in 0 1; do
    timeout $(( $(left) - 10 )) python3 -m validation.power_probe --configs $P/configs_power.jsonl --shapes $SHAPES \
        --seed $seed --out $P/power_probe.jsonl
done
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv | tee -a "$OUT/nvidia_smi_power.txt"
cp $P/power_probe.jsonl "$OUT/"
ls -la "$OUT"
