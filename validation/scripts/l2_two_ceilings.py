"""One-wave launches against a zero-fit reading of the L2 (CPU; session 27, a lead for the next model change).

    python3 validation/scripts/l2_two_ceilings.py [SCOPE ...]

For every one-wave launch of the L2 probe (validation/data/h200/l2_probe/) and the GPC-scope probe
(validation/data/h200/gpc_scope/) the time is predicted as the largest of three limits, none fitted to these launches:
  requests  the launch's raw L2 requests (row segments of up to a line) at R_CEILING per us (the ceiling 128x64x32
            and the grouped first waves reach: 117-131 k/us);
  bytes     its bytes that blocks of SCOPE consecutive first-round programs do not share, at B_CEILING (the rate the
            sweeps' L2-bound later waves and the probe's scattered launches reach);
  SM side   its tile's K step at its CTAs per SM from the same-tile probe (validation/data/h200/sm_side/) x the K steps.
It prints each launch and the median and p90 |log error| per scope (default 4 and 16: two TPCs, a GPC). On the
committed data: scope 4 median 0.108, p90 0.269; scope 16 0.119, 0.463 (58 launches).
"""
from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

R_CEILING = 125e3   # L2 requests per us (validation/data/h200/l2_probe/: 117-131 k/us where the SM side is not the limit)
B_CEILING = 7.5e6   # unshared bytes per us (7.5 TB/s: NOTES session 27, the traces' later waves and the probe)
DATA = Path(__file__).resolve().parents[2] / "validation" / "data" / "h200"


def sm_step_ns() -> dict:
    """(BM, BN, BK, warps, stages) -> {CTAs per SM: ns per K step} from the same-tile probe."""
    from wavetune.config import LaunchConfig

    out: dict = defaultdict(dict)
    for name in ("sm_side.jsonl", "sm_side_broad.jsonl"):
        for line in (DATA / "sm_side" / name).read_text().splitlines():
            r = json.loads(line)
            c = LaunchConfig.from_key(r["config"])
            out[(c.BLOCK_M, c.BLOCK_N, c.BLOCK_K, c.num_warps, c.num_stages)][r["ctas_per_sm"]] = r["cta_ns"] / (
                r["K"] // c.BLOCK_K)
    return out


def predict(spec, cfg, M, N, K, programs, ctas_per_sm, stride, block, scope, sm) -> tuple[float, float, float]:
    """(requests, bytes, SM side) limits in us of a one-wave launch on `spec`."""
    from validation.gpc_scope import lockstep_gpc_share
    from wavesim.kernels.gemm import l2_requests_per_k_step

    L = K // cfg.BLOCK_K
    requests = programs * L * l2_requests_per_k_step(cfg.BLOCK_M, cfg.BLOCK_N, cfg.BLOCK_K, 2,
                                                     spec.arch.cache_line_bytes)
    raw = programs * L * (cfg.BLOCK_M + cfg.BLOCK_N) * cfg.BLOCK_K * 2
    share = lockstep_gpc_share(M, N, cfg, stride, spec.sm_count, ctas_per_sm, programs, block, scope)
    key = (cfg.BLOCK_M, cfg.BLOCK_N, cfg.BLOCK_K, cfg.num_warps, cfg.num_stages)
    return requests / R_CEILING, raw * share / B_CEILING, sm.get(key, {}).get(ctas_per_sm, np.nan) * L / 1e3


def main(scopes: list[int]) -> None:
    import hwspecs
    from validation.gpc_scope import report_rows as gpc_rows
    from validation.l2_probe import report_rows as l2_rows
    from wavetune.config import LaunchConfig

    spec = hwspecs.load_gpu("h200")
    sm = sm_step_ns()
    launches = []
    for name in ("l2_probe.jsonl", "l2_blocks.jsonl"):
        for r in l2_rows(DATA / "l2_probe" / name):
            launches.append((r["config"], r["M"], r["N"], r["K"], r["programs"], r["ctas_per_sm"], r["stride"],
                             r["tile_block"], r["span_ns"] / 1e3, f"L2 probe stride {r['stride']} blocks {r['tile_block']}"))
    for r in gpc_rows(DATA / "gpc_scope" / "gpc_scope.jsonl"):
        if r["waves"] == 1:
            cfg = LaunchConfig.from_key(r["config"])
            tiles = -(-r["M"] // cfg.BLOCK_M) * -(-r["N"] // cfg.BLOCK_N)
            launches.append((r["config"], r["M"], r["N"], r["K"], tiles, r["ctas_per_sm"], r["stride"], 1,
                             r["ms"] * 1e3, f"GPC-scope probe M = {r['M']} {r['order']}"))
    for scope in scopes:
        errs = []
        for key, M, N, K, programs, k, stride, block, measured, what in launches:
            t = predict(spec, LaunchConfig.from_key(key), M, N, K, programs, k, stride, block, scope, sm)
            pred = float(np.nanmax(t))
            errs.append(abs(np.log(pred / measured)))
            print(f"scope {scope:2d} {key:22s} {k}/SM {what:38s}: requests {t[0]:6.1f}, bytes {t[1]:6.1f}, "
                  f"SM {t[2]:6.1f} -> {pred:6.1f} us, measured {measured:6.1f}")
        print(f"scope {scope}: {len(errs)} launches, median |log error| {np.median(errs):.3f}, "
              f"p90 {np.percentile(errs, 90):.3f}")


if __name__ == "__main__":
    main([int(x) for x in sys.argv[1:]] or [4, 16])
