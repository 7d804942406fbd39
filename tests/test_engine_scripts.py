"""The engine benchmark and the Figure 4 script run end to end on tiny sizes."""
import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_figure4_script(tmp_path, capsys):
    mod = _load("figure4_jitter")
    png = tmp_path / "fig4.png"
    assert mod.main([str(png), "--max-ctas", "20", "--seeds", "2", "--sms", "8", "--cvs", "0,0.3", "--json"]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    data = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    flat = data["curves"]["0.0"]
    assert flat[7] == 1.0 and flat[8] == 2.0 and flat[19] == 3.0  # staircase at multiples of 8 SMs


def test_bench_script(capsys):
    mod = _load("bench_engines")
    assert mod.main(["--repeats", "1", "--sms", "4", "--ref-grid", "20", "--fast-grid", "50", "--batch", "100",
                     "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["fast"]["cta_events_per_s"] > 0 and r["closed_form_batch"]["launches_per_s"] > 0
