"""The shipped TOML data: every file loads, is sourced, and agrees with what we know independently."""

import ast
import json
import math
from pathlib import Path

import pytest

import hwspecs
from hwspecs.spec import ARCH_DIR, GPU_DIR, STATUSES, TENSOR_DTYPES

REQUIRED = ["v100-sxm2", "t4", "a10", "a100-sxm4-40gb", "a100-sxm4-80gb", "l4", "l40s", "rtx-3090", "rtx-4090",
            "h100-sxm", "h100-pcie", "h20", "h200", "b200", "rtx-5090", "mi250x", "mi300x"]
ARCHS = ["sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120", "gfx90a", "gfx942"]
ALL = hwspecs.list_gpus()


def test_required_gpus_and_archs_are_shipped():
    assert ALL == sorted(ALL)
    assert set(REQUIRED) <= set(ALL)
    assert any(g.startswith("a100-pcie") for g in ALL)
    assert sorted(p.stem for p in ARCH_DIR.glob("*.toml")) == sorted(ARCHS)


@pytest.mark.parametrize("alias, gid", [
    ("h200", "h200"), ("NVIDIA H200", "h200"), ("h100", "h100-sxm"), ("NVIDIA H100 80GB HBM3", "h100-sxm"),
    ("a100-sxm4-80gb", "a100-sxm4-80gb"), ("NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"), ("mi300x", "mi300x"),
    ("AMD Instinct MI300X", "mi300x"), ("Tesla T4", "t4"), ("NVIDIA L4", "l4"), ("H200", "h200"),
    ("NVIDIA GeForce RTX 4090", "rtx-4090"), ("v100", "v100-sxm2"), ("a100-pcie", "a100-pcie-80gb"),
])
def test_aliases_and_device_names_resolve(alias, gid):
    assert hwspecs.load_gpu(alias).id == gid


def test_load_gpu_is_cached():
    assert hwspecs.load_gpu("h200") is hwspecs.load_gpu("NVIDIA H200")


@pytest.mark.parametrize("gid", ALL)
def test_every_gpu_is_complete_and_sourced(gid):
    spec = hwspecs.load_gpu(gid)
    assert spec.id == gid and spec.vendor in ("nvidia", "amd") and spec.arch.vendor == spec.vendor
    for f in ("sm_count", "boost_clock_hz", "base_clock_hz", "l2_bytes", "dram_bytes",
              "dram_bandwidth_bytes_per_s", "tdp_w", "fp32_peak_flops", "fp32_flops_per_clock_per_sm"):
        assert getattr(spec, f) > 0
        status, source = spec.sources[f]
        assert status in STATUSES and source.strip()
    assert spec.base_clock_hz <= spec.boost_clock_hz
    assert set(spec.tensor_peak_flops) <= set(TENSOR_DTYPES) and "fp16" in spec.tensor_peak_flops
    for dtype, peak in spec.tensor_peak_flops.items():
        assert spec.sources[f"tensor_peak_flops.{dtype}"][1]
        status, source = spec.sources[f"tensor_flops_per_clock_per_sm.{dtype}"]
        assert status == "derived" and "/" in source  # derived values state their formula
        rate = spec.tensor_flops_per_clock_per_sm[dtype]
        assert rate * spec.sm_count * spec.boost_clock_hz == pytest.approx(peak, rel=1e-3)
        assert spec.peak_tensor_flops(dtype) == peak
    assert json.loads(json.dumps(spec.to_dict()))["sources"]["sm_count"]["status"] in STATUSES


@pytest.mark.parametrize("name", ARCHS)
def test_every_arch_value_is_sourced(name):
    arch = hwspecs.load_arch(name)
    for key, value in arch.to_dict().items():
        if key in ("name", "vendor", "sources") or value is None:
            continue
        status, source = arch.sources[key]
        assert status in STATUSES and source.strip(), key
    assert arch.max_warps_per_sm * arch.warp_size == arch.max_threads_per_sm


