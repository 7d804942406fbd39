"""Device query and micro-measurements of the local GPU: what hwspecs cites as "measured" and what the
simulator's calibration starts from. `python3 -m validation.probe --out device_query.json` (needs a GPU).

Measures: the device properties torch exposes; DRAM bandwidth (large device-to-device copy, bytes read
plus written); the dense bf16 matmul rate through cuBLAS at 8192^3 (random data); the time of an empty
Triton kernel between CUDA events (GPU-side launch cost) and the host-side issue rate of launches.

`--memory` instead measures the load latency of L2 and DRAM (a random pointer chase, one dependent load at
a time, L1 bypassed), the L2 latency while other SMs stream from L2, and the read throughput of plain
register loads (ld.global.cg.v4) from L2 and DRAM by grid and row length (validation/kernels/membench.py;
that path is limited by the SM's issue, not by the L2: GEMMs, which load through cp.async, move more).

`--dram-load` instead measures the DRAM load latency while 128 SMs stream with more warps and tiles in flight,
up to near the DRAM's capacity (`dram_latency_curve`; validation/dram_queueing.py derives where it saturates).

`--gpcs` instead maps the SMs to GPCs (Hopper and later): the CTAs of one thread-block cluster always run
in one GPC, so launching many clusters and joining the SMs that ever shared a cluster gives the GPCs
(`gpc_layout`)."""

from __future__ import annotations

import argparse
import functools
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


def random_cycle_positions(n_lines: int, seed: int = 0):
    """numpy int64 array `nxt` over n_lines * LINE_BYTES / 8 int64 slots: slot k * 16 holds the slot of the line
    after line k in one random cycle through all lines (the other slots are 0), so following it from any
    line's slot visits every line once before coming back."""
    import numpy as np

    from validation.kernels.membench import LINE_BYTES

    if n_lines < 2:
        raise ValueError(f"a pointer cycle needs at least 2 lines, got {n_lines}")
    per = LINE_BYTES // 8
    order = np.random.default_rng(seed).permutation(n_lines)
    nxt = np.zeros(n_lines * per, dtype=np.int64)
    nxt[order * per] = np.roll(order, -1) * per
    return nxt


