"""GPU profiler for the canonical Triton GEMM: `wavetune profile`.

For every (shape, config) not yet in the output file: compile (configs are compiled first, in parallel
processes), run once and check the result against torch, then time it (CUDA events around each run,
L2 flushed before each run, median of repeats) and append one record (schema: validation.measurements)
with flush + fsync. Failures are records too, with a reason. On restart the file is read back, a torn
last line from a killed run is cut off, and only what is missing is measured: no duplicate, no loss.

On a machine with no GPU the same loop runs under TRITON_INTERPRET=1 on CPU tensors with a wall-clock
timer (device="cpu"): slow, for tests of the loop itself, never for timings anyone should trust.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from validation.measurements import SCHEMA_VERSION, record_key
from wavetune.config import GemmProblem, LaunchConfig
from wavetune.records import dumps, is_gzip, read_jsonl_file

# Relative Frobenius error ||C - C_ref|| / ||C_ref|| accepted per dtype (C_ref in fp32 from the same
# rounded inputs). bf16 output rounding alone is ~2^-9 = 2e-3; fp32 inputs go through tf32 (~5e-4).
TOLERANCE = {"bf16": 1e-2, "fp16": 5e-3, "fp32": 5e-3}
# Bytes zeroed before every timed run to evict the previous run's data from L2; 4x the largest L2
# among shipped NVIDIA GPUs (B200: 126.5 MiB, hwspecs/data/gpus/b200.toml) and what do_bench uses.
L2_FLUSH_BYTES = 512 * 1024 * 1024
# How the L2 is emptied before each timed launch. "write" (zeroing the buffer, as triton.testing.do_bench does, so what
# Triton's autotuner sees; the default and every record before session 25's cleanflush collections) leaves
# the L2 full of dirty lines, which the next launch writes back as it misses: on the H200 that adds 4-7 us to launches
# of one CTA per SM and softens their first co-residence steps (+6-10% where a clean L2 gives +18-33:
# validation/data/h200/flush/flush_probe.json). "read" (summing the buffer) evicts with clean lines.
L2_FLUSHES = ("write", "read")
# A timing whose repeats spread more than this, (p80 - p20) / median, is taken again (up to RETIMES more
# times, keeping the steadiest): on our H200 the median spread is 0.02 and 8 of 28,500 committed records
# spread more than 0.25, one of them 31 to 95 us around a 68 us median (validation/data/h200/*/llm*.jsonl).
UNSTABLE_SPREAD = 0.25
RETIMES = 2


@dataclass
class ProfileOptions:
    gpu: str                         # hwspecs id recorded in each record (e.g. "h200")
    dtype: str = "bf16"
    target_ms: float = 25.0          # timed repeats per record aim at this much kernel time...
    min_reps: int = 5                # ...within these bounds
    max_reps: int = 50
    budget_s: float | None = None    # stop cleanly (all written records kept) after this long
    compile_workers: int = 0         # 0: one per CPU core (at most 16)
    compile_timeout_s: float = 180.0
    with_cublas: bool = True         # also time torch.matmul (cuBLAS) once per shape
    retry_failed: bool = False       # re-measure records whose status is not "ok"
    retime_unstable: bool = False    # re-measure ok records whose timing spread exceeds UNSTABLE_SPREAD
    seed: int = 0                    # of the measurement order and the operands
    l2_flush: str = "write"          # L2_FLUSHES: how the L2 is emptied before each timed launch
    device: str = "cuda"             # "cpu" runs the Triton interpreter (tests only)
    log: Callable[[str], None] = field(default=lambda s: print(s, file=sys.stderr, flush=True))


# --------------------------------------------------------------------------------------------- output file
def timing_spread(rec: dict) -> float | None:
    """(p80 - p20) / median of an ok record's timed repeats (None when it has none)."""
    if rec.get("status") != "ok" or not rec.get("ms") or rec.get("ms_p20") is None or rec.get("ms_p80") is None:
        return None
    return _spread(rec)


def needs_retime(rec: dict) -> bool:
    """An ok record whose repeats spread too much and that no re-timing has tried to fix yet."""
    spread = timing_spread(rec)
    return spread is not None and spread > UNSTABLE_SPREAD and "retimes" not in rec


