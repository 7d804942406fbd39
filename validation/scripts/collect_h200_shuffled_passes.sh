#!/usr/bin/env bash
# Session-12 H200 collection (GPU machine, repository root; $OUT receives gzipped copies): two more passes of M
# sweeps, each in its own shuffled order (`--order-seed` = the pass number). Every earlier pass ran the shapes in
# ascending M and the configs in one seeded order, so a launch inherited the same clock state (power, heat) from
# the same predecessors in every pass and order effects repeated as "reproducible" steps (up to 10% on
# N = K = 7168: validation/data/h200/traces/trace_jagged_7168.json against the sweep). None is calibration data.
# usage: BUDGET=seconds bash validation/scripts/collect_h200_shuffled_passes.sh SWEEP...
#        (SWEEP: fresh6, fresh5, holdout, fresh, m; passes 5 and 6 of each, written next to its other passes)
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
D=validation/data/h200
declare -A FILE=([m]=holdout/m_sweep [holdout]=holdout/m_sweep_holdout [fresh]=fresh/m_sweep_fresh
                 [fresh5]=fresh5/m_sweep_fresh5 [fresh6]=fresh6/m_sweep_fresh6 [fresh7]=fresh7/m_sweep_fresh7)
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_shuffled_$1.txt"
for s in "$@"; do
  shapes=m-sweep-$s; [ $s = m ] && shapes=m-sweep
  for P in 5 6; do
    f=$D/${FILE[$s]}_pass$P.jsonl
    python3 -m validation.cli profile --gpu h200 --configs wave-study+grouping --no-cublas --shapes $shapes \
        --order-seed $P --out $f --budget-s $(( $(left) - 10 ))
    gzip -9 -n -c $f > "$OUT/$(basename $f).gz"
  done
done
ls -la "$OUT"
