#!/usr/bin/env bash
# Session-39 H200 collection (GPU machine, repository root; $OUT receives copies): a study, not a deciding set, of the
# blind sets' one bias left at decode sizes (NOTES.md session 39): near each shape's best at M <= 16, 16-warp configs
# are simulated 4-6% fast, other warps within 3%. Nine decode tiles x warps 1 / 2 / 4 / 8 / 16 x stages 3 / 5,
# GROUP_M 8, on four layers at M = 1, 4, 16, 48; two passes in shuffled orders with the clean L2 eviction.
# usage: bash validation/scripts/collect_h200_decode_warps.sh
DEFAULT_BUDGET=330 . "$(dirname "$0")/common.sh"
D=validation/data/h200/decode_warps
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_decode_warps.txt" "$D/nvidia_smi_decode_warps.txt"
P="python3 -m validation.cli profile --gpu h200 --shapes $D/shapes.jsonl --configs $D/configs.jsonl --l2-flush read --target-ms 10 --max-reps 30"
$P --order-seed 391 --out "$D/decode_warps.jsonl" --budget-s $(( $(left) / 2 + 20 ))
$P --order-seed 392 --no-cublas --out "$D/decode_warps_repeat.jsonl" --budget-s $(( $(left) - 20 ))
cp "$D"/decode_warps*.jsonl "$OUT/"
ls -la "$OUT"
