"""How DRAM latency grows with DRAM load, derived from the memory probe (the source of the GEMM model's
`dram_queueing` prior, wavesim/data/gemm_priors.toml).

The probe (`python3 -m validation.probe --memory`) times a dependent pointer chase through DRAM while 0-128
other SMs stream from DRAM, and records the stream's bytes/s. With rho = that throughput over the model's DRAM
capacity (the datasheet bandwidth x the prior dram_efficiency), a queue's latency grows as rho / (1 - rho):

    latency = unloaded x (1 + q x rho / (1 - rho))

q is a straight-line least squares of the measured latency on rho / (1 - rho): q = slope / intercept.

    python3 -m validation.dram_queueing --gpu h200 validation/data/h200/memory_probe.json
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import hwspecs
from validation.derivation import derivation_main
from wavesim.kernels.gemm import GemmParams


def dram_queueing(gpu: str, paths: list[str | Path], dtype: str = "bf16") -> dict:
    """q (and the points it rests on) from the dram_latency_under_load entries of memory-probe files."""
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
            points.append((rho, float(row["cycles_per_load"])))
    if len({round(r, 3) for r, _ in points}) < 3:
        raise ValueError(f"fewer than 3 DRAM loads in the 'dram_latency_under_load' entries of {list(map(str, paths))}: "
                         "run `python3 -m validation.probe --memory --out F` on the GPU to measure them")
    rho = np.array([r for r, _ in points])
    lat = np.array([c for _, c in points])
    slope, intercept = np.polyfit(rho / (1.0 - rho), lat, 1)
    return {"points": len(points), "dram_capacity_Bps": capacity, "max_rho": float(rho.max()),
            "unloaded_cycles": float(intercept), "queueing": float(slope / intercept),
            "latency_at_max_rho": float(lat[np.argmax(rho)])}


def _show(r: dict) -> None:
    print(f"{r['points']} DRAM latencies under load up to {r['max_rho']:.2f} of {r['dram_capacity_Bps'] / 1e12:.2f} TB/s: "
          f"unloaded {r['unloaded_cycles']:.0f} cycles, queueing q = {r['queueing']:.3f} "
          f"({r['latency_at_max_rho']:.0f} cycles measured at the heaviest load)")


def main(argv: list[str] | None = None) -> int:
    return derivation_main(argv, "python3 -m validation.dram_queueing", __doc__, dram_queueing, _show)


if __name__ == "__main__":
    raise SystemExit(main())
