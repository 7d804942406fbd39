#!/usr/bin/env bash
# Session-13 H200 collection (GPU machine, repository root; $OUT receives the gzipped passes in one tar that grows
# after each pass): the width study. Five configs at 3-8 CTAs/SM (validation/data/h200/nstudy/configs.jsonl) x the
# shape set m-sweep-n-study (validation/shapesets.py: M = 64..8192 at K = 4096 on N = 2048, 4096, 8192, 16384),
# three passes, each in its own shuffled order. Why: the wave de-synchronisation the sweeps imply is about half as
# fast on the two widest layers (N = 8192, 7168) for every config (NOTES sessions 12-13); these layers vary N alone.
# None of it is calibration data.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_nstudy.sh
DEFAULT_BUDGET=540 . "$(dirname "$0")/common.sh"
D=validation/data/h200/nstudy
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee $D/nvidia_smi_nstudy.txt
tar -cf "$OUT/nstudy.tar" $D/nvidia_smi_nstudy.txt
n=3
for P in 1 2 3; do
  f=$D/m_sweep_nstudy_pass$P.jsonl
  python3 -m validation.cli profile --gpu h200 --configs $D/configs.jsonl --no-cublas --shapes m-sweep-n-study \
      --order-seed $((P + 10)) --out $f --budget-s $(( ($(left) - 10) / n ))
  n=$(( n - 1 ))
  gzip -9 -n $f && tar -rf "$OUT/nstudy.tar" $f.gz
done
ls -la "$OUT"
