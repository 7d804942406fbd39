"""Analytical resource estimate of the canonical Triton GEMM, for when Triton is not installed.

Shared memory (bytes per CTA), with ``per_stage = (BLOCK_M*BLOCK_K + BLOCK_K*BLOCK_N) * elem_bytes``
(one K-step of the A and B tiles):

* **async-MMA path** (Hopper ``wgmma`` on sm_90, Blackwell ``tcgen05`` on sm_100; Triton takes it when
  ``BLOCK_M >= 64``, the M of one warpgroup instruction, and ``num_warps`` is a multiple of 4, whole
  warpgroups): the MMA reads both operands straight from shared
  memory while the next loads land, so the pipeliner keeps **all** ``num_stages`` buffers:
  ``smem = num_stages * per_stage`` (+ 16 B on sm_100: barrier/TMEM-address words).
* **register-MMA path** (``mma.sync`` m16n8k16, "MMAv2", on sm_80/86/89/120, and on sm_90/100 when
  ``BLOCK_M < 64``; FMA dot on sm_70/75): operands are copied to registers with ``ldmatrix`` before
  the MMA, so one stage fewer is buffered: ``smem = max(1, num_stages - 1) * per_stage`` (with
  ``num_stages = 1`` nothing is pipelined but one K-step still passes through shared memory).
* **FMA path** (sm_70/75: Triton 3.6 has no tensor-core lowering there, and no ``cp.async`` before sm_80,
  so nothing is multi-buffered): ``smem = max(BLOCK_M*BLOCK_K, BLOCK_K*BLOCK_N) * 4``, independent of
  ``num_stages`` (the larger operand tile staged as fp32).
* **epilogue reuse**: the accumulator's layout conversion before the store reuses the pipeline buffers,
  so ``smem = max(pipeline, epilogue)``. In the shipped space it only shows on sm_80/86/89 with 16-bit
  outputs for 256x128 with 8 warps, where ``epilogue = BLOCK_M * BLOCK_N * 2``. The rule used,
  ``BLOCK_M == 32 * num_warps and BLOCK_N <= BLOCK_M``, is the narrowest that fits that and held-out
  compiles (128x64x16 w4: full tile; 128x256x16 w4, 256x64x16 w4, 256x32x16 w2: none); it overestimates
  128x128 w4 with BLOCK_K = 16 (the scratch there is half the tile). Triton sizes this scratch from the
  two layouts' repetition shapes, which this formula does not reproduce in general.

Evidence (``python3 -m wavesim.resources.estimate --check``, against the committed oracle tables of the 186
configs of ``broad+wave-study+grouping``, Triton 3.6.0): see ``data/estimate_constants.json`` ``evidence``;
the smem formula matches the oracle **exactly** for 186/186 configs on every shipped NVIDIA table
(sm_80/86/89/90/100/120 x bf16/fp16/fp32, sm_70/75 fp16). Held out (60 random configs outside the space:
num_warps 2, num_stages 1, BLOCK_K 16, other GROUP_M): 58/60 exact on sm_90 bf16, 57/60 on sm_80 bf16; the
misses are tiny or BLOCK_K = 16 tiles whose epilogue scratch exceeds the pipeline.

Registers/thread: ``regs = min(255, round(c0 + c_acc * acc + c_op * op))`` with
``acc = BLOCK_M*BLOCK_N / threads`` (fp32 accumulator registers per thread) and
``op = (BLOCK_M + BLOCK_N) * BLOCK_K * elem_bytes / 4 / threads`` (32-bit registers per thread to hold one
K-step of both operand tiles: loaded fragments on the MMAv2 path, load addresses/staging on the async path).
The three constants are least-squares fits per (arch, operand width, path) on the oracle tables, stored with
their fit errors in ``data/estimate_constants.json`` (refit: ``python3 -m wavesim.resources.estimate --fit``).
Agreement is a band, not exact: ptxas register allocation is not linear in tile sizes (a fragment-aware
variant with Triton's warpsPerTile split did no better). Measured against the oracle (186 configs each):

=============================  ==========  =============  ==============  ============
table                          mean |err|  within +-16    within +-32     max |err|
=============================  ==========  =============  ==============  ============
sm_90 bf16/fp16                 7.3         165/186        184/186          38
sm_100 bf16/fp16                7.2         175/186        184/186          37
sm_80, sm_86, sm_89 bf16/fp16   9.5         158-160/186    184/186          33-36
sm_120 bf16/fp16                8.5         157/186        186/186          27
fp32 (tf32), sm_80..sm_120      9.2-12.1    134-155/186    175-184/186      48-68
sm_70/75 fp16 (FMA path)        124-159     37-42/186      45-53/186        191-223  (not modelled)
=============================  ==========  =============  ==============  ============

These are in-sample (the constants are fitted on the same tables). Held out (60 random configs outside the
space, compiled by the oracle): sm_90 bf16 mean |err| 13.7, 45/60 within +-16, 54/60 within +-32;
sm_80 bf16 11.8, 47/60, 57/60; and the 2641 configs of the sm_90 bf16 wide table outside the space (every config of
the blind sets' grid, compiled: ``build_tables --wide``) 11.1, 2104 within +-16, 2437 within +-32 (max 223), smem
exact for 2423. (On sm_80, sm_86, sm_89, sm_90, sm_100 and sm_120 the wide tables serve that grid, so the estimate acts only outside it.) Use the band when the estimate feeds occupancy: a 16-register error moves
CTAs/SM only near a register-limit boundary, but it does move it there.
Spills: ptxas spills once the demand passes the 255-register cap, so the estimate is
``spills = max(0, round(raw - 255))`` (32-bit words per thread) where ``raw`` is the unclipped linear
estimate. It is a flag more than an amount: on the oracle tables it flags nearly every spilling config
(``spill_tp``/``spill_fn`` in the evidence) with some false alarms (``spill_fp``), and the amounts differ.
sm_70/75 (FMA dot, no tensor cores in Triton 3.6) spill heavily and irregularly: use the table or the oracle.
255 registers/thread is the architectural maximum for every CC >= 3.5 (CUDA C Programming Guide,
"Technical Specifications per Compute Capability"; /work/shared/reference/gpu-specs.md).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from pathlib import Path
from typing import Any

from wavetune.config import DTYPE_BYTES, LaunchConfig

CONSTANTS_PATH = Path(__file__).parent / "data" / "estimate_constants.json"
MAX_REGS_PER_THREAD = 255       # CUDA C Programming Guide, Technical Specifications (CC 3.5 and later)
WARP_SIZE = 32                  # CUDA C Programming Guide (all NVIDIA CCs)
ASYNC_MMA_MIN_BLOCK_M = 64      # wgmma/tcgen05 M per warpgroup (PTX ISA, wgmma.mma_async shapes m64nNk16)
WARPGROUP_WARPS = 4             # a warpgroup is 4 contiguous warps (PTX ISA, "Warpgroup"); wgmma needs whole ones
BLACKWELL_SMEM_EXTRA_BYTES = 16  # observed: every BLOCK_M>=64 sm_100 config of the oracle tables has exactly +16 B
OUT_BYTES_EPILOGUE = 2           # epilogue smem seen only with 16-bit outputs (fp32 outputs: none, 186/186)

# Path by compute capability. Evidence: the oracle tables (smem stage counts, see module docstring);
# sm_70/75 run tl.dot on FMA units in Triton 3.6 (255 regs + stack spills even for 64x64x32 in fp16).
ASYNC_MMA_CCS = {90: "wgmma", 100: "tcgen05", 103: "tcgen05"}
EPILOGUE_REUSE_CCS = {80, 86, 87, 89}
FMA_CCS = {70, 75}               # Triton 3.6 lowers tl.dot to FMA here (see the tables: 255 regs and spills)
FMA_STAGING_BYTES = 4            # fp32 staging of the FMA dot's operand (observed: smem = 4 B x larger tile)
KNOWN_CCS = {70, 75, 80, 86, 87, 89, 90, 100, 103, 120, 121}


def _cc(arch: str) -> int:
    from .oracle import parse_arch

    kind, cc = parse_arch(arch)
    if kind != "cuda":
        raise ValueError(f"estimate: no analytical model for {arch!r} (NVIDIA only); use source='oracle' with triton")
    if cc not in KNOWN_CCS:
        raise ValueError(f"estimate: no model for {arch!r}; known: {sorted(f'sm_{c}' for c in KNOWN_CCS)}. "
                         f"Install triton and use source='oracle' to compile it")
    return cc


def path_of(config: LaunchConfig, arch: str) -> str:
    """'async' (wgmma/tcgen05 reading smem operands) or 'reg' (mma.sync / FMA with register operands)."""
    cc = _cc(arch)
    return ("async" if cc in ASYNC_MMA_CCS and config.BLOCK_M >= ASYNC_MMA_MIN_BLOCK_M
            and config.num_warps % WARPGROUP_WARPS == 0 else "reg")


def estimate_smem_bytes(config: LaunchConfig, arch: str, dtype: str) -> int:
    cc = _cc(arch)
    b = DTYPE_BYTES[dtype]
    if cc in FMA_CCS:
        # No cp.async below sm_80 (PTX ISA: cp.async requires sm_80), so nothing is multi-buffered; the FMA
        # dot stages the larger operand tile through shared memory as fp32: 186/186 exact on sm_75 fp16.
        return max(config.BLOCK_M * config.BLOCK_K, config.BLOCK_K * config.BLOCK_N) * FMA_STAGING_BYTES
    per_stage = (config.BLOCK_M * config.BLOCK_K + config.BLOCK_K * config.BLOCK_N) * b
    if path_of(config, arch) == "async":
        smem = config.num_stages * per_stage
        if ASYNC_MMA_CCS[cc] == "tcgen05":
            smem += BLACKWELL_SMEM_EXTRA_BYTES
        return smem
    # num_stages == 1: no pipelining, but the dot still stages one K-step through shared memory.
    smem = max(1, config.num_stages - 1) * per_stage
    if (cc in EPILOGUE_REUSE_CCS and b == OUT_BYTES_EPILOGUE and config.BLOCK_M == WARP_SIZE * config.num_warps
            and config.BLOCK_N <= config.BLOCK_M):
        smem = max(smem, config.BLOCK_M * config.BLOCK_N * b)
    return smem


def features(config: LaunchConfig, dtype: str) -> tuple[float, float, float]:
    threads = config.num_warps * WARP_SIZE
    acc = config.BLOCK_M * config.BLOCK_N / threads
    op = (config.BLOCK_M + config.BLOCK_N) * config.BLOCK_K * DTYPE_BYTES[dtype] / 4 / threads
    return 1.0, acc, op


def _group(arch: str, dtype: str, path: str) -> str:
    return f"{arch}/{'b' + str(DTYPE_BYTES[dtype] * 8)}/{path}"


@functools.lru_cache(maxsize=1)
def load_constants() -> dict[str, Any]:
    return json.loads(CONSTANTS_PATH.read_text())


def _coefs(config: LaunchConfig, arch: str, dtype: str) -> list[float]:
    consts = load_constants()["groups"]
    cc = _cc(arch)
    path = path_of(config, arch)
    g = _group(f"sm_{cc}", dtype, path)
    if g not in consts:
        # Fall back to the nearest fitted arch of the same path family (documented in the JSON's notes).
        alias = load_constants().get("aliases", {}).get(f"sm_{cc}")
        if alias and _group(alias, dtype, path) in consts:
            g = _group(alias, dtype, path)
        else:
            raise ValueError(f"estimate: no fitted register constants for {g}; fitted: {sorted(consts)}. "
                             f"Use source='oracle' (needs triton)")
    return consts[g]["coef"]


def _raw_regs(config: LaunchConfig, arch: str, dtype: str) -> float:
    c = _coefs(config, arch, dtype)
    return sum(ci * xi for ci, xi in zip(c, features(config, dtype)))


def estimate_regs(config: LaunchConfig, arch: str, dtype: str) -> int:
    return int(max(1, min(MAX_REGS_PER_THREAD, round(_raw_regs(config, arch, dtype)))))


def estimate_spills(config: LaunchConfig, arch: str, dtype: str) -> int:
    return int(max(0, round(_raw_regs(config, arch, dtype) - MAX_REGS_PER_THREAD)))


def estimate_resources(config: LaunchConfig, arch: str, dtype: str):
    from . import KernelResources
    from .oracle import check_dtype

    check_dtype(dtype)
    return KernelResources(regs_per_thread=estimate_regs(config, arch, dtype),
                           spills=estimate_spills(config, arch, dtype),
                           smem_bytes=estimate_smem_bytes(config, arch, dtype), num_warps=config.num_warps,
                           source="estimate")


# ---- fitting and evidence -------------------------------------------------------------------------------

def _table_rows(arch: str, dtype: str):
    from . import load_table

    t = load_table(arch, dtype) or {}
    return [(LaunchConfig.from_key(k), r) for k, r in sorted(t.items()) if r.get("status") == "ok"]


def fit(tables: list[tuple[str, str]]) -> dict[str, Any]:
    """Least-squares register constants per (arch, operand width, path), fitted on configs below 255 regs."""
    import numpy as np

    groups: dict[str, list] = {}
    for arch, dtype in tables:
        for c, r in _table_rows(arch, dtype):
            if r["spills"] or r["regs_per_thread"] >= MAX_REGS_PER_THREAD:
                continue  # clipped / spilling: the linear model does not describe them
            groups.setdefault(_group(arch, dtype, path_of(c, arch)), []).append((features(c, dtype),
                                                                                 r["regs_per_thread"]))
    out = {}
    for g, rows in sorted(groups.items()):
        X = np.array([x for x, _ in rows])
        y = np.array([v for _, v in rows], dtype=float)
        coef, *_ = np.linalg.lstsq(X, y, rcond=None)
        out[g] = {"coef": [round(float(v), 4) for v in coef], "n_fit": len(rows)}
    return out


def check(tables: list[tuple[str, str]]) -> dict[str, Any]:
    """Agreement of the estimate with the oracle tables: smem exact count, register error band."""
    ev = {}
    for arch, dtype in tables:
        rows = _table_rows(arch, dtype)
        if not rows:
            continue
        smem_exact = 0
        errs = []
        spill = {"spill_tp": 0, "spill_fp": 0, "spill_fn": 0}
        for c, r in rows:
            smem_exact += estimate_smem_bytes(c, arch, dtype) == r["smem_bytes"]
            try:
                errs.append(estimate_regs(c, arch, dtype) - r["regs_per_thread"])
                ps, s = estimate_spills(c, arch, dtype) > 0, r["spills"] > 0
                spill["spill_tp"] += ps and s
                spill["spill_fp"] += ps and not s
                spill["spill_fn"] += s and not ps
            except ValueError:
                pass
        ae = sorted(abs(e) for e in errs)
        ev[f"{arch}/{dtype}"] = {
            "n": len(rows), "smem_exact": smem_exact,
            "regs_n": len(errs),
            "regs_mae": round(sum(ae) / len(ae), 2) if ae else None,
            "regs_within_8": sum(e <= 8 for e in ae), "regs_within_16": sum(e <= 16 for e in ae),
            "regs_within_32": sum(e <= 32 for e in ae), "regs_max_abs_err": ae[-1] if ae else None,
            **spill,
        }
    return ev


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m wavesim.resources.estimate", description=__doc__.split("\n")[0])
    ap.add_argument("--fit", action="store_true", help="refit the register constants on the committed tables "
                                                        "and rewrite data/estimate_constants.json")
    ap.add_argument("--check", action="store_true", help="print the estimate's agreement with the tables (JSON)")
    a = ap.parse_args(argv)
    from . import clear_caches, table_archs

    tables = [t for t in table_archs() if t[0].startswith("sm_")]   # the estimate is NVIDIA-only
    if a.fit:
        doc = {
            "model": "regs = min(255, round(c0 + c_acc*acc + c_op*op)); acc = BM*BN/threads; "
                     "op = (BM+BN)*BK*elem_bytes/4/threads (see wavesim/resources/estimate.py)",
            "fitted_on": [f"{ar}/{dt}" for ar, dt in tables],
            "triton": "3.6.0",
            # Archs without their own table use a fitted arch of the same MMA path (sm_87: Orin, mma.sync like
            # sm_86; sm_103: tcgen05 like sm_100; sm_121: like sm_120).
            "aliases": {"sm_87": "sm_86", "sm_103": "sm_100", "sm_121": "sm_120"},
            "groups": fit(tables),
        }
        CONSTANTS_PATH.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        load_constants.cache_clear()
        clear_caches()
        doc["evidence"] = check(tables)
        CONSTANTS_PATH.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        load_constants.cache_clear()
    if a.check or not a.fit:
        json.dump(check(tables), sys.stdout, indent=1)
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
