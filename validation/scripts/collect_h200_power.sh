#!/usr/bin/env bash
# H200 collection (GPU machine, repository root; $OUT receives copies): clock, power and time of GEMM configs under
# sustained load, in shuffled orders (validation/power_probe.py).
# Session 20, first run (defaults): 8 configs that differ in num_stages (and 2 -> 1 CTAs/SM) on light and full-chip
# shapes, two passes. Question: at full load the hardware gains nothing from the stage that the model says is worth
# 5-10% (NOTES session 19); is the deeper pipeline's gain eaten by a lower clock?
# Second run: every third config of the broad space on three full-chip shapes, one pass, for a power model:
#   CONFIGS=validation/data/h200/power/configs_power_broad.jsonl FILE=power_probe_broad.jsonl SEEDS=2 \
#   SHAPES=4096x8192x3584,16384x7168x8192,8192x12288x64 bash validation/scripts/collect_h200_power.sh
# Session 21, the M sweeps' 17 configs held (data README): CONFIGS=validation/data/h200/power/configs_msweep.jsonl
#   FILE=power_probe_msweep_coarse.jsonl SHAPES=64x4096x4096,256x4096x4096,448x4096x4096,512x4096x4096,576x4096x4096,
#   704x4096x4096,832x4096x4096,1024x4096x4096,1088x4096x4096,1600x4096x4096,2112x4096x4096,256x8192x2048,320x8192x2048,
#   448x8192x2048,512x8192x2048; then the dense sweeps FILE=power_msweep_4096x4096.jsonl (M = 64..2176 step 64) and
#   FILE=power_msweep_8192x2048.jsonl (M = 64..1216 step 64).
# Then the profiler's own regime (HOLD_S=0: no hold, L2 flushed between launches as the profiler does):
#   HOLD_S=0 FILE=power_profiler_regime.jsonl CONFIGS=validation/data/h200/power/configs_msweep.jsonl
#   SHAPES=<the 11 coarse shapes at 4096 x 4096 above>,4096x4096x4096,16384x4096x4096
# usage: BUDGET=seconds [CONFIGS=... SHAPES=... SEEDS="0 1" FILE=... HOLD_S=0.3] bash validation/scripts/collect_h200_power.sh
DEFAULT_BUDGET=420 . "$(dirname "$0")/common.sh"
P=validation/data/h200/power
CONFIGS=${CONFIGS:-$P/configs_power.jsonl}
SHAPES=${SHAPES:-256x8192x3584,1024x8192x3584,4096x8192x3584,16384x8192x3584,16384x7168x8192,8192x28672x4096}
SEEDS=${SEEDS:-0 1}
FILE=${FILE:-power_probe.jsonl}
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee -a "$OUT/nvidia_smi_power.txt"
for seed in $SEEDS; do
    timeout $(( $(left) - 10 )) python3 -m validation.power_probe --configs $CONFIGS --shapes $SHAPES \
        --seed $seed --hold-s ${HOLD_S:-0.3} --out $P/$FILE
done
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv | tee -a "$OUT/nvidia_smi_power.txt"
cp $P/$FILE "$OUT/"
ls -la "$OUT"