def unstable_records(path: str | Path, dtype: str) -> tuple[list[GemmProblem], list[LaunchConfig]]:
    """The shapes and configs of the triton records of `path` that need a re-timing (needs_retime)."""
    recs = read_jsonl_file(path) if Path(path).exists() else []
    latest = {record_key(r): r for r in recs}
    todo = [r for r in latest.values() if needs_retime(r) and r.get("config") and r.get("dtype") == dtype]
    shapes = sorted({(r["M"], r["N"], r["K"]) for r in todo})
    configs = {LaunchConfig.from_dict(r["config"]) for r in todo}
    return [GemmProblem(*mnk, dtype) for mnk in shapes], sorted(configs, key=lambda c: c.key)


def read_existing(path: Path, retry_failed: bool = False, retime_unstable: bool = False) -> set[tuple]:
    """Keys already measured. A torn last line (a run killed mid-write) is cut off so appends stay valid.
    With retry_failed / retime_unstable, failed / unsteadily timed records count as not measured (a later
    record of the same key replaces them: validation.measurements.dedupe_latest)."""
    done: set[tuple] = set()
    if not path.exists():
        return done
    if is_gzip(path):  # appending text would corrupt it, and the torn-line check would cut it
        raise ValueError(f"{path} is gzip-compressed (finished measurements are committed that way): profile into "
                         f"another file, or decompress it first (gzip -dc {path} > new.jsonl); it is left as it is")
    data = path.read_bytes()
    good_end = data.rfind(b"\n") + 1
    if good_end < len(data):  # partial record with no newline: drop it, it will be measured again
        with path.open("r+b") as f:
            f.truncate(good_end)
    for lineno, line in enumerate(data[:good_end].decode().splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}:{lineno}: not valid JSON ({e.msg}); fix or delete that line and "
                             f"run again, the other records are kept") from None
        redo = (retry_failed and rec.get("status") != "ok") or (retime_unstable and needs_retime(rec))
        key = record_key(rec)
        if redo:
            done.discard(key)  # the latest record of a key decides
        else:
            done.add(key)
    return done


def append_record(f, rec: dict) -> None:
    f.write(dumps(rec) + "\n")
    f.flush()
    os.fsync(f.fileno())


# --------------------------------------------------------------------------------------------- environment
def environment(device: str) -> dict:
    import torch
    import triton

    env = {"torch": torch.__version__.split("+")[0], "triton": triton.__version__, "cuda": torch.version.cuda}
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        env.update(gpu_name=props.name, sm_count=props.multi_processor_count)
        try:
            import pynvml

            pynvml.nvmlInit()
            h = _nvml_handle(pynvml)
            env["driver"] = pynvml.nvmlSystemGetDriverVersion()
            env["max_sm_clock_mhz"] = pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM)
            env["max_mem_clock_mhz"] = pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_MEM)
            env["power_limit_w"] = pynvml.nvmlDeviceGetPowerManagementLimit(h) / 1000
        except Exception as e:  # NVML is optional: records stay valid without clocks
            env["nvml_error"] = str(e)
    else:
        env.update(gpu_name="cpu (TRITON_INTERPRET=1)")
    return env


def _nvml_handle(pynvml):
    """NVML handle of torch's device 0 (NVML ignores CUDA_VISIBLE_DEVICES, so match by UUID)."""
    import torch

    uuid = str(torch.cuda.get_device_properties(0).uuid)
    try:
        return pynvml.nvmlDeviceGetHandleByUUID(uuid if uuid.startswith("GPU-") else "GPU-" + uuid)
    except Exception:
        return pynvml.nvmlDeviceGetHandleByIndex(0)


class _Clock:
    """Current SM clock through NVML when there is one (records carry it to spot throttling)."""

    def __init__(self, device: str):
        self.h = None
        if device == "cuda":
            try:
                import pynvml

                pynvml.nvmlInit()
                self.h, self.nvml = _nvml_handle(pynvml), pynvml
            except Exception:
                self.h = None

    def sm_mhz(self) -> int | None:
        return self.nvml.nvmlDeviceGetClockInfo(self.h, self.nvml.NVML_CLOCK_SM) if self.h is not None else None


# --------------------------------------------------------------------------------------------- compile
def _spec_class(p: GemmProblem) -> tuple:
    """Triton specializes integer arguments by ==1 and %16==0: shapes in one class share a binary."""
    return tuple((v == 1, v % 16 == 0) for v in (p.M, p.N, p.K))


