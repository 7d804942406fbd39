#!/usr/bin/env bash
# Refit the simulator as it is in the working tree and score it (CPU, about 2-4 minutes on 2 cores): what a change to
# the model's form is judged by (NOTES sessions 26-29).
#   shipped: the shipped calibration's procedure (write-flush records of validation/data/h200/gemm/; the hold-out B
#            never sees 4096^2). On the unchanged model it reproduces the shipped figures exactly (six_clean 346 / 13).
#   clean:   session 26's procedure on clean-flush timings (the sweeps' other five layers held out; B also measures its
#            de-synchronisation on one clean layer). On the unchanged model: six_clean 359 / 30.
# Compare a variant with the unchanged model refitted by the same procedure.
# usage: bash validation/scripts/refit_and_score.sh OUT_DIR [shipped|clean] [scorecard options, e.g. --families]
set -eu
O=$1; MODE=${2:-shipped}; shift $(( $# >= 2 ? 2 : 1 ))
D=validation/data/h200; mkdir -p "$O"
case $MODE in
shipped)
    wavetune calibrate --gpu h200 --measurements $D/gemm/*.jsonl --out "$O/A.json" > "$O/A.log" 2>&1 &
    wavetune calibrate --gpu h200 --measurements $D/gemm/*.jsonl --holdout-nk 4096x4096 --out "$O/B.json" > "$O/B.log" 2>&1 &
    ;;
clean)
    FIVE="4608x3584 5120x5120 3584x4096 8192x2048 7168x7168"
    C=$D/cleanflush
    CLEAN="$C/llm_short_cleanflush.jsonl.gz $C/k_sweep_cleanflush.jsonl.gz $C/six_cleanflush_pass1_64.jsonl.gz $C/six_cleanflush_pass1_2240.jsonl.gz $D/msweep_cleanflush/m_sweep_cleanflush_pass1.jsonl.gz"
    wavetune calibrate --gpu h200 --measurements $D/gemm/*.jsonl $CLEAN --holdout-nk $FIVE --out "$O/A.json" > "$O/A.log" 2>&1 &
    wavetune calibrate --gpu h200 --measurements $D/gemm/*.jsonl $CLEAN --holdout-nk $FIVE 4096x4096 --out "$O/B.json" \
        --desync-sweeps $C/six_cleanflush_pass1_64.jsonl.gz,$C/six_cleanflush_pass1_2240.jsonl.gz \
        $C/six_cleanflush_pass2_64.jsonl.gz,$C/six_cleanflush_pass2_2240.jsonl.gz --desync-nk 4608x3584 > "$O/B.log" 2>&1 &
    ;;
*) echo "refit_and_score.sh: mode is shipped or clean, got $MODE" >&2; exit 2 ;;
esac
wait
python3 -m validation.scorecard --calibration "$O/A.json" --holdout 4096x4096="$O/B.json" "$@" | tee "$O/score.txt"
