"""Why does 128x128x64 GROUP_M 16 on 4096^2 take 89 us at M = 1344 and 79 at M = 1408, the same grid of 352 CTAs, in
both sweep passes, while per-CTA traces of M = 1344 take 80 (NOTES sessions 28-29)? A probe on the GPU: the plain and
the traced kernel, A allocated with exactly M rows or as the first M rows of an 8192-row tensor, M = 1280..1536, each
launch timed after the profiler's clean L2 eviction, the cases interleaved REPS times (drift hits all alike); one JSON
line per case (medians and all times). Run from the repository root on the GPU machine:

    PYTHONPATH=. python3 validation/scripts/half_tile_probe.py OUT.jsonl
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

CONFIG = "128x128x64_g16_w4_s3"
N = K = 4096
MS = (1280, 1344, 1408, 1472, 1536)
REPS = 25


def main(out: str) -> None:
    import torch

    from validation.kernels.gemm import gemm
    from validation.kernels.gemm_trace import gemm_traced
    from validation.profiler import _Bench
    from wavetune.config import LaunchConfig

    cfg = LaunchConfig.from_key(CONFIG)
    bench = _Bench("cuda", "read")
    gen = torch.Generator(device="cuda").manual_seed(0)
    big = torch.randn((8192, K), device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn((K, N), device="cuda", generator=gen).to(torch.bfloat16)
    cases = {}
    for M in MS:
        exact = big[:M].clone()
        c = torch.empty((M, N), device="cuda", dtype=torch.bfloat16)
        for alloc, a in (("exact", exact), ("view", big[:M])):
            cases[(M, alloc, "plain")] = lambda a=a, c=c: gemm(a, b, cfg, c)
            cases[(M, alloc, "traced")] = lambda a=a, c=c: gemm_traced(a, b, cfg, c)
    for fn in cases.values():    # compile and warm
        fn()
    torch.cuda.synchronize()
    times = {k: [] for k in cases}
    for _ in range(REPS):
        for k, fn in cases.items():
            times[k] += bench.times_ms(fn, 1)
    with open(out, "w") as f:
        for (M, alloc, kernel), ts in times.items():
            f.write(json.dumps({"config": CONFIG, "N": N, "K": K, "M": M, "a_alloc": alloc, "kernel": kernel,
                                "ms": float(np.median(ts)), "ms_all": ts, "l2_flush": "read",
                                "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                                "triton": __import__("triton").__version__,
                                "time": time.strftime("%Y-%m-%dT%H:%M:%S")}) + "\n")
            print(f"M={M} {alloc:5s} {kernel:6s} {np.median(ts) * 1e3:7.1f} us")


if __name__ == "__main__":
    main(sys.argv[1])
