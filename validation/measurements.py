"""The measurement JSONL schema (version 1): one record per (GPU, kernel, dtype, problem, config).

    {"schema": 1, "kernel": "gemm", "backend": "triton", "gpu": "h200", "dtype": "bf16",
     "M": 512, "N": 4096, "K": 4096,
     "config": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 3},
     "status": "ok", "ms": 0.0412, "ms_p20": 0.0409, "ms_p80": 0.0417, "reps": 50, "rel_err": 0.0021,
     "n_regs": 168, "n_spills": 0, "shared_bytes": 98304, "sm_clock_mhz": 1980,
     "env": {"gpu_name": "NVIDIA H200", "driver": "580.159.04", "torch": "2.11.0", "triton": "3.6.0", "cuda": "13.0"},
     "time": "2026-11-29T15:40:00Z"}

`problem fields + config` are exactly those of `wavetune predict`'s input. `status` is one of STATUSES;
a record that is not "ok" carries `reason` and `ms: null`. Records of `backend: "cublas"` (torch.matmul,
the vendor reference) have `config: null`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from wavetune.config import GemmProblem, LaunchConfig
from wavetune.records import BadLine, iter_jsonl, open_text

SCHEMA_VERSION = 1
STATUSES = ("ok", "compile_error", "out_of_resources", "wrong_result", "timeout", "error")


@dataclass(frozen=True)
class Measurement:
    gpu: str
    kernel: str
    backend: str
    problem: GemmProblem
    config: LaunchConfig | None
    status: str
    ms: float | None
    record: dict[str, Any]

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def record_key(rec: dict[str, Any]) -> tuple:
    """Identity of a measurement: what the profiler resumes on and what duplicates are judged by."""
    cfg = rec.get("config")
    ckey = LaunchConfig.from_dict(cfg).key if cfg else None
    return (rec.get("gpu"), rec.get("kernel"), rec.get("backend", "triton"), rec.get("dtype"),
            rec.get("M"), rec.get("N"), rec.get("K"), ckey)


def parse_record(rec: dict[str, Any], where: str) -> Measurement:
    schema = rec.get("schema", SCHEMA_VERSION)
    if schema != SCHEMA_VERSION:
        raise ValueError(f"{where}: schema version {schema!r} is not supported (this wavetune reads {SCHEMA_VERSION})")
    for key in ("gpu", "kernel", "status"):
        if not isinstance(rec.get(key), str):
            raise ValueError(f"{where}: missing or non-string {key!r}")
    if rec["status"] not in STATUSES:
        raise ValueError(f"{where}: status {rec['status']!r} is not one of {STATUSES}")
    backend = rec.get("backend", "triton")
    problem = GemmProblem.from_record(rec, where)
    cfg = rec.get("config")
    config = LaunchConfig.from_dict(cfg, f"{where}: config") if cfg is not None else None
    if config is None and backend == "triton":
        raise ValueError(f"{where}: a triton record needs a 'config' object")
    ms = rec.get("ms")
    if rec["status"] == "ok":
        if not isinstance(ms, (int, float)) or isinstance(ms, bool) or not ms > 0:
            raise ValueError(f"{where}: status 'ok' needs a positive 'ms', got {ms!r}")
        ms = float(ms)
    else:
        ms = None
    return Measurement(rec["gpu"], rec["kernel"], backend, problem, config, rec["status"], ms, rec)


def load_measurements(paths: str | Path | Iterable[str | Path], *, gpu: str | None = None, kernel: str = "gemm",
                      backend: str | None = "triton", strict: bool = True) -> list[Measurement]:
    """Load and validate measurement files. Errors name the file and line; with strict=False a bad
    line is skipped (the profiler uses that on its own partially written output)."""
    out: list[Measurement] = []
    if isinstance(paths, (str, Path)):   # one path, not an iterable of its characters
        paths = [paths]
    for path in paths:
        p = Path(path)
        if not p.exists():
            raise FileNotFoundError(f"measurement file {p} does not exist")
        with open_text(p) as f:
            for lineno, obj in iter_jsonl(f, str(p)):
                if isinstance(obj, BadLine):
                    if strict:
                        raise ValueError(f"{obj.error}; fix or delete that line (the other records are intact)")
                    continue
                m = parse_record(obj, f"{p}:{lineno}")
                if gpu is not None and m.gpu != gpu:
                    continue
                if m.kernel != kernel or (backend is not None and m.backend != backend):
                    continue
                out.append(m)
    return out


def dedupe_latest(ms: list[Measurement]) -> list[Measurement]:
    """Keep the last record of each key (a re-measurement replaces the earlier one)."""
    seen: dict[tuple, Measurement] = {}
    for m in ms:
        seen[record_key(m.record)] = m
    return list(seen.values())
