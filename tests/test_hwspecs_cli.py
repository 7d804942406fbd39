"""`wavetune specs ...` through the real `wavetune` entry point."""

import json

import hwspecs
from wavetune.cli import main


def test_list_table(capsys):
    assert main(["specs", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["id", "name", "arch", "SMs"] and "bf16" in out[0]
    h200 = next(line for line in out if line.startswith("h200 "))
    assert "NVIDIA H200" in h200 and "sm_90" in h200 and "132" in h200 and "1980" in h200 and "989.4" in h200
    assert len(out) == 1 + len(hwspecs.list_gpus())
    v100 = next(line for line in out if line.startswith("v100-sxm2"))
    assert v100.rstrip().endswith("-")  # no bf16


def test_list_json(capsys):
    assert main(["specs", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in rows] == hwspecs.list_gpus()
    mi = next(r for r in rows if r["id"] == "mi300x")
    assert mi["sm_count"] == 304 and mi["arch"] == "gfx942" and mi["bf16_tensor_peak_flops"] == 1307.4e12


def test_show_every_value_with_status_and_source(capsys):
    assert main(["specs", "show", "NVIDIA H200"]) == 0
    out = capsys.readouterr().out
    spec = hwspecs.load_gpu("h200")
    for key, (status, source) in {**spec.sources, **spec.arch.sources}.items():
        assert f"{key} = " in out and source in out
    assert "sm_count = 132  [measured]" in out and "smem_per_cta_optin_bytes = 232448  [datasheet]" in out


def test_show_json(capsys):
    assert main(["specs", "show", "h100", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["id"] == "h100-sxm" and d["arch"]["compute_capability"] == "9.0"
    assert d["sources"]["sm_count"]["status"] == "datasheet" and d["arch"]["sources"]["warp_size"]["source"]


def test_unknown_id_is_a_clean_error(capsys):
    assert main(["specs", "show", "h300"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wavetune specs: error: unknown GPU 'h300'") and "h200" in err
    assert "wavetune specs list" in err


def test_occupancy_command(capsys):
    args = ["specs", "occupancy", "h200", "--warps", "4", "--regs", "168", "--smem", "131072"]
    assert main(args) == 0
    assert "limited by shared_memory" in capsys.readouterr().out
    assert main(args[:-1] + ["262144", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["ctas_per_sm"] == 0 and "232448" in d["reason"]


def test_bare_specs_prints_help(capsys):
    assert main(["specs"]) == 2
    assert "list" in capsys.readouterr().err
