"""`wavetune predict`: the batch interface, end to end through wavetune.cli.main."""

import json

import pytest

from wavetune.cli import main

CFG = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 4}


def rec(M, cfg=CFG, **kw):
    return {"kernel": "gemm", "gpu": "h200", "dtype": "bf16", "M": M, "N": 4096, "K": 4096, "config": cfg, **kw}


def run_predict(tmp_path, lines, *extra):
    inp = tmp_path / "in.jsonl"
    inp.write_text("".join((l if isinstance(l, str) else json.dumps(l)) + "\n" for l in lines))
    out = tmp_path / "out.jsonl"
    assert main(["predict", "--input", str(inp), "--output", str(out), *extra]) == 0
    return [json.loads(x) for x in out.read_text().splitlines()]


def test_annotates_in_order_and_keeps_fields(tmp_path):
    ms = [64, 512, 640, 4096, 1]
    out = run_predict(tmp_path, [rec(m, tag=i) for i, m in enumerate(ms)])
    assert [o["tag"] for o in out] == list(range(len(ms)))
    assert all(o["ctas_per_sm"] == 1 and o["sim_ms"] > 0 for o in out)
    # 128x128 tiles, 32 per row of tiles, 1 CTA/SM on 132 SMs: waves = ceil(tiles / 132)
    assert [o["waves"] for o in out] == [1, 1, 2, 8, 1]
    assert out[1]["sim_ms"] < out[2]["sim_ms"]  # the step at the wave boundary


def test_config_that_cannot_launch_names_the_limit(tmp_path):
    big = {**CFG, "BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 128}
    (o,) = run_predict(tmp_path, [rec(512, big)])
    assert o["ctas_per_sm"] == 0 and o["sim_ms"] is None
    assert "shared memory" in o["sim_error"] and "232448" in o["sim_error"]


def test_bad_lines_do_not_stop_the_batch(tmp_path):
    lines = [rec(512), "{not json", json.dumps([1, 2]), rec(512, gpu="h300"), rec(512, {"BLOCK_M": 3}), rec(256)]
    out = run_predict(tmp_path, lines)
    assert len(out) == 6
    assert out[1] == {"line": 2, "error": out[1]["error"]} and "not valid JSON" in out[1]["error"]
    assert "expected a JSON object" in out[2]["error"] and out[2]["line"] == 3
    assert "h200" in out[3]["error"] and "wavetune specs list" in out[3]["error"]  # closest ids listed
    assert "config" in out[4]["error"]
    assert out[0]["sim_ms"] > 0 and out[5]["sim_ms"] > 0


def test_a_value_equal_to_a_seen_one_but_not_an_integer_is_still_refused(tmp_path):
    # predict caches validated problems and configs by their JSON values; 512.0 == 512 and True == 1 as dict keys
    lines = [rec(512), rec(512.0), rec(True), rec(512, {**CFG, "BLOCK_M": 128.0}), rec(512)]
    out = run_predict(tmp_path, lines)
    assert out[0]["sim_ms"] > 0 and out[4]["sim_ms"] == out[0]["sim_ms"]
    assert "'M' must be an integer, got 512.0" in out[1]["error"]
    assert "'M' must be an integer, got True" in out[2]["error"]
    assert "'BLOCK_M' must be an integer, got 128.0" in out[3]["error"]


def test_a_dtype_that_is_not_a_string_is_a_line_error_not_a_crash(tmp_path):
    out = run_predict(tmp_path, [rec(512, dtype=["bf16"]), rec(512)])
    assert "dtype" in out[0]["error"] and "supported" in out[0]["error"] and out[1]["sim_ms"] > 0


def test_calibration_changes_the_prediction_and_bad_file_is_reported(tmp_path):
    specs = run_predict(tmp_path, [rec(512)])[0]["sim_ms"]
    cal = run_predict(tmp_path, [rec(512)], "--calibration", "auto")[0]["sim_ms"]
    assert cal != specs
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    (o,) = run_predict(tmp_path, [rec(512)], "--calibration", str(bad))
    assert "not valid JSON" in o["error"]


def test_stdin_stdout(monkeypatch, capsys):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(rec(512)) + "\n"))
    assert main(["predict"]) == 0
    assert json.loads(capsys.readouterr().out)["waves"] == 1