def memory_probe(l2_sizes_mib=(2, 8, 24), dram_sizes_mib=(512, 2048), chase_steps: int = 20000,
                 grids=(8, 16, 33, 66, 99, 132, 264, 528), tiles=((128, 32), (64, 64), (32, 128)),
                 row_stride: int = 4096, l2_buffer_mib: int = 16) -> dict:
    """Load latency of L2 and DRAM (pointer chase, cycles and ns per load), alone and while 16-128 SMs stream
    from L2 or DRAM, and the read throughput of the streaming kernel by grid and row length
    (validation/kernels/membench.py: register loads, limited by the SMs' issue rather than by the L2)."""
    import torch
    import triton

    from validation.kernels.membench import LINE_BYTES, chase_kernel, tile_read_kernel

    res: dict = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
                 "sm_count": torch.cuda.get_device_properties(0).multi_processor_count, "line_bytes": LINE_BYTES}
    out = torch.zeros(3, dtype=torch.int64, device="cuda")
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")

    def chase(buf, steps, warm: bool):
        if warm:
            chase_kernel[(1,)](buf, out, 0, steps, num_warps=1)
        else:
            flush.fill_(1)  # evict the buffer's lines from L2
        chase_kernel[(1,)](buf, out, 0, steps, num_warps=1)
        torch.cuda.synchronize()
        cyc, ns, _ = out.tolist()
        return {"cycles_per_load": cyc / steps, "ns_per_load": ns / steps, "loads": steps}

    for name, sizes, warm, steps in (("l2_latency", l2_sizes_mib, True, chase_steps),
                                     ("dram_latency", dram_sizes_mib, False, chase_steps // 4)):
        res[name] = {}
        for mib in sizes:
            n_lines = (mib << 20) // LINE_BYTES
            buf = torch.from_numpy(random_cycle_positions(n_lines, seed=mib)).cuda()
            res[name][f"{mib}MiB"] = [chase(buf, min(steps, n_lines - 1), warm) for _ in range(3)]
            del buf
    del flush

    def bandwidth(buf, rows_total, grid, rows, cols, tpi, target_bytes):
        tile_bytes = rows * cols * 2
        n_iter = max(1, int(target_bytes // (grid * tpi * tile_bytes)))
        sink = torch.empty(grid, dtype=torch.float32, device="cuda")
        run = lambda: tile_read_kernel[(grid,)](buf, sink, n_iter, rows_total // rows, ROWS=rows, COLS=cols,  # noqa: E731
                                                ROW_STRIDE=row_stride, TILES_PER_ITER=tpi, num_warps=4)
        ms = statistics.median(_events_ms(run, 5, warmup=2))
        return {"grid": grid, "rows": rows, "segment_bytes": cols * 2, "tiles_per_iter": tpi,
                "bytes": grid * n_iter * tpi * tile_bytes, "ms": ms,
                "bytes_per_s": grid * n_iter * tpi * tile_bytes / (ms / 1e3)}

    rows_total = (l2_buffer_mib << 20) // (2 * row_stride)
    buf = torch.randn(rows_total, row_stride, device="cuda").to(torch.bfloat16)
    res["l2_read_bandwidth"] = {"buffer_bytes": buf.numel() * 2, "row_stride_bytes": row_stride * 2,
                                "runs": [bandwidth(buf, rows_total, g, r, c, tpi, 1 << 30)
                                         for (r, c) in tiles for tpi in (2, 4) for g in grids]}
    sink = torch.empty(max(grids), dtype=torch.float32, device="cuda")
    under_load = functools.partial(latency_under_load, out=out, sink=sink, row_stride=row_stride)
    chain = torch.from_numpy(random_cycle_positions((8 << 20) // LINE_BYTES, seed=8)).cuda()
    res["l2_latency_under_load"] = under_load(chain, buf, rows_total, 5000, warm=True, loads=ONE_PROGRAM_PER_SM_LOADS)
    del buf, chain
    rows_total = (4 << 30) // (2 * row_stride)
    buf = torch.empty(rows_total, row_stride, device="cuda", dtype=torch.bfloat16).normal_()
    res["dram_read_bandwidth"] = {"buffer_bytes": buf.numel() * 2, "row_stride_bytes": row_stride * 2,
                                  "runs": [bandwidth(buf, rows_total, g, r, c, 4, 4 << 30)
                                           for (r, c) in tiles for g in (132, 528)]}
    # the chain is 2 GiB, so its lines miss L2 whether or not the stream is running
    chain = torch.from_numpy(random_cycle_positions((2 << 30) // LINE_BYTES, seed=2048)).cuda()
    res["dram_latency_under_load"] = under_load(chain, buf, rows_total, 2000, warm=False, loads=ONE_PROGRAM_PER_SM_LOADS)
    return res


# Streaming loads of the latency-under-load runs: (programs, warps per program, tiles in flight per program).
# One 4-warp program on each of up to 128 SMs (the other SMs stay free for the chase) reaches 2.6 TB/s of DRAM
# on the H200; more warps and tiles in flight per program push the same 128 SMs towards the DRAM's capacity.
ONE_PROGRAM_PER_SM_LOADS = tuple((g, 4, 4) for g in (0, 16, 33, 66, 99, 128))
HEAVY_LOADS = ONE_PROGRAM_PER_SM_LOADS + ((128, 8, 4), (128, 8, 8), (128, 16, 8), (128, 16, 16), (128, 32, 16))


def latency_under_load(chain, buf, rows_total, steps, warm, loads, out, sink, row_stride):
    """The chase (one CTA, on an SM of its own) on a second stream during a long tile-read launch of each load
    (programs, warps, tiles per iteration; programs < SM count leaves SMs free for it): cycles per load, and the
    stream's bytes/s."""
    import torch

    from validation.kernels.membench import LINE_BYTES, chase_kernel, tile_read_kernel

    side, main_s = torch.cuda.Stream(), torch.cuda.Stream()
    rows = []
    for g, warps, tpi in loads:
        start = (g * 7919 + warps * 31 + tpi) % 1000 * (LINE_BYTES // 8)  # a different stretch of the cycle each time
        if warm:
            chase_kernel[(1,)](chain, out, start, steps, num_warps=1)
        torch.cuda.synchronize()
        n_iter = max(1, (16 << 30) // (max(g, 1) * tpi * 8192))
        ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if g:
            stream = functools.partial(tile_read_kernel[(g,)], buf, sink, ROWS=64, COLS=64, ROW_STRIDE=row_stride,
                                       TILES_PER_ITER=tpi, num_warps=warps)
            stream(1, rows_total // 64)  # compiled and warm before it is timed
            torch.cuda.synchronize()
            with torch.cuda.stream(main_s):
                ev0.record()
                stream(n_iter, rows_total // 64)
                ev1.record()
        with torch.cuda.stream(side):
            chase_kernel[(1,)](chain, out, start, steps, num_warps=1)
        torch.cuda.synchronize()
        cyc, ns, _ = out.tolist()
        stream_ms = ev0.elapsed_time(ev1) if g else None
        rows.append({"streaming_programs": g, "stream_warps": warps, "stream_tiles_per_iter": tpi,
                     "cycles_per_load": cyc / steps, "ns_per_load": ns / steps, "stream_ms": stream_ms,
                     "stream_bytes_per_s": g * n_iter * tpi * 8192 / (stream_ms / 1e3) if g else None})
    return rows


def dram_latency_curve(row_stride: int = 4096, repeats: int = 3) -> dict:
    """DRAM load latency against DRAM load up to near the DRAM's capacity (HEAVY_LOADS, each `repeats` times):
    the curve validation/dram_queueing.py fits the loaded DRAM latency of the GEMM model to."""
    import torch
    import triton

    from validation.kernels.membench import LINE_BYTES

    out = torch.zeros(3, dtype=torch.int64, device="cuda")
    sink = torch.empty(128, dtype=torch.float32, device="cuda")
    rows_total = (4 << 30) // (2 * row_stride)
    buf = torch.empty(rows_total, row_stride, device="cuda", dtype=torch.bfloat16).normal_()
    chain = torch.from_numpy(random_cycle_positions((2 << 30) // LINE_BYTES, seed=2048)).cuda()
    run = functools.partial(latency_under_load, chain, buf, rows_total, 2000, False, HEAVY_LOADS, out, sink, row_stride)
    run()  # a whole pass untimed: the first pass's heavy streams time 15-25% slow (start-up), its latencies do not
    rows = [r for _ in range(repeats) for r in run()]
    return {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
            "sm_count": torch.cuda.get_device_properties(0).multi_processor_count, "line_bytes": LINE_BYTES,
            "row_stride_bytes": row_stride * 2, "dram_latency_under_load": rows}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--gpcs", action="store_true", help="map SMs to GPCs with thread-block clusters instead")
    mode.add_argument("--memory", action="store_true",
                      help="L2 / DRAM load latency, alone and under load, instead")
    mode.add_argument("--dram-load", action="store_true",
                      help="DRAM load latency under loads up to near the DRAM's capacity, instead")
    args = ap.parse_args()
    res = (gpc_layout() if args.gpcs else memory_probe() if args.memory else dram_latency_curve() if args.dram_load
           else probe())
    with open(args.out, "w") as f:
        json.dump(res, f, indent=1, default=str)
    print(json.dumps({k: v for k, v in res.items() if k != "device_properties"}, default=str)[:3000])


if __name__ == "__main__":
    main()