def _compile_one(args):
    M, N, K, dtype, cfg_dict = args
    import torch

    from validation.kernels.gemm import warmup

    try:
        k = warmup(M, N, K, getattr(torch, _TORCH_DTYPE[dtype]), LaunchConfig.from_dict(cfg_dict))
        return "ok", {"n_regs": getattr(k, "n_regs", None), "n_spills": getattr(k, "n_spills", None),
                      "shared_bytes": getattr(getattr(k, "metadata", None), "shared", None)}
    except Exception as e:
        return "compile_error", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:500]


_TORCH_DTYPE = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


POLL_S = 0.2   # how often parallel_with_timeouts looks at its workers


def _kill_pool(ex: ProcessPoolExecutor) -> None:
    """Stop a pool now, running work included: shutdown() alone waits for a compile that may take an hour (ptxas on a
    tile that spills thousands of registers). Uses the executor's worker table, a CPython internal since 3.2."""
    for proc in list((getattr(ex, "_processes", None) or {}).values()):
        proc.terminate()
    ex.shutdown(wait=False, cancel_futures=True)


def parallel_with_timeouts(fn: Callable, jobs: dict, workers: int, timeout_s: float, deadline: float | None = None,
                           mp_context=None) -> tuple[dict, list, list]:
    """fn(args) for every {key: args} in worker processes: (results {key: value or the exception it raised}, keys
    whose call ran longer than timeout_s, keys not run by `deadline` (time.perf_counter())). A call past its timeout
    is killed with its pool; the calls that pool had not finished go to a fresh one."""
    results: dict = {}
    timed_out: list = []
    remaining = dict(jobs)
    while remaining:
        ex = ProcessPoolExecutor(max_workers=workers, mp_context=mp_context)
        futs = {key: ex.submit(fn, args) for key, args in remaining.items()}
        started: dict = {}
        try:
            while futs:
                now = time.perf_counter()
                if deadline is not None and now > deadline:
                    return results, timed_out, list(remaining)
                stuck = False
                for key, fut in list(futs.items()):
                    if fut.done():
                        try:
                            results[key] = fut.result()
                        except Exception as e:  # noqa: BLE001 - a worker crashed (compiler segfault): the caller decides
                            results[key] = e
                        del futs[key], remaining[key]
                    elif fut.running() and now - started.setdefault(key, now) > timeout_s:
                        timed_out.append(key)
                        del futs[key], remaining[key]
                        stuck = True
                if stuck:
                    break   # its worker is still busy: kill this pool, the rest start again in a fresh one
                if futs:
                    time.sleep(POLL_S)
        finally:
            _kill_pool(ex)
    return results, timed_out, []


def precompile(todo: list[tuple[GemmProblem, LaunchConfig]], opts: ProfileOptions,
               deadline: float | None = None) -> dict[tuple, str]:
    """Compile every (config, specialization class) in parallel processes to fill Triton's disk cache, until
    `deadline` (time.perf_counter(); the budget). Returns {(config key, class): reason} for compiles that timed out:
    those are recorded as timeouts. Other failures are only counted here: the launch in the main process compiles
    again and records the real error (so a broken worker environment can never turn good configs into failures)."""
    jobs = {}
    for p, c in todo:
        jobs.setdefault((c.key, _spec_class(p)), (p.M, p.N, p.K, p.dtype, c.to_dict()))
    if not jobs or opts.device != "cuda":
        return {}
    import multiprocessing as mp

    workers = opts.compile_workers or min(16, os.cpu_count() or 1)
    t0 = time.perf_counter()
    results, timed_out, not_run = parallel_with_timeouts(_compile_one, jobs, workers, opts.compile_timeout_s,
                                                         deadline, mp.get_context("spawn"))
    failed = [(k, r if isinstance(r, Exception) else r[1]) for k, r in results.items()
              if isinstance(r, Exception) or r[0] != "ok"]
    for key, info in failed[:3]:
        opts.log(f"compile of {key[0]} failed in a worker: {info}")
    opts.log(f"compiled {len(jobs)} binaries in {time.perf_counter() - t0:.1f} s with {workers} processes, "
             f"{len(failed)} failed, {len(timed_out)} timed out"
             + (f", {len(not_run)} not compiled when the budget ran out" if not_run else ""))
    return {key: f"timeout: compile took over {opts.compile_timeout_s:.0f} s" for key in timed_out}