def test_h200_matches_our_device_query():
    """The shipped H200 and sm_90 values agree with validation/data/h200/device_query.json (torch
    device properties and NVML of our H200) when that file is present."""
    s = hwspecs.load_gpu("h200")
    a = s.arch
    assert (s.sm_count, s.l2_bytes, s.boost_clock_hz) == (132, 62914560, 1980_000_000)
    assert (a.smem_per_sm_bytes, a.smem_per_cta_optin_bytes, a.reserved_smem_per_cta_bytes) == (233472, 232448, 1024)
    assert (a.regs_per_sm, a.max_threads_per_sm, a.max_ctas_per_sm) == (65536, 2048, 32)
    assert s.sources["sm_count"][0] == "measured"
    assert "validation/data/h200/device_query.json" in s.sources["sm_count"][1]
    path = Path(__file__).resolve().parents[1] / "validation/data/h200/device_query.json"
    if not path.exists():
        pytest.skip("device_query.json not committed")
    q = json.loads(path.read_text())
    p = q["device_properties"]
    assert p["name"] == s.name and (p["major"], p["minor"]) == (9, 0) and a.compute_capability == "9.0"
    assert p["multi_processor_count"] == s.sm_count and p["L2_cache_size"] == s.l2_bytes
    assert p["total_memory"] == s.dram_bytes
    assert p["shared_memory_per_multiprocessor"] == a.smem_per_sm_bytes
    assert p["shared_memory_per_block_optin"] == a.smem_per_cta_optin_bytes
    assert p["shared_memory_per_multiprocessor"] - p["shared_memory_per_block_optin"] == a.reserved_smem_per_cta_bytes
    assert p["shared_memory_per_block"] == a.smem_per_cta_default_bytes
    assert p["regs_per_multiprocessor"] == a.regs_per_sm and p["warp_size"] == a.warp_size
    assert p["max_threads_per_multi_processor"] == a.max_threads_per_sm
    assert p["max_threads_per_block"] == a.max_threads_per_cta
    assert q["nvml"]["max_sm_clock_mhz"] * 1e6 == s.boost_clock_hz
    assert q["nvml"]["power_limit_w"] == s.tdp_w


def test_known_per_sm_rates():
    """Architectural per-SM rates (gpu-specs.md section 3) reproduced from datasheet peaks."""
    def r(gid, dtype="fp16"):
        return hwspecs.load_gpu(gid).tensor_flops_per_clock_per_sm[dtype]
    assert r("a100-sxm4-80gb") == pytest.approx(2048, rel=0.01)
    assert r("l40s") == pytest.approx(1024, rel=0.02)
    assert r("rtx-4090") == pytest.approx(512, rel=0.01)  # GeForce, FP32 accumulate
    assert r("mi300x") == pytest.approx(2048, rel=0.01)
    assert r("mi250x") == pytest.approx(1024, rel=0.01)
    # Hopper peaks are quoted at 1830 MHz, where the rate is 4096
    h = hwspecs.load_gpu("h100-sxm")
    assert h.peak_tensor_flops("bf16") / (h.sm_count * 1.83e9) == pytest.approx(4096, rel=0.01)
    assert hwspecs.load_gpu("h200").fp32_flops_per_clock_per_sm == pytest.approx(256, rel=0.01)


def test_mi250x_is_one_gcd():
    s = hwspecs.load_gpu("mi250x")
    assert (s.sm_count, s.l2_bytes, s.dram_bandwidth_bytes_per_s) == (110, 8 * 2**20, 1638.4e9)
    assert s.arch.warp_size == 64


def test_aliases_are_unique_across_files():
    seen = {}
    for gid in ALL:
        for alias in (gid, *hwspecs.load_gpu(gid).aliases):
            assert hwspecs.resolve_gpu_id(alias) == gid
            seen.setdefault(alias.lower(), gid)
            assert seen[alias.lower()] == gid


def test_no_hardware_numbers_in_python_sources():
    """Data is not code: hwspecs/*.py holds no numeric literal that could be a hardware value."""
    allowed = {1000, 1e6, 1e9, 1e12, 1_000_000, 20}  # unit conversions (kHz, MHz, GB/s, TFLOP/s, 2**20)
    for py in Path(hwspecs.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(py.read_text())):
            if isinstance(node, ast.Constant) and type(node.value) in (int, float):
                assert node.value <= 3 or node.value in allowed, f"{py.name}:{node.lineno}: {node.value}"


def test_shipped_toml_files_only():
    assert all(p.suffix == ".toml" for p in GPU_DIR.iterdir())
    assert math.isclose(hwspecs.load_gpu("b200").l2_bytes / 2**20, 126.5)
