"""The figures a model change is judged by, in one run over the committed measurements (no GPU needed).

    python3 -m validation.scorecard [--gpu h200] [--calibration auto|FILE] [--holdout NxK=FILE ...]
                                    [--groups six,other,fresh31] [--sets all] [--json OUT]

What it scores is described in validation/data/<gpu>/scorecard.json:
  * M-sweep groups (issue 3's staircases): per study, the steps (> 15% between neighbouring M) that every measured
    pass shows, how many of them the simulator predicts at the same M, and its predicted jumps that no pass shows
    (validation.staircase.single_pass_agreement); the same read away from the 15% threshold (clear_agreement: the
    steps every pass shows by more than 18%, missed where the simulator's jump is under 12%, and its jumps over 18%
    where every pass is under 12%), the median error after one scale per config against the first pass, and how the
    simulator orders configs that differ only in GROUP_M where every pass has them > 5% apart (group_m_ordering). A
    study may name a hold-out calibration (a fit that never saw its layer) to be scored with instead of
    --calibration;
  * pick sets: per shape, the measured time of the config with the smallest simulated time over the measured best
    (repeats of a record combined by their median; shapes with N and K multiples of 16, the kernel the calibration
    fits), as a geometric mean per set, over all sets and over the shapes with M > 1024;
  * ncu pick sets: shapes whose candidate configs were timed under ncu, one launch at a time, in two passes or more
    (validation/counters.py --time-only): per shape the time of the simulator's pick among the candidates over the
    best candidate's (times: the geometric mean over passes), and one pass's best scored on another (the yardstick's
    own noise). At M > 1024 a profiler pass ranks configs only to a few percent (NOTES session 25); these do not.
  * GROUP_M sets: configs measured at several GROUP_M each, one list of files per pass: the pick regret over each
    shape's configs, and per shape and tile the simulator's GROUP_M choice over the siblings' best and how it orders
    the siblings (group_m_set_scores).
Sealed groups and sets (the description's "sealed") are scored only when --groups or --sets names them: they are kept
to decide one model change, once, by a rule written before (NOTES.md).

To score a model variant, fit it as shipped (`wavetune calibrate --gpu h200 --measurements
validation/data/h200/gemm/*.jsonl --out A.json`, and with `--holdout-nk 4096x4096 --out B.json`) and run
`python3 -m validation.scorecard --calibration A.json --holdout 4096x4096=B.json`; `bash
validation/scripts/refit_and_score.sh OUT [shipped|clean]` does both fits and the scoring (the unchanged model refitted
so reproduces the shipped figures: compare a variant with that, by the same procedure). About 30 s on 2 cores once the
blind sets' kernel resources are in the compile cache (the first run compiles them: a few minutes).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, Sequence

import numpy as np

DATA_DIR = Path(__file__).resolve().parent / "data"
REPO_ROOT = Path(__file__).resolve().parent.parent
LARGE_M = 1024       # the pick figure is also given for the shapes above this M (the full-load regime)
ALIGNMENT = 16       # Triton's divisibility specialization: the aligned kernel is the one calibration fits


def load_description(gpu: str) -> dict[str, Any]:
    path = DATA_DIR / gpu / "scorecard.json"
    if not path.is_file():
        have = sorted(p.parent.name for p in DATA_DIR.glob("*/scorecard.json"))
        raise ValueError(f"no scorecard description for {gpu!r} ({path}); described: {have or 'none'}")
    doc = json.loads(path.read_text())
    for key in ("sweep_groups", "pick_sets"):
        if not isinstance(doc.get(key), dict):
            raise ValueError(f"{path}: missing or malformed {key!r} (an object)")
    return doc


def _load_pass(gpu: str, files: Sequence[str]) -> list:
    from validation.measurements import dedupe_latest, load_measurements

    paths = [DATA_DIR / gpu / f for f in files]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise ValueError(f"scorecard: measurement file(s) {missing} not found (listed in "
                         f"validation/data/{gpu}/scorecard.json); restore them or fix the description")
    return dedupe_latest(load_measurements(paths, gpu=gpu))


def sweep_scores(spec, passes: list[list], params, nk: tuple[int, int] | None = None) -> list[dict[str, Any]]:
    """Per swept layer of a study (one list of measurements per pass, at least two): the steps every pass shows,
    of them predicted at the same M, and predicted jumps in no pass."""
    from validation.staircase import clear_agreement, family_jumps, find_sweeps, group_m_ordering, staircase_analysis

    if len(passes) < 2:
        raise ValueError("a sweep study needs at least two measured passes")
    layers = [tuple(nk)] if nk else find_sweeps(passes[0])
    out = []
    for N, K in layers:
        st = staircase_analysis(spec, passes[0], N, K, params, repeat=passes[1], more_passes=passes[2:])
        cal = st["summary"]["calibrated"]
        sp = cal["repeat"]["single_pass"]
        rep = [c for c in st["configs"] if "repeat" in c]
        out.append({"N": N, "K": K, "passes": sp["passes"], "every": sp["steps_in_every_pass"],
                    "predicted": sp["steps_in_every_pass"] - sp["missed_of_them"],
                    "no_pass": sp["predicted_in_no_pass"], **clear_agreement(rep, "calibrated"),
                    **group_m_ordering(rep, "calibrated"),
                    # the curve's shape against the first pass (issue 3's third figure)
                    "err_worst": cal["median_err_scaled_worst_config"],
                    "errs": [c["calibrated"]["median_err_scaled"] for c in st["configs"]],
                    "jumps": family_jumps(rep, "calibrated", N, spec.sm_count)})
    return out


def _shape_rows(spec, measurements: list, params, dtype: str = "bf16") -> dict[tuple[int, int, int], list]:
    """Per aligned shape: (median measured ms, simulated ms, config) of each of its configs."""
    from wavesim.calibration import build_dataset, simulate_ms

    ds = build_dataset(spec, measurements, dtype, keep=lambda s: s[1] % ALIGNMENT == 0 and s[2] % ALIGNMENT == 0)
    sim = simulate_ms(ds, params)
    runs: dict[tuple[int, str], list[int]] = defaultdict(list)
    for i, c in enumerate(ds.configs):
        runs[(int(ds.shape_id[i]), c.key)].append(i)
    per_shape: dict[tuple[int, int, int], list[tuple[float, float, Any]]] = defaultdict(list)
    for (sid, _), idx in runs.items():
        per_shape[ds.shapes[sid]].append((float(np.median(ds.ms[idx])), float(sim[idx[0]]), ds.configs[idx[0]]))
    return per_shape


def pick_regrets(spec, measurements: list, params, dtype: str = "bf16") -> dict[tuple[int, int, int], float]:
    """Per aligned shape with 2+ configs: measured time of the simulator's pick over the measured best."""
    from wavetune.config import fastest

    out = {}
    for shape, rows in _shape_rows(spec, measurements, params, dtype).items():
        if len(rows) < 2:
            continue
        meas = [r[0] for r in rows]
        out[shape] = meas[fastest([r[1] for r in rows], [r[2] for r in rows])] / min(meas)
    return out


