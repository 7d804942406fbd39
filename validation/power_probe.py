"""Clock and power under sustained GEMM load: does the H200's power management slow a config that keeps its tensor
cores busier? (needs a GPU)

    python3 -m validation.power_probe --configs C.jsonl --shapes 1024x8192x3584,16384x8192x3584 --out P.jsonl

For each (config, shape), in an order shuffled by --seed: the kernel runs back to back for --hold-s seconds (long
enough for the power management to settle on a clock), then is timed as the profiler times it (validation/profiler.py:
L2 flushed before each launch, CUDA events, median of --reps) while a thread samples NVML every 2 ms: the SM clock, the
board power and the clock-event (throttle) reasons. One JSON line per pair: ms, ms_p20, ms_p80, sm_mhz (median and
min), power_w (median), reasons (the OR of the bitmasks seen; NVML: 0x4 software power cap, 0x20 software thermal,
0x40 hardware thermal, 0x80 hardware power brake); a config that cannot launch gets "status": "error" and its
reason, and the others go on. The measurement files' records carry only NVML's clock read
between launches; this reads it while the kernel runs.

    python3 -m validation.power_probe --split-passes P.jsonl --out PREFIX

writes each seed's records of a probe file as a measurement file (validation/measurements.py), PREFIX_seed<N>.jsonl,
so that `wavetune staircase` and `wavetune validate` score the simulator against the sustained regime, one pass per
seed (the profiler's own files hold a lighter regime: its L2 flush between short launches keeps the clock higher).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import threading
import time
from pathlib import Path

from validation.profiler import _Bench, _nvml_handle, _quantile, environment
from validation.shapesets import parse_shape
from wavetune.config import GemmProblem, LaunchConfig
from wavetune.records import read_jsonl_file

SAMPLE_S = 0.002


class _Sampler(threading.Thread):
    """NVML SM clock (MHz), power (W) and clock-event reasons, every SAMPLE_S while running."""

    def __init__(self, nvml, handle):
        super().__init__(daemon=True)
        self.nvml, self.h = nvml, handle
        self.mhz: list[int] = []
        self.watts: list[float] = []
        self.reasons = 0
        self.stop = threading.Event()

    def run(self) -> None:
        reasons = getattr(self.nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            getattr(self.nvml, "nvmlDeviceGetCurrentClocksThrottleReasons")
        while not self.stop.is_set():
            self.mhz.append(self.nvml.nvmlDeviceGetClockInfo(self.h, self.nvml.NVML_CLOCK_SM))
            self.watts.append(self.nvml.nvmlDeviceGetPowerUsage(self.h) / 1e3)
            self.reasons |= int(reasons(self.h))
            time.sleep(SAMPLE_S)


def probe(configs: list[LaunchConfig], shapes: list[GemmProblem], out: Path, reps: int, hold_s: float,
          seed: int) -> None:
    try:
        import pynvml
        import torch
    except ImportError as e:
        raise SystemExit(f"validation.power_probe: {e.name} is not installed; the probe needs torch and NVML's Python "
                         "bindings (pip install nvidia-ml-py) on a machine with an NVIDIA GPU") from None
    if not torch.cuda.is_available():
        raise SystemExit("validation.power_probe: no CUDA GPU is visible (torch.cuda.is_available() is False); "
                         "run it on the GPU machine (validation/scripts/collect_h200_power.sh)")

    from validation.kernels.gemm import gemm

    pynvml.nvmlInit()
    handle = _nvml_handle(pynvml)
    bench = _Bench("cuda")
    env = environment("cuda")
    pairs = [(p, c) for p in shapes for c in configs]
    random.Random(seed).shuffle(pairs)
    tensors: dict[tuple, tuple] = {}
    with out.open("a") as f:
        for p, cfg in pairs:
            if (p.M, p.N, p.K) not in tensors:
                tensors.clear()  # one shape's operands at a time
                a = torch.randn((p.M, p.K), device="cuda", dtype=torch.bfloat16)
                b = torch.randn((p.K, p.N), device="cuda", dtype=torch.bfloat16)
                tensors[(p.M, p.N, p.K)] = (a, b, torch.empty((p.M, p.N), device="cuda", dtype=torch.bfloat16))
            a, b, cc = tensors[(p.M, p.N, p.K)]

            def fn():
                gemm(a, b, cfg, cc)

            base = {"schema": 1, "kind": "power_probe", "gpu": "h200", "dtype": "bf16", "M": p.M, "N": p.N, "K": p.K,
                    "config": cfg.to_dict(), "seed": seed}
            try:
                fn()
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001 (a config that cannot launch here: say so and go on)
                f.write(json.dumps({**base, "status": "error", "error": str(e).splitlines()[0]}) + "\n")
                f.flush()
                continue
            t_end = time.perf_counter() + hold_s
            while time.perf_counter() < t_end:  # sustained load: let the power management settle
                for _ in range(8):
                    fn()
                torch.cuda.synchronize()
            sampler = _Sampler(pynvml, handle)
            sampler.start()
            ts = bench.times_ms(fn, reps)
            sampler.stop.set()
            sampler.join()
            rec = {**base, "status": "ok", "ms": statistics.median(ts), "ms_p20": _quantile(ts, 0.2),
                   "ms_p80": _quantile(ts, 0.8), "reps": reps, "hold_s": hold_s,
                   "sm_mhz": statistics.median(sampler.mhz), "sm_mhz_min": min(sampler.mhz),
                   "power_w": statistics.median(sampler.watts), "reasons": sampler.reasons,
                   "samples": len(sampler.mhz), "env": env}
            f.write(json.dumps(rec) + "\n")
            f.flush()


# Probe fields a measurement record keeps (the rest of a measurement record is fixed: a Triton GEMM, status as probed).
_KEPT = ("gpu", "dtype", "M", "N", "K", "config", "status", "ms", "error", "sm_mhz", "power_w", "reasons", "env")


def split_passes(probe_file: str | Path, prefix: str | Path) -> list[Path]:
    """One measurement file per seed of a probe file (PREFIX_seed<N>.jsonl, overwritten); returns their paths."""
    by_seed: dict[int, list[dict]] = {}
    for i, r in enumerate(read_jsonl_file(probe_file)):
        if r.get("kind") != "power_probe" or not isinstance(r.get("seed"), int):
            raise ValueError(f"{probe_file}:{i + 1}: not a power_probe record with an integer seed; pass a file "
                             "written by `python3 -m validation.power_probe`")
        by_seed.setdefault(r["seed"], []).append(r)
    paths = []
    for seed, recs in sorted(by_seed.items()):
        hold = next((r["hold_s"] for r in recs if r.get("hold_s") is not None), None)   # error records lack it
        regime = f"sustained: held {hold} s before timing" if hold else "burst: timed with no hold, as the profiler"
        path = Path(f"{prefix}_seed{seed}.jsonl")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps({"schema": 1, "kernel": "gemm", "backend": "triton",
                                            "regime": f"{regime} (validation.power_probe)",
                                            **{k: r[k] for k in _KEPT if k in r}}) + "\n" for r in recs))
        paths.append(path)
    return paths


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configs", help="JSONL of launch configs (one object per line)")
    ap.add_argument("--shapes", help="MxNxK list, comma-separated")
    ap.add_argument("--out", required=True, help="probe file to append to (with --split-passes: the output prefix)")
    ap.add_argument("--split-passes", metavar="PROBE_FILE",
                    help="no GPU: write each seed of PROBE_FILE as a measurement file OUT_seed<N>.jsonl")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--hold-s", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    if a.split_passes:
        try:
            for path in split_passes(a.split_passes, a.out):
                print(path)
        except (ValueError, OSError) as e:
            raise SystemExit(f"validation.power_probe: {e}") from None
        return
    if not (a.configs and a.shapes):
        raise SystemExit("validation.power_probe: --configs and --shapes are required to probe (or give --split-passes)")
    try:  # every input is checked before the GPU is touched
        configs = [LaunchConfig.from_dict(d, f"{a.configs}:{i + 1}") for i, d in enumerate(read_jsonl_file(a.configs))]
        shapes = [parse_shape(t, "bf16") for t in a.shapes.split(",")]
    except (ValueError, OSError) as e:
        raise SystemExit(f"validation.power_probe: {e}") from None
    probe(configs, shapes, Path(a.out), a.reps, a.hold_s, a.seed)


if __name__ == "__main__":
    main()