def test_a_stdin_stream_of_many_blocks_goes_through_the_workers_in_order(monkeypatch, capsys):
    import io

    monkeypatch.setattr("wavetune.predict.CHUNK", 2)
    ms = [64 * (i + 1) for i in range(9)]  # 5 blocks, more than the 2 x jobs the workers hold at once
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(json.dumps(rec(m, tag=i)) + "\n" for i, m in enumerate(ms))))
    assert main(["predict", "--jobs", "2"]) == 0
    out = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [o["tag"] for o in out] == list(range(9)) and [o["M"] for o in out] == ms
    assert all(o["sim_ms"] > 0 for o in out)


def test_missing_input_file_is_a_clear_error(tmp_path, capsys):
    assert main(["predict", "--input", str(tmp_path / "nope.jsonl")]) == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("gpu", ["a100-sxm4-80gb", "h100-sxm", "l40s", "b200"])
def test_other_gpus_predict(tmp_path, gpu):
    (o,) = run_predict(tmp_path, [rec(4096, gpu=gpu, dtype="fp16")])
    assert o["ctas_per_sm"] >= 1 and o["sim_ms"] > 0, o


def test_shapes_triton_compiles_unaligned_get_a_note(tmp_path):
    """N or K not a multiple of 16: Triton loads those operands two bytes at a time, unpipelined (another kernel,
    which the model prices more coarsely), so the line says so and how to pad, and the time is that slower
    kernel's; 16-divisible shapes, whatever M, get no note."""
    out = run_predict(tmp_path, [rec(1000, N=5000, K=3000), rec(1000, N=4096, K=3000), rec(777, N=5008, K=3008)])
    assert "K = 3000 and N = 5000 are not multiples of 16" in out[0]["sim_note"]
    assert "Pad to K = 3008, N = 5008" in out[0]["sim_note"]
    assert "K = 3000 is not a multiple of 16" in out[1]["sim_note"] and out[1]["sim_note"].endswith("Pad to K = 3008 to get the faster kernel")
    assert "sim_note" not in out[2] and out[2]["sim_ms"] > 0
    # measured on the H200: 3.6-7.5x cuBLAS's time unaligned, 1.0-1.3x padded (validation/data/h200/fresh14/)
    assert out[0]["sim_ms"] > 2 * run_predict(tmp_path, [rec(1000, N=5008, K=3008)])[0]["sim_ms"]


def test_worker_processes_give_the_same_output_as_one(tmp_path, monkeypatch):
    # blocks of 4 lines, so that 3 workers each get several; bad lines in later blocks keep their line numbers
    monkeypatch.setattr("wavetune.predict.CHUNK", 4)
    lines = [rec(m, tag=i) for i, m in enumerate(range(64, 64 * 24, 64))]
    lines[9], lines[14] = "{not json", rec(512, gpu="h300", tag=14)
    inp, outs = tmp_path / "in.jsonl", []
    inp.write_text("".join((l if isinstance(l, str) else json.dumps(l)) + "\n" for l in lines))
    for jobs in ("1", "3"):
        out = tmp_path / f"out{jobs}.jsonl"
        assert main(["predict", "--input", str(inp), "--output", str(out), "--calibration", "auto", "--jobs", jobs]) == 0
        outs.append(out.read_text())
    assert outs[0] == outs[1]
    got = [json.loads(x) for x in outs[1].splitlines()]
    assert [o.get("tag") for o in got] == [None if i == 9 else i for i in range(23)]
    assert got[9]["line"] == 10 and "not valid JSON" in got[9]["error"] and "h200" in got[14]["error"]
    assert all(o["sim_ms"] > 0 for i, o in enumerate(got) if i not in (9, 14))


def test_jobs_below_zero_is_refused(tmp_path, capsys):
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps(rec(512)) + "\n")
    assert main(["predict", "--input", str(inp), "--jobs", "-2"]) == 2
    assert "--jobs must be at least 1" in capsys.readouterr().err