def shape_taus(spec, measurements: list, params, dtype: str = "bf16") -> dict[tuple[int, int, int], float]:
    """Per aligned shape with 2+ configs: Kendall tau between simulated and measured times (issue 3's ranking)."""
    from validation.suite import kendall_tau

    return {shape: kendall_tau([r[1] for r in rows], [r[0] for r in rows])
            for shape, rows in _shape_rows(spec, measurements, params, dtype).items() if len(rows) >= 2}


def group_m_set_scores(spec, passes: list[list], params) -> dict[str, Any]:
    """A GROUP_M set (configs measured at several GROUP_M each, two passes or more): per shape and tile (everything but
    GROUP_M), the measured time of the simulator's GROUP_M choice over the siblings' best (times: the geometric mean over
    passes; geometric mean over shape x tile), and how it orders the siblings (validation.staircase.sibling_order)."""
    from validation.staircase import sibling_order
    from validation.suite import geomean
    from wavesim.kernels.gemm import GemmBatch, simulate_batch
    from wavetune.config import fastest

    if len(passes) < 2:
        raise ValueError("a GROUP_M set needs two passes or more")
    times = [{(m.problem.M, m.problem.N, m.problem.K, m.config): m.ms for m in p if m.ok and m.config is not None}
             for p in passes]
    keys = sorted(set.intersection(*(set(t) for t in times)), key=lambda k: (k[:3], k[3].key))
    keys = [k for k in keys if k[1] % ALIGNMENT == 0 and k[2] % ALIGNMENT == 0]
    b = GemmBatch.build(spec, "bf16", *([k[i] for k in keys] for i in range(3)), [k[3] for k in keys])
    sim = dict(zip(keys, simulate_batch(b, params).makespan_s))
    families: dict[tuple, list] = defaultdict(list)
    for k in keys:
        c = k[3]
        families[(k[:3], c.BLOCK_M, c.BLOCK_N, c.BLOCK_K, c.num_warps, c.num_stages)].append(k)
    regrets, hw, simr = [], [], []
    for members in families.values():
        if len(members) < 2:
            continue
        t = np.exp(np.mean([[np.log(tp[k]) for k in members] for tp in times], axis=0))
        regrets.append(t[fastest([sim[k] for k in members], [k[3] for k in members])] / t.min())
        for i, a in enumerate(members):
            for o in members[i + 1:]:
                hw.append([np.log(tp[a] / tp[o]) for tp in times])
                simr.append(np.log(sim[a] / sim[o]))
    order = sibling_order(np.array(hw).T if hw else np.zeros((len(times), 0)), np.array(simr))
    errs = order.pop("group_m_log_ratio_errors")
    return {"families": len(regrets), "group_m_pick_regret": geomean(regrets) if regrets else float("nan"),
            **order, "group_m_log_error_median": float(np.median(errs)) if errs else float("nan")}


