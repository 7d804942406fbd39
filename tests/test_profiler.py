"""The Triton GEMM and the profiler loop, on the CPU under TRITON_INTERPRET=1 (the GPU run of the same
loop produced validation/data/h200/gemm/*.jsonl). fp16 and fp32 only: the interpreter's bf16 is wrong."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")
np = pytest.importorskip("numpy")
if tuple(int(x) for x in np.__version__.split(".")[:2]) >= (2, 4):
    pytest.skip("Triton 3.6's CPU interpreter needs numpy < 2.4 (the dev extra pins it; CI runs these)",
                allow_module_level=True)
# The interpreter is chosen when triton is imported, so the kernel runs in subprocesses with TRITON_INTERPRET=1.

ROOT = Path(__file__).resolve().parent.parent


def interp_env():
    return {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}


def _run_here(code: str, timeout=600):
    r = subprocess.run([sys.executable, "-c", code], env=interp_env(), capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_kernel_matches_torch_in_interpreter():
    out = _run_here("""
import torch
from validation.kernels.gemm import gemm
from wavetune.config import LaunchConfig
torch.manual_seed(0)
for dt, tol in ((torch.float16, 5e-3), (torch.float32, 5e-3)):
    for (M, N, K), cfg in [((33, 48, 40), LaunchConfig(16, 32, 16, 2, 1, 2)),
                           ((64, 96, 80), LaunchConfig(32, 32, 32, 1, 2, 3)),
                           ((17, 130, 33), LaunchConfig(16, 64, 16, 4, 1, 2))]:
        a = torch.randn(M, K, dtype=dt); b = torch.randn(K, N, dtype=dt)
        c, _ = gemm(a, b, cfg)
        ref = a.double() @ b.double()
        err = float((c.double() - ref).norm() / ref.norm())
        assert c.shape == (M, N) and c.dtype == dt and err < tol, (dt, M, N, K, cfg, err)
print("ok")
""")
    assert out.strip() == "ok"


def _profile_cmd(out: Path):
    return [sys.executable, "-m", "validation.cli", "profile", "--gpu", "cpu-test", "--device", "cpu",
            "--dtype", "fp16", "--shapes", "16x32x32,33x64x48,64x64x64,48x32x80", "--configs", str(CONFIGS),
            "--out", str(out), "--max-reps", "2", "--target-ms", "0.1"]


CONFIGS = ROOT / "tests" / "data" / "tiny_configs.jsonl"


def test_profiler_killed_and_restarted_loses_and_repeats_nothing(tmp_path):
    from validation.resume_check import check

    out = tmp_path / "m.jsonl"
    p = subprocess.Popen(_profile_cmd(out), env=interp_env(), cwd=ROOT, stderr=subprocess.PIPE)
    deadline = time.time() + 300
    while time.time() < deadline and (not out.exists() or len(out.read_text().splitlines()) < 3):
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    n_killed = len(out.read_text().splitlines())
    with out.open("a") as f:  # a torn record, as a kill in the middle of a write leaves it
        f.write('{"schema": 1, "kernel": "gemm", "gpu": "cpu-te')
    r = subprocess.run(_profile_cmd(out), env=interp_env(), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"{n_killed} records already there" in r.stderr
    res = check(str(out), "16x32x32,33x64x48,64x64x64,48x32x80", str(CONFIGS), "cpu-test", "fp16", cublas=True)
    assert res["ok"] and res["duplicates"] == 0 and res["missing"] == 0, res
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert all(r["status"] == "ok" and r["ms"] > 0 and r["rel_err"] < 5e-3 for r in recs)
    assert {r["env"]["triton"] for r in recs} and all("time" in r for r in recs)


def test_malformed_line_in_the_middle_is_an_error_that_keeps_the_file(tmp_path):
    from validation.profiler import read_existing

    out = tmp_path / "m.jsonl"
    good = json.dumps({"schema": 1, "kernel": "gemm", "gpu": "x", "dtype": "fp16", "M": 1, "N": 1, "K": 1,
                       "config": {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16}, "status": "ok", "ms": 1.0})
    out.write_text(good + "\nGARBAGE\n" + good + "\n")
    with pytest.raises(ValueError, match=":2: not valid JSON"):
        read_existing(out)
    assert out.read_text().count("\n") == 3  # nothing was lost


def test_retime_unstable_times_exactly_the_unsteady_records_again(tmp_path):
    """`wavetune profile --retime-unstable --out F` with no shapes or configs: the records of F whose repeats
    spread too much are timed again (appended; the latest record of a key is the one read), the rest stay."""
    from validation.measurements import dedupe_latest, load_measurements

    out = tmp_path / "m.jsonl"
    cfg = json.loads(CONFIGS.read_text().splitlines()[0])
    base = {"schema": 1, "kernel": "gemm", "gpu": "cpu-test", "backend": "triton", "dtype": "fp16", "N": 32,
            "K": 32, "config": cfg, "status": "ok", "reps": 5}
    out.write_text(json.dumps({**base, "M": 16, "ms": 50.0, "ms_p20": 10.0, "ms_p80": 90.0}) + "\n"
                   + json.dumps({**base, "M": 32, "ms": 50.0, "ms_p20": 49.0, "ms_p80": 51.0}) + "\n")
    cmd = [sys.executable, "-m", "validation.cli", "profile", "--gpu", "cpu-test", "--device", "cpu", "--dtype",
           "fp16", "--out", str(out), "--retime-unstable", "--no-cublas", "--max-reps", "2", "--target-ms", "0.1"]
    r = subprocess.run(cmd, env=interp_env(), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(recs) == 3 and (recs[2]["M"], recs[2]["status"]) == (16, "ok") and recs[2]["ms"] != 50.0
    latest = {m.problem.M: m.ms for m in dedupe_latest(load_measurements([str(out)], gpu="cpu-test"))}
    assert latest[32] == 50.0 and latest[16] == recs[2]["ms"]


def test_the_l2_flush_is_chosen_and_recorded_when_it_is_not_the_default(tmp_path):
    """`--l2-flush read` (a clean eviction: validation/scripts/flush_probe.py) is written into each record as l2_flush;
    the default (write, as every committed record was measured) adds nothing; an unknown flush is refused."""
    from validation.measurements import load_measurements
    from validation.profiler import _Bench

    out = tmp_path / "m.jsonl"
    cfg = json.loads(CONFIGS.read_text().splitlines()[0])
    (tmp_path / "c.jsonl").write_text(json.dumps(cfg) + "\n")
    cmd = [sys.executable, "-m", "validation.cli", "profile", "--gpu", "cpu-test", "--device", "cpu", "--dtype", "fp16",
           "--shapes", "16x32x32", "--configs", str(tmp_path / "c.jsonl"), "--no-cublas", "--max-reps", "2",
           "--target-ms", "0.1", "--out", str(out), "--l2-flush", "read"]
    r = subprocess.run(cmd, env=interp_env(), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(x["status"], x["l2_flush"]) for x in recs] == [("ok", "read")]
    assert load_measurements([str(out)], gpu="cpu-test")[0].ok
    bad = subprocess.run(cmd[:-1] + ["both"], env=interp_env(), cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "invalid choice" in bad.stderr
    with pytest.raises(ValueError, match="L2 flush 'both'"):
        _Bench("cpu", "both")
