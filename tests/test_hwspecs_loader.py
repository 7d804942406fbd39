"""Loader validation (SpecError names file, key, problem, fix), lookup errors, dtype errors, detect()."""

import re
import sys
import types

import pytest

import hwspecs
from hwspecs.spec import ARCH_DIR, GPU_DIR

H200 = (GPU_DIR / "h200.toml").read_text()
SM90 = (ARCH_DIR / "sm_90.toml").read_text()


def _write(tmp_path, text, name="mygpu.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _replace_line(text, key, new_line):
    out, n = re.subn(rf"(?m)^{re.escape(key)} = .*$", new_line, text, count=1)
    assert n == 1, key
    return out


def test_user_file_loads(tmp_path):
    spec = hwspecs.load_gpu_file(_write(tmp_path, H200))
    assert spec == hwspecs.load_gpu("h200")


def test_rates_are_derived_when_left_out(tmp_path):
    text = H200.split("# Derived from the peaks")[0]
    text = _replace_line(text, "fp32_flops_per_clock_per_sm", "")
    spec = hwspecs.load_gpu_file(_write(tmp_path, text))
    assert spec.tensor_flops_per_clock_per_sm["bf16"] == pytest.approx(3785.6, rel=1e-4)
    assert spec.sources["tensor_flops_per_clock_per_sm.bf16"][0] == "derived"


@pytest.mark.parametrize("key, line, problem", [
    ("sm_count", "", "missing key"),
    ("sm_count", 'sm_count = { value = "132", status = "datasheet", source = "x" }', "wrong type"),
    ("sm_count", 'sm_count = { value = 0, status = "datasheet", source = "x" }', "> 0"),
    ("l2_bytes", 'l2_bytes = { value = -1, status = "datasheet", source = "x" }', "> 0"),
    ("sm_count", 'sm_count = { value = 132, status = "guess", source = "x" }', "unknown status"),
    ("sm_count", 'sm_count = { value = 132, status = "measured" }', "missing 'source'"),
    ("sm_count", 'sm_count = { value = 132, status = "measured", source = " " }', "missing source"),
    ("sm_count", "sm_count = 132", "expected a table"),
    ("arch", 'arch = "sm_99"', "no architecture file"),
    ("vendor", 'vendor = "intel"', "unknown vendor"),
    ("tdp_w", 'tdp_w = { value = true, status = "datasheet", source = "x" }', "wrong type"),
    ("sms_per_gpc", 'sms_per_gpc = { value = 200, status = "measured", source = "x" }', "200 SMs per GPC but only 132"),
])
def test_spec_errors_name_file_key_problem_and_fix(tmp_path, key, line, problem):
    path = _write(tmp_path, _replace_line(H200, key, line))
    with pytest.raises(hwspecs.SpecError) as e:
        hwspecs.load_gpu_file(path)
    msg = str(e.value)
    assert str(path) in msg and f"'{key}'" in msg and problem in msg and "Fix:" in msg
    assert isinstance(e.value, ValueError) and e.value.key == key


def test_the_gpc_size_is_optional(tmp_path):
    """A spec without sms_per_gpc loads (the model then merges no L2 reads: tests/test_gpc_share.py)."""
    spec = hwspecs.load_gpu_file(_write(tmp_path, _replace_line(H200, "sms_per_gpc", "")))
    assert spec.sms_per_gpc is None and hwspecs.load_gpu("h200").sms_per_gpc == 16


def test_unknown_key_suggests_the_right_one(tmp_path):
    path = _write(tmp_path, H200.replace("sm_count = ", "sm_cont = ", 1))
    with pytest.raises(hwspecs.SpecError, match=r"'sm_cont': unknown key.*did you mean 'sm_count'"):
        hwspecs.load_gpu_file(path)


def test_unknown_dtype_and_inconsistent_rate(tmp_path):
    bad = H200.replace("[tensor_peak_flops]\n", '[tensor_peak_flops]\nfp64 = { value = 6.7e13, status = "datasheet", source = "x" }\n')
    with pytest.raises(hwspecs.SpecError, match="tensor_peak_flops.fp64': unknown dtype"):
        hwspecs.load_gpu_file(_write(tmp_path, bad))
    bad = re.sub(r"(?m)^(bf16 = \{ value = )3785.6", r"\g<1>4096.0", H200)
    with pytest.raises(hwspecs.SpecError, match="tensor_flops_per_clock_per_sm.bf16': 4096.0 disagrees"):
        hwspecs.load_gpu_file(_write(tmp_path, bad))


def test_syntax_error_names_file(tmp_path):
    path = _write(tmp_path, "id = \n")
    with pytest.raises(hwspecs.SpecError, match=re.escape(str(path))):
        hwspecs.load_gpu_file(path)


def test_arch_file_errors(tmp_path):
    assert hwspecs.load_arch_file(_write(tmp_path, SM90, "a.toml")) == hwspecs.load_arch("sm_90")
    cases = [
        (_replace_line(SM90, "regs_per_sm", ""), "'regs_per_sm': missing key"),
        (_replace_line(SM90, "compute_capability", ""), "'compute_capability': missing key (required for nvidia)"),
        (_replace_line(SM90, "max_warps_per_sm", 'max_warps_per_sm = { value = 48, status = "datasheet", source = "x" }'),
         "'max_warps_per_sm': max_warps_per_sm x warp_size != max_threads_per_sm"),
        (_replace_line(SM90, "smem_carveouts_bytes", 'smem_carveouts_bytes = { value = [0, 1.5], status = "datasheet", source = "x" }'),
         "'smem_carveouts_bytes': value [0, 1.5] has the wrong type"),
        (SM90 + 'bogus = { value = 1, status = "datasheet", source = "x" }\n', "'bogus': unknown key"),
    ]
    for i, (text, msg) in enumerate(cases):
        path = _write(tmp_path, text, f"arch{i}.toml")
        with pytest.raises(hwspecs.SpecError, match=re.escape(msg)) as e:
            hwspecs.load_arch_file(path)
        assert str(path) in str(e.value)


def test_unknown_gpu_error_lists_close_ids():
    with pytest.raises(hwspecs.UnknownGPUError) as e:
        hwspecs.load_gpu("h300")
    msg = str(e.value)
    assert isinstance(e.value, ValueError)
    assert "h200" in msg and "wavetune specs list" in msg


def test_peak_tensor_flops_errors_name_dtype_and_gpu():
    v100 = hwspecs.load_gpu("v100-sxm2")
    with pytest.raises(ValueError, match=r"V100.*v100-sxm2.*bf16|bf16.*v100-sxm2"):
        v100.peak_tensor_flops("bf16")
    with pytest.raises(hwspecs.UnsupportedDtypeError, match="t4.*tf32|tf32.*t4"):
        hwspecs.load_gpu("t4").peak_tensor_flops("tf32")
    with pytest.raises(ValueError, match="unknown tensor dtype 'fp64'"):
        v100.peak_tensor_flops("fp64")
    h200 = hwspecs.load_gpu("h200")
    assert h200.peak_tensor_flops("torch.bfloat16") == h200.peak_tensor_flops("bf16") == 989.4e12


def test_specs_are_frozen_and_hashable():
    s = hwspecs.load_gpu("h200")
    with pytest.raises(Exception):
        s.sm_count = 1
    with pytest.raises(TypeError):
        s.tensor_peak_flops["bf16"] = 1.0
    assert {s: 1}[hwspecs.load_gpu("NVIDIA H200")] == 1


# ---- detect() with a fake torch ----

def _fake_torch(monkeypatch, name="NVIDIA H200", available=True, **props):
    base = dict(name=name, multi_processor_count=132, L2_cache_size=62914560, total_memory=150754820096,
                warp_size=32, max_threads_per_multi_processor=2048, regs_per_multiprocessor=65536,
                shared_memory_per_multiprocessor=233472, shared_memory_per_block=49152,
                shared_memory_per_block_optin=232448)
    base.update(props)
    cuda = types.SimpleNamespace(is_available=lambda: available, device_count=lambda: 1 if available else 0,
                                 get_device_properties=lambda i: types.SimpleNamespace(**base))
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))


