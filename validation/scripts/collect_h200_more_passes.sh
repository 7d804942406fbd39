#!/usr/bin/env bash
# Session-8 H200 collection (GPU machine, repository root; $OUT receives copies): a third pass of the five M
# sweeps, on another day than their first two (those of the three later layers were taken back to back in
# one call), so that the staircase's hardware noise includes what changes between sessions. None of them goes
# to gemm/ (calibration data). The profiler resumes: a file already complete is skipped.
# usage: [PASS=4] BUDGET=seconds bash validation/scripts/collect_h200_more_passes.sh   (PASS: the files' suffix, 3 by default)
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
P=pass${PASS:-3}
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_$P.txt"
C="--gpu h200 --configs wave-study+grouping --no-cublas"
run() {  # shapes, file, share of what is left
  python3 -m validation.cli profile $C --shapes "$1" --out "$2" --budget-s $(( $(left) * $3 / 100 - 5 ))
  cp "$2" "$OUT/" 2>/dev/null
}
run m-sweep-fresh6 validation/data/h200/fresh6/m_sweep_fresh6_$P.jsonl 20
run m-sweep-holdout validation/data/h200/holdout/m_sweep_holdout_$P.jsonl 25
run m-sweep-fresh5 validation/data/h200/fresh5/m_sweep_fresh5_$P.jsonl 33
run m-sweep validation/data/h200/holdout/m_sweep_$P.jsonl 50
run m-sweep-fresh validation/data/h200/fresh/m_sweep_fresh_$P.jsonl 97
ls -la "$OUT"
