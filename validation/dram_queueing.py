"""How DRAM latency grows with DRAM load, derived from the memory probe (the source of the GEMM model's
`dram_queueing` prior, wavesim/data/gemm_priors.toml, and of its DRAM_LOAD_CAP, wavesim/kernels/gemm.py).

The probe (`python3 -m validation.probe --memory`, and `--dram-load` for loads up to the DRAM's capacity) times
a dependent pointer chase through DRAM while 0-128 other SMs stream from DRAM, and records the stream's bytes/s.
With rho = that throughput over the model's DRAM capacity (the datasheet bandwidth x the prior dram_efficiency),
a queue's latency grows as rho / (1 - rho):

    latency = unloaded x (1 + q x rho / (1 - rho))

q is a straight-line least squares of the measured latency on rho / (1 - rho), q = slope / intercept, over the
loads of one 4-warp program per SM (the `--memory` loads). The queue is bounded: near the DRAM's capacity
(rho >= SATURATION_RHO) the latency stops at `saturation` x unloaded whatever the stream's depth, and deeper
streams (more warps and tiles in flight per SM) reach it already at rho ~0.8. The curve reaches the saturation at

    rho_cap = (saturation - 1) / (q + saturation - 1)

past which the model holds the latency (DRAM_LOAD_CAP) and its DRAM bandwidth pool limits instead.

    python3 -m validation.dram_queueing --gpu h200 validation/data/h200/memory_probe.json \
        validation/data/h200/dram_load_probe.json
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import hwspecs
from validation.derivation import derivation_main
from wavesim.kernels.gemm import GemmParams


# Loads at and above this share of the model's DRAM capacity measure the saturated latency.
SATURATION_RHO = 0.9
# The stream of the `--memory` loads: one program per SM of this many warps and tiles in flight (validation/probe.py).
ONE_PROGRAM_LOAD = {"stream_warps": 4, "stream_tiles_per_iter": 4}


def dram_queueing(gpu: str, paths: list[str | Path], dtype: str = "bf16") -> dict:
    """q (and the points it rests on) from the dram_latency_under_load entries of memory-probe files; with loads
    near the DRAM's capacity among them, also the saturated latency and the rho at which the curve reaches it."""
    spec = hwspecs.load_gpu(gpu)
    capacity = spec.dram_bandwidth_bytes_per_s * GemmParams.priors().dram_efficiency
    points = []
    for path in paths:
        doc = json.loads(Path(path).read_text())
        for row in doc.get("dram_latency_under_load") or []:
            rho = (row.get("stream_bytes_per_s") or 0.0) / capacity
            if rho >= 1.0:
                raise ValueError(f"{path}: a stream of {row['stream_bytes_per_s'] / 1e12:.2f} TB/s exceeds the model's "
                                 f"DRAM capacity for {spec.id} ({capacity / 1e12:.2f} TB/s): wrong --gpu?")
            one_program = all(row.get(k, v) == v for k, v in ONE_PROGRAM_LOAD.items())
            points.append((rho, float(row["cycles_per_load"]), one_program))
    if len({round(r, 3) for r, _, one in points if one}) < 3:
        raise ValueError(f"fewer than 3 DRAM loads in the 'dram_latency_under_load' entries of {list(map(str, paths))}: "
                         "run `python3 -m validation.probe --memory --out F` on the GPU to measure them")
    rho = np.array([r for r, _, _ in points])
    lat = np.array([c for _, c, _ in points])
    one = np.array([o for _, _, o in points])
    slope, intercept = np.polyfit(rho[one] / (1.0 - rho[one]), lat[one], 1)
    q = float(slope / intercept)
    out = {"points": int(one.sum()), "dram_capacity_Bps": capacity, "max_rho": float(rho[one].max()),
           "unloaded_cycles": float(intercept), "queueing": q, "latency_at_max_rho": float(lat[one][np.argmax(rho[one])])}
    near_capacity = rho >= SATURATION_RHO
    if near_capacity.any():
        saturation = float(np.median(lat[near_capacity]) / intercept)
        out.update(saturated_points=int(near_capacity.sum()), saturation=saturation,
                   rho_cap=(saturation - 1.0) / (q + saturation - 1.0))
    return out


def _show(r: dict) -> None:
    print(f"{r['points']} DRAM latencies under load up to {r['max_rho']:.2f} of {r['dram_capacity_Bps'] / 1e12:.2f} TB/s: "
          f"unloaded {r['unloaded_cycles']:.0f} cycles, queueing q = {r['queueing']:.3f} "
          f"({r['latency_at_max_rho']:.0f} cycles measured at the heaviest load)")
    if "saturation" in r:
        print(f"{r['saturated_points']} loads at >= {SATURATION_RHO} of the capacity: the latency saturates at "
              f"{r['saturation']:.2f} x unloaded, which the queue reaches at rho = {r['rho_cap']:.3f} (the model's cap)")


def main(argv: list[str] | None = None) -> int:
    return derivation_main(argv, "python3 -m validation.dram_queueing", __doc__, dram_queueing, _show)


if __name__ == "__main__":
    raise SystemExit(main())
