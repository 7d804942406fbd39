"""How the profiler's L2 flush shapes the time of the launch after it (GPU; session 25).

    python3 validation/scripts/flush_probe.py OUT.json

validation/profiler.py evicts the L2 before each timed launch by writing a 512 MiB buffer (zero_), which leaves the L2
full of dirty lines that drain to DRAM while the next kernel runs. Launched alone under ncu (caches invalidated, no
dirty lines) short launches run 4-6 us faster and their first co-residence steps are up to 30% sharper
(validation/data/h200/msweep_ncu/). This times the same launches (CUDA events, median of 30) after three flushes:
  write  the profiler's (zero_ of the buffer),
  read   a read of the buffer (evicts the L2 with clean lines),
  drain  the write, then about 100 us of GPU sleep before the start event (the dirty lines drain first).
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from validation.kernels.gemm import gemm  # noqa: E402
from validation.profiler import _Bench  # noqa: E402
from wavetune.config import LaunchConfig  # noqa: E402

CASES = [  # (config, N, K, Ms): first co-residence steps the profiler softens, and a long launch for reference
    ("128x128x64_g1_w4_s3", 4096, 4096, [448, 512, 576, 640]),
    ("64x128x64_g8_w4_s3", 4096, 4096, [448, 512, 576, 640]),
    ("64x64x64_g8_w4_s4", 3584, 4096, [192, 256, 320, 384]),
    ("128x128x64_g16_w4_s3", 8192, 2048, [192, 256, 320, 384]),
    ("128x256x64_g8_w8_s3", 4096, 4096, [4096]),
]
REPS = 30
SLEEP_CYCLES = 200_000   # torch.cuda._sleep: about 100 us at the H200's clocks


def main(out: str) -> int:
    import torch

    write, read = _Bench("cuda", "write"), _Bench("cuda", "read")   # the profiler's own flushes
    flushes = {"write": write.flush, "read": read.flush,
               "drain": lambda: (write.flush(), torch.cuda._sleep(SLEEP_CYCLES))}
    gen = torch.Generator(device="cuda").manual_seed(0)
    rows = []
    for key, N, K, Ms in CASES:
        cfg = LaunchConfig.from_key(key)
        b = torch.randn((K, N), device="cuda", generator=gen).to(torch.bfloat16)
        for M in Ms:
            a = torch.randn((M, K), device="cuda", generator=gen).to(torch.bfloat16)
            c = torch.empty((M, N), device="cuda", dtype=torch.bfloat16)
            gemm(a, b, cfg, c)
            for name in ("write", "read", "drain", "write"):   # the profiler's flush twice: first and last
                times = []
                for _ in range(REPS):
                    flushes[name]()
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    s.record()
                    gemm(a, b, cfg, c)
                    e.record()
                    torch.cuda.synchronize()
                    times.append(s.elapsed_time(e))
                rows.append({"config": key, "N": N, "K": K, "M": M, "flush": name, "ms": statistics.median(times)})
                print(key, N, K, M, name, round(rows[-1]["ms"] * 1e3, 1), "us", flush=True)
    Path(out).write_text(json.dumps({"gpu": torch.cuda.get_device_name(), "reps": REPS, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
