"""Device query and micro-measurements of the local GPU: what hwspecs cites as "measured" and what the
simulator's calibration starts from. `python3 -m validation.probe --out device_query.json` (needs a GPU).

Measures: the device properties torch exposes; DRAM bandwidth (large device-to-device copy, bytes read
plus written); the dense bf16 matmul rate through cuBLAS at 8192^3 (random data); the time of an empty
Triton kernel between CUDA events (GPU-side launch cost) and the host-side issue rate of launches.

`--gpcs` instead maps the SMs to GPCs (Hopper and later): the CTAs of one thread-block cluster always run
in one GPC, so launching many clusters and joining the SMs that ever shared a cluster gives the GPCs
(`gpc_layout`)."""

from __future__ import annotations

import argparse
import json
import statistics
import time


def _events_ms(fn, reps: int, warmup: int = 3) -> list[float]:
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        out.append(s.elapsed_time(e))
    return out


def probe() -> dict:
    import torch
    import triton
    import triton.language as tl

    props = torch.cuda.get_device_properties(0)
    q = {k: getattr(props, k) for k in dir(props) if not k.startswith("_") and
         isinstance(getattr(props, k), (int, float, str, bool))}
    res: dict = {"device_properties": q, "torch": torch.__version__, "triton": triton.__version__,
                 "cuda": torch.version.cuda}
    try:
        import pynvml

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        res["nvml"] = {"driver": pynvml.nvmlSystemGetDriverVersion(),
                       "max_sm_clock_mhz": pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM),
                       "max_mem_clock_mhz": pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_MEM),
                       "sm_clock_mhz_now": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                       "power_limit_w": pynvml.nvmlDeviceGetPowerManagementLimit(h) / 1000}
    except Exception as e:
        res["nvml"] = {"error": str(e)}

    # DRAM bandwidth: 4 GiB copy, counting read + write.
    n = 1 << 30
    src = torch.empty(n, dtype=torch.float32, device="cuda").uniform_()
    dst = torch.empty_like(src)
    ts = _events_ms(lambda: dst.copy_(src), 10)
    res["copy_bandwidth_bytes_per_s"] = {"median": 2 * 4 * n / (statistics.median(ts) / 1e3),
                                         "bytes_moved": 2 * 4 * n, "ms": ts}
    # smaller copies: bandwidth vs size (latency-bound regime for small transfers)
    res["copy_bandwidth_vs_bytes"] = {}
    for mib in (1, 4, 16, 64, 256, 1024):
        m = mib * (1 << 20) // 4
        ts = _events_ms(lambda: dst[:m].copy_(src[:m]), 20)
        res["copy_bandwidth_vs_bytes"][str(mib * 2 << 20)] = 2 * 4 * m / (statistics.median(ts) / 1e3)
    del src, dst

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    ts = _events_ms(lambda: a @ b, 10)
    res["cublas_bf16_8192_flops_per_s"] = {"median": 2 * 8192**3 / (statistics.median(ts) / 1e3), "ms": ts}
    del a, b

    @triton.jit
    def empty_kernel(x_ptr):
        pid = tl.program_id(0)
        if pid < 0:
            tl.store(x_ptr, pid)

    x = torch.empty(1, device="cuda")
    ts = _events_ms(lambda: empty_kernel[(1,)](x), 200, warmup=10)
    res["empty_kernel_event_ms"] = {"median": statistics.median(ts), "p10": sorted(ts)[20], "p90": sorted(ts)[180]}
    for grid in (132, 1056, 8448):
        ts = _events_ms(lambda: empty_kernel[(grid,)](x), 100, warmup=10)
        res[f"empty_kernel_grid{grid}_event_ms"] = statistics.median(ts)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(2000):
        empty_kernel[(1,)](x)
    torch.cuda.synchronize()
    res["triton_launch_issue_us"] = (time.perf_counter() - t) / 2000 * 1e6
    return res


def join_clusters(sm_sets, sm_count: int) -> list[list[int]]:
    """Groups of SMs connected by sharing a cluster (union-find), each sorted, ordered by first SM. An SM
    no cluster joined to others stays alone: a small group can be part of a GPC no sampled cluster spanned."""
    parent = list(range(sm_count))

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for sms in sm_sets:
        sms = sorted(set(int(x) for x in sms))
        for a in sms[1:]:
            parent[find(a)] = find(sms[0])
    groups: dict[int, list[int]] = {}
    for sm in range(sm_count):
        groups.setdefault(find(sm), []).append(sm)
    return sorted(groups.values(), key=lambda g: g[0])


def gpc_layout(cluster_sizes=(2, 4, 8, 16), launches: int = 20, spin_ns: int = 50_000) -> dict:
    """SMs grouped by GPC: join_clusters over the SMs each cluster ran on, in many launches of clusters that
    spin for spin_ns (so clusters are co-resident and land everywhere). Needs sm_90+ (num_ctas > 1)."""
    import torch
    import triton
    import triton.language as tl

    from validation.kernels.gemm_trace import read_u64, smid

    @triton.jit
    def cluster_smids(out_ptr, spin, C: tl.constexpr):
        cid = tl.program_id(0)  # the cluster's index when num_ctas > 1
        sm = smid()
        t0 = read_u64("%globaltimer")
        t = t0
        while t - t0 < spin:
            t = read_u64("%globaltimer")
        # a tensor store is split across the cluster's CTAs (a scalar one would be made by CTA 0 only):
        # each CTA writes its SM id into the 32 slots it owns
        offs = tl.arange(0, C * 32)
        tl.store(out_ptr + cid * C * 32 + offs, tl.zeros((C * 32,), tl.int32) + sm)

    sm_count = torch.cuda.get_device_properties(0).multi_processor_count
    sm_sets, seen = [], {}
    for C in cluster_sizes:
        clusters = 2 * sm_count // C
        out = torch.full((clusters * C * 32,), -1, dtype=torch.int32, device="cuda")
        try:
            for _ in range(launches):
                cluster_smids[(clusters,)](out, spin_ns, C=C, num_warps=1, num_ctas=C)
                torch.cuda.synchronize()
                sm_sets += [[x for x in row if x >= 0] for row in out.view(clusters, C * 32).cpu().tolist()]
            seen[C] = "ok"
        except Exception as e:  # noqa: BLE001 - a size the GPU refuses (16 is non-portable) is reported, not fatal
            seen[C] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
    gpcs = join_clusters(sm_sets, sm_count)
    return {"gpu": torch.cuda.get_device_name(), "sm_count": sm_count, "cluster_sizes": seen,
            "launches_per_size": launches, "gpc_sizes": [len(g) for g in gpcs], "gpcs": gpcs}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--gpcs", action="store_true", help="map SMs to GPCs with thread-block clusters instead")
    args = ap.parse_args()
    res = gpc_layout() if args.gpcs else probe()
    with open(args.out, "w") as f:
        json.dump(res, f, indent=1, default=str)
    print(json.dumps({k: v for k, v in res.items() if k != "device_properties"}, default=str)[:3000])


if __name__ == "__main__":
    main()