def _ncu_pass(gpu: str, patterns: Sequence[str]) -> dict[tuple[int, int, int], dict]:
    """{shape: {config: ncu time (ns)}} of one pass's counters files (glob patterns under validation/data/<gpu>/)."""
    from validation.counters import load_counters
    from wavetune.config import LaunchConfig

    paths = sorted(p for pat in patterns for p in (DATA_DIR / gpu).glob(pat))
    if not paths:
        raise ValueError(f"scorecard: no counters file matches {list(patterns)} under validation/data/{gpu}/ "
                         f"(listed in scorecard.json); restore them or fix the description")
    out: dict[tuple[int, int, int], dict] = defaultdict(dict)
    for r in load_counters(paths):
        out[(r["M"], r["N"], r["K"])][LaunchConfig.from_dict(r["config"])] = r["counters"]["gpu__time_duration.sum"]
    return out


def ncu_pick_regrets(spec, passes: list[dict], params) -> tuple[dict, dict]:
    """({shape: the simulator's pick among the candidates timed in every pass, over the best}, {shape: the first
    pass's best scored on the second}); times are the geometric mean over the passes."""
    from wavesim.kernels.gemm import GemmBatch, simulate_batch
    from wavetune.config import fastest

    if len(passes) < 2:
        raise ValueError("an ncu pick set needs two passes or more (one to score the other)")
    regret, floor = {}, {}
    for shape in passes[0]:
        cfgs = [c for c in passes[0][shape] if all(c in p.get(shape, {}) for p in passes[1:])]
        if len(cfgs) < 2:
            continue
        t = np.exp(np.mean([[np.log(p[shape][c]) for c in cfgs] for p in passes], axis=0))
        b = GemmBatch.build(spec, "bf16", *([v] * len(cfgs) for v in shape), cfgs)
        regret[shape] = float(t[fastest(simulate_batch(b, params).makespan_s, cfgs)] / t.min())
        first, second = ([p[shape][c] for c in cfgs] for p in passes[:2])
        floor[shape] = float(second[int(np.argmin(first))] / min(second))
    return regret, floor


def selection(doc: dict[str, Any], groups: Sequence[str] | None, sets: Sequence[str] | None) -> tuple[list, list]:
    """(groups, sets) to score: None means every unsealed group / every set; names must be described."""
    sealed = doc.get("sealed", {})
    groups = [g for g in doc["sweep_groups"] if g not in sealed] if groups is None else list(groups)
    all_sets = [*doc["pick_sets"], *doc.get("ncu_pick_sets", {}), *doc.get("group_m_sets", {})]
    sets = [s for s in all_sets if s not in sealed] if sets is None else list(sets)
    for kind, names, known in (("group", groups, doc["sweep_groups"]), ("pick set", sets, all_sets)):
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(f"unknown {kind}(s) {unknown}; described: {sorted(known)}")
    return groups, sets


def study_calibration(gpu: str, study: dict[str, Any], params, hold_paths: dict[str, str], cache: dict[str, Any],
                      group: str = ""):
    """The calibration a sweep study is scored with: `params`, or the hold-out calibration it names (loaded once into
    `cache` from `hold_paths`, NxK -> file)."""
    from wavesim.calibration import load_calibration

    key = study.get("calibration")
    if key is None:
        return params
    if key not in cache:
        if key not in hold_paths:
            raise ValueError(f"group {group!r} scores a study with the hold-out calibration {key!r}, which neither "
                             f"the description nor --holdout gives; pass --holdout {key}=FILE")
        path = Path(hold_paths[key])
        cache[key] = load_calibration(path if path.is_absolute() else REPO_ROOT / path, gpu)
    return cache[key]