# --------------------------------------------------------------------------------------------- timing
class _Bench:
    def __init__(self, device: str, l2_flush: str = "write"):
        import torch

        if l2_flush not in L2_FLUSHES:
            raise ValueError(f"L2 flush {l2_flush!r}: choose one of {L2_FLUSHES}")
        self.torch, self.device, self.l2_flush = torch, device, l2_flush
        self.flush_buf = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda") if device == "cuda" else None
        self.flush_sum = torch.empty((), dtype=torch.int64, device="cuda") if device == "cuda" else None

    def flush(self) -> None:
        """Evict the L2 (L2_FLUSHES); also keeps the GPU busy while the CPU issues the launch."""
        if self.l2_flush == "write":
            self.flush_buf.zero_()
        else:
            self.torch.sum(self.flush_buf, dim=0, dtype=self.torch.int64, out=self.flush_sum)

    def times_ms(self, fn: Callable[[], object], reps: int) -> list[float]:
        torch = self.torch
        if self.device != "cuda":
            out = []
            for _ in range(reps):
                t = time.perf_counter()
                fn()
                out.append((time.perf_counter() - t) * 1e3)
            return out
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        for i in range(reps):
            self.flush()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def _quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def _spread(t: dict) -> float:
    return (t["ms_p80"] - t["ms_p20"]) / t["ms"] if t["ms"] else float("inf")


def steady_timing(time_reps: Callable[[], list[float]]) -> tuple[dict, int]:
    """({ms, ms_p20, ms_p80} of the steadiest of up to 1 + RETIMES timings, how many re-timings it took):
    a timing is taken again while its repeats spread more than UNSTABLE_SPREAD."""
    best = None
    for retimes in range(1 + RETIMES):
        ts = time_reps()
        t = {"ms": statistics.median(ts), "ms_p20": _quantile(ts, 0.2),
             "ms_p80": _quantile(ts, 0.8)}
        if best is None or _spread(t) < _spread(best):
            best = t
        if _spread(t) <= UNSTABLE_SPREAD:
            break
    return best, retimes


# --------------------------------------------------------------------------------------------- main loop
def measurement_order(by_shape: dict, seed: int) -> list[tuple]:
    """(shape, configs) in the order to measure them: shapes shuffled, and the configs of each shape, by `seed`.
    A launch runs at the clock its predecessors leave (power, heat: up to 10% on the H200 at N = K = 7168,
    validation/data/h200/traces/trace_jagged_7168.json against the fixed-order passes of that sweep), so a fixed
    order would repeat that effect in every pass as if it were the kernel's; passes of one sweep take their own seed."""
    rng = random.Random(seed)
    order = [(p, list(cfgs)) for p, cfgs in by_shape.items()]
    rng.shuffle(order)
    for _, cfgs in order:
        rng.shuffle(cfgs)
    return order


