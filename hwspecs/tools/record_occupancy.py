"""Record what the CUDA driver says about occupancy for compiled Triton GEMM kernels, so that
tests/test_occupancy_evidence.py can check hwspecs.occupancy against it without a GPU.

    python3 hwspecs/tools/record_occupancy.py --out hwspecs/data/evidence/h200_occupancy.json

For each GEMM config: compile (no launch), read the kernel's registers and static shared memory from
the driver, allow the full opt-in dynamic shared memory (as Triton does for kernels over 48 KB), and
ask cuOccupancyMaxActiveBlocksPerMultiprocessor for a grid of block sizes x dynamic shared sizes.
"""

from __future__ import annotations

import argparse
import ctypes
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from a checkout

# CUfunction_attribute values (cuda.h)
ATTR_SHARED_SIZE_BYTES, ATTR_NUM_REGS, ATTR_MAX_DYNAMIC_SHARED = 1, 4, 8

CONFIGS = [  # (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages): the GUIDE's staircase configs and neighbours
    (128, 128, 64, 4, 4), (128, 128, 64, 4, 2), (64, 128, 64, 4, 3), (64, 64, 32, 4, 2),
    (128, 256, 64, 8, 3), (128, 128, 64, 8, 3), (64, 64, 64, 4, 4), (32, 64, 128, 4, 5),
    (128, 64, 32, 4, 3), (256, 128, 64, 8, 3), (16, 64, 256, 4, 4), (64, 256, 32, 8, 4),
]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import torch
    import triton

    from validation.kernels.gemm import warmup
    from wavetune.config import LaunchConfig

    cuda = ctypes.CDLL("libcuda.so.1")
    props = torch.cuda.get_device_properties(0)
    optin = props.shared_memory_per_block_optin

    def attr(fn, which):
        v = ctypes.c_int()
        assert cuda.cuFuncGetAttribute(ctypes.byref(v), which, ctypes.c_void_p(fn)) == 0
        return v.value

    kernels = []
    for bm, bn, bk, warps, stages in CONFIGS:
        cfg = LaunchConfig(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=stages)
        try:
            k = warmup(4096, 4096, 4096, torch.bfloat16, cfg)
            k._init_handles()
        except Exception as e:  # e.g. OutOfResources: record it, never drop it silently
            kernels.append({"config": [bm, bn, bk, warps, stages], "error": f"{type(e).__name__}: {e}"})
            continue
        fn = k.function
        static = attr(fn, ATTR_SHARED_SIZE_BYTES)
        assert cuda.cuFuncSetAttribute(ctypes.c_void_p(fn), ATTR_MAX_DYNAMIC_SHARED, optin - static) == 0
        cases = []
        smem_sizes = sorted({0, 1, 1024, 16384, 40000, 49152, 49153, 65536, 99 * 1024, 116736, 116737,
                             131072, optin - static, k.metadata.shared})
        for block, dyn in itertools.product((32, 64, 96, 128, 160, 256, 384, 512, 768, 1024), smem_sizes):
            if dyn + static > optin:
                continue
            n = ctypes.c_int()
            rc = cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(n), ctypes.c_void_p(fn), block,
                                                                  ctypes.c_size_t(dyn))
            cases.append([block, dyn, n.value if rc == 0 else None])
        kernels.append({"config": [bm, bn, bk, warps, stages], "num_regs": attr(fn, ATTR_NUM_REGS),
                        "triton_n_regs": k.n_regs, "static_smem": static, "triton_shared": k.metadata.shared,
                        "num_warps": k.metadata.num_warps, "cases": cases})
    drv = ctypes.c_int()
    cuda.cuDriverGetVersion(ctypes.byref(drv))
    out = {"what": "cuOccupancyMaxActiveBlocksPerMultiprocessor for compiled Triton bf16 GEMM kernels; "
                   "cases are [block_threads, dynamic_smem_bytes, ctas_per_sm]",
           "device": props.name, "cuda_driver_version": drv.value, "torch": torch.__version__,
           "triton": triton.__version__, "kernels": kernels}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"{sum(len(k.get('cases', [])) for k in kernels)} cases from {len(kernels)} kernels -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