def scorecard(gpu: str = "h200", calibration: str | Path | None = "auto", holdouts: dict[str, str] | None = None,
              groups: Sequence[str] | None = None, sets: Sequence[str] | None = None,
              families_by: str = "either") -> dict[str, Any]:
    """The figures (see the module docstring). `holdouts`: NxK -> calibration file, over the description's own;
    `groups` / `sets`: which to score (None: every unsealed group / every set; [] for none); `families_by`: the jumps
    the family biases read (validation.staircase.jump_bias)."""
    import hwspecs
    from validation.staircase import jump_bias
    from validation.suite import geomean
    from wavesim.calibration import load_calibration

    doc = load_description(gpu)
    spec = hwspecs.load_gpu(gpu)
    groups, sets = selection(doc, groups, sets)
    params = load_calibration(calibration, spec.id)
    hold_paths = {**doc.get("holdout_calibrations", {}), **(holdouts or {})}
    hold_params: dict[str, Any] = {}
    result: dict[str, Any] = {"gpu": spec.id, "calibration": str(calibration), "groups": {}, "pick_sets": {}}
    for g in groups:
        rows = []
        for study in doc["sweep_groups"][g]:
            key = study.get("calibration")
            passes = [_load_pass(spec.id, files) for files in study["passes"]]
            study_params = study_calibration(spec.id, study, params, hold_paths, hold_params, g)
            for r in sweep_scores(spec, passes, study_params, study.get("nk")):
                rows.append({**r, "calibration": key or "given"})
        result["groups"][g] = {"layers": rows, **{k: sum(r[k] for r in rows) for k in
                                                  ("every", "predicted", "no_pass", "clear_steps", "clear_missed",
                                                   "clear_spurious", "group_m_differ", "group_m_right",
                                                   "group_m_wrong")},
                               "group_m_log_error_median": float(np.median(
                                   [e for r in rows for e in r.pop("group_m_log_ratio_errors")] or [np.nan])),
                               "err_median": float(np.median([e for r in rows for e in r.pop("errs")])),
                               "err_worst": max(r["err_worst"] for r in rows),
                               "families": jump_bias([j for r in rows for j in r.pop("jumps")], by=families_by)}
    every_shape: dict[tuple[str, tuple[int, int, int]], float] = {}
    for s in (s for s in sets if s in doc["pick_sets"]):
        reg = pick_regrets(spec, _load_pass(spec.id, doc["pick_sets"][s]), params)
        result["pick_sets"][s] = {"shapes": len(reg), "regret": geomean(reg.values())}
        every_shape.update({(s, shape): r for shape, r in reg.items()})
    for s in (s for s in sets if s in doc.get("ncu_pick_sets", {})):
        reg, floor = ncu_pick_regrets(spec, [_ncu_pass(spec.id, files) for files in doc["ncu_pick_sets"][s]], params)
        result.setdefault("ncu_pick_sets", {})[s] = {
            "shapes": len(reg), "regret": geomean(reg.values()), "worst": max(reg.values()),
            "one_pass_on_another": geomean(floor.values())}
    for s in (s for s in sets if s in doc.get("group_m_sets", {})):
        passes = [_load_pass(spec.id, files) for files in doc["group_m_sets"][s]]
        reg = pick_regrets(spec, [m for p in passes for m in p], params)
        result.setdefault("group_m_sets", {})[s] = {"shapes": len(reg), "regret": geomean(reg.values()),
                                                    **group_m_set_scores(spec, passes, params)}
    if every_shape:
        large = [r for (_, shape), r in every_shape.items() if shape[0] > LARGE_M]
        result["pick_all"] = {"shapes": len(every_shape), "regret": geomean(every_shape.values()),
                              "shapes_large_m": len(large), "regret_large_m": geomean(large)}
    return result


