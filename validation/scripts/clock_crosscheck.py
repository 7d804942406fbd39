"""Cross-check of the in-kernel clock (clock64 over globaltimer, validation/kernel_clock.py) against NVML's SM clock,
both read while the same work runs for long enough that NVML samples inside it (GPU; session 22).

Three loads, each held ~2 s while a thread samples NVML every 10 ms:
  spin_1sm   one CTA spinning on %clock64 (an idle chip)
  spin_all   one spinning CTA per SM
  gemm_held  a heavy GEMM back to back (128x256x64, 8192^3), with a traced launch of it every 20th launch
Each record: the load, NVML's median SM clock during it (MHz), the in-kernel clock of its kernels (median over CTAs and
launches, MHz), and how many of each. If the two agree on the held loads, the in-kernel method is right and the
profiler's short launches really run below the boost clock; if NVML reads higher on the same work, NVML is not the
clock inside the kernel.

    python3 validation/scripts/clock_crosscheck.py --out clock_crosscheck.jsonl
"""

from __future__ import annotations

import argparse
import json
import threading
import time

import numpy as np
import torch
import triton
import triton.language as tl

from validation.kernels.gemm import gemm
from validation.kernels.gemm_trace import gemm_traced, read_u64
from wavetune.config import LaunchConfig


@triton.jit
def spin_kernel(out_ptr, CYCLES: tl.constexpr):
    pid = tl.program_id(0)
    t0 = read_u64("%globaltimer")
    c0 = read_u64("%clock64")
    c = c0
    while c - c0 < CYCLES:
        c = read_u64("%clock64")
    t1 = read_u64("%globaltimer")
    tl.store(out_ptr + pid * 2, c - c0)
    tl.store(out_ptr + pid * 2 + 1, t1 - t0)


def nvml_sampler(stop: threading.Event, out: list) -> None:
    import pynvml

    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
    while not stop.is_set():
        out.append(pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM))
        time.sleep(0.01)


def held(load: str, run_once, seconds: float) -> dict:
    samples: list = []
    stop = threading.Event()
    th = threading.Thread(target=nvml_sampler, args=(stop, samples))
    kernel_mhz = []
    t_end = time.perf_counter() + seconds
    th.start()
    i = 0
    while time.perf_counter() < t_end:
        got = run_once(i)
        if got is not None:
            kernel_mhz.extend(got)
        i += 1
    torch.cuda.synchronize()
    stop.set()
    th.join()
    return {"load": load, "nvml_sm_mhz_median": float(np.median(samples)), "nvml_samples": len(samples),
            "nvml_sm_mhz_p10_p90": [float(np.percentile(samples, 10)), float(np.percentile(samples, 90))],
            "kernel_mhz_median": float(np.median(kernel_mhz)), "kernel_readings": len(kernel_mhz), "launches": i}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=2.0)
    a = ap.parse_args()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    buf = torch.zeros(2 * sms, dtype=torch.int64, device="cuda")
    cycles = 20_000_000  # ~10 ms per launch at 2 GHz

    def spin(n):
        def once(_):
            spin_kernel[(n,)](buf, CYCLES=cycles)
            torch.cuda.synchronize()
            v = buf[: 2 * n].view(n, 2).cpu().numpy().astype(np.float64)
            return list(v[:, 0] / v[:, 1] * 1e3)
        return once

    cfg = LaunchConfig(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3)
    g = torch.Generator(device="cuda").manual_seed(0)
    A = torch.randn((8192, 8192), device="cuda", generator=g).to(torch.bfloat16)
    B = torch.randn((8192, 8192), device="cuda", generator=g).to(torch.bfloat16)
    C = torch.empty((8192, 8192), device="cuda", dtype=torch.bfloat16)
    gemm(A, B, cfg, C)
    _, tr = gemm_traced(A, B, cfg, C)
    torch.cuda.synchronize()

    def gemm_once(i):
        if i % 20:
            gemm(A, B, cfg, C)
            return None
        gemm_traced(A, B, cfg, C, tr)
        torch.cuda.synchronize()
        t = tr.cpu().numpy().astype(np.float64)
        return list((t[:, 4] - t[:, 3]) / np.maximum(t[:, 2] - t[:, 1], 1) * 1e3)

    recs = [held("spin_1sm", spin(1), a.seconds), held("spin_all", spin(sms), a.seconds),
            held("gemm_held", gemm_once, a.seconds)]
    env = {"gpu_name": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__}
    with open(a.out, "w") as f:
        for r in recs:
            f.write(json.dumps({"schema": 1, "kind": "clock_crosscheck", **r, "env": env}) + "\n")
            print(r)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
