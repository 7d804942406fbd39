# Sourced by the collect_*.sh scripts (GPU machine, repository root): environment, the output folder and a
# time budget. Set BUDGET (seconds) before sourcing to change the default; `left` prints what remains.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
OUT=${OUT:-out}; mkdir -p "$OUT"
BUDGET=${BUDGET:-${DEFAULT_BUDGET:-480}}
t0=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - t0) )); }
