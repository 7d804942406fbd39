# Sourced by the collect_*.sh scripts (GPU machine, repository root): environment, the output folder and a
# time budget. Set BUDGET (seconds) before sourcing to change the default; `left` prints what remains.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
OUT=${OUT:-out}; mkdir -p "$OUT"
BUDGET=${BUDGET:-${DEFAULT_BUDGET:-480}}
t0=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - t0) )); }
# sweep_passes NAME [FLUSH]: the 17 sweep configs (wave-study + grouping) over validation/data/h200/NAME/shapes.jsonl,
# three profiler passes in shuffled orders (--order-seed 1..3) sharing what is left of the budget, into
# validation/data/h200/NAME/m_sweep_NAME_pass{1,2,3}.jsonl, with the GPU's state first; copies land in $OUT. FLUSH:
# the profiler's --l2-flush (write, its default, or read: the clean eviction issue 3 is judged with since session 26).
sweep_passes() {
    local name=$1 flush=${2:-write} F=validation/data/h200/$1
    nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_$name.txt"
    for pass in 1 2 3; do
        python3 -m validation.cli profile --gpu h200 --configs wave-study+grouping --no-cublas --shapes $F/shapes.jsonl \
            --order-seed $pass --l2-flush $flush --out $F/m_sweep_${name}_pass$pass.jsonl --budget-s $(( $(left) / (4 - pass) - 5 ))
    done
    cp $F/m_sweep_${name}_pass*.jsonl "$OUT/"
    ls -la "$OUT"
}
# blind_passes DIR NAME SEED: the GPU's state, then a blind set's configs x shapes (DIR/blind_configs.jsonl,
# DIR/blind_shapes.jsonl, make_blind_set.py) timed twice in shuffled orders (--order-seed SEED and SEED + 1; cuBLAS in the
# first) with the clean L2 eviction, into DIR/NAME.jsonl and DIR/NAME_repeat.jsonl, halving what is left of the budget;
# copies land in $OUT.
blind_passes() {
    local D=$1 name=$2 seed=$3 tag
    tag=$(basename "$D")
    nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_$tag.txt" "$D/nvidia_smi_$tag.txt"
    local P="python3 -m validation.cli profile --gpu h200 --shapes $D/blind_shapes.jsonl --configs $D/blind_configs.jsonl --l2-flush read --target-ms 10 --max-reps 30"
    $P --order-seed "$seed" --out "$D/$name.jsonl" --budget-s $(( $(left) / 2 + 20 ))
    $P --order-seed $(( seed + 1 )) --no-cublas --out "$D/${name}_repeat.jsonl" --budget-s $(( $(left) - 20 ))
    cp "$D/$name.jsonl" "$D/${name}_repeat.jsonl" "$OUT/"
    ls -la "$OUT"
}
