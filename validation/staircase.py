"""Staircase agreement: measured latency vs M against the simulator's, per config (issue 3's must-show).

On an M sweep (one (N, K), several configs, M on a regular grid; validation/data/h200/gemm/m_sweep.jsonl):
  * a step is a jump of more than 15% between consecutive M of the grid (measured, and simulated with
    the same threshold at the same M);
  * per config: CTAs/SM (wavesim's occupancy), measured steps, predicted steps, missed steps (measured,
    not predicted at the same M), spurious ones (predicted, not measured), the simulated jump at each
    measured step, and the median |s * sim / meas - 1| after ONE scale factor s per config (the geomean
    of meas / sim: what remains is the shape of the curve, not its level);
  * for the simulator with specs alone and with a calibration (which one is named in the output).

Timing noise (clocks under the power limit at large M, run-to-run jitter) moves jumps that sit near the
threshold across it, so one pass of measurements disagrees with a second pass of the same configs on some
steps. Given a second pass (`repeat`), the analysis also reports the hardware's own disagreements (steps
only one pass shows), the *reproducible* steps (>15% in both passes) and scores the simulator against
them: a reproducible step it misses, and a predicted jump that neither pass shows.

    wavetune staircase --gpu h200 --measurements validation/data/h200/gemm/m_sweep.jsonl \
        [--repeat validation/data/h200/holdout/m_sweep_repeat.jsonl] --out DIR
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from wavesim.calibration import MIN_SWEEP_POINTS

STEP_THRESHOLD = 0.15     # a jump of more than 15% between consecutive M is a step
# clear_agreement's margin around the threshold: about the p90 of the difference between two clean-flush passes'
# jumps at the same M (0.026 over the six sweeps' 12,954 jumps, validation/data/h200/cleanflush/, session 26)
CLEAR_MARGIN = 0.03
MAX_ERR = 0.08            # must-show: median error after one scale per config
BIAS_FLOOR = 0.08         # jump_bias counts the grid points where a pass mean or the simulator jumps more than this
# group_m_ordering: GROUP_M siblings at one M count when every pass puts the same one ahead by more than GROUP_M_GAP
# (beyond CLEAR_MARGIN, the p90 of two clean passes' difference); the simulator calls them even within GROUP_M_TIE
GROUP_M_GAP = 0.05
GROUP_M_TIE = 0.01


# ============================================================================ pure functions
def jump_sizes(ys: Sequence[float]) -> np.ndarray:
    """ys[i] / ys[i-1] - 1 at every grid point i (0 at i = 0)."""
    y = np.asarray(ys, dtype=np.float64)
    return np.r_[0.0, y[1:] / y[:-1] - 1] if y.size else y


def detect_steps(ys: Sequence[float], threshold: float = STEP_THRESHOLD) -> list[int]:
    """Indices i (>= 1) where ys[i] / ys[i-1] - 1 > threshold."""
    return [int(i) for i in np.nonzero(jump_sizes(ys) > threshold)[0]]


def match_steps(measured: Iterable[int], predicted: Iterable[int]) -> tuple[list[int], list[int], list[int]]:
    """(hit, missed, spurious) indices: exact same grid point."""
    m, p = set(measured), set(predicted)
    return sorted(m & p), sorted(m - p), sorted(p - m)


def loose_match(meas: Sequence[float], sim: Sequence[float], measured: Iterable[int], predicted: Iterable[int],
                threshold: float = STEP_THRESHOLD) -> tuple[list[int], list[int]]:
    """A tolerant reading of the strict match, to tell near-threshold disagreements from real ones:
    (missed, spurious) where a measured step counts as predicted if the simulated jump within +-1 grid
    point exceeds threshold / 2, and a predicted step is spurious only if no measured jump within +-1
    grid point exceeds threshold / 2."""
    jm, js = jump_sizes(meas), jump_sizes(sim)
    half = threshold / 2
    near = lambda j, i: float(np.max(j[max(i - 1, 1):i + 2])) > half  # noqa: E731
    return [i for i in measured if not near(js, i)], [i for i in predicted if not near(jm, i)]


def spurious_kind(i: int, sim, passes, waves, ctas_per_sm: int, M: int, threshold: float = STEP_THRESHOLD) -> dict:
    """What a predicted jump at grid point i (>= 1) that no measured pass shows is: inside the first wave (a
    partial first wave gaining CTAs per SM) or from the first wave boundary on, at 1-2 or more CTAs/SM, and
    the hardware's largest jump at grid points i-1..i+1 in any pass ("near threshold" when it exceeds half
    the threshold: a step the hardware has, only smaller)."""
    def near(m):
        m = np.asarray(m, dtype=np.float64)
        jumps = m[1:] / m[:-1] - 1          # jumps[k] is the jump at grid point k + 1
        return float(np.max(jumps[max(i - 2, 0):i + 1]))

    hw = max(near(m) for m in passes)
    return {"M": M, "wave": int(waves[i]), "ctas_per_sm": ctas_per_sm, "sim_jump": float(sim[i] / sim[i - 1] - 1),
            "hw_max_jump_near": hw, "near_threshold": hw > threshold / 2}


def spurious_counts(kinds: list[dict]) -> dict[str, int]:
    """Counts of spurious_kind records by (inside the first wave | from its boundary on) x (1-2 | 3+ CTAs/SM),
    and how many of them sit near the threshold."""
    out = {}
    for k in kinds:
        where = "inside the first wave" if k["wave"] <= 1 else "from the first wave boundary on"
        key = f"{where}, {'1-2' if k['ctas_per_sm'] <= 2 else '3+'} CTAs/SM"
        out[key] = out.get(key, 0) + 1
    out["near threshold (hardware jump > half the threshold)"] = sum(k["near_threshold"] for k in kinds)
    return out


def step_place(waves: Sequence[int], i: int, ctas_per_sm: int) -> str:
    """Where grid point i (>= 1) sits in the wave structure, for tallying step errors: inside the first wave,
    inside a later wave (a partial wave gaining CTAs per SM), or at the boundary into wave 2, 3, 4-5 or 6+;
    and at 1-2 or 3+ CTAs/SM."""
    w0, w1 = int(waves[i - 1]), int(waves[i])
    where = ("inside the first wave" if w1 == 1 else "inside a later wave") if w1 == w0 else \
        f"boundary into wave {w1 if w1 <= 3 else '4-5' if w1 <= 5 else '6+'}"
    return f"{where}, {'1-2' if ctas_per_sm <= 2 else '3+'} CTAs/SM"


def scaled_error(sim: Sequence[float], meas: Sequence[float]) -> tuple[float, float]:
    """(median |s*sim/meas - 1|, s) with s = geomean(meas / sim)."""
    sim = np.asarray(sim, dtype=np.float64)
    meas = np.asarray(meas, dtype=np.float64)
    s = float(np.exp(np.mean(np.log(meas / sim))))
    return float(np.median(np.abs(s * sim / meas - 1))), s


def longest_regular_run(xs: Sequence[int]) -> list[int]:
    """The longest run of sorted xs with one constant spacing (the sweep grid among stray M values)."""
    xs = sorted(set(int(x) for x in xs))
    if len(xs) < 3:
        return xs
    best = (0, 0, 1)  # start, end (inclusive), length
    start = 0
    for i in range(2, len(xs) + 1):
        if i == len(xs) or xs[i] - xs[i - 1] != xs[start + 1] - xs[start]:
            if i - start > best[2]:
                best = (start, i - 1, i - start)
            start = i - 1
    return xs[best[0]:best[1] + 1]


# ============================================================================ sweeps in measurements
def _series(measurements) -> dict[tuple[int, int], dict[Any, dict[int, float]]]:
    out: dict[tuple[int, int], dict[Any, dict[int, float]]] = {}
    for m in measurements:
        if not m.ok or m.config is None or m.backend != "triton":
            continue
        out.setdefault((m.problem.N, m.problem.K), {}).setdefault(m.config, {})[m.problem.M] = m.ms
    return out


def find_sweeps(measurements, min_points: int = MIN_SWEEP_POINTS) -> list[tuple[int, int]]:
    """(N, K) of M sweeps: some config measured at >= min_points M values; most such configs first."""
    counts = []
    for nk, by_cfg in _series(measurements).items():
        n = sum(1 for ms in by_cfg.values() if len(ms) >= min_points)
        if n:
            counts.append((-n, nk))
    return [nk for _, nk in sorted(counts)]


def staircase_analysis(spec, measurements, N: int, K: int, params=None, dtype: str = "bf16",
                       calibration_label: str = "none", threshold: float = STEP_THRESHOLD,
                       min_points: int = MIN_SWEEP_POINTS, repeat=None, more_passes=()) -> dict[str, Any]:
    """Per-config staircase figures on the sweep at (N, K); `params` is the calibrated GemmParams (None:
    only specs-only figures are given for both); `repeat`: a second pass of measurements of the sweep
    (configs measured at every grid point of the first pass get the reproducibility figures);
    `more_passes`: further passes (one list of measurements each), used by the one-pass yardstick
    (single_pass_agreement) for configs measured at every grid point in all of them."""
    from wavesim.kernels.gemm import config_occupancy, simulate_config

    by_cfg = _series(measurements).get((N, K), {})
    again = _series(repeat).get((N, K), {}) if repeat is not None else {}
    more = [_series(p).get((N, K), {}) for p in more_passes]
    configs = [c for c, ms in by_cfg.items() if len(ms) >= min_points]
    if not configs:
        raise ValueError(f"no config has an M sweep of >= {min_points} points at N={N}, K={K}")
    configs.sort(key=lambda c: (-config_occupancy(spec, c, dtype)[0].ctas_per_sm, c.key))
    out_cfgs = []
    for cfg in configs:
        grid = longest_regular_run(by_cfg[cfg])
        Ms = np.array(grid, dtype=np.float64)
        meas = np.array([by_cfg[cfg][m] for m in grid])
        occ = config_occupancy(spec, cfg, dtype)[0]
        msteps = detect_steps(meas, threshold)
        entry: dict[str, Any] = {
            "config": cfg.key, "ctas_per_sm": int(occ.ctas_per_sm), "limiter": occ.limiter,
            "M": [int(m) for m in grid], "measured_ms": meas.tolist(),
            "measured_steps_M": [int(Ms[i]) for i in msteps],
            "measured_jumps": [float(meas[i] / meas[i - 1] - 1) for i in msteps],
        }
        sims = {name: simulate_config(spec, cfg, Ms, N, K, dtype, p)[:2]
                for name, p in (("specs", None), ("calibrated", params))}
        waves = sims["calibrated"][1]  # grid points where a wave begins: the grid and occupancy alone set them
        boundaries = [i for i in range(1, len(Ms)) if waves[i] > waves[i - 1]]
        both = either = None
        if all(m in again.get(cfg, {}) for m in grid):
            meas2 = np.array([again[cfg][m] for m in grid])
            steps2 = detect_steps(meas2, threshold)
            both, either = set(msteps) & set(steps2), set(msteps) | set(steps2)
            j1, j2 = jump_sizes(meas), jump_sizes(meas2)
            entry["repeat"] = {"measured_ms": meas2.tolist(), "steps_M": [int(Ms[i]) for i in steps2],
                               "reproducible_steps_M": [int(Ms[i]) for i in sorted(both)],
                               "one_pass_only_M": [int(Ms[i]) for i in sorted(either - both)],
                               "median_abs_diff": float(np.median(np.abs(meas2 / meas - 1))),
                               "jump_diff_at_wave_boundaries": [float(abs(j1[i] - j2[i])) for i in boundaries]}
            if more and all(m in p.get(cfg, {}) for p in more for m in grid):
                curves = [np.array([p[cfg][m] for m in grid]) for p in more]
                entry["repeat"]["more_passes_ms"] = [c.tolist() for c in curves]
                entry["repeat"]["more_passes_steps_M"] = [[int(Ms[i]) for i in detect_steps(c, threshold)]
                                                          for c in curves]
        for name, (sim_s, waves) in sims.items():
            sim = sim_s * 1e3
            psteps = detect_steps(sim, threshold)
            hit, missed, spurious = match_steps(msteps, psteps)
            err, s = scaled_error(sim, meas)
            lmiss, lspur = loose_match(meas, sim, msteps, psteps, threshold)
            entry[name] = {"sim_ms": sim.tolist(), "waves": [int(w) for w in waves],
                           "wave_boundaries_M": [int(Ms[i]) for i in boundaries],
                           "predicted_steps_M": [int(Ms[i]) for i in psteps], "hit": len(hit),
                           "missed_M": [int(Ms[i]) for i in missed], "spurious_M": [int(Ms[i]) for i in spurious],
                           "loose_missed_M": [int(Ms[i]) for i in lmiss],
                           "loose_spurious_M": [int(Ms[i]) for i in lspur],
                           "sim_jump_at_measured_steps": [float(sim[i] / sim[i - 1] - 1) for i in msteps],
                           "scale": s, "median_err_scaled": err,
                           "median_err_unscaled": float(np.median(np.abs(sim / meas - 1)))}
            if both is not None:
                js = jump_sizes(sim)
                entry[name]["jump_error_at_wave_boundaries"] = [float(abs(js[i] - (j1[i] + j2[i]) / 2))
                                                                for i in boundaries]
                entry[name]["missed_reproducible_M"] = [int(Ms[i]) for i in sorted(both - set(psteps))]
                neither = sorted(set(psteps) - either)
                entry[name]["spurious_in_neither_pass_M"] = [int(Ms[i]) for i in neither]
                entry[name]["spurious_in_neither_pass"] = [
                    spurious_kind(i, sim, (meas, meas2), waves, int(occ.ctas_per_sm), int(Ms[i]), threshold)
                    for i in neither]
        out_cfgs.append(entry)

    def summary(name: str) -> dict[str, Any]:
        es = [c[name] for c in out_cfgs]
        n_meas = sum(len(c["measured_steps_M"]) for c in out_cfgs)
        missed = sum(len(e["missed_M"]) for e in es)
        spurious = sum(len(e["spurious_M"]) for e in es)
        worst = max(e["median_err_scaled"] for e in es)
        out = {"configs": len(es), "measured_steps": n_meas, "hit": n_meas - missed, "missed": missed,
               "spurious": spurious, "loose_missed": sum(len(e["loose_missed_M"]) for e in es),
               "loose_spurious": sum(len(e["loose_spurious_M"]) for e in es), "median_err_scaled_worst_config": worst,
               "median_err_scaled_median": float(np.median([e["median_err_scaled"] for e in es])),
               "all_steps_predicted": missed == 0, "all_configs_within_8pct": worst <= MAX_ERR}
        rep = [c for c in out_cfgs if "repeat" in c]
        if rep:
            out["repeat"] = {
                "configs": len(rep),
                "reproducible_steps": sum(len(c["repeat"]["reproducible_steps_M"]) for c in rep),
                "hardware_one_pass_only": sum(len(c["repeat"]["one_pass_only_M"]) for c in rep),
                "missed_reproducible": sum(len(c[name]["missed_reproducible_M"]) for c in rep),
                "spurious_in_neither_pass": sum(len(c[name]["spurious_in_neither_pass_M"]) for c in rep),
                "spurious_by_kind": spurious_counts([k for c in rep for k in c[name]["spurious_in_neither_pass"]]),
                "jump_agreement": jump_agreement(rep, name),
                "single_pass": single_pass_agreement(rep, name, threshold),
                "group_m_reference": group_m_reference(rep, name)}
        return out

    ctas = sorted({c["ctas_per_sm"] for c in out_cfgs})
    return {"N": N, "K": K, "dtype": dtype, "threshold": threshold, "calibration": calibration_label,
            "ctas_per_sm_covered": ctas, "configs": out_cfgs, "has_repeat": any("repeat" in c for c in out_cfgs),
            "summary": {"specs": summary("specs"), "calibrated": summary("calibrated")}}


def _median_p90(xs: list[float]) -> dict[str, float]:
    return {"median": float(np.median(xs)), "p90": float(np.percentile(xs, 90))} if xs else {}


def family_jumps(configs: list[dict], name: str, N: int | None = None,
                 sm_count: int | None = None) -> list[dict[str, Any]]:
    """Every grid point's jump of configs measured twice, with its family (the config's tile, warps and stages; GROUP_M
    pooled, as it changes neither the grid nor the waves) and place (step_place): the two passes' and the simulator's.
    Given the sweep's N and the GPU's SMs, a place inside the first wave also says whether the busiest SM gained a CTA
    (a co-residence step) or more SMs reached its count."""
    out = []
    for c in configs:
        family = "_".join(p for p in c["config"].split("_") if not p.startswith("g"))
        j1, j2 = jump_sizes(c["measured_ms"]), jump_sizes(c["repeat"]["measured_ms"])
        js = jump_sizes(c[name]["sim_ms"])
        bm, bn = (int(x) for x in c["config"].split("_")[0].split("x")[:2])
        for i in range(1, len(js)):
            place = step_place(c[name]["waves"], i, c["ctas_per_sm"])
            if N and sm_count and c[name]["waves"][i] == 1:
                k0, k1 = (-(-(-(-m // bm) * -(-N // bn)) // sm_count) for m in c["M"][i - 1:i + 1])
                place = (f"first wave, busiest SM {k0} -> {k1} CTAs" if k1 > k0 else
                         f"first wave, more SMs at {k1} CTAs")
            out.append({"family": family, "place": place, "passes": (float(j1[i]), float(j2[i])),
                        "simulated": float(js[i])})
    return out


def jump_bias(jumps: list[dict[str, Any]], floor: float = BIAS_FLOOR, by: str = "either") -> list[dict[str, Any]]:
    """Per family and place, over the jumps (family_jumps) where the passes' mean or the simulator's exceeds `floor`
    (by="measured": the passes' mean alone, so that two models are read on the same jumps): the simulator's jump minus
    the passes' mean (median: its bias), its median error, and the passes' own median difference. A strict step count
    moves family by family (session 28: the shipped model's misses sit 4-7 points low in every member of four
    families), so this is where a model change shows what it moves."""
    if by not in ("either", "measured"):
        raise ValueError(f"jump_bias selects jumps by 'either' or 'measured', got {by!r}")
    groups: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    for j in jumps:
        meas = sum(j["passes"]) / 2
        if (meas if by == "measured" else max(meas, j["simulated"])) > floor:
            groups.setdefault((j["family"], j["place"]), []).append(
                (j["simulated"] - meas, meas, abs(j["passes"][0] - j["passes"][1])))
    rows = []
    for (family, place), v in sorted(groups.items()):
        a = np.array(v)
        rows.append({"family": family, "place": place, "jumps": len(v), "bias_median": float(np.median(a[:, 0])),
                     "abs_error_median": float(np.median(np.abs(a[:, 0]))), "measured_median": float(np.median(a[:, 1])),
                     "pass_to_pass_median": float(np.median(a[:, 2]))})
    return rows


def jump_agreement(configs: list[dict], name: str) -> dict[str, Any]:
    """Threshold-free step agreement over configs measured twice: |simulated jump - measured jump| at every
    wave boundary of the grid (measured = the two passes' mean), beside the hardware's own |pass 1 - pass 2|
    at the same points (how well a jump size is known at all)."""
    sim = [e for c in configs for e in c[name]["jump_error_at_wave_boundaries"]]
    hw = [e for c in configs for e in c["repeat"]["jump_diff_at_wave_boundaries"]]
    return {"wave_boundaries": len(sim), "simulated_vs_measured": _median_p90(sim),
            "hardware_pass_to_pass": _median_p90(hw)}


def single_pass_agreement(configs: list[dict], name: str, threshold: float = STEP_THRESHOLD) -> dict[str, Any]:
    """The simulator and re-measurements scored alike against one measured pass: the predicted steps that pass
    lacks (spurious) and the steps of that pass not predicted (missed), summed over configs, averaged over
    taking each pass as the reference. Two yardsticks by the same rule:
      * `other_pass`: another pass of the same config as the prediction (averaged over pairs of passes,
        spurious = missed = half the steps only one of the two shows): a prediction as noisy as the hardware;
      * `mean_of_other_passes` (3+ passes): the geometric mean of all the other passes' curves, steps detected
        on it: a prediction close to the true mean curve, so close to the best any simulator can score
        against a noisy pass (its own noise is the passes' over n - 1).
    Uses every pass that all the configs have (two, or more with staircase_analysis's more_passes); `pairs`
    gives each pair's count of steps only one shows."""
    n = min(2 + len(c["repeat"].get("more_passes_steps_M", [])) for c in configs)
    passes = [[set(c["measured_steps_M"]), set(c["repeat"]["steps_M"]),
               *map(set, c["repeat"].get("more_passes_steps_M", []))][:n] for c in configs]
    predicted = [set(c[name]["predicted_steps_M"]) for c in configs]
    spurious = sum(len(pr - ref) for pr, ps in zip(predicted, passes) for ref in ps)
    missed = sum(len(ref - pr) for pr, ps in zip(predicted, passes) for ref in ps)

    def tally(by_place: dict, c: dict, pr: set, ref: set) -> None:
        """Add one (prediction, reference pass) pair's errors, by where they sit, weighted 1 / n."""
        for kind, ms in (("spurious", pr - ref), ("missed", ref - pr)):
            for m in ms:
                place = step_place(c[name]["waves"], c["M"].index(m), c["ctas_per_sm"])
                d = by_place.setdefault(place, {"spurious": 0.0, "missed": 0.0})
                d[kind] += 1 / n

    def ranked(by_place: dict) -> dict:
        return dict(sorted(by_place.items(), key=lambda kv: -sum(kv[1].values())))

    by_place: dict[str, dict[str, float]] = {}
    for c, pr, ps in zip(configs, predicted, passes):
        for ref in ps:
            tally(by_place, c, pr, ref)
    pairs = {f"{i + 1}-{j + 1}": sum(len(ps[i] ^ ps[j]) for ps in passes) for i in range(n) for j in range(i + 1, n)}
    other = sum(pairs.values()) / len(pairs) / 2
    every = [set.intersection(*ps) for ps in passes]
    out = {"passes": n, "simulator": {"spurious": spurious / n, "missed": missed / n},
           "simulator_by_place": ranked(by_place),
           "other_pass": {"spurious": other, "missed": other}, "pairs": pairs,
           # the two-pass figures over all the passes: steps every pass shows, and predicted jumps none shows
           "steps_in_every_pass": sum(map(len, every)),
           "missed_of_them": sum(len(e - pr) for pr, e in zip(predicted, every)),
           "predicted_in_no_pass": sum(len(pr - set.union(*ps)) for pr, ps in zip(predicted, passes))}
    if n >= 3:
        spur = miss = 0
        near_best: dict[str, dict[str, float]] = {}
        for c, ps in zip(configs, passes):
            logs = np.log(_passes(c)[:n])
            for p, ref in enumerate(ps):
                mean = np.exp(np.delete(logs, p, axis=0).mean(axis=0))
                pr = {c["M"][i] for i in detect_steps(mean, threshold)}
                spur, miss = spur + len(pr - ref), miss + len(ref - pr)
                tally(near_best, c, pr, ref)
        out["mean_of_other_passes"] = {"spurious": spur / n, "missed": miss / n}
        out["mean_of_other_passes_by_place"] = ranked(near_best)
    return out


def clear_agreement(configs: list[dict], name: str, threshold: float = STEP_THRESHOLD,
                    margin: float = CLEAR_MARGIN) -> dict[str, int]:
    """The strict match read away from the threshold, where a pass's noise cannot flip a step: clear steps (every
    pass jumps by more than threshold + margin), those the simulator misses (its jump under threshold - margin), and
    its clear jumps (over threshold + margin) where every pass jumps by less than threshold - margin. What the strict
    figures count beyond these are jumps within the margin of 15% on one side or the other."""
    clear = missed = spurious = 0
    n = min(len(_passes(c)) for c in configs) if configs else 2
    for c in configs:
        hw = np.array([jump_sizes(m) for m in _passes(c)[:n]])
        sim = jump_sizes(c[name]["sim_ms"])
        steps = (hw > threshold + margin).all(axis=0)
        clear += int(steps.sum())
        missed += int((steps & (sim < threshold - margin)).sum())
        spurious += int(((sim > threshold + margin) & (hw < threshold - margin).all(axis=0)).sum())
    return {"clear_steps": clear, "clear_missed": missed, "clear_spurious": spurious}


def _group_m_siblings(configs: list[dict]) -> dict[tuple, list[dict]]:
    """Configs grouped by everything but GROUP_M (tile, warps, stages): siblings share their grid and waves."""
    from wavetune.config import LaunchConfig

    family: dict[tuple, list[dict]] = {}
    for c in configs:
        cfg = LaunchConfig.from_key(c["config"])
        family.setdefault((cfg.BLOCK_M, cfg.BLOCK_N, cfg.BLOCK_K, cfg.num_warps, cfg.num_stages), []).append(c)
    return family


def group_m_ordering(configs: list[dict], name: str, gap: float = GROUP_M_GAP, tie: float = GROUP_M_TIE) -> dict:
    """Does the simulator order GROUP_M siblings as the hardware does? Over every M where two siblings were measured
    (configs with a repeat pass; more passes count too), the points where every pass has the same sibling ahead by
    more than `gap` ("differ"), and of them those where the simulator has it ahead ("right"), the other one ahead
    ("wrong"), or calls them even within `tie`; and the median |log(simulated ratio / measured ratio)| over all the
    siblings' points (measured: the passes' geometric mean), which a GROUP_M-blind simulator leaves at the
    hardware's own spread."""
    hw_logs, sim_logs = [], []
    for members in _group_m_siblings(configs).values():
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                if a["M"] != b["M"]:
                    continue
                hw_logs.append(np.log([np.asarray(pa) / np.asarray(pb) for pa, pb in zip(_passes(a), _passes(b))]))
                sim_logs.append(np.log(np.asarray(a[name]["sim_ms"]) / np.asarray(b[name]["sim_ms"])))
    n = min((h.shape[0] for h in hw_logs), default=0)
    return sibling_order(np.concatenate([h[:n] for h in hw_logs], axis=1) if hw_logs else np.zeros((2, 0)),
                         np.concatenate(sim_logs) if sim_logs else np.zeros(0), gap, tie)


def sibling_order(hw, sim, gap: float = GROUP_M_GAP, tie: float = GROUP_M_TIE) -> dict:
    """group_m_ordering's counts from log time ratios of sibling pairs: `hw` (passes x pairs) measured, `sim` (pairs)
    simulated. A pair counts where every pass has the same one ahead by more than `gap`; the simulator is right or
    wrong there where it calls them apart by more than `tie`."""
    hw, sim = np.atleast_2d(np.asarray(hw, dtype=np.float64)), np.asarray(sim, dtype=np.float64)
    ahead = (np.abs(hw) > np.log1p(gap)).all(axis=0) & (np.sign(hw) == np.sign(hw[0])).all(axis=0)
    called = np.abs(sim) > np.log1p(tie)
    same = np.sign(sim) == np.sign(hw[0])
    return {"group_m_differ": int(ahead.sum()), "group_m_right": int((ahead & called & same).sum()),
            "group_m_wrong": int((ahead & called & ~same).sum()),
            "group_m_log_ratio_errors": np.abs(sim - hw.mean(axis=0)).tolist()}


def _passes(c: dict) -> list:
    """A config's measured curves, first pass first (repeat and further passes where there are)."""
    rep = c.get("repeat", {})
    return [c["measured_ms"], *([rep["measured_ms"]] if rep else []), *rep.get("more_passes_ms", [])]


def group_m_reference(configs: list[dict], name: str) -> dict[str, Any] | None:
    """What the hardware's own curves score as predictions: for configs that differ only in GROUP_M (same tile,
    warps, stages, so the same grid and waves), one config's first measured pass taken as the prediction of
    a sibling's steps, scored exactly as the simulator is (reproducible steps it misses, jumps > threshold
    that neither of the sibling's passes shows), averaged per (sibling, prediction) pair; beside the
    simulator's figures on the same configs. None when no two configs are GROUP_M siblings on one M grid.

    It is a yardstick, not a target: launch order changes L2 reuse, so siblings are different kernels, but
    they are the closest measured curves there are."""
    family = _group_m_siblings(configs)
    pairs = spurious = missed = 0
    diffs: list[float] = []
    targets: dict[str, dict] = {}
    for members in family.values():
        for t in members:
            both = set(t["repeat"]["reproducible_steps_M"])
            either = set(t["measured_steps_M"]) | set(t["repeat"]["steps_M"])
            jt = (jump_sizes(t["measured_ms"]) + jump_sizes(t["repeat"]["measured_ms"])) / 2
            boundaries = [t["M"].index(m) for m in t[name]["wave_boundaries_M"]]
            for o in members:
                if o is t or o["M"] != t["M"]:
                    continue
                predicted = {t["M"][i] for i in detect_steps(o["measured_ms"])}
                spurious += len(predicted - either)
                missed += len(both - predicted)
                jo = jump_sizes(o["measured_ms"])
                diffs += [float(abs(jo[i] - jt[i])) for i in boundaries]
                pairs += 1
                targets[t["config"]] = t
    if not pairs:
        return None
    n = len(targets)
    return {"pairs": pairs, "configs": n,
            "sibling_spurious_per_config": spurious / pairs, "sibling_missed_per_config": missed / pairs,
            "simulator_spurious_per_config": sum(len(t[name]["spurious_in_neither_pass_M"])
                                                 for t in targets.values()) / n,
            "simulator_missed_per_config": sum(len(t[name]["missed_reproducible_M"]) for t in targets.values()) / n,
            "sibling_jump_diff_at_wave_boundaries": _median_p90(diffs),
            "simulator_jump_error_at_wave_boundaries": _median_p90(
                [e for t in targets.values() for e in t[name]["jump_error_at_wave_boundaries"]])}


def desync_fit_text(fit: dict[str, Any], which: str = "") -> str:
    """'rate R' or 'rate R x load ** E' of one desync_fit entry: the model's (which='model_') or the sweep's."""
    rate = fit[f"{which}desync_rate"]
    exponent = fit.get(f"{which}contention_exponent")
    return f"rate {rate:.2f}" + (f" x (n x solo_frac) ** {exponent:.2f}" if exponent is not None else "")


def fit_desync_rate(spec, st: dict[str, Any], params, field: str = "desync_rate",
                    fit_exponent: bool = True) -> dict[str, Any] | None:
    """The de-synchronisation rate (`field`: desync_rate at 3+ CTAs/SM, with its contention exponent unless not
    `fit_exponent`; desync_rate_two_ctas at 2) the sweep of a staircase analysis implies for the model with
    `params` (wavesim.calibration.desync_rate_from_sweeps, over every measured pass)."""
    from wavesim.calibration import desync_rate_from_sweeps
    from wavetune.config import LaunchConfig

    sweeps = [(LaunchConfig.from_key(c["config"]), st["N"], st["K"], c["M"],
               [c["measured_ms"]] + ([c["repeat"]["measured_ms"]] if "repeat" in c else [])) for c in st["configs"]]
    return desync_rate_from_sweeps(spec, sweeps, params, st["dtype"], field, fit_exponent)


# ============================================================================ plots
def plot_staircases(st: dict[str, Any], out_dir: str | Path) -> list[Path]:
    """staircase_grid.png: one panel per config, measured vs simulated (specs-only and calibrated, each
    scaled by its one factor), measured steps marked; staircase_all.png: all configs on one axis,
    calibrated simulation unscaled (wavesim.plots.plot_staircase)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from wavesim.plots import plot_staircase, save_png

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cfgs = st["configs"]
    ncol = 2
    nrow = math.ceil(len(cfgs) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(12, 2.8 * nrow), dpi=110, squeeze=False)
    for ax, c in zip(axes.flat, cfgs):
        M = np.array(c["M"])
        ax.plot(M, c["measured_ms"], "o", ms=2.5, color="k", label="measured")
        for name, color in (("specs", "tab:orange"), ("calibrated", "tab:blue")):
            e = c[name]
            ax.plot(M, np.array(e["sim_ms"]) * e["scale"], lw=1.2, color=color,
                    label=f"{name} x{e['scale']:.2f} (err {e['median_err_scaled']:.1%})")
        for m in c["measured_steps_M"]:
            ax.axvline(m, color="k", lw=0.5, alpha=0.3)
        miss = c["calibrated"]["missed_M"]
        ax.set_title(f"{c['config']}  {c['ctas_per_sm']} CTA/SM  steps {len(c['measured_steps_M'])}"
                     f" missed {len(miss)} spurious {len(c['calibrated']['spurious_M'])}", fontsize=8)
        ax.set_xlabel("M", fontsize=8)
        ax.set_ylabel("ms", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(cfgs):]:
        ax.axis("off")
    fig.suptitle(textwrap.fill(f"latency vs M, N={st['N']} K={st['K']}: measured vs simulated (one scale per "
                               f"config); calibration: {st['calibration']}", 130), fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / fig.get_figheight()))   # room for the two-line suptitle
    grid_path = save_png(fig, out_dir / "staircase_grid.png")
    plt.close(fig)

    # all configs on one axis (common M grid of the first config; others drawn as measured markers)
    xs = cfgs[0]["M"]
    series = {f"sim {c['config']}": c["calibrated"]["sim_ms"] for c in cfgs if c["M"] == xs}
    measured = {f"meas {c['config']}": (c["M"], c["measured_ms"]) for c in cfgs}
    all_path = plot_staircase(xs, series, out_dir / "staircase_all.png", xlabel="M", ylabel="ms",
                              measured=measured, title=f"N={st['N']} K={st['K']}: calibrated simulation (lines) "
                                                        f"vs measured (markers)")
    return [grid_path, all_path]


def staircase_markdown(st: dict[str, Any]) -> str:
    lines = [f"Sweep N={st['N']}, K={st['K']} ({st['dtype']}), step threshold {st['threshold']:.0%} between "
             f"consecutive M; calibrated = {st['calibration']}.", "",
             "| config | CTAs/SM | measured steps at M | specs-only: missed / spurious | err (1 scale) | "
             "calibrated: missed / spurious | err (1 scale) | sim jump at measured steps (cal.) |",
             "|---|---:|---|---|---:|---|---:|---|"]
    for c in st["configs"]:
        s, k = c["specs"], c["calibrated"]
        lines.append(
            f"| {c['config']} | {c['ctas_per_sm']} | {', '.join(map(str, c['measured_steps_M'])) or '-'} "
            f"| {_ms(s['missed_M'])} / {_ms(s['spurious_M'])} | {s['median_err_scaled']:.1%} "
            f"| {_ms(k['missed_M'])} / {_ms(k['spurious_M'])} | {k['median_err_scaled']:.1%} "
            f"| {', '.join(f'{j:+.0%}' for j in k['sim_jump_at_measured_steps']) or '-'} |")
    lines.append("")
    if st.get("has_repeat"):
        lines += ["Second pass of the same sweep (reproducibility): steps at M in both passes / in one pass only; "
                  "the simulator against the reproducible steps (missed) and against both passes (spurious = a "
                  "predicted jump that neither pass shows).", "",
                  "| config | reproducible steps at M | one pass only | median pass-to-pass difference | "
                  "specs-only: missed / spurious | calibrated: missed / spurious |", "|---|---|---|---:|---|---|"]
        for c in st["configs"]:
            if "repeat" not in c:
                continue
            r, s_, k = c["repeat"], c["specs"], c["calibrated"]
            lines.append(f"| {c['config']} | {_ms(r['reproducible_steps_M'])} | {_ms(r['one_pass_only_M'])} "
                         f"| {r['median_abs_diff']:.1%} | {_ms(s_['missed_reproducible_M'])} / "
                         f"{_ms(s_['spurious_in_neither_pass_M'])} | {_ms(k['missed_reproducible_M'])} / "
                         f"{_ms(k['spurious_in_neither_pass_M'])} |")
        lines.append("")
        for name in ("specs", "calibrated"):
            r = st["summary"][name]["repeat"]
            lines.append(f"- **{name}, against two passes**: the hardware shows {r['reproducible_steps']} reproducible "
                         f"steps and {r['hardware_one_pass_only']} steps that only one of its two passes shows; the "
                         f"simulator predicts {r['reproducible_steps'] - r['missed_reproducible']}/"
                         f"{r['reproducible_steps']} reproducible steps at the same M, with "
                         f"{r['spurious_in_neither_pass']} predicted jumps that neither pass shows ("
                         + ", ".join(f"{k}: {v}" for k, v in r["spurious_by_kind"].items()) + ").")
            ja, ref, sp = r["jump_agreement"], r["group_m_reference"], r["single_pass"]
            lines.append(f"  - against one measured pass (each of {sp['passes']}; mean): the simulator's steps miss "
                         f"{sp['simulator']['missed']:g} of its steps and add {sp['simulator']['spurious']:g}; "
                         f"another pass of the same configs, as the prediction, misses "
                         f"{sp['other_pass']['missed']:.3g} and adds as many (the hardware's own timing noise at the "
                         f"15% threshold; steps only one of two passes shows, by pair: "
                         + ", ".join(f"{k}: {v}" for k, v in sp["pairs"].items()) + ").")
            near = sp.get("mean_of_other_passes_by_place", {})
            top = list(sp["simulator_by_place"].items())[:4]
            lines.append("  - where the simulator's errors against one pass sit (spurious + missed, mean over the "
                         "passes" + ("; the mean of the other passes' in brackets" if near else "") + "): " + "; ".join(
                             f"{k}: {v['spurious']:g} + {v['missed']:g}"
                             + (f" ({sum(near.get(k, {}).values()):g})" if near else "") for k, v in top) + ".")
            if sp["passes"] > 2:
                mo = sp["mean_of_other_passes"]
                lines.append(f"  - the mean of the other {sp['passes'] - 1} passes, as the prediction (close to the "
                             f"best any simulator can score against one noisy pass): misses {mo['missed']:g} and adds "
                             f"{mo['spurious']:g}.")
                lines.append(f"  - over all {sp['passes']} passes: {sp['steps_in_every_pass']} steps every pass shows, "
                             f"{sp['steps_in_every_pass'] - sp['missed_of_them']} of them predicted at the same M; "
                             f"{sp['predicted_in_no_pass']} predicted jumps that no pass shows.")
            if ja["wave_boundaries"]:
                sim, hw = ja["simulated_vs_measured"], ja["hardware_pass_to_pass"]
                lines.append(f"  - step sizes, threshold-free: at the {ja['wave_boundaries']} wave boundaries of the "
                             f"grid the simulated jump differs from the measured one (mean of the passes) by a "
                             f"median {sim['median']:.1%} (p90 {sim['p90']:.1%}); the hardware's two passes differ "
                             f"by {hw['median']:.1%} (p90 {hw['p90']:.1%}).")
            if ref:
                sib, own = ref["sibling_jump_diff_at_wave_boundaries"], ref["simulator_jump_error_at_wave_boundaries"]
                lines.append(f"  - yardstick, a GROUP_M sibling's measured curve as the prediction ({ref['pairs']} "
                             f"pairs over {ref['configs']} configs, same rules): "
                             f"{ref['sibling_spurious_per_config']:.2f} jumps in neither pass and "
                             f"{ref['sibling_missed_per_config']:.2f} reproducible steps missed per config, its jumps "
                             f"{sib['median']:.1%} off at the wave boundaries (p90 {sib['p90']:.1%}); the simulator "
                             f"on the same configs: {ref['simulator_spurious_per_config']:.2f} and "
                             f"{ref['simulator_missed_per_config']:.2f}, {own['median']:.1%} (p90 {own['p90']:.1%}).")
        lines.append("")
    for name in ("specs", "calibrated"):
        sm = st["summary"][name]
        lines.append(f"- **{name}**: {sm['hit']}/{sm['measured_steps']} measured steps predicted at the same M, "
                     f"{sm['spurious']} spurious (tolerant reading, +-1 grid point and half the threshold: "
                     f"{sm['loose_missed']} missed, {sm['loose_spurious']} spurious); median error after one scale per config: median "
                     f"{sm['median_err_scaled_median']:.1%}, worst config {sm['median_err_scaled_worst_config']:.1%} "
                     f"(must-show <= 8%: {'holds' if sm['all_configs_within_8pct'] else 'does NOT hold'}; "
                     f"every step predicted: {'holds' if sm['all_steps_predicted'] else 'does NOT hold'}).")
    for fit in st.get("desync_fit") or []:
        lines.append(f"- **wave de-synchronisation at {fit['occupancy']}** (wavesim/engine/desync.py): the simulator "
                     f"(calibrated, else priors) uses {desync_fit_text(fit, 'model_')}; this sweep's steps at "
                     f"{fit['points']} later wave boundaries of {fit['sweeps']} such configs imply {desync_fit_text(fit)}.")
    return "\n".join(lines) + "\n"


def _display_path(p: Path) -> str:
    """A path relative to the working directory when it lies under it (reports stay machine-independent)."""
    try:
        return str(Path(p).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


def _ms(xs: list[int]) -> str:
    return ", ".join(map(str, xs)) if xs else "0"


def run_staircase(gpu: str, paths: Sequence[str | Path], out_dir: str | Path, calibration: str | None = "auto",
                  dtype: str = "bf16", repeat_paths: Sequence[str | Path] = (),
                  more_pass_paths: Sequence[str | Path] = (), nk: tuple[int, int] | None = None) -> dict[str, Any]:
    """The `wavetune staircase` command's work: analysis + plots + staircase.json + STAIRCASE.md. `nk`: the
    (N, K) layer to analyse where the files sweep several (default: the first)."""
    import json

    import hwspecs
    from validation.measurements import dedupe_latest, load_measurements
    from wavesim.calibration import load_calibration, shipped_calibration_path

    spec = hwspecs.load_gpu(gpu)
    ms = [m for m in dedupe_latest(load_measurements(paths, gpu=spec.id)) if m.problem.dtype == dtype]
    sweeps = find_sweeps(ms)
    if not sweeps:
        raise ValueError(f"no M sweep (a config at >= {MIN_SWEEP_POINTS} M values of one (N, K)) in {list(map(str, paths))}")
    if nk is not None and tuple(nk) not in sweeps:
        raise ValueError(f"no M sweep of N={nk[0]}, K={nk[1]} in {list(map(str, paths))}; the files sweep "
                         + ", ".join(f"{n}x{k}" for n, k in sweeps))
    N, K = tuple(nk) if nk is not None else sweeps[0]
    params = load_calibration(calibration, spec.id)
    label = "none (specs only)"
    if params is not None:
        from validation.suite import calibration_seen_nk

        src = shipped_calibration_path(spec.id) if calibration == "auto" else Path(calibration)
        label = ("shipped " if calibration == "auto" else "") + _display_path(src)
        seen = calibration_seen_nk(calibration, spec.id, dtype)
        if seen is None:
            label += f" (its fitted shapes are unknown: treat N={N}, K={K} as in-sample)"
        elif (N, K) in seen:
            label += f" (fitted on data that includes N={N}, K={K}: in-sample)"
        else:
            label += f" (never fitted on N={N}, K={K})"
    repeat = None
    if repeat_paths:
        repeat = [m for m in dedupe_latest(load_measurements(repeat_paths, gpu=spec.id)) if m.problem.dtype == dtype]
    if more_pass_paths and not repeat_paths:
        raise ValueError("more passes need a second pass first: give --repeat FILE as well")
    more = [[m for m in dedupe_latest(load_measurements([p], gpu=spec.id)) if m.problem.dtype == dtype]
            for p in more_pass_paths]
    st = staircase_analysis(spec, ms, N, K, params, dtype=dtype, calibration_label=label, repeat=repeat,
                            more_passes=more)
    # the de-synchronisation rates these measurements imply for this model (the ones it uses: model_desync_rate)
    from wavesim.kernels.gemm import DESYNC_RATE_FIELDS, GemmParams

    model = params or GemmParams.priors()
    st["desync_fit"] = []
    for field, occupancy in DESYNC_RATE_FIELDS.items():
        fit = fit_desync_rate(spec, st, model, field)
        if fit is None:
            continue
        entry = {"field": field, "occupancy": occupancy, "desync_rate": fit["value"], "points": fit["points"],
                 "sweeps": fit["sweeps"], "model_desync_rate": getattr(model, field)}
        if "exponent" in fit:
            entry.update(contention_exponent=fit["exponent"], model_contention_exponent=model.desync_contention_exponent)
        st["desync_fit"].append(entry)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plot_staircases(st, out)
    (out / "staircase.json").write_text(json.dumps(st, indent=1) + "\n")
    (out / "STAIRCASE.md").write_text("# Staircase agreement\n\n![staircases](staircase_grid.png)\n\n"
                                      + staircase_markdown(st))
    return st
