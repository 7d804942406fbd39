"""The L2 request coalescer against the launch order, from Nsight Compute counters (no GPU needed).

    python3 -m validation.coalescing validation/data/h200/counters/counters_*.jsonl

The H200's block dispatch fills one GPC with consecutive CTAs of the launch order (per-CTA traces: CTAs 8-23 of a
launch ran on one GPC's 16 SMs, validation/data/h200/traces/trace_coresidence_8192x2048.npz against
validation/data/h200/gpc_layout.json), and the coalescer merges reads of one sector by SMs of one GPC (the probe:
validation/data/h200/counters/lrc_probe.jsonl). So the share of a K step's loaded bytes that another CTA of its
GPC window loads as well is

    c = 1 - (rows x BM + cols x BN) / (G x (BM + BN))

for G consecutive CTAs (G: the layout's most common GPC size) covering `rows` tiles of A and `cols` tiles of B in the
grouped launch order (GROUP_M rows at a time, then the next column; GROUP_M = 1 walks a row of B tiles, so only A is
shared). The counters give the share the coalescer merged (validation.counters.merged_share); least squares of
merged = e x c, per regime (launches of one wave; launches with later waves, which the dispatch scrambles), says
what share of those sectors it merges. On the H200's counter files (session 22): e = 0.60 in one wave, 0.49 with
later waves (130 launches); the wide tiles merge more at large GROUP_M, the tall ones at GROUP_M 1, as c says. The
simulator does not model the coalescer yet (NOTES.md, session 22: what a model with it did).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from validation.counters import load_counters, merged_share

GPC_LAYOUT = Path(__file__).resolve().parent / "data" / "h200" / "gpc_layout.json"
LRC_COUNTER = "lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum"


def gpc_window_share(M, N, bm, bn, group_m, window) -> np.ndarray:
    """c above: the share of the loaded A and B bytes of `window` consecutive CTAs (grouped launch order) that
    another of them loads too. Arrays broadcast."""
    M, N, bm, bn, group_m, window = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64)
                                                          for x in (M, N, bm, bn, group_m, window)))
    from wavesim.kernels.gemm import grouped_footprint

    npm, npn = np.ceil(M / bm), np.ceil(N / bn)
    G = np.minimum(window, npm * npn)
    rows, cols = grouped_footprint(npm, npn, group_m, G)
    return 1.0 - (rows * bm + cols * bn) / (G * (bm + bn))


def gpc_size(layout_path: str | Path = GPC_LAYOUT) -> int:
    """The most common GPC size (SMs) of a measured layout (`wavetune` cluster probe: validation/data/*/gpc_layout.json)."""
    sizes = json.loads(Path(layout_path).read_text()).get("gpc_sizes")
    if not sizes:
        raise ValueError(f"{layout_path}: no gpc_sizes (the cluster probe writes them)")
    return Counter(sizes).most_common(1)[0][0]


def coalescer_efficiency(paths: list[str | Path], gpu: str = "h200", layout_path: str | Path = GPC_LAYOUT) -> dict:
    """e per regime (one wave / later waves), with the correlation of merged against c and one row per launch."""
    from hwspecs import load_gpu
    from wavesim.kernels.gemm import config_occupancy
    from wavetune.config import LaunchConfig

    spec = load_gpu(gpu)
    G = gpc_size(layout_path)
    rows = []
    for r in load_counters(paths):
        if LRC_COUNTER not in r["counters"]:
            continue
        cfg = LaunchConfig.from_dict(r["config"])
        slots = spec.sm_count * config_occupancy(spec, cfg, r.get("dtype", "bf16"))[0].ctas_per_sm
        rows.append({"config": cfg.key, "M": r["M"], "N": r["N"], "K": r["K"], "waves": r["grid"] / slots,
                     "c": float(gpc_window_share(r["M"], r["N"], cfg.BLOCK_M, cfg.BLOCK_N, cfg.GROUP_M, G)),
                     "merged": merged_share(r)})
    if not rows:
        raise ValueError(f"no GEMM counter records with the coalescer's counters ({LRC_COUNTER}) in "
                         f"{[str(p) for p in paths]}: collect them with validation/scripts/collect_h200_counters_lrc.sh")
    out = {"gpc_size": G, "launches": len(rows), "rows": rows}
    for name, sel in (("one_wave", lambda x: x["waves"] <= 1), ("later_waves", lambda x: x["waves"] > 1)):
        part = [x for x in rows if sel(x)]
        if len(part) < 2:
            continue
        c, m = np.array([x["c"] for x in part]), np.array([x["merged"] for x in part])
        e = float(np.sum(m * c) / np.sum(c * c))
        out[name] = {"launches": len(part), "efficiency": e, "corr": float(np.corrcoef(c, m)[0, 1]),
                     "rms": float(np.sqrt(np.mean((m - e * c) ** 2)))}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m validation.coalescing", description=__doc__.split("\n\n")[0])
    ap.add_argument("counters", nargs="+", help="counter JSONL files (validation.counters collect)")
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--gpc-layout", default=str(GPC_LAYOUT))
    ap.add_argument("--rows", action="store_true", help="print every launch")
    a = ap.parse_args(argv)
    try:
        r = coalescer_efficiency(a.counters, a.gpu, a.gpc_layout)
    except (ValueError, OSError) as e:
        print(f"validation.coalescing: {e}", file=sys.stderr)
        return 2
    if a.rows:
        for x in sorted(r["rows"], key=lambda x: (x["config"], x["M"], x["N"])):
            print(f"{x['config']:24s} M {x['M']:5d} {x['N']}x{x['K']} waves {x['waves']:5.1f} c {x['c']:.3f} "
                  f"merged {x['merged']:.3f}")
    for name in ("one_wave", "later_waves"):
        if name in r:
            f = r[name]
            print(f"{name.replace('_', ' ')}: {f['launches']} launches, merged = {f['efficiency']:.2f} x c "
                  f"(corr {f['corr']:.2f}, rms {f['rms']:.3f})")
    print(f"GPC window: {r['gpc_size']} consecutive CTAs; {r['launches']} launches")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
