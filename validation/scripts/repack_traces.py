"""Rewrite trace files written before the packed format (validation/trace.py save_trace_arrays) in it, in place.

    python3 validation/scripts/repack_traces.py validation/data/*/traces/*.npz

A file is replaced only after its packed copy reads back exactly equal, array by array; files already packed are left
as they are. Prints the bytes before and after.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from validation.trace import PACKED_KEY, STEPS_PREFIX, load_trace_file, save_trace_arrays  # noqa: E402


def repack(path: Path) -> tuple[int, int]:
    with np.load(path) as z:
        if PACKED_KEY in z.files:
            return path.stat().st_size, path.stat().st_size
        arrays = {k: z[k] for k in z.files}
    tmp = path.with_name(path.stem + ".packing.npz")
    save_trace_arrays(tmp, arrays)
    tmp.with_suffix(".json").write_text(path.with_suffix(".json").read_text())  # load_trace_file wants a sidecar
    try:
        ctas, steps, _ = load_trace_file(tmp)
        back = {**ctas, **{STEPS_PREFIX + k: a for k, a in steps.items()}}
        if back.keys() != arrays.keys() or any(back[k].dtype != a.dtype or not np.array_equal(back[k], a)
                                               for k, a in arrays.items()):
            raise RuntimeError(f"{path}: the packed copy does not read back equal; the file is left as it was")
    finally:
        tmp.with_suffix(".json").unlink()
    before = path.stat().st_size
    tmp.replace(path)
    return before, path.stat().st_size


def main(argv: list[str]) -> int:
    total = [0, 0]
    for name in argv:
        before, after = repack(Path(name))
        total[0] += before
        total[1] += after
        print(f"{name}: {before} -> {after} bytes")
    print(f"all: {total[0]} -> {total[1]} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
