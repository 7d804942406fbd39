"""Cost of the L2 coalescer's per-GPC share (wavesim/kernels/gpc_share.py): time per key, each counted once.

    python3 benchmarks/bench_gpc_share.py [--keys 5000] [--repeats 3]

Prints the median over fresh processes (the process cache starts empty) of the time per key of one call with all the
keys and of one call per key (the first 500), for keys drawn like a sweep's (the configs of benchmarks/bench_predict.py
on random H200 shapes).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
import hwspecs
from tuner.space import load_space
from wavesim.kernels import gpc_share
from wavesim.kernels.gemm import ConfigDoesNotFit, GemmBatch

n = int(sys.argv[2])
spec = hwspecs.load_gpu("h200")
rng = np.random.default_rng(int(sys.argv[3]))
space = []
for c in load_space("broad+wave-study+grouping"):
    try:
        GemmBatch.build(spec, "bf16", [64], [4096], [4096], [c])
        space.append(c)
    except ConfigDoesNotFit:
        pass
M, N = rng.integers(1, 16384, (2, 2 * n))
configs = [space[i] for i in rng.integers(len(space), size=2 * n)]
keys = np.unique(GemmBatch.build(spec, "bf16", M, N, np.full(2 * n, 4096), configs).gpc_share_keys, axis=0)
keys = keys[rng.permutation(len(keys))[:n]]
n = len(keys)
out = {}
t = time.perf_counter(); gpc_share.distinct_shares(keys, spec.sm_count, spec.sms_per_gpc)
out["together_per_key_s"] = (time.perf_counter() - t) / n
gpc_share._cache.clear()
t = time.perf_counter()
for key in keys[:500]:
    gpc_share.distinct_shares(key[None], spec.sm_count, spec.sms_per_gpc)
out["alone_per_key_s"] = (time.perf_counter() - t) / min(n, 500)
print(json.dumps(out))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keys", type=int, default=5000)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    runs = [json.loads(subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(a.keys), str(seed)], check=True,
                                      capture_output=True, text=True).stdout) for seed in range(a.repeats)]
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"{a.keys} keys, {a.repeats} fresh processes (medians): {med['together_per_key_s'] * 1e6:.1f} us a key in "
          f"one call, {med['alone_per_key_s'] * 1e6:.1f} us a key one call each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
