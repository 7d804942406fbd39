"""LaunchConfig / GemmProblem: values that key caches and tables, with clear errors."""

import pytest
from hypothesis import given, strategies as st

from wavetune.config import GemmProblem, LaunchConfig

pow2 = st.sampled_from([16, 32, 64, 128, 256])


@given(pow2, pow2, pow2, st.integers(1, 32), st.sampled_from([1, 2, 4, 8, 16]), st.integers(1, 8))
def test_round_trips(bm, bn, bk, g, w, s):
    c = LaunchConfig(bm, bn, bk, g, w, s)
    assert LaunchConfig.from_dict(c.to_dict()) == c
    assert LaunchConfig.from_key(c.key) == c
    assert hash(LaunchConfig.from_dict(c.to_dict())) == hash(c)


def test_defaults_and_order():
    c = LaunchConfig.from_dict({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32})
    assert (c.GROUP_M, c.num_warps, c.num_stages) == (8, 4, 3)
    assert sorted([LaunchConfig(128, 64, 32), LaunchConfig(64, 64, 32)])[0].BLOCK_M == 64


@pytest.mark.parametrize("bad, msg", [
    ({"BLOCK_M": 100, "BLOCK_N": 64, "BLOCK_K": 32}, "power of two"),
    ({"BLOCK_M": 8, "BLOCK_N": 64, "BLOCK_K": 32}, ">= 16"),
    ({"BLOCK_M": 64, "BLOCK_N": 64}, "missing key 'BLOCK_K'"),
    ({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "stages": 3}, "unknown key"),
    ({"BLOCK_M": "64", "BLOCK_N": 64, "BLOCK_K": 32}, "must be an integer"),
    ({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_stages": 0}, "num_stages"),
])
def test_bad_configs_name_the_problem(bad, msg):
    with pytest.raises(ValueError, match=msg):
        LaunchConfig.from_dict(bad)


def test_bad_key():
    with pytest.raises(ValueError, match="expected like"):
        LaunchConfig.from_key("128x128")


def test_problem_validation():
    assert GemmProblem(2, 3, 4).flops == 48
    with pytest.raises(ValueError, match="dtype"):
        GemmProblem(1, 1, 1, "int4")
    with pytest.raises(ValueError, match="positive"):
        GemmProblem.from_record({"M": 0, "N": 1, "K": 1})


def test_to_triton_round_trip():
    pytest.importorskip("triton")
    c = LaunchConfig(64, 128, 32, 4, 8, 5)
    t = c.to_triton()
    assert t.num_warps == 8 and t.num_stages == 5 and t.kwargs["GROUP_M"] == 4
    assert LaunchConfig.from_triton(t) == c


def test_fastest_breaks_ties_to_the_larger_group_m():
    from wavetune.config import TIE_RTOL, fastest

    cfgs = [LaunchConfig.from_key(k) for k in ("64x128x64_g1_w4_s3", "64x128x64_g8_w4_s3", "64x128x64_g32_w4_s3",
                                               "128x128x64_g8_w4_s3")]
    assert fastest([1.0, 1.0, 1.0, 2.0], cfgs) == 2          # a tie: the largest GROUP_M
    assert fastest([1.0, 1.0, 1.0, 2.0]) == 0                # no configs: the first
    assert fastest([2.0, 1.0, 1.0 + 1e-12, 3.0], cfgs) == 2  # within the tolerance counts as a tie
    # siblings (same tile, warps, stages) within GROUP_M_TIE_RTOL of the fastest are ties the model cannot tell apart
    assert fastest([1.0, 0.99, 1.0, 2.0], cfgs) == 2
    assert fastest([1.03, 1.0, 1.03, 2.0], cfgs) == 1        # 3% slower siblings are not
    assert fastest([1.0, 2.0, 2.0, 0.995], cfgs) == 3        # another tile within 2% is not a sibling: no tie
    assert fastest([1.0, 0.999, 1.0, 2.0], cfgs, group_m_rtol=TIE_RTOL) == 1   # exact ties only


def test_fastest_takes_the_tuners_micro_configs_without_a_tile():
    from types import SimpleNamespace

    from wavetune.config import fastest

    micros = [SimpleNamespace(BLOCK_K=64, GROUP_M=g, num_warps=4, num_stages=s) for g, s in ((1, 3), (8, 3), (16, 4))]
    assert fastest([1.0, 1.01, 0.995], micros) == 2          # 16 is not a sibling of the others (4 stages)
    assert fastest([0.995, 1.0, 2.0], micros) == 1           # GROUP_M 8 is a sibling of GROUP_M 1 within 2%


def test_larger_group_m_is_the_measured_better_default():
    """The source of fastest's rule: over the broad space at GROUP_M 1, 8 and 32 on two fresh14 layers, the median
    time against GROUP_M 8 falls with the group size for wide, square and tall tiles alike."""
    import collections
    from pathlib import Path

    import numpy as np

    from wavetune.records import read_jsonl_file

    d = Path(__file__).resolve().parents[1] / "validation" / "data" / "h200" / "fresh14"
    t = collections.defaultdict(dict)
    for f in ("groupm_study.jsonl", "llm_fresh14.jsonl"):
        for r in read_jsonl_file(d / f):
            if r.get("config") and r.get("ms") and r["M"] >= 333 and (r["N"], r["K"]) in ((9216, 3072), (14336, 4096)):
                c = LaunchConfig.from_dict(r["config"])
                t[(r["M"], r["N"], c.BLOCK_M, c.BLOCK_N, c.BLOCK_K, c.num_warps, c.num_stages)][c.GROUP_M] = r["ms"]
    ratios = collections.defaultdict(lambda: collections.defaultdict(list))
    for k, v in t.items():
        if all(g in v for g in (1, 8, 32)):
            shape = "wide" if k[3] > k[2] else "tall" if k[2] > k[3] else "square"
            for g in (1, 32):
                ratios[shape][g].append(v[g] / v[8])
    assert set(ratios) == {"wide", "square", "tall"}
    for shape, r in ratios.items():
        assert np.median(r[32]) < 1.0 < np.median(r[1]), shape
