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
