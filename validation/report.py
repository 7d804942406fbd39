"""The validation report: REPORT.md with tables and PNG plots, and summary.json with every figure.

    write_report(result, out_dir)   # result = validation.suite.validate(...)

Files: REPORT.md, summary.json, regret_per_shape.png, tau_per_shape.png, sim_vs_measured.png,
staircase_grid.png and staircase_all.png (when the measurements hold an M sweep).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

# The issues' must-show bounds, checked in the report (the CI tests hold their own, tighter, bounds).
MUST_SHOW = (
    # (issue, subset, variant, metric, op, bound, label)
    ("5", "all", "calibrated", "regret_geomean", "<=", 1.05, "calibrated geomean regret, all held-out M"),
    ("5", "all", "calibrated", "tau_median", ">=", 0.75, "calibrated median Kendall tau, all held-out M"),
    ("5", "M16-8192", "calibrated", "regret_geomean", "<=", 1.05, "calibrated geomean regret, 16 <= M <= 8192"),
    ("5", "M16-8192", "calibrated", "tau_median", ">=", 0.75, "calibrated median Kendall tau, 16 <= M <= 8192"),
    ("3", "M16-8192", "specs", "regret_geomean", "<=", 1.15, "specs-only geomean regret, 16 <= M <= 8192"),
    ("3", "M16-8192", "specs", "tau_median", ">=", 0.5, "specs-only median Kendall tau, 16 <= M <= 8192"),
    ("5", "all", "table", "regret_geomean", "<=", 1.04, "tuner table geomean regret, all M"),
    ("5", "all", "table", "regret_worst", "<=", 1.3, "tuner table worst regret, all M"),
    ("5", "all", "table", "decision_us_median", "<=", 10.0, "tuner table decision time (us, median)"),
)


DECISION_REPS_TEXT = "50"


def _f(x: Any, fmt: str = ".3f") -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    return format(x, fmt)


def _pct(x: Any) -> str:
    return _f(x, ".0%") if x is not None else "-"


def must_show_checks(result: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    agg = result["aggregates"]
    tin = [r["table"].get("in_table_domain") for r in result["shapes"] if r.get("table")]
    tsuffix = ("in-sample: fitted on these (N, K)" if tin and all(tin) else
               "out-of-sample: (N, K) not in the table's domain" if tin and not any(tin) else
               f"{sum(map(bool, tin))} of {len(tin)} shapes in-sample")
    for issue, sub, variant, metric, op, bound, label in MUST_SHOW:
        v = agg.get(sub, {}).get(variant, {}).get(metric)
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            continue
        if variant == "table" and metric.startswith("regret"):
            label = f"{label} ({tsuffix})"
        ok = v <= bound if op == "<=" else v >= bound
        out.append({"issue": issue, "what": label, "value": v, "bound": f"{op} {bound}", "holds": bool(ok)})
    st = result.get("staircase")
    if st:
        for variant in ("specs", "calibrated"):
            s = st["summary"][variant]
            out.append({"issue": "3", "what": f"staircase ({variant}): measured steps predicted at the same M",
                        "value": f"{s['hit']}/{s['measured_steps']}", "bound": "all",
                        "holds": bool(s["all_steps_predicted"])})
            out.append({"issue": "3", "what": f"staircase ({variant}): spurious predicted jumps",
                        "value": s["spurious"], "bound": "a few", "holds": None})
            out.append({"issue": "3", "what": f"staircase ({variant}): worst config's median error after one scale",
                        "value": s["median_err_scaled_worst_config"], "bound": "<= 0.08",
                        "holds": bool(s["all_configs_within_8pct"])})
    return out


# ============================================================================ plots
def _plots(result: dict[str, Any], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from wavesim.plots import save_png

    rows = [r for r in result["shapes"] if not r["in_sample"]] or result["shapes"]
    layers = list(dict.fromkeys(r["layer"] for r in rows))
    written = []

    def per_shape(metric: str, fname: str, ylabel: str, logy: bool, ref: float | None):
        variants = ["calibrated", "specs"] + (["table"] if metric == "regret" and any(r.get("table") for r in rows)
                                              else [])
        fig, axes = plt.subplots(1, len(variants), figsize=(5.2 * len(variants), 4), dpi=110, sharey=True,
                                 squeeze=False)
        for ax, v in zip(axes[0], variants):
            for layer in layers:
                pts = [(r["M"], r[v].get(metric)) for r in rows if r["layer"] == layer and r.get(v)
                       and r[v].get(metric) is not None]
                if pts:
                    xs, ys = zip(*sorted(pts))
                    ax.plot(xs, ys, "o-", ms=3, lw=0.8, label=layer)
            ax.set_xscale("log", base=2)
            if logy:
                ax.set_yscale("log")
            if ref is not None:
                ax.axhline(ref, color="k", lw=0.6, ls="--")
            ax.set_title(v, fontsize=9)
            ax.set_xlabel("M")
            ax.grid(True, alpha=0.3)
        axes[0][0].set_ylabel(ylabel)
        axes[0][-1].legend(fontsize=6)
        fig.suptitle(f"{ylabel} per held-out shape ({result['gpu']})", fontsize=10)
        fig.tight_layout()
        save_png(fig, out / fname)
        plt.close(fig)
        written.append(fname)

    per_shape("regret", "regret_per_shape.png", "regret (measured pick / measured best)", False, 1.0)
    per_shape("tau", "tau_per_shape.png", "Kendall tau (sim vs measured)", False, None)

    pts = result.get("_points")
    if pts is not None:
        keep = ~pts["in_sample"] if np.any(~pts["in_sample"]) else np.ones_like(pts["in_sample"])
        fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), dpi=110, sharey=True)
        meas = pts["meas"][keep]
        M = pts["M"][keep]
        for ax, (name, key) in zip(axes, (("calibrated", "sim_cal"), ("specs only", "sim_specs"))):
            sim = pts[key][keep]
            sc = ax.scatter(meas, sim, c=np.log2(M), s=2, alpha=0.35, cmap="viridis", rasterized=True)
            lo, hi = min(meas.min(), sim.min()), max(meas.max(), sim.max())
            ax.plot([lo, hi], [lo, hi], "k-", lw=0.7)
            ax.plot([lo, hi], [1.25 * lo, 1.25 * hi], "k:", lw=0.5)
            ax.plot([lo, hi], [0.8 * lo, 0.8 * hi], "k:", lw=0.5)
            ax.set_xscale("log")
            ax.set_yscale("log")
            err = float(np.median(np.abs(sim / meas - 1)))
            ax.set_title(f"{name}: median |sim/meas - 1| = {err:.1%}", fontsize=9)
            ax.set_xlabel("measured ms")
            ax.grid(True, alpha=0.3, which="both")
        axes[0].set_ylabel("simulated ms")
        fig.colorbar(sc, ax=axes, label="log2 M")
        fig.suptitle(f"simulated vs measured, every config of the held-out shapes ({len(meas)} records)", fontsize=10)
        save_png(fig, out / "sim_vs_measured.png")
        plt.close(fig)
        written.append("sim_vs_measured.png")

    if result.get("staircase"):
        from validation.staircase import plot_staircases

        written += [p.name for p in plot_staircases(result["staircase"], out)]
    return written


# ============================================================================ markdown
def _agg_table(agg: dict[str, Any], has_table: bool) -> list[str]:
    variants = ["calibrated", "specs"] + (["table"] if has_table else []) + ["repeat"]  # repeat: when it was given
    lines = ["| shapes | variant | n | regret geomean | regret worst | median tau | top-1 | top-5 (best in sim top 5) "
             "| pick in measured top 5 | median err | median err (1 scale/shape) | speedup vs default | "
             "pick / cuBLAS |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for sub, a in agg.items():
        for v in variants:
            x = a.get(v) or {}
            if not x.get("shapes"):
                continue
            lines.append(f"| {sub} | {v} | {x['shapes']} | {_f(x.get('regret_geomean'), '.4f')} | "
                         f"{_f(x.get('regret_worst'))} | {_f(x.get('tau_median'))} | {_pct(x.get('top1_rate'))} | "
                         f"{_pct(x.get('top5_rate'))} | {_pct(x.get('pick_in_top5_rate'))} | {_pct(x.get('err_median'))} | "
                         f"{_pct(x.get('err_scaled_median'))} | {_f(x.get('speedup_default_geomean'))} | "
                         f"{_f(x.get('cublas_ratio_geomean'))} |")
    return lines


def render_markdown(result: dict[str, Any], plots: list[str]) -> str:
    cal = result["calibration"]
    agg = result["aggregates"]
    has_table = result.get("table") is not None
    L = [f"# Validation report: {result['gpu']} ({result['dtype']})", "",
         "Generated by `wavetune validate` (validation/suite.py). Regret = measured time of the pick / measured "
         "best over the configs measured at that shape; Kendall tau over those configs (simulated vs measured); "
         "top-5 = the measured best is among the simulator's 5 fastest; cuBLAS = torch.matmul measured on the "
         "same GPU.", "",
         *([f"    {result['command']}", ""] if result.get("command") else []),
         f"- measurements: {', '.join('`' + p + '`' for p in result['measurement_files'])}",
         f"- evaluated shapes: {result['evaluated_shapes']} (>= {result['min_configs']} measured configs, "
         f"M in {result['m_range'][0]}..{result['m_range'][1]}); scored (not used for calibration): "
         f"{result['scored_shapes']}"]
    if cal["mode"] == "cv":
        L.append(f"- calibration: {cal['folds']}-fold cross-validation by (N, K) layer; each fold refits the "
                 "simulator on every record (LLM shapes, M and K sweeps) whose (N, K) it does not hold out:")
        for f in cal["fits"]:
            L.append(f"  - fold {f['fold']}: held out {', '.join(f['holdout_nk'])}; trained on {f['train_records']} "
                     f"records / {f['train_shapes']} shapes ({f['seconds']} s)")
    elif cal["mode"] == "file":
        L.append(f"- calibration: file `{cal.get('path')}`, fitted on {cal.get('fit_files')}, held out "
                 f"{cal.get('holdout_nk')}")
    else:
        L.append("- calibration: none (the 'calibrated' column equals specs-only)")
    if has_table:
        L.append(f"- tuner table: `{result['table']['path']}` (source: {json.dumps(result['table'].get('source'))}); "
                 f"decision time = median over shapes of the median of {DECISION_REPS_TEXT} select() calls")
    if result.get("repeat_files"):
        L.append(f"- repeat: {', '.join('`' + p + '`' for p in result['repeat_files'])}: the 'repeat' rows pick each "
                 "shape's best config by that pass and score it on the measurements above, the floor that "
                 "measurement noise sets for any selector")
    for n in result["notes"]:
        L.append(f"- note: {n}")
    L += ["", "## Must-show checks", "", "| issue | figure | value | bound | holds |", "|---|---|---:|---|---|"]
    for c in must_show_checks(result):
        v = c["value"]
        L.append(f"| {c['issue']} | {c['what']} | {_f(v, '.4f') if isinstance(v, float) else v} | {c['bound']} | "
                 f"{'-' if c['holds'] is None else ('yes' if c['holds'] else '**no**')} |")
    L += ["", "## Aggregates (held-out shapes)", "", *_agg_table(agg, has_table), "",
          f"Measured best Triton config / cuBLAS (geomean over scored shapes): "
          f"{_f(agg['all'].get('best_measured_cublas_ratio_geomean'))}."]
    if has_table and agg["all"].get("table", {}).get("shapes"):
        t = agg["all"]["table"]
        L.append(f"Tuner table: median decision {_f(t.get('decision_us_median'), '.2f')} us (Python select(problem), "
                 f"problem built outside the timer); {t.get('picks_not_measured', 0)} picks were not among the measured configs.")
    L += [""]
    for p, cap in (("regret_per_shape.png", "Regret per held-out shape"), ("tau_per_shape.png", "Kendall tau per shape"),
                   ("sim_vs_measured.png", "Simulated vs measured (log-log)")):
        if p in plots:
            L += [f"### {cap}", "", f"![{cap}]({p})", ""]
    st = result.get("staircase")
    if st:
        from validation.staircase import staircase_markdown

        L += ["## Staircase agreement (M sweep)", "", "![staircases](staircase_grid.png)", "",
              "![all configs](staircase_all.png)", "", staircase_markdown(st)]
    L += ["## Per shape", "",
          "| layer | M | N | K | configs | fold | best (measured) | best ms | cuBLAS ms | cal. pick | cal. regret | "
          "cal. tau | top-1 | top-5 | cal. err | specs regret | specs tau | default / pick | pick / cuBLAS"
          + (" | table pick | table regret" if has_table else "") + " |",
          "|---|---:|---:|---:|---:|---:|---|---:|---:|---|---:|---:|---|---|---:|---:|---:|---:|---:"
          + ("|---|---:" if has_table else "") + "|"]
    for r in result["shapes"]:
        c, s = r["calibrated"], r["specs"]
        line = (f"| {r['layer']}{' (in-sample)' if r['in_sample'] else ''} | {r['M']} | {r['N']} | {r['K']} | "
                f"{r['configs']} | {r['fold'] if r['fold'] >= 0 else '-'} | {r['best_config']} | {_f(r['best_ms'], '.4f')} | "
                f"{_f(r['cublas_ms'], '.4f')} | {c['pick_config']} | {_f(c['regret'])} | {_f(c['tau'], '.2f')} | "
                f"{_f(c['top1'])} | {_f(c['top5'])} | {_pct(c['err_median'])} | {_f(s['regret'])} | "
                f"{_f(s['tau'], '.2f')} | {_f(c['speedup_default'], '.2f')} | {_f(c['cublas_ratio'], '.2f')}")
        if has_table:
            t = r.get("table") or {}
            line += f" | {t.get('pick_config', '-')} | {_f(t.get('regret'))}"
        L.append(line + " |")
    if cal["mode"] == "cv":
        L += ["", "## Fitted parameters per fold", "",
              "| parameter | " + " | ".join(f"fold {f['fold']}" for f in cal["fits"]) + " |",
              "|---|" + "---:|" * len(cal["fits"])]
        for name in cal["fits"][0]["params"]:
            L.append(f"| {name} | " + " | ".join(f"{f['params'][name]:.4g}" for f in cal["fits"]) + " |")
    L += ["", f"Suite runtime: {result.get('seconds')} s.", ""]
    return "\n".join(L)


def write_report(result: dict[str, Any], out_dir: str | Path) -> Path:
    from validation.suite import to_json

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plots = _plots(result, out)
    summary = to_json(result)
    summary["must_show"] = must_show_checks(result)
    summary["plots"] = plots
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    md = out / "REPORT.md"
    md.write_text(render_markdown(result, plots))
    return md
