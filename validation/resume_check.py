"""Check a profiler output file after a kill and restart: every expected (shape, config) is there
exactly once and every line parses. `python3 -m validation.resume_check --out F --shapes S --configs C --gpu ID`"""

from __future__ import annotations

import argparse
import collections
import json
import sys


def check(out: str, shapes: str, configs: str, gpu: str, dtype: str = "bf16", cublas: bool = False) -> dict:
    from tuner.space import load_space
    from validation.measurements import load_measurements, record_key
    from validation.shapesets import load_shapes

    recs = [m.record for m in load_measurements([out], backend=None)]  # strict: any torn line fails here
    keys = collections.Counter(record_key(r) for r in recs)
    expected = set()
    for p in load_shapes(shapes, dtype):
        for c in load_space(configs):
            expected.add(record_key({"gpu": gpu, "kernel": "gemm", "backend": "triton", **p.to_record(),
                                     "config": c.to_dict()}))
        if cublas:
            expected.add(record_key({"gpu": gpu, "kernel": "gemm", "backend": "cublas", **p.to_record(), "config": None}))
    dup = sum(1 for k, n in keys.items() if n > 1)
    missing = len(expected - set(keys))
    return {"records": len(recs), "expected": len(expected), "duplicates": dup, "missing": missing,
            "extra": len(set(keys) - expected), "ok": dup == 0 and missing == 0}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--configs", required=True)
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--cublas", action="store_true")
    ap.add_argument("--dtype", default="bf16")
    a = ap.parse_args()
    res = check(a.out, a.shapes, a.configs, a.gpu, a.dtype, cublas=a.cublas)
    print(json.dumps(res))
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
