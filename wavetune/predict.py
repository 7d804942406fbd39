"""`wavetune predict`: the batch interface. One JSON object per input line, e.g.

    {"kernel": "gemm", "gpu": "h200", "dtype": "bf16", "M": 512, "N": 4096, "K": 4096,
     "config": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 3}}

Each output line is the input plus "ctas_per_sm", "waves" and "sim_ms" (the simulated kernel time), or
"sim_error" naming the violated limit when the config cannot launch; a shape whose N or K is not a multiple of 16
also gets "sim_note" (Triton compiles a much slower kernel for it, which the model prices more coarsely: pad it).
A line that is not a JSON object gives {"line": N, "error": ...}; a line with bad fields gives the input plus
"error". Output order is input order, and no bad line stops the others. Lines are processed in chunks, each chunk
grouped by (GPU, dtype) and simulated in one vectorised pass (wavesim.kernels.gemm.simulate_batch).
"""

from __future__ import annotations

import argparse
import functools
import itertools
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


def annotate(lines: Iterable[tuple[int, dict | BadLine]], default_gpu: str | None = None,
             calibration: str | None = None) -> Iterator[tuple[int, dict[str, Any] | None, dict[str, Any]]]:
    """(line number, input object or None for a bad line, fields to add), in input order."""
    from wavesim.kernels.gemm import TRITON_DIVISIBILITY, GemmBatch, alignment_note, config_occupancy, simulate_batch

    occupancies: dict[tuple, Any] = {}  # keyed by GPU id: hashing a whole GPUSpec per line costs more
    it = iter(lines)
    while chunk := list(itertools.islice(it, CHUNK)):
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
                occ = occupancies.get(okey) or occupancies.setdefault(
                    okey, config_occupancy(spec, config, problem.dtype, problem.N, problem.K)[0])
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
        yield from out


def _cmd_predict(args: argparse.Namespace) -> int:
    n_err = 0
    with open_in(args.input) as fin, open_out(args.output) as fout:
        src = "<stdin>" if args.input in (None, "-") else args.input
        texts: dict[int, str] = {}  # input text of the lines in flight, to extend instead of re-encoding

        def lines():
            for lineno, text, obj in iter_jsonl_text(fin, src):
                texts[lineno] = text
                yield lineno, obj

        for lineno, rec, extra in annotate(lines(), args.gpu, args.calibration):
            text = texts.pop(lineno)
            n_err += "error" in extra
            fout.write((dumps(extra) if rec is None else extend_line(text, rec, extra)) + "\n")
    return 0 if not (args.strict and n_err) else 1


def register(sub) -> None:
    p = sub.add_parser("predict", help="annotate GEMM launch records with CTAs/SM, waves and simulated time",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("--gpu", default=None, help="GPU id for lines that do not name one (wavetune specs list)")
    p.add_argument("--input", default=None, help="JSONL file (default: stdin)")
    p.add_argument("--output", default=None, help="JSONL file (default: stdout)")
    p.add_argument("--calibration", default=None,
                   help="'auto': the shipped calibration of each GPU (wavesim/data/calibration/ID.json); "
                        "a file from `wavetune calibrate`; omitted: hardware specs and priors alone")
    p.add_argument("--strict", action="store_true", help="exit 1 if any line had an error")
    p.set_defaults(func=_cmd_predict)
