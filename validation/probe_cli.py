"""What the probes' command lines share (validation.gpc_scope, sm_side, l2_probe)."""

from __future__ import annotations

import sys
from typing import Callable


def collect_or_explain(prog: str, run: Callable[[], None]) -> int:
    """Run a probe's collection; without a GPU or the 'gpu' extra say so in one line (exit 2) instead of a traceback.
    What it wrote before an error stays written (records go out one line at a time)."""
    try:
        run()
    except (ImportError, ValueError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    return 0
