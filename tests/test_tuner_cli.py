"""`wavetune tune / select / export / tune-eval` through wavetune.cli.main."""

import json

import pytest

from wavetune.cli import main

LLM = "validation/data/h200/gemm/llm.jsonl"


@pytest.fixture(scope="module")
def table_path(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    cfgs = d / "configs.jsonl"
    chosen = [{"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
              {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 2},
              {"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 128, "GROUP_M": 8, "num_warps": 4, "num_stages": 3}]
    cfgs.write_text("".join(json.dumps(c) + "\n" for c in chosen))
    out = d / "table.json"
    assert main(["tune", "--gpu", "h200", "--kernel", "gemm", "--configs", str(cfgs), "--source", "sim",
                 "--shapes", "1x4096x4096,4096x8192x1024", "--out", str(out)]) == 0
    return out, chosen


def test_tune_restricts_candidates_to_the_configs_file(table_path):
    from tuner.table import DualTable

    out, chosen = table_path
    t = DualTable.load(out)
    assert {tuple(sorted(c.to_dict().items())) for c in t.configs()} == {tuple(sorted(c.items())) for c in chosen}
    d = json.loads(out.read_text())
    assert d["gpu"] == "h200" and d["kernel"] == "gemm" and d["source"]["kind"] == "sim" and d["space_size"] == 3


def test_select_adds_config_and_time_and_keeps_order_with_bad_lines(table_path, tmp_path, capsys):
    out, chosen = table_path
    inp = tmp_path / "p.jsonl"
    inp.write_text('{"kernel": "gemm", "gpu": "h200", "dtype": "bf16", "M": 512, "N": 4096, "K": 4096}\n'
                   "{not json\n"
                   '{"kernel": "gemm", "gpu": "h200", "M": -3, "N": 4096, "K": 4096}\n'
                   '{"kernel": "gemm", "gpu": "a100", "M": 3, "N": 4096, "K": 4096}\n'
                   "\n"
                   '{"M": 1, "N": 28672, "K": 4096}\n')
    res = tmp_path / "o.jsonl"
    rc = main(["select", "--table", str(out), "--input", str(inp), "--output", str(res)])
    assert rc == 0  # the bad lines became error records; the others were decided
    assert main(["select", "--table", str(out), "--input", str(inp), "--output", str(res), "--strict"]) == 1
    lines = [json.loads(x) for x in res.read_text().splitlines()]
    assert len(lines) == 5
    assert lines[0]["config"] in chosen and lines[0]["decision_us"] >= 0 and lines[0]["M"] == 512
    assert lines[1]["line"] == 2 and "not valid JSON" in lines[1]["error"]
    assert lines[2]["line"] == 3 and "M" in lines[2]["error"]
    assert lines[3]["line"] == 4 and "a100" in lines[3]["error"]
    assert lines[4]["config"] in chosen and lines[4]["M"] == 1
    assert "could not be decided" in capsys.readouterr().err


def test_select_notes_shapes_the_table_does_not_model(table_path, tmp_path):
    """A shape whose K or N is not a multiple of 16 gets Triton's unaligned kernel, not the one the table was tuned
    on: the decision says so; aligned shapes carry no note."""
    out, chosen = table_path
    inp = tmp_path / "p.jsonl"
    inp.write_text('{"M": 1000, "N": 5000, "K": 3000}\n{"M": 1000, "N": 5008, "K": 3008}\n')
    res = tmp_path / "o.jsonl"
    assert main(["select", "--table", str(out), "--input", str(inp), "--output", str(res)]) == 0
    odd, even = (json.loads(x) for x in res.read_text().splitlines())
    assert odd["config"] in chosen and "Pad to K = 3008, N = 5008" in odd["note"]
    assert even["config"] in chosen and "note" not in even


def test_select_is_deterministic(table_path, tmp_path):
    out, _ = table_path
    inp = tmp_path / "p.jsonl"
    inp.write_text("".join(json.dumps({"M": m, "N": 4096, "K": 4096}) + "\n" for m in range(1, 9000, 311)))
    picks = []
    for i in range(2):
        res = tmp_path / f"o{i}.jsonl"
        assert main(["select", "--table", str(out), "--input", str(inp), "--output", str(res)]) == 0
        picks.append([json.loads(x)["config"] for x in res.read_text().splitlines()])
    assert picks[0] == picks[1]


def test_export_vllm(table_path, tmp_path, capsys):
    out, chosen = table_path
    d = tmp_path / "vllm"
    assert main(["export", "--table", str(out), "--format", "vllm", "--shapes", "16x4096x4096,100x1280x8192",
                 "--out", str(d)]) == 0
    names = sorted(p.name for p in d.iterdir())
    assert names == ["N=1280,K=8192,device_name=NVIDIA_H200.json", "N=4096,K=4096,device_name=NVIDIA_H200.json"]
    body = json.loads((d / names[1]).read_text())
    assert all(k.isdigit() for k in body) and "16" in body
    entry = body["16"]
    assert {"BLOCK_M": entry["BLOCK_SIZE_M"], "BLOCK_N": entry["BLOCK_SIZE_N"], "BLOCK_K": entry["BLOCK_SIZE_K"],
            "GROUP_M": entry["GROUP_SIZE_M"], "num_warps": entry["num_warps"], "num_stages": entry["num_stages"]} in chosen


def test_clean_errors(table_path, tmp_path, capsys):
    out, _ = table_path
    assert main(["tune", "--gpu", "no-such-gpu", "--source", "sim", "--out", str(tmp_path / "x.json")]) == 2
    assert "unknown GPU" in capsys.readouterr().err
    assert main(["tune", "--gpu", "h200", "--out", str(tmp_path / "x.json")]) == 2
    assert "exactly one of --source sim or --measurements" in capsys.readouterr().err
    d = json.loads(out.read_text())
    d["version"] = 7
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    assert main(["select", "--table", str(bad), "--input", str(tmp_path / "none.jsonl")]) == 2
    assert "table version 7 is not supported" in capsys.readouterr().err
    assert main(["select", "--table", str(tmp_path / "missing.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["tune", "--gpu", "h200", "--configs", "nonsense", "--source", "sim", "--out", str(tmp_path / "x.json")]) == 2
    assert "named space" in capsys.readouterr().err


def test_tune_from_measurements(tmp_path):
    from tuner.table import DualTable

    out = tmp_path / "m.json"
    assert main(["tune", "--gpu", "h200", "--configs", "wave-study", "--measurements", LLM,
                 "--shapes", "1x4096x4096,16x4096x4096,512x4096x4096,4096x4096x4096", "--out", str(out)]) == 0
    t = DualTable.load(out)
    assert t.source["kind"] == "measurements" and t.source["prior"]["kind"] == "sim" and t.m1_macros
    assert t.stats["points_sampled"] <= t.stats["measured_points_available"] == 4 * 8


def test_tune_eval_runs_a_subset(capsys, monkeypatch):
    import tuner.evaluate as ev

    monkeypatch.setattr(ev, "layer_folds", lambda n_folds=4: [(["llama3-8b.qkv", "llama3-70b-tp8.o"], ["llama3-8b.o"])])
    assert main(["tune-eval", "--configs", "wave-study", "--strategies", "default,static-best", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["strategy"] for r in rows] == ["default", "static-best"] and rows[0]["shapes"] == 12


def test_demo_chooses_configs_for_the_llm_shapes_and_scores_them():
    """`wavetune demo`, the README's main job: a simulator table, a choice per LLM shape, scored against the
    committed H200 measurements (the table is fitted on a generic domain, so these shapes are unseen)."""
    from wavetune.demo import run_demo

    lines: list[str] = []
    s = run_demo(out=lines.append)
    assert s["shapes"] == 96 and s["measured_shapes"] == 96
    assert s["regret_geomean"] <= 1.06 and s["regret_worst"] <= 1.35      # measured 1.037, worst 1.24
    assert s["speedup_vs_default_geomean"] >= 1.15                         # 1.29
    assert any("never saw these shapes" in ln for ln in lines)
