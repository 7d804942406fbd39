"""JSONL reading and writing shared by predict, select, profile and the measurement loaders.

A malformed line never stops a batch: readers yield it as a `BadLine` with its line number, and the
caller writes an error record in its place so that output order matches input order.

Readers take gzip-compressed files too, whatever their name (`open_text` looks at the first two bytes):
the larger finished measurement files are committed compressed under their .jsonl names, which keeps the
repository small enough to travel while every path, glob and command that names them stays the same."""

from __future__ import annotations

import contextlib
import gzip
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Iterable, Iterator


@dataclass(frozen=True)
class BadLine:
    lineno: int
    text: str
    error: str


def iter_jsonl_text(stream: Iterable[str], source: str = "<stdin>",
                    start: int = 1) -> Iterator[tuple[int, str, dict[str, Any] | BadLine]]:
    """Yield (line number, stripped text, object) for each non-blank line, numbered from `start`; a line that is
    not a JSON object gives a BadLine in place of the object."""
    for lineno, line in enumerate(stream, start=start):
        text = line.strip()
        if not text:
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            yield lineno, text, BadLine(lineno, text, f"{source}:{lineno}: not valid JSON ({e.msg} at column {e.colno})")
            continue
        if not isinstance(obj, dict):
            yield lineno, text, BadLine(lineno, text, f"{source}:{lineno}: expected a JSON object, got {type(obj).__name__}")
            continue
        yield lineno, text, obj


def iter_jsonl(stream: IO[str], source: str = "<stdin>") -> Iterator[tuple[int, dict[str, Any] | BadLine]]:
    """Yield (line number, object) for each non-blank line; a line that is not a JSON object is a BadLine."""
    for lineno, _, obj in iter_jsonl_text(stream, source):
        yield lineno, obj


def extend_line(text: str, obj: dict[str, Any], extra: dict[str, Any]) -> str:
    """The JSON line of {**obj, **extra}, reusing the input's text when extra adds only new keys (no
    re-encoding of the input: the batch commands' hot path)."""
    if obj and text.endswith("}") and not (extra.keys() & obj.keys()):
        return text[:-1] + ", " + json.dumps(extra)[1:]
    return dumps({**obj, **extra})


GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: str | Path) -> bool:
    """Whether a file is gzip-compressed (by its first two bytes, not its name)."""
    with Path(path).open("rb") as f:
        return f.read(2) == GZIP_MAGIC


def open_text(path: str | Path) -> IO[str]:
    """A text reader of a file, decompressing it when it is gzip-compressed."""
    return gzip.open(path, "rt") if is_gzip(path) else Path(path).open()


@contextlib.contextmanager
def open_in(path: str | None):
    if path in (None, "-"):
        yield sys.stdin
    else:
        p = Path(path)
        if not p.exists():
            raise FileNotFoundError(f"input file {path} does not exist")
        with open_text(p) as f:
            yield f


@contextlib.contextmanager
def open_out(path: str | None):
    if path in (None, "-"):
        yield sys.stdout
        sys.stdout.flush()
    else:
        with Path(path).open("w") as f:
            yield f


def dumps(obj: dict[str, Any]) -> str:
    return json.dumps(obj)  # the default separators ", " and ": " (and the encoder json caches for them)


def read_jsonl_file(path: str | Path) -> list[dict[str, Any]]:
    """Read a whole JSONL file, raising a ValueError that names the file and line of the first bad line."""
    out = []
    with open_text(path) as f:
        for _, obj in iter_jsonl(f, str(path)):
            if isinstance(obj, BadLine):
                raise ValueError(f"{obj.error}; fix or remove that line")
            out.append(obj)
    return out


def read_probe_records(path: str | Path, fields: tuple[str, ...], what: str,
                       optional: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The `fields` of every record of a probe's JSONL file (validation.gpc_scope, sm_side, l2_probe), and the
    `optional` ones with their defaults where a record lacks them: a missing file names the command that writes it
    (`what`), a bad line or a record without a field names the file and line."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path}: no such file (`{what}` writes it)")
    out = []
    with open_text(path) as f:
        for lineno, obj in iter_jsonl(f, str(path)):
            if isinstance(obj, BadLine):
                raise ValueError(f"{obj.error}; re-collect it or remove that line")
            missing = [k for k in fields if k not in obj]
            if missing:
                raise ValueError(f"{path}:{lineno}: the record lacks {missing}; re-collect it or remove that line")
            out.append({**{k: obj[k] for k in fields}, **{k: obj.get(k, v) for k, v in (optional or {}).items()}})
    return out
