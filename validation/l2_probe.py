"""The L2's two limits with DRAM out of the way (session 27): raw requests, and bytes after a GPC's coalescing.

The clean per-CTA traces show L2-bound launches held by about 130 k L2 requests per us (128x64x32's launch time is
proportional to its CTAs) or by about 7.6 TB/s of bytes that one GPC's CTAs do not share (NOTES session 27), but in
those launches DRAM, the clock and the SM side move too. Here the traced kernel runs 132 x k programs over a resident
set of tiles (A and B together 24 MB, warm in the 60 MB L2, no flush), program i computing tile (i x stride) mod T
(validation/kernels/gemm_trace.py `programs`, `tile_stride`): with stride 1 the programs one GPC receives share A's
rows and B's columns as in the grouped order; with a scattering stride they share nothing. Per config, k and order:
the CTA time, its clock, the launch's raw request and byte rates, and the first wave's lockstep per-GPC share
(validation.gpc_scope.lockstep_gpc_share). The same-tile probe (validation/sm_side.py) is the SM side alone.

Collect (GPU): `python3 -m validation.l2_probe collect --out FILE`. Report (CPU): `python3 -m validation.l2_probe report
FILE`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from wavetune.config import LaunchConfig

# The staircase study's L2-heavy tiles; C of M x N = 1024 x 2048 (A 8 MB + B 16 MB at K = 4096 stay in the L2).
CONFIGS = ("64x128x64_g8_w4_s3", "64x64x64_g8_w4_s4", "128x64x32_g8_w4_s3", "128x128x64_g8_w4_s3")
M_RES, N_RES, K_DEPTH = 1024, 2048, 4096
REPS = 5
RESIDENT_ROOM = 1.5   # the L2 must hold A and B this many times over (C's tiles and other lines share it)


def _resident_operands(spec):
    """A (M_RES x K_DEPTH) and B (K_DEPTH x N_RES), seeded, and C: 24 MB of operands that stay in the H200's L2 (a GPU
    whose L2 cannot hold them with room to spare is refused: its probe would time DRAM)."""
    import torch

    need = (M_RES + N_RES) * K_DEPTH * 2 * RESIDENT_ROOM
    if spec.l2_bytes < need:
        raise ValueError(f"{spec.name}'s L2 ({spec.l2_bytes / 2**20:.0f} MiB) cannot keep the probe's A and B resident "
                         f"(needs {need / 2**20:.0f} MiB); validation.l2_probe is for GPUs with a larger L2")

    from validation.kernels.gemm_trace import random_operands

    return random_operands(M_RES, N_RES, K_DEPTH, torch.Generator(device="cuda").manual_seed(0))


def _measure(f, operands, cfg: LaunchConfig, k: int, programs: int, stride: int, block: int, reps: int, log) -> None:
    """One launch setting traced (warm_trace_medians) and appended to `f` as a JSON line."""
    from validation.kernels.gemm import grid_size
    from validation.kernels.gemm_trace import warm_trace_medians

    rec = {"config": cfg.key, "M": M_RES, "N": N_RES, "K": K_DEPTH, "tiles": grid_size(M_RES, N_RES, cfg),
           "ctas_per_sm": k, "programs": programs, "stride": stride, "tile_block": block,
           **warm_trace_medians(*operands[:2], cfg, operands[2], programs, reps, stride, block),
           "time": time.strftime("%Y-%m-%dT%H:%M:%S")}
    f.write(json.dumps(rec) + "\n")
    f.flush()
    log(f"{cfg.key} {k}/SM stride {stride} blocks of {block}: CTA {rec['cta_ns'] / 1e3:.1f} us, "
        f"span {rec['span_ns'] / 1e3:.1f} us")


def _settings(spec, blocks: bool):
    """(config, CTAs per SM, stride, block) of every launch of a collection: each config at 1..max CTAs/SM in the
    grouped and a scattered order, or (the block study) each block config at its most CTAs/SM with blocks of
    BLOCK_SIZES and the canonical order."""
    from validation.gpc_scope import scatter_stride
    from validation.kernels.gemm import grid_size
    from wavesim.kernels.gemm import config_occupancy

    for key in BLOCK_CONFIGS if blocks else CONFIGS:
        cfg = LaunchConfig.from_key(key)
        tiles = grid_size(M_RES, N_RES, cfg)
        slots = config_occupancy(spec, cfg, "bf16", N_RES, K_DEPTH)[0].ctas_per_sm
        if blocks:
            for block in (*BLOCK_SIZES, tiles):
                yield cfg, slots, 1 if block == tiles else scatter_stride(tiles // block), block
        else:
            for k in range(1, slots + 1):
                for stride in (1, scatter_stride(tiles)):
                    yield cfg, k, stride, 1


def collect(out: Path, reps: int = REPS, log=print, blocks: bool = False) -> None:
    """Trace every launch of the collection (_settings) into `out`, one JSON line each as it goes."""
    from validation.kernels.gemm_trace import local_gpu_spec

    spec = local_gpu_spec()
    operands = _resident_operands(spec)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as f:
        for cfg, k, stride, block in _settings(spec, blocks):
            _measure(f, operands, cfg, k, spec.sm_count * k, stride, block, reps, log)


# The block study: which neighbours in the dispatch order must share tiles for the grouped order's speed. Blocks of b
# consecutive programs keep the grouped order's tiles (b = 2: the two SMs of a TPC share a B column) and the blocks are
# scattered; b = 1 scatters every program, the canonical order is one block of all the tiles.
BLOCK_CONFIGS = ("64x128x64_g8_w4_s3", "64x64x64_g8_w4_s4")
BLOCK_SIZES = (1, 2, 4, 8, 16, 32)


def load_records(path: str | Path) -> list[dict]:
    from wavetune.records import read_probe_records

    return read_probe_records(path, ("config", "M", "N", "K", "tiles", "ctas_per_sm", "programs", "stride", "cta_ns",
                                     "cta_cycles", "span_ns"), "python3 -m validation.l2_probe collect --out FILE",
                              optional={"tile_block": 1})


def report_rows(path: str | Path, gpu: str = "h200") -> list[dict]:
    """Per record: the launch's raw L2 request and byte rates over its span, its clock and the first wave's lockstep
    per-GPC share of its order."""
    import hwspecs
    from validation.gpc_scope import lockstep_gpc_share
    from wavesim.kernels.gemm import l2_requests_per_k_step

    spec = hwspecs.load_gpu(gpu)
    rows = []
    for r in load_records(path):
        cfg = LaunchConfig.from_key(r["config"])
        L = -(-r["K"] // cfg.BLOCK_K)
        requests = r["programs"] * L * l2_requests_per_k_step(cfg.BLOCK_M, cfg.BLOCK_N, cfg.BLOCK_K, 2,
                                                               spec.arch.cache_line_bytes)
        raw_bytes = r["programs"] * L * (cfg.BLOCK_M + cfg.BLOCK_N) * cfg.BLOCK_K * 2
        share = lockstep_gpc_share(r["M"], r["N"], cfg, r["stride"], spec.sm_count, r["ctas_per_sm"], r["programs"],
                                   r["tile_block"])
        rows.append({**r, "clock_ghz": r["cta_cycles"] / r["cta_ns"], "requests_per_us": requests / r["span_ns"] * 1e3,
                     "raw_tb_per_s": raw_bytes / r["span_ns"] / 1e3, "gpc_share": share,
                     "coalesced_tb_per_s": raw_bytes * share / r["span_ns"] / 1e3})
    return rows


def main(argv: list[str] | None = None) -> int:
    from validation.probe_cli import collect_or_explain

    ap = argparse.ArgumentParser(prog="python3 -m validation.l2_probe", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="trace each config at 1..max CTAs/SM in two orders (needs an NVIDIA GPU)")
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--reps", type=int, default=REPS)
    cb = sub.add_parser("collect-blocks", help="scatter blocks of 1..32 consecutive programs (needs an NVIDIA GPU)")
    cb.add_argument("--out", type=Path, required=True)
    cb.add_argument("--reps", type=int, default=REPS)
    r = sub.add_parser("report", help="each launch's L2 request and byte rates beside its per-GPC share")
    r.add_argument("file")
    r.add_argument("--gpu", default="h200")
    a = ap.parse_args(argv)
    if a.cmd in ("collect", "collect-blocks"):
        blocks = a.cmd == "collect-blocks"
        return collect_or_explain("validation.l2_probe", lambda: collect(a.out, a.reps, blocks=blocks))
    try:
        rows = report_rows(a.file, a.gpu)
    except (ValueError, FileNotFoundError) as e:
        print(f"validation.l2_probe: {e}", file=sys.stderr)
        return 2
    for x in rows:
        print(f"{x['config']:22s} {x['ctas_per_sm']}/SM stride {x['stride']:4d} blocks {x['tile_block']:3d}: "
              f"CTA {x['cta_ns'] / 1e3:6.1f} us at {x['clock_ghz']:.2f} GHz, span {x['span_ns'] / 1e3:6.1f} us; "
              f"{x['requests_per_us'] / 1e3:6.1f} k requests/us, {x['raw_tb_per_s']:5.1f} TB/s raw; "
              f"per-GPC share {x['gpc_share']:.2f} -> {x['coalesced_tb_per_s']:4.1f} TB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
