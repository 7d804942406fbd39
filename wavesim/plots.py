"""PNG plots of wavesim results (matplotlib, Agg backend: no display needed).

plot_staircase(xs, series, path, xlabel, ylabel, measured=None)
    latency (or any y) against grid size for several labelled series, optionally with measured points.
plot_timeline(result, path)
    a SimResult with a trace: one row per SM, each CTA a bar from dispatch to end, coloured by wave.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .result import SimResult  # noqa: E402


def save_png(fig, path) -> Path:
    """Write a figure as a 256-colour palette PNG (Pillow, which matplotlib requires): plots have few colours, and
    the committed reports hold many of them, at about a third of the size of matplotlib's RGBA output."""
    import io

    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    buf.seek(0)
    Image.open(buf).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    return Path(path)


def plot_staircase(xs: Sequence[float], series: Mapping[str, Sequence[float]], path, xlabel: str = "CTAs",
                   ylabel: str = "latency", measured: Mapping[str, tuple[Sequence[float], Sequence[float]]]
                   | tuple[Sequence[float], Sequence[float]] | None = None, title: str | None = None) -> Path:
    """Write a line plot of each series (label -> ys over xs) to `path` (PNG) and return the path.

    `measured` is either (xs, ys) or a dict label -> (xs, ys); it is drawn as markers.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    xs = np.asarray(xs)
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=120)
    for label, ys in series.items():
        ys = np.asarray(ys, dtype=float)
        if ys.shape != xs.shape:
            raise ValueError(f"series {label!r}: {ys.shape} values for {xs.shape} xs")
        ax.plot(xs, ys, label=str(label), lw=1.3, drawstyle="default")
    if measured is not None:
        items = measured.items() if isinstance(measured, Mapping) else [("measured", measured)]
        for label, (mx, my) in items:
            ax.plot(np.asarray(mx), np.asarray(my), "o", ms=3, label=str(label))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if series or measured is not None:
        ax.legend(fontsize=8)
    fig.tight_layout()
    save_png(fig, path)
    plt.close(fig)
    return path


def plot_timeline(result: SimResult, path, title: str | None = None, max_sms: int | None = None) -> Path:
    """Write a Gantt chart of `result.trace` (SM rows, CTA bars coloured by wave) to `path` (PNG)."""
    if result.trace is None:
        raise ValueError("plot_timeline needs a result with a trace: run(..., trace=True)")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tr = result.trace
    sm_count = len(result.per_sm_busy_s)
    rows = sm_count if max_sms is None else min(sm_count, max_sms)
    cap = sm_count * result.ctas_per_sm
    wave = tr.wave_of(cap)
    n_waves = max(result.waves, 1)
    cmap = plt.get_cmap("tab10" if n_waves <= 10 else "viridis")
    colors = [cmap(w % 10) if n_waves <= 10 else cmap(w / max(n_waves - 1, 1)) for w in range(n_waves)]
    fig, ax = plt.subplots(figsize=(9, max(2.5, 0.18 * rows + 1.2)), dpi=120)
    k = result.ctas_per_sm
    # stack co-resident CTAs inside an SM row: lane = slot the CTA occupies (first lane free at its start)
    lane_free = np.zeros((sm_count, k))
    order = np.lexsort((np.arange(len(tr.sm)), tr.start_s))
    for i in order:
        s = int(tr.sm[i])
        lanes = np.nonzero(lane_free[s] <= tr.start_s[i] + 1e-15 * max(1.0, abs(tr.start_s[i])))[0]
        lane = int(lanes[0]) if len(lanes) else 0
        lane_free[s, lane] = tr.end_s[i]
        if s >= rows:
            continue
        h = 0.8 / k
        ax.barh(s - 0.4 + lane * h + h / 2, tr.end_s[i] - tr.start_s[i], left=tr.start_s[i], height=h * 0.9,
                color=colors[int(wave[i]) % len(colors)], edgecolor="none")
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_xlabel("time since first dispatch (s)")
    ax.set_ylabel("SM")
    handles = [matplotlib.patches.Patch(color=colors[w], label=f"wave {w}") for w in range(min(n_waves, 10))]
    if handles:
        ax.legend(handles=handles, fontsize=7, loc="upper right")
    ax.set_title(title or f"{result.grid} CTAs, {result.waves} waves, {result.ctas_per_sm} CTA/SM "
                          f"({result.engine}); makespan {result.makespan_s:.4g} s")
    fig.tight_layout()
    save_png(fig, path)
    plt.close(fig)
    return path
