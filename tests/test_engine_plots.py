"""wavesim.plots: PNGs are written and inputs are checked."""
import numpy as np
import pytest

from wavesim.engine import Workload, run, run_uniform_batch
from wavesim.plots import plot_staircase, plot_timeline

PNG = b"\x89PNG\r\n\x1a\n"


def test_plot_timeline_writes_png(tmp_path):
    r = run(Workload.uniform(30, compute_s=1.0, solo_frac=0.6, sm_count=8, slots_per_sm=2), engine="fast",
            jitter_cv=0.3, trace=True)
    p = plot_timeline(r, tmp_path / "t" / "timeline.png")
    assert p.read_bytes()[:8] == PNG
    with pytest.raises(ValueError):
        plot_timeline(run(Workload.uniform(3, compute_s=1.0, sm_count=2)), tmp_path / "x.png")


def test_plot_staircase_writes_png(tmp_path):
    G = np.arange(1, 100)
    b = run_uniform_batch(G, sm_count=8, slots_per_sm=2, compute_s=1.0)
    p = plot_staircase(G, {"closed form": b.makespan_s}, tmp_path / "s.png", "CTAs", "s",
                       measured=(G[::10], b.makespan_s[::10]))
    assert p.read_bytes()[:8] == PNG
    with pytest.raises(ValueError):
        plot_staircase(G, {"bad": [1, 2]}, tmp_path / "bad.png", "x", "y")
