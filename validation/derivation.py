"""The shared command line of the scripts that derive a GEMM model prior from measurement files
(validation/single_row.py, validation/l2_requests.py, validation/unaligned.py): `--gpu`, `--dtype`, the files; a bad input exits 2 with
the derivation's message, which says what to measure."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable

import numpy as np

import hwspecs
from validation.measurements import Measurement, load_measurements
from wavesim.kernels.gemm import GemmBatch, config_occupancy


def load_records(gpu: str, paths: list[str | Path], dtype: str, where: Callable[[Measurement], bool] = lambda m: True,
                 what: str = "", hint: str = ""):
    """(batch, measured seconds, shapes, configs) of the records of `dtype` (and `where`) whose config launches on
    the kernel its shape gets (configs that cannot launch are skipped, as calibration does). None found: a
    ValueError that names `what` was looked for and `hint`, what measures it."""
    spec = hwspecs.load_gpu(gpu)
    keep = [m for m in load_measurements(paths, gpu=spec.id) if m.ok and m.config is not None
            and m.problem.dtype == dtype and where(m)
            and config_occupancy(spec, m.config, dtype, m.problem.N, m.problem.K)[0].ctas_per_sm > 0]
    if not keep:
        raise ValueError(f"no {dtype} records{what} for {spec.id} in {[str(p) for p in paths]}: measure some ({hint})")
    shapes = [(m.problem.M, m.problem.N, m.problem.K) for m in keep]
    configs = [m.config for m in keep]
    b = GemmBatch.build(spec, dtype, *(np.array([s[i] for s in shapes], dtype=np.float64) for i in range(3)), configs)
    return b, np.array([m.ms * 1e-3 for m in keep]), shapes, configs


def derivation_main(argv: list[str] | None, prog: str, doc: str, derive: Callable[[str, list[str], str], dict],
                    show: Callable[[dict], None]) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0])
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("measurements", nargs="+")
    a = ap.parse_args(argv)
    try:
        r = derive(a.gpu, a.measurements, a.dtype)
    except (ValueError, FileNotFoundError, hwspecs.UnknownGPUError) as e:
        ap.exit(2, f"error: {e}\n")
    show(r)
    return 0
