"""The core (specs, simulator, tuner, measurement replay) imports and runs with torch and triton absent."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

CODE = r"""
import sys
sys.modules["torch"] = None     # any `import torch` now raises ImportError
sys.modules["triton"] = None
import json, io, contextlib
import hwspecs, wavesim.engine, wavesim.kernels.gemm, wavesim.calibration, tuner.table, tuner.tune
import validation.measurements, validation.suite
from wavetune.cli import main
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    rc = main(["simulate", "--gpu", "h200", "--M", "512", "--N", "4096", "--K", "4096",
               "--config", "128x128x64_g8_w4_s3", "--json"])
assert rc == 0, rc
out = json.loads(buf.getvalue())
assert out["waves"] == 1 and out["resources_source"] == "table" and "note" not in out, out
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    rc = main(["simulate", "--gpu", "h200", "--M", "512", "--N", "5000", "--K", "4096",
               "--config", "128x128x64_g8_w4_s3"])
assert rc == 0 and "note: N = 5000 is not a multiple of 16" in buf.getvalue(), buf.getvalue()
from wavesim.resources import gemm_resources
from wavetune.config import LaunchConfig
# a config of the blind sets' grid outside the tuning space is read off the wide table, any GROUP_M, not estimated
r = gemm_resources(LaunchConfig(32, 32, 256, 2, 2, 2), "sm_90", "bf16")
assert r.source == "table" and r.loop_instructions > 0, r
# one missing from every committed table falls back to the analytical estimate, not to triton
r = gemm_resources(LaunchConfig(32, 32, 256, 2, 2, 7), "sm_90", "bf16")
assert r.source == "estimate" and r.smem_bytes > 0, r
print("ok")
"""


def test_core_runs_without_torch_and_triton():
    r = subprocess.run([sys.executable, "-c", CODE], cwd=ROOT, capture_output=True, text=True, timeout=300,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(ROOT)})
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]


def test_command_owner_map_matches_the_modules():
    import importlib

    from wavetune.cli import COMMAND_MODULES, COMMAND_OWNER, build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMAND_OWNER), "every command needs an owner entry (and no stale ones)"
    for cmd, mod in COMMAND_OWNER.items():
        assert mod in COMMAND_MODULES
        p = build_parser((mod,))
        assert cmd in next(a for a in p._actions if a.dest == "command").choices
    with pytest.raises(SystemExit):
        build_parser().parse_args(["no-such-command"])
    importlib.import_module("wavetune.demo")
