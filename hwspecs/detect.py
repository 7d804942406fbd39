"""Build a GPUSpec from the GPU this process can see, merged over the shipped TOML of that GPU.

A device query gives the structure (SMs, L2, shared memory, registers, threads) but not the tensor
rates, so those come from the shipped file of the matching GPU (found by the device name).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hwspecs.spec import FrozenMap, GPUSpec, load_gpu

MEASURED = "torch.cuda.get_device_properties on this machine"
KHZ = 1000  # unit conversion, Hz per kHz
# GPUSpec / ArchLimits field -> torch device-property attribute.
_GPU_PROPS = {"sm_count": "multi_processor_count", "l2_bytes": "L2_cache_size", "dram_bytes": "total_memory"}
_ARCH_PROPS = {
    "warp_size": "warp_size",
    "max_threads_per_cta": "max_threads_per_block",
    "max_threads_per_sm": "max_threads_per_multi_processor",
    "regs_per_sm": "regs_per_multiprocessor",
    "smem_per_sm_bytes": "shared_memory_per_multiprocessor",
    "smem_per_cta_default_bytes": "shared_memory_per_block",
    "smem_per_cta_optin_bytes": "shared_memory_per_block_optin",
}


def _prop(props: Any, attr: str) -> int | None:
    v = getattr(props, attr, None)
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def _nvml_max_sm_clock_hz(index: int) -> int | None:
    """Max SM clock via NVML when pynvml is installed (the device query has no clock)."""
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        mhz = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_SM)
        return int(mhz) * 1_000_000 if mhz else None
    except Exception:  # no pynvml, no driver, or a ROCm machine: keep the shipped clock
        return None


def detect(device: int = 0) -> GPUSpec | None:
    """The visible GPU `device` as a GPUSpec, or None when torch or a GPU is missing.

    Raises hwspecs.UnknownGPUError when the device's name matches no shipped GPU file."""
    try:
        import torch
    except ImportError:
        return None
    try:
        if not torch.cuda.is_available() or torch.cuda.device_count() <= device:
            return None
        props = torch.cuda.get_device_properties(device)
    except Exception:  # a broken driver behaves like no GPU here
        return None
    base = load_gpu(props.name or getattr(props, "gcnArchName", ""))

    gpu_vals: dict[str, Any] = {}
    arch_vals: dict[str, Any] = {}
    gpu_src, arch_src = dict(base.sources), dict(base.arch.sources)
    for out, src, table in ((gpu_vals, gpu_src, _GPU_PROPS), (arch_vals, arch_src, _ARCH_PROPS)):
        for fname, attr in table.items():
            if (v := _prop(props, attr)) is not None:
                out[fname] = v
                src[fname] = ("measured", f"{MEASURED} ({attr})")
    if (clock := _nvml_max_sm_clock_hz(device)) is not None:
        gpu_vals["boost_clock_hz"] = clock
        gpu_src["boost_clock_hz"] = ("measured", "NVML max SM clock (nvmlDeviceGetMaxClockInfo) on this machine")
    elif (khz := _prop(props, "clock_rate")) is not None:  # newer torch reports the max SM clock in kHz
        gpu_vals["boost_clock_hz"] = khz * KHZ
        gpu_src["boost_clock_hz"] = ("measured", f"{MEASURED} (clock_rate, kHz)")
    if "max_threads_per_sm" in arch_vals or "warp_size" in arch_vals:
        threads = arch_vals.get("max_threads_per_sm", base.arch.max_threads_per_sm)
        arch_vals["max_warps_per_sm"] = threads // arch_vals.get("warp_size", base.arch.warp_size)
        arch_src["max_warps_per_sm"] = ("derived", "max_threads_per_sm // warp_size (measured on this machine)")
    if "smem_per_sm_bytes" in arch_vals and "smem_per_cta_optin_bytes" in arch_vals \
            and base.arch.reserved_smem_per_cta_bytes:
        # CC >= 8: what the opt-in maximum leaves of the SM's shared memory is the per-CTA reservation
        arch_vals["reserved_smem_per_cta_bytes"] = arch_vals["smem_per_sm_bytes"] - arch_vals["smem_per_cta_optin_bytes"]
        arch_src["reserved_smem_per_cta_bytes"] = ("derived", "smem_per_sm_bytes - smem_per_cta_optin_bytes, measured here")
    arch = dataclasses.replace(base.arch, **arch_vals, sources=FrozenMap(arch_src))

    # Peaks are per-SM rates x SMs x clock, so a different SM count or clock scales them.
    sms = gpu_vals.get("sm_count", base.sm_count)
    clock = gpu_vals.get("boost_clock_hz", base.boost_clock_hz)
    scale = (sms * clock) / (base.sm_count * base.boost_clock_hz)
    peaks = {d: p * scale for d, p in base.tensor_peak_flops.items()}
    if scale != 1:
        how = ("derived", f"shipped peak x (sm_count x boost_clock_hz) / shipped ({base.sm_count} SMs, "
                          f"{base.boost_clock_hz} Hz), with this machine's {sms} SMs at {clock} Hz")
        gpu_src.update({f"tensor_peak_flops.{d}": how for d in peaks}, fp32_peak_flops=how)
    fp32 = base.fp32_peak_flops * scale
    return dataclasses.replace(base, **gpu_vals, arch=arch, tensor_peak_flops=FrozenMap(peaks),
                               fp32_peak_flops=fp32, sources=FrozenMap(gpu_src))
