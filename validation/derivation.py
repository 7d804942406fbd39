"""The shared command line of the scripts that derive a GEMM model prior from measurement files
(validation/single_row.py, validation/l2_requests.py, validation/unaligned.py): `--gpu`, `--dtype`, the files; a bad input exits 2 with
the derivation's message, which says what to measure."""

from __future__ import annotations

import argparse
from typing import Callable

import hwspecs


def derivation_main(argv: list[str] | None, prog: str, doc: str, derive: Callable[[str, list[str], str], dict],
                    show: Callable[[dict], None]) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0])
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("measurements", nargs="+")
    a = ap.parse_args(argv)
    try:
        r = derive(a.gpu, a.measurements, a.dtype)
    except (ValueError, FileNotFoundError, hwspecs.UnknownGPUError) as e:
        ap.exit(2, f"error: {e}\n")
    show(r)
    return 0
