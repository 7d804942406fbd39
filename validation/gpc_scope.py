"""Is the grouped launch order's first-wave gain a GPC's, or the whole chip's? A decisive probe (session 27).

Per-CTA traces (validation/first_wave.py --gpc) show the H200 dealing a wave's first round GPC by GPC and the
grouped order's first wave running a third faster than GROUP_M 1 while both have the same tiles in flight. If the
gain comes from CTAs of one GPC reading the same lines at the same time (served once), scattering the program order
(validation/kernels/gemm_permuted.py: program i takes tile (i x stride) mod G) must take it away even in a launch of
one wave, whose set of tiles in flight does not change; if it came from the chip-wide set of tiles, the order would
not matter there. (It does: 1.25-1.6x. The L2 probe's block study, validation/l2_probe.py, then put the scope at about
four neighbouring programs, two TPCs, rather than a whole GPC.)

Collect (GPU): `python3 -m validation.gpc_scope collect --out FILE` times every case of CASES in each order after a
clean L2 eviction (`validation.profiler`'s read flush): the canonical kernel, and the permuted one at stride 1, at the
stride nearest SCATTER x G and at the stride whose first wave shares the fewest tile reads within a GPC
(least_shared_stride); median of REPS launches, interleaved so that drift hits every order alike; one JSON line per
(case, order), written as it goes. Report (CPU): `python3 -m validation.gpc_scope report FILE` puts each order's time
beside its lockstep per-GPC share (the distinct tile bytes of the first wave's CTAs within each GPC over their raw
bytes: GPC-major dispatch of GPC_SMS SMs, rounds of sm_count programs).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from wavetune.config import LaunchConfig

# (N, K, M, config key): single-wave launches (every tile in flight at once) of tiles the L2 limits, one launch of
# several waves, and a 2-CTA/SM tile that the traces show indifferent to the order (a control).
CASES = (
    (7168, 7168, 448, "64x128x64_g8_w4_s3"), (7168, 7168, 448, "64x128x64_g1_w4_s3"),
    (7168, 7168, 2048, "64x128x64_g8_w4_s3"),
    (5120, 5120, 256, "64x64x64_g8_w4_s4"), (5120, 5120, 256, "64x64x64_g1_w4_s4"),
    (4096, 4096, 1024, "128x128x64_g8_w4_s3"),
)
REPS = 30
GPC_SMS = 16         # SMs per GPC on the H200 (validation/data/h200/gpc_layout.json: 7 of 16-18, one of 8 + 4 pairs)
SCATTER = 0.382      # the scattering stride is the integer coprime to G nearest this share of G (consecutive
                     # programs land far apart in the grouped order, with no short period)


def scatter_stride(G: int) -> int:
    """The integer coprime to G nearest SCATTER x G (at least 2)."""
    base = max(2, round(SCATTER * G))
    for d in range(G):
        for s in (base - d, base + d):
            if 2 <= s < G and math.gcd(s, G) == 1:
                return s
    raise ValueError(f"no scattering stride for a grid of {G} programs")


def least_shared_stride(M: int, N: int, cfg: LaunchConfig, sm_count: int, slots: int) -> int:
    """The stride coprime to G whose first wave shares the fewest tile reads within a GPC (largest lockstep share)."""
    G = -(-M // cfg.BLOCK_M) * -(-N // cfg.BLOCK_N)
    shares = [(lockstep_gpc_share(M, N, cfg, s, sm_count, slots), -s) for s in range(2, G) if math.gcd(s, G) == 1]
    if not shares:
        raise ValueError(f"no stride coprime to a grid of {G} programs")
    return -max(shares)[1]


def lockstep_gpc_share(M: int, N: int, cfg: LaunchConfig, stride: int, sm_count: int, slots: int,
                       programs: int | None = None, block: int = 1, scope: int = GPC_SMS) -> float:
    """Distinct tile bytes over raw tile bytes of the first wave's CTAs within each GPC, dispatched GPC-major (rounds
    of sm_count programs, GPC_SMS consecutive programs per GPC per round), programs i -> tile (i x stride) mod G (the
    G tiles of C; `programs`, default G, may differ: validation/l2_probe.py runs more programs than tiles; with `block`
    b, blocks of b consecutive programs keep their tiles and the blocks are permuted by the stride; `scope`: how many
    consecutive programs of a round share, a GPC's SMs by default, about 4 by the L2 probe's block study)."""
    from wavesim.kernels.gpc_share import grouped_tiles

    npm, npn = -(-M // cfg.BLOCK_M), -(-N // cfg.BLOCK_N)
    G = npm * npn
    W = min(programs or G, sm_count * slots)
    distinct = raw = 0
    for first in range(0, sm_count, scope):
        n = min(scope, sm_count - first)
        prog = (np.arange(slots)[:, None] * sm_count + first + np.arange(n)[None, :]).ravel()
        prog = prog[prog < W]
        if prog.size == 0:
            continue
        pm, pn = grouped_tiles((prog // block) * stride % (G // block) * block + prog % block, npm, npn, cfg.GROUP_M)
        distinct += len(np.unique(pm)) * cfg.BLOCK_M + len(np.unique(pn)) * cfg.BLOCK_N
        raw += prog.size * (cfg.BLOCK_M + cfg.BLOCK_N)
    return distinct / raw


# ============================================================================ collection (GPU)
def collect(out: Path, reps: int = REPS, log=print) -> None:
    import torch

    from validation.kernels.gemm import gemm, grid_size
    from validation.kernels.gemm_permuted import gemm_permuted
    from validation.kernels.gemm_trace import case_operands, local_gpu_spec
    from validation.profiler import _Bench
    from wavesim.kernels.gemm import config_occupancy

    spec = local_gpu_spec()
    bench = _Bench("cuda", "read")
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as f:
        for N, K, M, key, cfg, (a, b, c) in case_operands(CASES):
            G = grid_size(M, N, cfg)
            orders = {"canonical": lambda: gemm(a, b, cfg, c)}
            slots = config_occupancy(spec, cfg, "bf16", N, K)[0].ctas_per_sm
            for s in dict.fromkeys((1, scatter_stride(G), least_shared_stride(M, N, cfg, spec.sm_count, slots))):
                orders[f"stride{s}"] = (lambda s=s: gemm_permuted(a, b, cfg, s, c))
            ref = (a.float() @ b.float())
            for name, fn in orders.items():   # compile, and check every order computes the whole product
                c.zero_()
                fn()
                err = float((c.float() - ref).abs().max() / ref.abs().max())
                if err > 2e-2:
                    raise RuntimeError(f"{key} M={M} {name}: wrong result (max rel error {err:.3g})")
            times: dict[str, list[float]] = {name: [] for name in orders}
            for _ in range(reps):     # interleaved: clock and thermal drift hit every order alike
                for name, fn in orders.items():
                    times[name] += bench.times_ms(fn, 1)
            for name, ts in times.items():
                stride = 1 if name == "canonical" else int(name[len("stride"):])
                rec = {"N": N, "K": K, "M": M, "config": key, "order": name, "stride": stride, "grid": G,
                       "ms": float(np.median(ts)), "ms_all": ts, "l2_flush": "read",
                       "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "triton": __import__("triton").__version__,
                       "time": time.strftime("%Y-%m-%dT%H:%M:%S")}
                f.write(json.dumps(rec) + "\n")
                f.flush()
            log(f"{key} M={M} N={N} K={K}: " + ", ".join(f"{n} {np.median(t) * 1e3:.1f} us" for n, t in times.items()))


# ============================================================================ report (CPU)
def load_records(path: str | Path) -> list[dict]:
    from wavetune.records import read_probe_records

    return read_probe_records(path, ("N", "K", "M", "config", "order", "stride", "ms"), "python3 -m validation.gpc_scope collect --out FILE")


def report_rows(path: str | Path, gpu: str = "h200") -> list[dict]:
    """Per record: its lockstep per-GPC share and its time over the canonical order's of the same case."""
    import hwspecs
    from wavesim.kernels.gemm import config_occupancy

    spec = hwspecs.load_gpu(gpu)
    recs = load_records(path)
    canon = {(r["N"], r["K"], r["M"], r["config"]): r["ms"] for r in recs if r["order"] == "canonical"}
    rows = []
    for r in recs:
        cfg = LaunchConfig.from_key(r["config"])
        slots = config_occupancy(spec, cfg, "bf16", r["N"], r["K"])[0].ctas_per_sm
        case = (r["N"], r["K"], r["M"], r["config"])
        rows.append({**r, "ctas_per_sm": slots,
                     "waves": math.ceil(-(-r["M"] // cfg.BLOCK_M) * -(-r["N"] // cfg.BLOCK_N) / (slots * spec.sm_count)),
                     "gpc_share": lockstep_gpc_share(r["M"], r["N"], cfg, r["stride"], spec.sm_count, slots),
                     "vs_canonical": r["ms"] / canon[case] if case in canon else float("nan")})
    return rows


def main(argv: list[str] | None = None) -> int:
    from validation.probe_cli import collect_or_explain

    ap = argparse.ArgumentParser(prog="python3 -m validation.gpc_scope", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="time the cases in each order (needs an NVIDIA GPU)")
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--reps", type=int, default=REPS)
    r = sub.add_parser("report", help="each order's time beside its lockstep per-GPC share")
    r.add_argument("file")
    r.add_argument("--gpu", default="h200")
    a = ap.parse_args(argv)
    if a.cmd == "collect":
        return collect_or_explain("validation.gpc_scope", lambda: collect(a.out, a.reps))
    try:
        rows = report_rows(a.file, a.gpu)
    except (ValueError, FileNotFoundError) as e:
        print(f"validation.gpc_scope: {e}", file=sys.stderr)
        return 2
    for x in rows:
        print(f"{x['N']}x{x['K']} M={x['M']:5d} {x['config']:22s} {x['ctas_per_sm']}/SM {x['waves']} wave(s) "
              f"{x['order']:10s} {x['ms'] * 1e3:7.1f} us  x{x['vs_canonical']:.2f} of canonical  "
              f"lockstep per-GPC share {x['gpc_share']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
