"""Where the simulator misprices configs against each other: simulated over measured time by config field.

    python3 -m validation.config_residuals FILE [FILE ...] [--by num_warps,num_stages] [--calibration auto]

Per file (and over all files), for each value of each field in --by, the median over records of simulated /
measured time after one scale per shape (the shape's median log ratio): what is left is how the model ranks the
configs of one shape, which is what its picks depend on. A value far from 1 the calibration did not see or cannot
fit (session 33: on each of the blind sets fresh19 / fresh37 / fresh43, 16 warps 0.90 and one stage 0.88-0.95, where
the calibration's configs have 4-8 warps and 2-5 stages, all within 2%; `--by spills`, session 34: aligned kernels
that spill, which no config of the tuning space does, 1.3-2.1x too slow). Records of shapes with N or K not a multiple of 16 are left out
(another kernel: validation/unaligned.py).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict

import numpy as np

from validation.measurements import load_measurements

FIELDS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages", "spills")
# "spills" is the compiled kernel's spilled words per thread (wavesim.resources), by these upper bounds: a value v
# stands for the spill counts above the previous bound up to v (0: none)
SPILL_BOUNDS = (0, 16, 64, 200, 10**6)
ALIGNMENT = 16


def residuals(spec, measurements, params, fields, dtype: str = "bf16") -> dict[str, dict[int, list[float]]]:
    """{field: {value: [log(simulated / measured) - the shape's median, ...]}}."""
    from wavesim.calibration import build_dataset, simulate_ms
    from wavesim.resources import gemm_resources

    ds = build_dataset(spec, measurements, dtype, keep=lambda s: s[1] % ALIGNMENT == 0 and s[2] % ALIGNMENT == 0)
    r = np.log(simulate_ms(ds, params) / ds.ms)
    for sid in np.unique(ds.shape_id):
        sel = ds.shape_id == sid
        r[sel] -= np.median(r[sel])
    out: dict[str, dict[int, list[float]]] = {f: defaultdict(list) for f in fields}
    spills: dict[str, int] = {}
    for i, c in enumerate(ds.configs):
        for f in fields:
            if f == "spills":
                if c.key not in spills:
                    n = gemm_resources(c, spec.arch.name, dtype).spills
                    spills[c.key] = next(v for v in SPILL_BOUNDS if n <= v)
                out[f][spills[c.key]].append(float(r[i]))
            else:
                out[f][getattr(c, f)].append(float(r[i]))
    return out


def _line(name: str, by: dict[int, list[float]]) -> str:
    return f"  {name:11s} " + "  ".join(f"{v}: {np.exp(np.median(x)):.2f} ({len(x)})" for v, x in sorted(by.items()))


def main(argv=None) -> int:
    import hwspecs
    from wavesim.calibration import load_calibration

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("measurements", nargs="+")
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--by", default="num_warps,num_stages", help=f"comma-separated fields of {FIELDS}")
    ap.add_argument("--calibration", default="auto")
    ap.add_argument("--dtype", default="bf16")
    a = ap.parse_args(argv)
    fields = a.by.split(",")
    unknown = [f for f in fields if f not in FIELDS]
    if unknown:
        ap.error(f"--by: unknown field(s) {unknown}; fields: {list(FIELDS)}")
    spec = hwspecs.load_gpu(a.gpu)
    params = load_calibration(a.calibration, a.gpu)
    pooled: dict[str, dict[int, list[float]]] = {f: defaultdict(list) for f in fields}
    for path in a.measurements:
        got = residuals(spec, load_measurements([path], gpu=a.gpu), params, fields, a.dtype)
        print(f"{path}: simulated / measured after one scale per shape, median (records)")
        for f in fields:
            print(_line(f, got[f]))
            for v, x in got[f].items():
                pooled[f][v].extend(x)
    if len(a.measurements) > 1:
        print("all files:")
        for f in fields:
            print(_line(f, pooled[f]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