def _fake_nvml(monkeypatch, mhz):
    nvml = types.SimpleNamespace(nvmlInit=lambda: None, nvmlDeviceGetHandleByIndex=lambda i: i,
                                 nvmlDeviceGetMaxClockInfo=lambda h, c: mhz, NVML_CLOCK_SM=1)
    monkeypatch.setitem(sys.modules, "pynvml", nvml)


def test_detect_without_torch_or_gpu(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError
    assert hwspecs.detect() is None
    _fake_torch(monkeypatch, available=False)
    assert hwspecs.detect() is None


def test_detect_merges_measured_over_shipped(monkeypatch):
    _fake_torch(monkeypatch)
    _fake_nvml(monkeypatch, 1980)
    spec = hwspecs.detect()
    shipped = hwspecs.load_gpu("h200")
    assert spec.id == "h200" and spec.dram_bytes == 150754820096
    assert spec.sources["dram_bytes"] == ("measured", "torch.cuda.get_device_properties on this machine (total_memory)")
    assert spec.arch.sources["smem_per_sm_bytes"][0] == "measured"
    assert spec.sources["boost_clock_hz"][0] == "measured"
    assert spec.tensor_peak_flops == shipped.tensor_peak_flops  # a device query gives no tensor rates
    assert spec.arch.reserved_smem_per_cta_bytes == 1024
    assert hwspecs.occupancy(spec, num_warps=4, regs_per_thread=168, smem_bytes=131072).ctas_per_sm == 1


def test_detect_rescales_peaks_for_a_different_part(monkeypatch):
    _fake_torch(monkeypatch, name="NVIDIA H100 PCIe", multi_processor_count=57, max_threads_per_multi_processor=1024)
    monkeypatch.setitem(sys.modules, "pynvml", None)  # no NVML: keep the shipped clock
    spec = hwspecs.detect()
    shipped = hwspecs.load_gpu("h100-pcie")
    assert spec.sm_count == 57 and spec.boost_clock_hz == shipped.boost_clock_hz
    assert spec.peak_tensor_flops("bf16") == pytest.approx(shipped.peak_tensor_flops("bf16") / 2)
    assert spec.sources["tensor_peak_flops.bf16"][0] == "derived"
    assert spec.arch.max_warps_per_sm == 32


def test_detect_uses_torch_clock_rate_without_nvml(monkeypatch):
    _fake_torch(monkeypatch, clock_rate=1755000)  # kHz, as newer torch reports it
    monkeypatch.setitem(sys.modules, "pynvml", None)
    spec = hwspecs.detect()
    assert spec.boost_clock_hz == 1_755_000_000 and spec.sources["boost_clock_hz"][0] == "measured"
    shipped = hwspecs.load_gpu("h200")
    assert spec.peak_tensor_flops("bf16") == pytest.approx(shipped.peak_tensor_flops("bf16") * 1755 / 1980)


def test_detect_unknown_device(monkeypatch):
    _fake_torch(monkeypatch, name="NVIDIA Imaginary X1")
    with pytest.raises(hwspecs.UnknownGPUError, match="Imaginary"):
        hwspecs.detect()


def test_specs_pickle_for_worker_processes():
    import pickle

    s = hwspecs.load_gpu("mi300x")
    t = pickle.loads(pickle.dumps(s))
    assert t == s and t.sources == s.sources and hash(t) == hash(s)
