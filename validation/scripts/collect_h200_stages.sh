#!/usr/bin/env bash
# Session-9 H200 collection (GPU machine, repository root; $OUT receives copies): the pipeline-depth study.
# 20 configs that differ only in num_stages within five tile families (validation/data/h200/stages/configs.jsonl;
# 128x64x32 s2-s4 share 4 CTAs/SM, 128x128x64 s2-s3 share 2, 128x256x64 s2-s4 share 1), on a layer no earlier
# file has (phi-3-mini's o_proj, N = K = 3072), M = 64..4096 in steps of 64, twice. It asks
# how a lone CTA's K step and the cost of co-resident CTAs change with the stages in flight, which the
# model's t_lat = (latency + transfer + math) / (num_stages - 1) fixes (wavesim/kernels/gemm.py). Not
# calibration data. The profiler resumes: run again to finish a pass. With N, K, M_MAX and TAG set, the same
# configs on another layer (TAG names the files: stages_TAG.jsonl, stages_TAG_repeat.jsonl); session 9 also took
# N=3072 K=16384 M_MAX=2048 TAG=k16384, where B (100 MB) streams from DRAM instead of staying in L2, and the
# small-M study CONFIGS=configs_small_m.jsonl M_STEP=16 M_MAX=512 TAG=smallm (mma.sync tiles of 16-32 rows
# against wgmma ones of 64, at the M of LLM decoding). M runs from M_STEP to M_MAX in steps of M_STEP.
# usage: [N=.. K=.. M_STEP=.. M_MAX=.. CONFIGS=.. TAG=..] BUDGET=seconds bash validation/scripts/collect_h200_stages.sh
DEFAULT_BUDGET=560 . "$(dirname "$0")/common.sh"
F=validation/data/h200/stages; mkdir -p $F
N=${N:-3072}; K=${K:-3072}; T=${TAG:+_$TAG}
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee "$OUT/nvidia_smi_stages$T.txt"
S=$(python3 -c "print(','.join(f'{m}x${N}x${K}' for m in range(${M_STEP:-64}, ${M_MAX:-4096} + 1, ${M_STEP:-64})))")
C="--gpu h200 --configs $F/${CONFIGS:-configs.jsonl} --no-cublas --shapes $S"
python3 -m validation.cli profile $C --out $F/stages$T.jsonl --budget-s $(( $(left) / 2 - 5 ))
python3 -m validation.cli profile $C --out $F/stages${T}_repeat.jsonl --budget-s $(( $(left) - 10 ))
cp $F/stages$T*.jsonl "$OUT/" 2>/dev/null
ls -la "$OUT"
