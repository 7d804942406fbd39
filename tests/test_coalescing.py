"""validation.coalescing: the GPC window's shared share follows the launch order, the coalescer's efficiency is
recovered from counter records, and files without its counters are named."""
import json
import math

import pytest

from validation.coalescing import LRC_COUNTER, coalescer_efficiency, gpc_window_share, main
from validation.counters import loaded_sectors


def test_group_m_1_shares_only_a_and_large_group_m_shares_b():
    # 16 consecutive CTAs of a 64x128 tile on N = 4096 (32 columns): GROUP_M 1 walks one row (1 A tile, 16 B tiles),
    # GROUP_M >= 16 walks one column (16 A tiles, 1 B tile)
    assert gpc_window_share(4096, 4096, 64, 128, 1, 16) == pytest.approx(1 - (64 + 16 * 128) / (16 * 192))
    assert gpc_window_share(4096, 4096, 64, 128, 32, 16) == pytest.approx(1 - (16 * 64 + 128) / (16 * 192))
    # square tiles: the same share either way; a tall tile shares more at GROUP_M 1
    assert gpc_window_share(4096, 4096, 128, 128, 1, 16) == pytest.approx(gpc_window_share(4096, 4096, 128, 128, 32, 16))
    assert gpc_window_share(4096, 4096, 128, 64, 1, 16) > gpc_window_share(4096, 4096, 128, 64, 32, 16)
    # a grid of one CTA shares nothing
    assert gpc_window_share(64, 128, 64, 128, 8, 16) == pytest.approx(0.0)


def _records(e_one, e_later):
    recs = []
    for bm, bn, g, M in ((64, 128, 1, 640), (64, 128, 32, 640), (128, 64, 1, 640), (128, 64, 8, 640),
                         (64, 128, 1, 8192), (64, 128, 16, 8192), (128, 64, 1, 8192), (128, 64, 4, 8192)):
        cfg = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": 64, "GROUP_M": g, "num_warps": 4, "num_stages": 3}
        r = {"schema": 1, "kind": "counters", "kernel": "gemm", "gpu": "h200", "dtype": "bf16", "M": M, "N": 4096,
             "K": 4096, "config": cfg, "grid": math.ceil(M / bm) * math.ceil(4096 / bn), "counters": {}}
        e = e_one if M == 640 else e_later
        r["counters"][LRC_COUNTER] = e * float(gpc_window_share(M, 4096, bm, bn, g, 16)) * loaded_sectors(r)
        recs.append(r)
    return recs


def test_the_coalescers_efficiency_is_recovered_per_regime(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _records(0.6, 0.45)))
    r = coalescer_efficiency([path])
    assert r["gpc_size"] == 16 and r["launches"] == 8
    assert r["one_wave"]["efficiency"] == pytest.approx(0.6)
    assert r["later_waves"]["efficiency"] == pytest.approx(0.45)
    assert r["one_wave"]["rms"] == pytest.approx(0.0, abs=1e-9)


def test_counter_files_without_the_coalescers_counters_are_named(tmp_path, capsys):
    recs = _records(0.6, 0.45)
    for r in recs:
        del r["counters"][LRC_COUNTER]
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert main([str(path)]) == 2
    assert "collect_h200_counters_lrc.sh" in capsys.readouterr().err
