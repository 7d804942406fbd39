"""`wavetune predict`: the batch interface. One JSON object per input line, e.g.

    {"kernel": "gemm", "gpu": "h200", "dtype": "bf16", "M": 512, "N": 4096, "K": 4096,
     "config": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 3}}

Each output line is the input plus "ctas_per_sm", "waves" and "sim_ms" (the simulated kernel time), or
"sim_error" naming the violated limit when the config cannot launch; a shape whose N or K is not a multiple of 16
also gets "sim_note" (Triton compiles a much slower kernel for it, which the model prices more coarsely: pad it).
A line that is not a JSON object gives {"line": N, "error": ...}; a line with bad fields gives the input plus
"error". Output order is input order, and no bad line stops the others. Lines are processed in blocks
of CHUNK lines, each block grouped by (GPU, dtype) and simulated in one vectorised pass
(wavesim.kernels.gemm.simulate_batch); blocks run in worker processes, one per usable CPU (--jobs).
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
from typing import Any, Iterable, Iterator

import numpy as np

from wavetune.config import GemmProblem, LaunchConfig
from wavetune.records import BadLine, dumps, extend_line, iter_jsonl_text, open_in, open_out

CHUNK = 8192
SUPPORTED_KERNELS = ("gemm",)


@functools.lru_cache(maxsize=64)
def _gpu(gpu_id: str):
    import hwspecs

    return hwspecs.load_gpu(gpu_id)


@functools.lru_cache(maxsize=64)
def _calibration(source: str | None, gpu_id: str):
    from wavesim.calibration import load_calibration

    return load_calibration(source, gpu_id)


# Validated objects by their JSON values: lines repeat few configs and shapes.
_CONFIGS: dict[tuple, LaunchConfig] = {}
_PROBLEMS: dict[tuple, GemmProblem] = {}
# Occupancy by (GPU id, config, dtype, alignment): hashing a whole GPUSpec per line costs more.
_OCCUPANCIES: dict[tuple, Any] = {}
_CACHE_MAX = 100_000


def _validated(cache: dict, key: tuple, ints: Iterable[Any], build):
    """cache[key], else build() (which raises ValueError naming a bad value) cached under key. True == 1 and 1.0 == 1
    as dict keys, so a hit counts only where the values that must be integers are exactly ints."""
    try:
        hit = cache.get(key)
    except TypeError:  # an unhashable value: build() names it
        hit = None
    if hit is not None and all(type(v) is int for v in ints):
        return hit
    obj = build()
    if len(cache) < _CACHE_MAX:
        cache[key] = obj
    return obj


def _config(d: Any, where: str) -> LaunchConfig:
    if not isinstance(d, dict):
        return LaunchConfig.from_dict(d, where)
    key = tuple(d.items())
    return _validated(_CONFIGS, key, d.values(), lambda: LaunchConfig.from_dict(d, where))


def _problem(rec: dict[str, Any], where: str) -> GemmProblem:
    key = (rec.get("M"), rec.get("N"), rec.get("K"), rec.get("dtype", "bf16"))
    return _validated(_PROBLEMS, key, key[:3], lambda: GemmProblem.from_record(rec, where))


def _parse(rec: dict[str, Any], default_gpu: str | None, lineno: int):
    """(spec, problem, config) of a line, or raise ValueError naming the problem."""
    where = f"line {lineno}"
    kernel = rec.get("kernel", "gemm")
    if kernel not in SUPPORTED_KERNELS:
        raise ValueError(f"{where}: kernel {kernel!r} is not supported; supported: {list(SUPPORTED_KERNELS)}")
    gpu = rec.get("gpu", default_gpu)
    if not isinstance(gpu, str):
        raise ValueError(f"{where}: no GPU: give \"gpu\" in the line or --gpu")
    spec = _gpu(gpu)
    problem = _problem(rec, where)
    if "config" not in rec:
        raise ValueError(f"{where}: missing \"config\" object")
    return spec, problem, _config(rec["config"], f"{where}: config")


def annotate(chunk: list[tuple[int, dict | BadLine]], default_gpu: str | None = None,
             calibration: str | None = None) -> list[tuple[int, dict[str, Any] | None, dict[str, Any]]]:
    """(line number, input object or None for a bad line, fields to add) of a chunk of lines, in input order."""
    from wavesim.kernels.gemm import TRITON_DIVISIBILITY, GemmBatch, alignment_note, config_occupancy, simulate_batch

    out: list[tuple[int, dict | None, dict[str, Any]]] = []
    groups: dict[tuple, list[tuple[int, GemmProblem, LaunchConfig]]] = {}
    specs: dict[str, Any] = {}
    for lineno, rec in chunk:
        if isinstance(rec, BadLine):
            out.append((lineno, None, {"line": lineno, "error": rec.error}))
            continue
        try:
            spec, problem, config = _parse(rec, default_gpu, lineno)
            okey = (spec.id, config, problem.dtype, problem.N % TRITON_DIVISIBILITY > 0,
                    problem.K % TRITON_DIVISIBILITY > 0)
            occ = _validated(_OCCUPANCIES, okey, (),
                             lambda: config_occupancy(spec, config, problem.dtype, problem.N, problem.K)[0])
        except (ValueError, KeyError) as e:
            out.append((lineno, rec, {"error": str(e.args[0] if e.args else e)}))
            continue
        if occ.ctas_per_sm == 0:
            out.append((lineno, rec, {"ctas_per_sm": 0, "waves": None, "sim_ms": None,
                                      "sim_error": f"config {config.key} cannot launch on {spec.name}: {occ.reason}"}))
            continue
        out.append((lineno, rec, {"ctas_per_sm": occ.ctas_per_sm}))
        specs[spec.id] = spec
        groups.setdefault((spec.id, problem.dtype), []).append((len(out) - 1, problem, config))
    for (gpu_id, dtype), items in groups.items():
        spec = specs[gpu_id]
        try:
            params = _calibration(calibration, spec.id)
        except (ValueError, FileNotFoundError) as e:
            for i, _, _ in items:
                out[i][2]["error"] = str(e)
            continue
        shapes = np.array([(p.M, p.N, p.K) for _, p, _ in items], dtype=np.float64)
        batch = GemmBatch.build(spec, dtype, shapes[:, 0], shapes[:, 1], shapes[:, 2], [c for _, _, c in items])
        res = simulate_batch(batch, params)
        for (i, p, _), w, t in zip(items, res.waves.tolist(), (res.makespan_s * 1e3).tolist()):
            out[i][2]["waves"] = int(w)
            out[i][2]["sim_ms"] = t
            if note := alignment_note(p.N, p.K):
                out[i][2]["sim_note"] = note
    return out


def predict_block(start: int, lines: list[str], source: str, default_gpu: str | None,
                  calibration: str | None) -> tuple[str, int]:
    """The output text of a block of input lines, the first being line `start`, and how many lines got an error.
    Each block is parsed, grouped and simulated on its own, so the output does not depend on which process
    ran it."""
    texts: dict[int, str] = {}
    chunk = []
    for lineno, text, obj in iter_jsonl_text(lines, source, start):
        texts[lineno] = text
        chunk.append((lineno, obj))
    out, n_err = [], 0
    for lineno, rec, extra in annotate(chunk, default_gpu, calibration):
        n_err += "error" in extra
        out.append((dumps(extra) if rec is None else extend_line(texts[lineno], rec, extra)) + "\n")
    return "".join(out), n_err


def _blocks(stream) -> Iterator[tuple[int, list[str]]]:
    """(first line number, lines) of CHUNK lines at a time."""
    start = 1
    while lines := list(itertools.islice(stream, CHUNK)):
        yield start, lines
        start += len(lines)


def usable_cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _cmd_predict(args: argparse.Namespace) -> int:
    jobs = args.jobs or usable_cpus()
    if jobs < 1:
        raise ValueError(f"--jobs must be at least 1 (0: every usable CPU, {usable_cpus()} here); got {args.jobs}")
    n_err = 0
    with open_in(args.input) as fin, open_out(args.output) as fout:
        src = "<stdin>" if args.input in (None, "-") else args.input
        blocks = _blocks(fin)
        first = list(itertools.islice(blocks, 2))
        work = (args.gpu, args.calibration)
        if jobs == 1 or len(first) < 2:  # one block is not worth starting processes for
            results: Iterable[tuple[str, int]] = (predict_block(s, b, src, *work) for s, b in itertools.chain(first, blocks))
        else:
            results = _in_processes(jobs, itertools.chain(first, blocks), src, work)
        for text, errs in results:
            fout.write(text)
            n_err += errs
    return 0 if not (args.strict and n_err) else 1


def _in_processes(jobs: int, blocks: Iterator[tuple[int, list[str]]], src: str, work: tuple) -> Iterator[tuple[str, int]]:
    """predict_block over `jobs` worker processes, results in input order, at most 2 x jobs blocks in flight
    (so a long stdin stream is not read into memory ahead of the output)."""
    import collections
    import multiprocessing

    # fork shares the parent's imports (numpy, the model) with the workers; spawn where fork is unavailable
    ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    with ctx.Pool(jobs) as pool:
        pending: collections.deque = collections.deque()
        for start, lines in blocks:
            pending.append(pool.apply_async(predict_block, (start, lines, src, *work)))
            if len(pending) >= 2 * jobs:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()


def register(sub) -> None:
    p = sub.add_parser("predict", help="annotate GEMM launch records with CTAs/SM, waves and simulated time",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("--gpu", default=None, help="GPU id for lines that do not name one (wavetune specs list)")
    p.add_argument("--input", default=None, help="JSONL file (default: stdin)")
    p.add_argument("--output", default=None, help="JSONL file (default: stdout)")
    p.add_argument("--calibration", default=None,
                   help="'auto': the shipped calibration of each GPU (wavesim/data/calibration/ID.json); "
                        "a file from `wavetune calibrate`; omitted: hardware specs and priors alone")
    p.add_argument("--jobs", type=int, default=0,
                   help="worker processes (default 0: one per usable CPU; 1: none). The output is the same for any "
                        "number: each block of %d lines is simulated on its own" % CHUNK)
    p.add_argument("--strict", action="store_true", help="exit 1 if any line had an error")
    p.set_defaults(func=_cmd_predict)
