"""hwspecs: sourced GPU hardware specs (TOML data) and the occupancy calculator.

    import hwspecs
    spec = hwspecs.load_gpu("h200")                  # id, alias or torch device name
    occ = hwspecs.occupancy(spec, num_warps=4, regs_per_thread=168, smem_bytes=131072)
"""

from hwspecs.detect import detect
# `hwspecs.occupancy` stays the module (hwspecs.occupancy.explain) and is also callable as the function
# (hwspecs.occupancy(spec, ...)); see the end of occupancy.py.
from hwspecs import occupancy
from hwspecs.occupancy import Occupancy, explain
from hwspecs.spec import (
    ArchLimits,
    GPUSpec,
    SpecError,
    UnknownGPUError,
    UnsupportedDtypeError,
    list_gpus,
    load_arch,
    load_arch_file,
    load_gpu,
    load_gpu_file,
    resolve_gpu_id,
)

__all__ = [
    "ArchLimits", "GPUSpec", "Occupancy", "SpecError", "UnknownGPUError", "UnsupportedDtypeError",
    "detect", "explain", "list_gpus", "load_arch", "load_arch_file", "load_gpu", "load_gpu_file",
    "occupancy", "resolve_gpu_id",
]
