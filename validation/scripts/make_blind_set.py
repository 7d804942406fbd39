"""Writes a seeded random blind set for the H200: configs drawn from a space wider than any the model was fitted on
(every power-of-two tile 16..256, BLOCK_K 16..256, 1-16 warps, 1-6 stages, GROUP_M 1..32; kept where the tiles'
shared memory can fit an SM and the fp32 accumulator fits in 128 registers per thread, as in every autotuning list we
know: beyond that ptxas spills thousands of registers and can compile one config for an hour) and GEMM shapes drawn
log-uniformly (M 1..8192, N and K 512..16384 rounded to 64, one shape with N not a multiple of 16). Nothing about
them was chosen by looking at the model.

    PYTHONPATH=. python3 validation/scripts/make_blind_set.py --seed 19 --configs 160 --shapes 12 \
        --out validation/data/h200/fresh19

--warps and --stages weight the draw (a value listed twice is drawn twice as often): a set that over-samples the
warps and stages no fitted space holds (session 33: 1 and 16 warps, one stage):

    PYTHONPATH=. python3 validation/scripts/make_blind_set.py --seed 44 --configs 80 --shapes 24 \
        --warps 1,1,2,4,8,16,16 --stages 1,1,2,3,4,5,6 --out validation/data/h200/fresh44

--max-m draws M from a narrower range (a decode set, session 39: M 1..64):

    PYTHONPATH=. python3 validation/scripts/make_blind_set.py --seed 61 --configs 80 --shapes 24 --max-m 64 \
        --out validation/data/h200/fresh61

With --group-m-siblings the configs are instead every tile of SIBLING_TILES at each GROUP_M of SIBLING_GROUPS (configs
that differ only in the launch order), and the shapes are aligned with M from --min-m up (a GROUP_M set: session 29):

    PYTHONPATH=. python3 validation/scripts/make_blind_set.py --seed 33 --group-m-siblings --shapes 20 --min-m 128 \
        --out validation/data/h200/fresh33
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

import hwspecs
from tuner.space import K_TILES, MAX_ACCUMULATOR_PER_THREAD, POW2_TILES, STAGES, WARPS, pipeline_smem_lower_bound

GROUPS = (1, 2, 4, 8, 16, 32)
ELEMENT_BYTES = 2   # bf16
# (BM, BN, BK, warps, stages): the Hopper-era Triton matmul tutorial's autotuning list (python/tutorials/03-matrix-
# multiplication.py, get_cuda_autotune_config; it launches all of them with GROUP_SIZE_M 8) and the three tiles of the
# wave-study sweeps
SIBLING_TILES = ((128, 256, 64, 8, 3), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4),
                 (128, 32, 32, 4, 4), (64, 32, 32, 2, 5), (32, 64, 32, 2, 5), (64, 128, 64, 4, 3), (128, 128, 64, 4, 3),
                 (64, 64, 64, 4, 4))
SIBLING_GROUPS = (1, 4, 8, 16)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--configs", type=int, default=160)
    ap.add_argument("--shapes", type=int, default=12)
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--out", required=True)
    ap.add_argument("--group-m-siblings", action="store_true",
                    help="configs: SIBLING_TILES x SIBLING_GROUPS; shapes: aligned, M from --min-m")
    ap.add_argument("--min-m", type=int, default=1, help="smallest M of the log-uniform draw")
    ap.add_argument("--max-m", type=int, default=8192, help="largest M of the log-uniform draw (a decode set: 64)")
    ap.add_argument("--warps", default=",".join(map(str, WARPS)),
                    help="num_warps values drawn from, comma-separated; a value given twice is drawn twice as often")
    ap.add_argument("--stages", default=",".join(map(str, STAGES)), help="num_stages values drawn from, likewise")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    warps, stages = ([int(v) for v in arg.split(",")] for arg in (a.warps, a.stages))
    for name, vals, allowed in (("--warps", warps, WARPS), ("--stages", stages, STAGES)):
        if not set(vals) <= set(allowed):
            ap.error(f"{name}: {sorted(set(vals) - set(allowed))} not among {list(allowed)}")
    smem = hwspecs.load_gpu(a.gpu).arch.smem_per_cta_optin_bytes
    configs: dict[tuple, dict] = {}
    if a.group_m_siblings:
        configs = {(bm, bn, bk, g, w, st): dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=g, num_warps=w, num_stages=st)
                   for bm, bn, bk, w, st in SIBLING_TILES for g in SIBLING_GROUPS}
    while len(configs) < a.configs and not a.group_m_siblings:
        bm, bn, bk = (int(rng.choice(POW2_TILES)), int(rng.choice(POW2_TILES)), int(rng.choice(K_TILES)))
        c = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=int(rng.choice(GROUPS)), num_warps=int(rng.choice(warps)),
                 num_stages=int(rng.choice(stages)))
        # skip what cannot fit an SM at all
        if pipeline_smem_lower_bound(bm, bn, bk, c["num_stages"], ELEMENT_BYTES) > smem:
            continue
        if bm * bn > MAX_ACCUMULATOR_PER_THREAD * 32 * c["num_warps"]:
            continue
        configs[tuple(c.values())] = c
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "blind_configs.jsonl").write_text("".join(json.dumps(c) + "\n" for c in configs.values()))
    shapes = []
    for i in range(a.shapes):
        M = max(1, round(math.exp(rng.uniform(math.log(a.min_m), math.log(a.max_m)))))
        N, K = (64 * max(8, round(math.exp(rng.uniform(math.log(512), math.log(16384))) / 64)) for _ in range(2))
        if i == a.shapes - 1 and not a.group_m_siblings:
            N += int(rng.integers(1, 16))   # one shape Triton compiles unaligned
        shapes.append({"M": M, "N": N, "K": K})
    (out / "blind_shapes.jsonl").write_text("".join(json.dumps(s) + "\n" for s in shapes))
    print(f"{len(configs)} configs, shapes: " + ", ".join(f"{s['M']}x{s['N']}x{s['K']}" for s in shapes))


if __name__ == "__main__":
    main()
