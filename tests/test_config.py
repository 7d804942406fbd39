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
