"""End-to-end throughput of `wavetune predict` (process start, JSON in, simulation, JSON out).

    python3 benchmarks/bench_predict.py [--records 100000] [--repeats 3] [--jobs 1,0]

Input: the 186-config H200 space x LLM shapes (and a share of A100/H100 lines), written to a temp file;
each run is a fresh `python3 -m wavetune.cli predict` process. Prints records/s (median of the runs) with one
process (--jobs 1) and with one worker per CPU (--jobs 0, the default), in the same run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def make_input(path: Path, n: int) -> None:
    from tuner.space import load_space
    from validation.shapesets import llm_shapes

    configs = load_space("broad+wave-study+grouping")
    shapes = llm_shapes()
    gpus = ["h200"] * 8 + ["h100-sxm", "a100-sxm4-80gb"]
    with path.open("w") as f:
        for i, (c, p) in enumerate(itertools.islice(itertools.cycle(itertools.product(configs, shapes)), n)):
            g = gpus[i % len(gpus)]
            rec = {"kernel": "gemm", "gpu": g, "dtype": "bf16", "M": p.M, "N": p.N, "K": p.K, "config": c.to_dict()}
            f.write(json.dumps(rec) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--calibration", default="auto")
    ap.add_argument("--jobs", default="1,0", help="predict's --jobs values to run, in turn (0: one worker per CPU)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        inp, out = Path(d) / "in.jsonl", Path(d) / "out.jsonl"
        make_input(inp, a.records)
        for jobs in a.jobs.split(","):
            times, cpu = [], []
            for _ in range(a.repeats):
                t = time.perf_counter()
                c0 = resource.getrusage(resource.RUSAGE_CHILDREN)  # counts the workers too, once they are reaped
                subprocess.run([sys.executable, "-m", "wavetune.cli", "predict", "--input", str(inp), "--output",
                                str(out), "--calibration", a.calibration, "--jobs", jobs], check=True, cwd=ROOT,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
                times.append(time.perf_counter() - t)
                c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu.append(c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime)
            n_out = sum(1 for _ in out.open())
            errors = sum('"error"' in line for line in out.open())
            med = statistics.median(times)
            print(f"wavetune predict --jobs {jobs}: {a.records} records, {n_out} out ({errors} errors), "
                  f"runs {['%.2f' % t for t in times]} s")
            print(f"  median {med:.2f} s = {a.records / med:,.0f} records/s end to end; CPU time {statistics.median(cpu):.2f} s "
                  f"= {a.records / statistics.median(cpu):,.0f} records per CPU-second")
    print(f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}, Python {platform.python_version()}; "
          f"load average after the runs {os.getloadavg()[0]:.1f} (wall time suffers when busy)")
    print(f"this machine's pure-Python speed, to compare runs across days: 1e7 integer additions in "
          f"{python_loop_s():.2f} s (median of 3)")


def python_loop_s() -> float:
    """Seconds for a plain Python loop of 1e7 additions: the same machine kind runs 2-3x slower on some days."""
    runs = []
    for _ in range(3):
        t, s = time.perf_counter(), 0
        for i in range(10_000_000):
            s += i
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


if __name__ == "__main__":
    main()
