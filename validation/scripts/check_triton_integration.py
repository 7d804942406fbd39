"""On a GPU: the tuner's Triton integration with the real kernel (validation/kernels/gemm.py).

1. table_autotune(shipped H200 table) picks a config per launch with no benchmarking; results match torch;
   its launch costs about what a direct launch of the same config costs;
2. a launch outside the table's coverage (fp16 against a bf16 table) falls back to triton.autotune (here
   over 4 of the table's configs, to keep the run short) with one log line;
3. triton.autotune(prune_configs_by=prune_configs_by(table, top_k=3)) benchmarks only 3 configs;
4. a launch with N = 32001 (contiguous operands: B's and C's strides unaligned too) gets the simulator's pick for
   Triton's unaligned kernel (DualTable.select_unaligned), timed against the table's own pick; the same N on rows
   padded to 16-divisible strides gets the same kernel (the kernel's % N), and is timed to show it; N padded to
   32016 gets the table's pick and the fast kernel.
    PYTHONPATH=. python3 validation/scripts/check_triton_integration.py --out result.json
"""

from __future__ import annotations

import argparse
import json
import logging
import time

import torch
import triton

from tuner.table import load_table
from tuner.triton_integration import prune_configs_by, table_autotune
from validation.kernels.gemm import gemm, gemm_kernel


def args_of(a, b, c):
    M, K = a.shape
    N = b.shape[1]
    return (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))


def grid(meta):
    return (triton.cdiv(meta["M"], meta["BLOCK_M"]) * triton.cdiv(meta["N"], meta["BLOCK_N"]),)


def rel_err(c, a, b):
    ref = a.float() @ b.float()
    return float((c.float() - ref).norm() / ref.norm())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    out_path = ap.parse_args().out
    logging.basicConfig(level=logging.WARNING)
    table = load_table("auto", "h200")
    res: dict = {"table_shapes": []}
    launcher = table_autotune(table)(gemm_kernel)
    for M, N, K in ((16, 4096, 4096), (777, 6144, 4096), (4096, 4096, 4096), (1, 8192, 3584)):
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        launcher[grid](*args_of(a, b, c))
        torch.cuda.synchronize()
        cfg = launcher.last_config
        err = rel_err(c, a, b)
        t_table = triton.testing.do_bench(lambda: launcher[grid](*args_of(a, b, c)), return_mode="median")
        t_direct = triton.testing.do_bench(lambda: gemm(a, b, cfg, c), return_mode="median")
        host = {}
        for name, fn in (("table", lambda: launcher[grid](*args_of(a, b, c))), ("direct", lambda: gemm(a, b, cfg, c)),
                         ("choose_only", lambda: launcher.choose(M, N, K, "bf16"))):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(300):
                fn()
            torch.cuda.synchronize()
            host[f"us_per_call_{name}"] = (time.perf_counter() - t0) / 300 * 1e6
        res["table_shapes"].append({"M": M, "N": N, "K": K, "path": launcher.last_path, "config": cfg.key,
                                    "rel_err": err, "ms_table_launch": t_table, "ms_direct_launch": t_direct, **host})
        assert launcher.last_path == "table" and err < 1e-2, res

    few = [c.to_triton() for c in table.configs()[:4]]
    fb = table_autotune(table, fallback=lambda fn: triton.autotune(configs=few, key=["M", "N", "K"])(fn))(gemm_kernel)
    a = torch.randn(512, 1024, device="cuda", dtype=torch.float16)
    b = torch.randn(1024, 2048, device="cuda", dtype=torch.float16)
    c = torch.empty(512, 2048, device="cuda", dtype=torch.float16)
    t0 = time.perf_counter()
    fb[grid](*args_of(a, b, c))
    torch.cuda.synchronize()
    res["fallback"] = {"path": fb.last_path, "rel_err": rel_err(c, a, b), "first_call_s": time.perf_counter() - t0,
                       "configs_benchmarked": len(few)}
    assert fb.last_path == "autotune" and res["fallback"]["rel_err"] < 1e-2, res

    cands = table.configs()[:12]
    tuned = triton.autotune(configs=[x.to_triton() for x in cands], key=["M", "N", "K"],
                            prune_configs_by=prune_configs_by(table, top_k=3))(gemm_kernel)
    a = torch.randn(2048, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(2048, 4096, device="cuda", dtype=torch.bfloat16)
    tuned[grid](*args_of(a, b, c))
    torch.cuda.synchronize()
    timings = getattr(tuned, "configs_timings", None) or {}
    res["prune"] = {"candidates": len(cands), "benchmarked": len(timings), "rel_err": rel_err(c, a, b),
                    "best": str(tuned.best_config)}
    M, N, K, padded = 2048, 32001, 4096, 32016
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    launcher[grid](*args_of(a, b, c))
    torch.cuda.synchronize()
    pick, fitted = launcher.last_config, table.select_fitted(M, N, K)
    res["unaligned"] = {"M": M, "N": N, "K": K, "config": pick.key, "rel_err": rel_err(c, a, b),
                        "ms_pick": triton.testing.do_bench(lambda: gemm(a, b, pick, c), return_mode="median"),
                        "table_fitted_config": fitted.key,
                        "ms_table_fitted": triton.testing.do_bench(lambda: gemm(a, b, fitted, c), return_mode="median")}
    assert pick == table.select_unaligned(M, N, K) and res["unaligned"]["rel_err"] < 1e-2, res
    bp = torch.empty(K, padded, device="cuda", dtype=torch.bfloat16)[:, :N]
    cp = torch.empty(M, padded, device="cuda", dtype=torch.bfloat16)[:, :N]
    bp.copy_(b)
    launcher[grid](*args_of(a, bp, cp))
    torch.cuda.synchronize()
    res["unaligned"]["padded_rows"] = {"row_stride": padded, "config": launcher.last_config.key,
                                       "rel_err": rel_err(cp, a, bp),
                                       "ms": triton.testing.do_bench(lambda: gemm(a, bp, launcher.last_config, cp),
                                                                     return_mode="median")}
    assert launcher.last_config == pick and res["unaligned"]["padded_rows"]["rel_err"] < 1e-2, res
    bn, cn = bp.as_strided((K, padded), bp.stride()), cp.as_strided((M, padded), cp.stride())  # N padded too
    launcher[grid](*args_of(a, bn, cn))
    torch.cuda.synchronize()
    res["unaligned"]["padded_n"] = {"N": padded, "config": launcher.last_config.key,
                                    "ms": triton.testing.do_bench(lambda: gemm(a, bn, launcher.last_config, cn),
                                                                  return_mode="median")}
    assert launcher.last_config == table.select_mnk(M, padded, K), res
    print(json.dumps(res, indent=1))
    with open(out_path, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
