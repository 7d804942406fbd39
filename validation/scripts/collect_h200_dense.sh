#!/usr/bin/env bash
# Session-13 H200 collection (GPU machine, repository root; $OUT receives the gzipped passes in one tar, which
# grows after each pass, and the traces): M sweeps of the dense
# study (tuner/space.py DENSE_STUDY: 9 configs at 6-10 CTAs/SM, wgmma and mma.sync) on two layers, N = K = 4096
# and llama3-70b-tp4.o (8192 x 2048), three passes each in its own shuffled order, then per-CTA traces of the same
# configs on 4096. Why: the wave study has one config at 8+ CTAs/SM (64x64x32 s2, wave de-synchronisation rate
# 0.08-0.25) and one at 7 (32x64x64 s3, 1.2-1.7), too few to tell an occupancy rule from a per-config one
# (NOTES session 12). None of it is calibration data.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_dense.sh
DEFAULT_BUDGET=570 . "$(dirname "$0")/common.sh"
D=validation/data/h200/dense; T=validation/data/h200/traces; mkdir -p $D
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee $D/nvidia_smi_dense.txt
tar -cf "$OUT/dense_sweeps.tar" $D/nvidia_smi_dense.txt
# passes interleaved by layer, so that a short budget still leaves two passes of each; each of the six runs gets an
# equal share of what is left, less 70 s for the traces
n=6
for P in 1 2 3; do
  for s in m-sweep m-sweep-fresh6; do
    f=$D/${s//-/_}_dense_pass$P.jsonl
    python3 -m validation.cli profile --gpu h200 --configs dense-study --no-cublas --shapes $s \
        --order-seed $P --out $f --budget-s $(( ($(left) - 70) / n ))
    n=$(( n - 1 ))
    gzip -9 -n $f && tar -rf "$OUT/dense_sweeps.tar" $f.gz
  done
done
for k in wgmma mma; do
  python3 -m validation.trace trace --configs $T/configs_dense_$k.jsonl --N 4096 --K 4096 --M 512:4096:512 --reps 2 \
      --out $T/trace_dense_${k}_4096.npz
  cp $T/trace_dense_${k}_4096.* "$OUT/"
done
ls -la "$OUT"