def render(result: dict[str, Any], families: bool = False) -> str:
    """The figures as text; with `families`, each group's jump bias by family and place as well (jump_bias)."""
    from validation.staircase import BIAS_FLOOR, CLEAR_MARGIN, GROUP_M_GAP, GROUP_M_TIE, STEP_THRESHOLD

    lines = [f"scorecard for {result['gpu']}, calibration {result['calibration']}"]
    for g, r in result["groups"].items():
        per = ", ".join(f"{x['N']}x{x['K']} {x['predicted']}/{x['every']}/{x['no_pass']}" for x in r["layers"])
        lines.append(f"  {g:8s} steps every pass shows {r['every']:4d}, predicted at the same M {r['predicted']:4d}, "
                     f"jumps in no pass {r['no_pass']:3d}   ({per})")
        hi, lo = f"{STEP_THRESHOLD + CLEAR_MARGIN:.0%}", f"{STEP_THRESHOLD - CLEAR_MARGIN:.0%}"
        lines.append(f"  {'':8s} clear steps (every pass > {hi}) {r['clear_steps']}, missed (< {lo}) {r['clear_missed']}, "
                     f"clear jumps (> {hi}) where every pass < {lo}: {r['clear_spurious']}; error after one scale per "
                     f"config: median {r['err_median']:.1%}, worst config {r['err_worst']:.1%}")
        lines.append(f"  {'':8s} GROUP_M siblings every pass puts > {GROUP_M_GAP:.0%} apart {r['group_m_differ']}: "
                     f"ordered right {r['group_m_right']}, wrong {r['group_m_wrong']}, called even (< {GROUP_M_TIE:.0%}) "
                     f"{r['group_m_differ'] - r['group_m_right'] - r['group_m_wrong']}; median |log(simulated / "
                     f"measured sibling ratio)| {r['group_m_log_error_median']:.3f}")
        if families:
            lines.append(f"  {'':8s} jumps over {BIAS_FLOOR:.0%} by family and place: simulated - measured (median), "
                         f"|error|, measured, the passes' own difference")
            lines += [f"  {'':10s}{f['family']:20s} {f['place']:40s} {f['jumps']:4d}  {f['bias_median']:+6.1%} "
                      f"{f['abs_error_median']:6.1%} {f['measured_median']:6.1%} {f['pass_to_pass_median']:6.1%}"
                      for f in r["families"]]
    for s, r in result["pick_sets"].items():
        lines.append(f"  pick {s:10s} {r['shapes']:4d} shapes  regret {r['regret']:.4f}")
    for s, r in result.get("ncu_pick_sets", {}).items():
        lines.append(f"  pick {s:10s} {r['shapes']:4d} shapes  regret {r['regret']:.4f} under ncu, worst "
                     f"{r['worst']:.3f}  (one pass's best on another: {r['one_pass_on_another']:.4f})")
    for s, r in result.get("group_m_sets", {}).items():
        lines.append(f"  pick {s:10s} {r['shapes']:4d} shapes  regret {r['regret']:.4f}; GROUP_M pick over the siblings' "
                     f"best {r['group_m_pick_regret']:.4f} ({r['families']} shape x tile); siblings > {GROUP_M_GAP:.0%} "
                     f"apart {r['group_m_differ']}: right {r['group_m_right']}, wrong {r['group_m_wrong']}; median |log "
                     f"ratio error| {r['group_m_log_error_median']:.3f}")
    if "pick_all" in result:
        a = result["pick_all"]
        lines.append(f"  pick all        {a['shapes']:4d} shapes  regret {a['regret']:.4f}   "
                     f"(M > {LARGE_M}: {a['shapes_large_m']} shapes, {a['regret_large_m']:.4f})")
    return "\n".join(lines)


def _names(text: str | None) -> list[str] | None:
    if text is None or text == "all":
        return None
    return [] if text == "none" else [t for t in text.split(",") if t]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m validation.scorecard", description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--calibration", default="auto", help="calibration JSON (default: the shipped one)")
    ap.add_argument("--holdout", action="append", default=[], metavar="NxK=FILE",
                    help="the calibration that never saw layer NxK, for the studies that ask for it")
    ap.add_argument("--groups", help="M-sweep groups, comma-separated, 'all' (unsealed; default) or 'none'")
    ap.add_argument("--sets", help="pick sets, comma-separated, 'all' (default) or 'none'")
    ap.add_argument("--json", help="also write the figures to this JSON file")
    ap.add_argument("--families", action="store_true",
                    help="also print each group's jump bias by config family and place in the waves")
    ap.add_argument("--families-by", choices=("either", "measured"), default="either",
                    help="the jumps --families reads: over 8%% in the simulation or the measurement (default), or in the "
                         "measurement alone (the same jumps for any model)")
    a = ap.parse_args(argv)
    try:
        holdouts = dict(h.split("=", 1) for h in a.holdout)
    except ValueError:
        print(f"validation.scorecard: --holdout takes NxK=FILE, got {a.holdout}", file=sys.stderr)
        return 2
    try:
        result = scorecard(a.gpu, a.calibration, holdouts, _names(a.groups), _names(a.sets), a.families_by)
    except (ValueError, OSError) as e:
        print(f"validation.scorecard: {e}", file=sys.stderr)
        return 2
    print(render(result, a.families))
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