def run_profile(shapes: list[GemmProblem], configs: list[LaunchConfig], out: str | Path,
                opts: ProfileOptions) -> dict:
    """Measure every (shape, config) missing from `out`. Returns counts by status."""
    import torch

    from validation.kernels.gemm import gemm

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    done = read_existing(out, opts.retry_failed, opts.retime_unstable)
    base = {"schema": SCHEMA_VERSION, "kernel": "gemm", "gpu": opts.gpu}

    def key_of(p: GemmProblem, c: LaunchConfig | None, backend: str) -> tuple:
        return record_key({**base, "backend": backend, **p.to_record(), "config": c.to_dict() if c else None})

    shapes = [GemmProblem(p.M, p.N, p.K, opts.dtype) for p in shapes]
    todo = [(p, c) for p in shapes for c in configs if key_of(p, c, "triton") not in done]
    cublas_todo = {p for p in shapes if opts.with_cublas and key_of(p, None, "cublas") not in done}
    opts.log(f"{out}: {len(done)} records already there; {len(todo)} triton + {len(cublas_todo)} cublas to measure")
    counts: dict[str, int] = {}
    if not todo and not cublas_todo:
        return counts

    env = environment(opts.device)
    failures = precompile(todo, opts, None if opts.budget_s is None else t_start + opts.budget_s)
    bench = _Bench(opts.device, opts.l2_flush)
    clock = _Clock(opts.device)
    tdtype = getattr(torch, _TORCH_DTYPE[opts.dtype])
    torch.backends.cuda.matmul.allow_tf32 = False
    gen = torch.Generator(device=opts.device).manual_seed(opts.seed)
    by_shape: dict[GemmProblem, list[LaunchConfig]] = {}
    for p, c in todo:
        by_shape.setdefault(p, []).append(c)
    for p in cublas_todo:
        by_shape.setdefault(p, [])

    def over_budget() -> bool:
        if opts.budget_s is None or time.perf_counter() - t_start <= opts.budget_s:
            return False
        opts.log(f"budget of {opts.budget_s:.0f} s reached: stopping; run again to resume")
        return True

    with out.open("a") as f:
        for p, cfgs in measurement_order(by_shape, opts.seed):
            if over_budget():
                break
            a = torch.randn((p.M, p.K), device=opts.device, dtype=torch.float32, generator=gen).to(tdtype)
            b = torch.randn((p.K, p.N), device=opts.device, dtype=torch.float32, generator=gen).to(tdtype)
            ref = a.float() @ b.float()
            ref_norm = float(torch.linalg.vector_norm(ref))
            c_buf = torch.empty((p.M, p.N), device=opts.device, dtype=tdtype)

            def finish(cfg, backend, status, **fields):
                rec = {**base, "backend": backend, "dtype": p.dtype, "M": p.M, "N": p.N, "K": p.K,
                       "config": cfg.to_dict() if cfg else None, "status": status, **fields,
                       "sm_clock_mhz": clock.sm_mhz(), "env": env,
                       **({"l2_flush": opts.l2_flush} if opts.l2_flush != "write" else {}),
                       "time": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
                if status != "ok":
                    rec.setdefault("ms", None)
                append_record(f, rec)
                counts[status] = counts.get(status, 0) + 1

            def measure(fn, cfg, backend, extra):
                c_buf.fill_(float("nan"))  # poison: every element must be written
                fn()
                if opts.device == "cuda":
                    torch.cuda.synchronize()
                err = float(torch.linalg.vector_norm(c_buf.float() - ref)) / max(ref_norm, 1e-30)
                if not err <= TOLERANCE[p.dtype]:  # also catches NaN
                    finish(cfg, backend, "wrong_result", rel_err=err if err == err else None,
                           reason=f"relative error {err:.3g} > {TOLERANCE[p.dtype]:g}", **extra)
                    return
                est = statistics.median(bench.times_ms(fn, 3))
                reps = int(min(opts.max_reps, max(opts.min_reps, opts.target_ms / max(est, 1e-3))))
                timing, retimes = steady_timing(lambda: bench.times_ms(fn, reps))
                if retimes:
                    extra = {**extra, "retimes": retimes}
                if _spread(timing) > UNSTABLE_SPREAD:
                    extra = {**extra, "unstable": True}
                finish(cfg, backend, "ok", **timing, reps=reps, rel_err=err, **extra)

            if p in cublas_todo:
                measure(lambda: torch.matmul(a, b, out=c_buf), None, "cublas", {})
            for cfg in cfgs:
                if over_budget():
                    break
                fail = failures.get((cfg.key, _spec_class(p)))
                if fail:
                    status, _, reason = fail.partition(": ")
                    finish(cfg, "triton", status, reason=reason)
                    continue
                try:
                    _, handle = gemm(a, b, cfg, c_buf)
                except Exception as e:
                    name = type(e).__name__
                    status = "out_of_resources" if name == "OutOfResources" else "error"
                    finish(cfg, "triton", status, reason=f"{name}: {str(e).splitlines()[0] if str(e) else ''}"[:500])
                    continue
                extra = {"n_regs": getattr(handle, "n_regs", None), "n_spills": getattr(handle, "n_spills", None),
                         "shared_bytes": getattr(getattr(handle, "metadata", None), "shared", None)}
                measure(lambda: gemm(a, b, cfg, c_buf), cfg, "triton", extra)
            del a, b, ref, c_buf
    opts.log(f"done in {time.perf_counter() - t_start:.1f} s: {counts}")
    return counts
