"""How long a launch's first wave takes against a later one, measured and simulated, on the M sweeps of a scorecard
group (session 26's evidence for the next model change; NOTES.md).

Per config and layer: t(end of wave 1) / (t(end of wave 3) - t(end of wave 2)), each end being the last swept M with
that many waves (the simulator's count), measured as the geometric mean of the group's passes. On the six sweeps timed
with a clean L2 eviction the hardware's first wave of 64x128x64 at 3 CTAs/SM takes 0.69-0.93 of a later wave with
GROUP_M 4-16 and 0.88-1.0 with GROUP_M 1, where the simulator, which prices every full wave alike, gives 0.95-1.13;
tiles at 1-2 CTAs/SM agree to a few percent. A lockstep first wave reads the tiles its co-running CTAs share at the same
time; later waves are out of step.

With --traces, the same per CTA from per-CTA traces (`wavetune trace`): the median CTA time of each SM's first
generation of CTAs (its first `slots` CTAs) over that of its later ones (the last, partial one left out). On the
grouping traces of 7168^2 (session 14) 64x128x64's first-generation CTAs take 0.65-0.74 of a later one with GROUP_M
4 / 8 / 16 (66-67 against 92-105 us) and 0.93 with GROUP_M 1 (98 against 104-108): the grouped order's gain is a
first-wave one.

With --traces --gpc, why (session 27): the H200 deals a wave's first round of CTAs GPC by GPC (consecutive pids to
the SMs of one GPC, validation/data/h200/gpc_layout.json), and the CTAs of one GPC that read the same tile at about
the same K step are served as one. Per SM-local generation it gives the median CTA time, the share of the
generation's tile bytes that are distinct within each GPC, and the time-resolved share (a CTA's K-step loads count
once per GPC among the CTAs reading the same tile within COALESCE_STEPS of the same K step, progress taken as linear
over each CTA's life). On the 7168^2 grouping traces, 64x128x64's grouped first waves run at a time-resolved share of
0.26-0.30 (65-68 us), their later generations at 0.60-0.72 (87-105 us), and GROUP_M 1 at 0.70-0.79 in every
generation (98-108 us): the L2-bound generations take about 143 us x the share. (The share is counted over a GPC; the
L2 probe's block study, validation/l2_probe.py, finds the coalescing among about four neighbouring programs.)

    python3 -m validation.first_wave [--gpu h200] [--group six_clean] [--calibration auto|FILE]
    python3 -m validation.first_wave --traces validation/data/h200/traces/trace_grouping_7168x7168.npz [--gpc [--only S]]
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

import numpy as np

from wavesim.kernels.gpc_share import grouped_tiles

WAVES = (1, 2, 3)   # the ends compared: wave 1 against the step from wave 2 to wave 3
COALESCE_STEPS = 1.0   # --gpc: CTAs of one GPC reading a tile within this many K steps of each other count once
TIME_SAMPLES = 400     # --gpc: instants at which the running CTAs are compared


def wave_ratio(waves: list[int], times: np.ndarray) -> float | None:
    """t(end of wave 1) / (t(end of wave 3) - t(end of wave 2)); None when the sweep lacks a wave count."""
    w = np.asarray(waves)
    if not all((w == k).any() for k in WAVES):
        return None
    end = {k: int(np.nonzero(w == k)[0].max()) for k in WAVES}
    later = times[end[3]] - times[end[2]]
    return float(times[end[1]] / later) if later > 0 else None


def first_wave_ratios(gpu: str = "h200", group: str = "six_clean", calibration: str | None = "auto") -> list[dict]:
    """One row per config and layer of the group's studies: measured and simulated first-wave ratios."""
    import hwspecs
    from validation.scorecard import _load_pass, load_description
    from validation.staircase import staircase_analysis
    from wavesim.calibration import load_calibration

    doc = load_description(gpu)
    if group not in doc["sweep_groups"]:
        raise ValueError(f"unknown group {group!r}; described: {sorted(doc['sweep_groups'])}")
    spec = hwspecs.load_gpu(gpu)
    params = load_calibration(calibration, spec.id)
    rows: list[dict[str, Any]] = []
    for study in doc["sweep_groups"][group]:
        passes = [_load_pass(spec.id, files) for files in study["passes"]]
        nk = study.get("nk")
        if nk is None:
            continue
        st = staircase_analysis(spec, passes[0], *nk, params, repeat=passes[1], more_passes=passes[2:])
        for c in (c for c in st["configs"] if "repeat" in c):
            curves = [c["measured_ms"], c["repeat"]["measured_ms"], *c["repeat"].get("more_passes_ms", [])]
            meas = np.exp(np.mean(np.log(np.array(curves, dtype=np.float64)), axis=0))
            waves = c["calibrated"]["waves"]
            measured = wave_ratio(waves, meas)
            simulated = wave_ratio(waves, np.array(c["calibrated"]["sim_ms"]))
            if measured is not None and simulated is not None:
                rows.append({"N": nk[0], "K": nk[1], "config": c["config"], "ctas_per_sm": c["ctas_per_sm"],
                             "measured": measured, "simulated": simulated})
    return rows


def trace_generation_ratios(path: str, gpu: str = "h200") -> list[dict]:
    """Per traced launch with 3+ SM-local generations: median CTA time of generation 0 over that of generations 1 to
    the last but one (the last is partial), with the config's CTAs/SM from the model's occupancy."""
    import hwspecs
    from validation.trace import generations, load_traces
    from wavesim.kernels.gemm import config_occupancy
    from wavetune.config import LaunchConfig

    spec = hwspecs.load_gpu(gpu)
    arrays, meta = load_traces(path)
    rows = []
    for key, a in sorted(arrays.items()):
        cfg_key, launch = key.split("/", 1)
        cfg = LaunchConfig.from_key(cfg_key)
        slots = config_occupancy(spec, cfg, "bf16", meta["N"], meta["K"])[0].ctas_per_sm
        sm, start, end = a[:, 0].astype(np.int64), a[:, 1], a[:, 2]
        gen = generations(sm, start, slots)
        if gen.max() < 3:
            continue
        later = (gen >= 1) & (gen < gen.max())
        first, rest = float(np.median((end - start)[gen == 0])), float(np.median((end - start)[later]))
        rows.append({"config": cfg_key, "launch": launch, "ctas_per_sm": slots, "first_us": first / 1e3,
                     "later_us": rest / 1e3, "ratio": first / rest})
    return rows


def gpc_of_sm(gpu: str) -> np.ndarray:
    """Each SM's GPC index from the GPU's measured layout (validation/data/<gpu>/gpc_layout.json); -1 for SMs it lacks."""
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parent / "data" / gpu / "gpc_layout.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: --gpc needs the GPU's measured GPC layout (python3 -m validation.probe --gpcs)")
    doc = json.loads(path.read_text())
    gpcs = doc["gpcs"] if isinstance(doc["gpcs"], list) else json.loads(doc["gpcs"])
    out = np.full(max(max(g) for g in gpcs) + 1, -1, dtype=np.int64)
    for i, sms in enumerate(gpcs):
        out[sms] = i
    return out


def _coalesced_new(gpc, tile, k) -> np.ndarray:
    """Per running CTA: 1 where its read of `tile` at step k is not served with an earlier one of its GPC (the same
    tile within COALESCE_STEPS steps), else 0."""
    order = np.lexsort((k, tile, gpc))
    g, t, kk = gpc[order], tile[order], k[order]
    new = np.ones(len(order), dtype=bool)
    # walk runs of equal (gpc, tile): a read is new when it is COALESCE_STEPS past the last new one of its run
    last_k = -np.inf
    for i in range(len(order)):
        if i and g[i] == g[i - 1] and t[i] == t[i - 1] and kk[i] - last_k < COALESCE_STEPS:
            new[i] = False
        else:
            last_k = kk[i]
    out = np.empty(len(order), dtype=bool)
    out[order] = new
    return out


def trace_gpc_coalescing(path: str, gpu: str = "h200", only: str | None = None) -> list[dict]:
    """Per traced launch (those whose key matches the regular expression `only`, if given) and SM-local generation: CTAs, median CTA time
    (us), the per-GPC distinct share of the generation's tile bytes, and the time-resolved coalesced share (module
    docstring)."""
    import hwspecs
    from validation.trace import generations, load_traces
    from wavesim.kernels.gemm import config_occupancy
    from wavetune.config import LaunchConfig

    spec = hwspecs.load_gpu(gpu)
    gpc_of = gpc_of_sm(spec.id)
    arrays, meta = load_traces(path)
    N, K = meta["N"], meta["K"]
    rows = []
    for key, a in sorted(arrays.items()):
        if only is not None and not re.search(only, key):
            continue
        cfg_key, launch = key.split("/", 1)
        cfg = LaunchConfig.from_key(cfg_key)
        M = int(launch.split("/")[0].lstrip("M"))
        L = -(-K // cfg.BLOCK_K)
        slots = config_occupancy(spec, cfg, "bf16", N, K)[0].ctas_per_sm
        sm, start, end = a[:, 0].astype(np.int64), a[:, 1].astype(np.float64), a[:, 2].astype(np.float64)
        gen = generations(sm, start, slots)
        pm, pn = grouped_tiles(np.arange(len(a)), -(-M // cfg.BLOCK_M), -(-N // cfg.BLOCK_N), cfg.GROUP_M)
        gpc = gpc_of[sm]
        new_bytes = np.zeros(gen.max() + 1)
        all_bytes = np.zeros(gen.max() + 1)
        for t in np.linspace(start.min(), end.max(), TIME_SAMPLES, endpoint=False):
            run = np.flatnonzero((start <= t) & (end > t))
            k = (t - start[run]) / (end[run] - start[run]) * L
            for tile, size in ((pm, cfg.BLOCK_M), (pn, cfg.BLOCK_N)):
                new = _coalesced_new(gpc[run], tile[run], k)
                np.add.at(new_bytes, gen[run], size * new)
                np.add.at(all_bytes, gen[run], size)
        for g in range(gen.max() + 1):
            m = gen == g
            distinct = raw = 0
            for G in np.unique(gpc[m]):
                mg = m & (gpc == G)
                distinct += len(np.unique(pm[mg])) * cfg.BLOCK_M + len(np.unique(pn[mg])) * cfg.BLOCK_N
                raw += mg.sum() * (cfg.BLOCK_M + cfg.BLOCK_N)
            rows.append({"config": cfg_key, "launch": launch, "generation": g, "ctas": int(m.sum()),
                         "cta_us": float(np.median(end[m] - start[m])) / 1e3, "gpc_distinct_share": distinct / raw,
                         "coalesced_share": float(new_bytes[g] / all_bytes[g]) if all_bytes[g] else float("nan")})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m validation.first_wave", description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--group", default="six_clean", help="an M-sweep group of validation/data/<gpu>/scorecard.json")
    ap.add_argument("--calibration", default="auto", help="calibration JSON (default: the shipped one), or none")
    ap.add_argument("--traces", help="a per-CTA trace .npz: first-generation CTAs against later ones instead")
    ap.add_argument("--gpc", action="store_true", help="with --traces: per generation, the tile reads its GPCs share")
    ap.add_argument("--only", help="with --gpc: only the launches whose key (config/M.../r...) matches this regex")
    a = ap.parse_args(argv)
    if a.gpc and not a.traces:
        ap.error("--gpc reads per-CTA traces: give --traces FILE")
    try:
        if a.gpc:
            _print_gpc(trace_gpc_coalescing(a.traces, a.gpu, a.only))
        elif a.traces:
            _print_generations(trace_generation_ratios(a.traces, a.gpu))
        else:
            _print_sweeps(first_wave_ratios(a.gpu, a.group, a.calibration))
    except (ValueError, FileNotFoundError) as e:
        print(f"validation.first_wave: {e}", file=sys.stderr)
        return 2
    return 0


def _print_gpc(rows: list[dict]) -> None:
    for r in rows:
        print(f"{r['config']:26s} {r['launch']:10s} generation {r['generation']}: {r['ctas']:5d} CTAs, "
              f"{r['cta_us']:6.1f} us, distinct per GPC {r['gpc_distinct_share']:.2f}, "
              f"coalesced {r['coalesced_share']:.2f}")


def _print_generations(rows: list[dict]) -> None:
    by: dict[str, list[float]] = {}
    for r in rows:
        print(f"{r['config']:26s} {r['ctas_per_sm']}/SM {r['launch']:10s} first-generation CTA {r['first_us']:6.1f} us, "
              f"later {r['later_us']:6.1f} us: {r['ratio']:.2f}")
        by.setdefault(r["config"], []).append(r["ratio"])
    for cfg, v in by.items():
        print(f"{cfg:26s} median {np.median(v):.2f} over {len(v)} launches")


def _print_sweeps(rows: list[dict]) -> None:
    for r in sorted(rows, key=lambda r: (r["config"], r["measured"])):
        print(f"{r['config']:26s} {r['ctas_per_sm']}/SM {r['N']}x{r['K']}: first wave / later wave measured "
              f"{r['measured']:.2f}, simulated {r['simulated']:.2f}")
    ratio = np.array([r["measured"] / r["simulated"] for r in rows])
    print(f"{len(rows)} sweeps; measured over simulated: median {np.median(ratio):.2f}, p10 {np.percentile(ratio, 10):.2f}")

if __name__ == "__main__":
    sys.exit(main())
