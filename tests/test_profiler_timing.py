"""The profiler's timing hygiene, without a GPU: unsteady timings are taken again, and records whose repeats
spread too much can be re-timed later (`wavetune profile --retime-unstable`)."""
import json

import numpy as np

from validation.measurements import dedupe_latest, load_measurements
from validation.profiler import (RETIMES, UNSTABLE_SPREAD, measurement_order, needs_retime, read_existing,
                                 steady_timing, timing_spread, unstable_records)


def _timings(*runs):
    it = iter(runs)
    return lambda: list(next(it))


def test_an_unsteady_timing_is_taken_again_and_the_steadiest_kept():
    steady = [10.0, 10.1, 10.2, 9.9, 10.0]
    bimodal = [31.0, 68.0, 95.0, 30.0, 94.0]
    t, retimes = steady_timing(_timings(bimodal, steady))
    assert retimes == 1 and t["ms"] == 10.0 and (t["ms_p80"] - t["ms_p20"]) / t["ms"] <= UNSTABLE_SPREAD
    t, retimes = steady_timing(_timings(steady))
    assert retimes == 0 and t["ms"] == 10.0
    # never steady: RETIMES more tries, the least spread one is kept
    wide = [8.0, 10.0, 12.6, 8.0, 12.6]
    t, retimes = steady_timing(_timings(bimodal, wide, bimodal))
    assert retimes == RETIMES and t["ms"] == 10.0


def _rec(ms, p20, p80, **extra):
    return {"schema": 1, "kernel": "gemm", "gpu": "h200", "backend": "triton", "dtype": "bf16", "M": 8,
            "N": 4608, "K": 3584, "config": {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 128, "GROUP_M": 8,
                                             "num_warps": 4, "num_stages": 3},
            "status": "ok", "ms": ms, "ms_p20": p20, "ms_p80": p80, **extra}


def test_unsteady_records_are_found_and_a_retimed_record_replaces_them(tmp_path):
    glitch = _rec(0.068, 0.0308, 0.0947)   # a committed H200 record: 31 to 95 us around 68
    assert timing_spread(glitch) > UNSTABLE_SPREAD and needs_retime(glitch)
    assert not needs_retime(_rec(0.027, 0.0265, 0.0275))
    assert not needs_retime({**glitch, "retimes": RETIMES, "unstable": True})  # tried already: kept as is
    f = tmp_path / "m.jsonl"
    f.write_text(json.dumps(glitch) + "\n")
    key_done = read_existing(f)
    assert len(key_done) == 1 and read_existing(f, retime_unstable=True) == set()
    shapes, configs = unstable_records(f, "bf16")
    assert [(p.M, p.N, p.K) for p in shapes] == [(8, 4608, 3584)] and [c.key for c in configs] == ["16x32x128_g8_w4_s3"]
    with f.open("a") as fh:
        fh.write(json.dumps(_rec(0.027, 0.0265, 0.0276, retimes=1)) + "\n")
    assert read_existing(f, retime_unstable=True) == key_done and unstable_records(f, "bf16") == ([], [])
    (m,) = dedupe_latest(load_measurements([str(f)], gpu="h200"))
    assert m.ms == 0.027


def test_gzip_compressed_measurement_files_read_the_same_and_are_never_appended_to(tmp_path):
    """Finished measurement files may be committed gzip-compressed under their .jsonl names: the loaders read
    them by their first bytes, the calibration's data hash is of the content, and the profiler refuses to
    append to one (text would corrupt it) and leaves it intact."""
    import gzip

    import pytest

    from wavesim.calibration import dataset_hash

    plain, packed = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    text = json.dumps(_rec(0.027, 0.0265, 0.0275)) + "\n" + json.dumps({**_rec(0.03, 0.029, 0.031), "M": 16}) + "\n"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    load = lambda p: [(m.problem.M, m.ms) for m in load_measurements([str(p)], gpu="h200")]  # noqa: E731
    assert load(packed) == load(plain) == [(8, 0.027), (16, 0.03)]
    assert dataset_hash([packed]) == dataset_hash([plain])
    before = packed.read_bytes()
    with pytest.raises(ValueError, match="gzip-compressed"):
        read_existing(packed)
    assert packed.read_bytes() == before


def test_each_order_seed_measures_everything_in_its_own_order():
    """Passes of a sweep with different --order-seed run the shapes and the configs of a shape in different orders
    (a launch inherits the clock its predecessors leave); one seed gives one order, and nothing is dropped."""
    by_shape = {m: [f"c{i}" for i in range(17)] for m in range(64, 8193, 64)}
    a, again, b = (measurement_order(by_shape, seed) for seed in (5, 5, 6))
    assert a == again
    assert [p for p, _ in a] != [p for p, _ in b] != sorted(by_shape)
    assert sorted(p for p, _ in a) == sorted(by_shape)
    assert all(sorted(c) == sorted(by_shape[p]) for p, c in a + b)
    assert dict(a)[64] != dict(b)[64]
    assert by_shape[64] == [f"c{i}" for i in range(17)]   # the caller's lists are left as they were


def _sleep_or_raise(arg):
    """A stand-in for one compile: sleeps `arg` seconds, or raises."""
    import time

    if arg == "raise":
        raise RuntimeError("compiler crashed")
    time.sleep(arg)
    return arg


def test_parallel_compiles_time_out_one_by_one_and_stop_at_the_budget():
    """A compile that hangs (ptxas on a tile that spills thousands of registers can take an hour) is killed after its
    timeout while the others finish; the budget stops everything, killing what still runs: the profiler's
    --budget-s holds through its compile phase (a 160-config blind set once ran a device call into its limit)."""
    import multiprocessing as mp
    import time

    from validation.profiler import parallel_with_timeouts

    fork = mp.get_context("fork")
    t0 = time.perf_counter()
    jobs = {"a": 0.1, "hangs": 60, "c": 0.2, "d": "raise", "e": 0.1}
    results, timed_out, not_run = parallel_with_timeouts(_sleep_or_raise, jobs, 2, timeout_s=1.0, mp_context=fork)
    assert timed_out == ["hangs"] and not_run == []
    assert {k: results[k] for k in "ace"} == {"a": 0.1, "c": 0.2, "e": 0.1}
    assert isinstance(results["d"], RuntimeError)
    assert time.perf_counter() - t0 < 30          # not the 60 s the hung call would take
    t0 = time.perf_counter()
    results, timed_out, not_run = parallel_with_timeouts(_sleep_or_raise, {"x": 60, "y": 60, "z": 0.1, "w": 0.1}, 3,
                                                         timeout_s=100.0, deadline=t0 + 1.5, mp_context=fork)
    # two workers hang on x and y until the budget; the third runs z, then w
    assert sorted(not_run) == ["x", "y"] and timed_out == [] and results == {"z": 0.1, "w": 0.1}
    assert time.perf_counter() - t0 < 30


def test_the_power_probe_sampler_reads_clock_power_and_ors_the_throttle_reasons():
    # validation.power_probe samples NVML while a kernel runs; here NVML is a stand-in whose readings change
    import itertools
    import time

    from validation.power_probe import _Sampler

    class FakeNVML:
        NVML_CLOCK_SM = 1
        clocks = itertools.cycle([1500, 1400])
        reasons = itertools.cycle([0x4, 0x0, 0x80])

        def nvmlDeviceGetClockInfo(self, h, which):
            assert which == self.NVML_CLOCK_SM
            return next(self.clocks)

        def nvmlDeviceGetPowerUsage(self, h):
            return 690_000  # milliwatts

        def nvmlDeviceGetCurrentClocksThrottleReasons(self, h):  # the older name: the sampler falls back to it
            return next(self.reasons)

    s = _Sampler(FakeNVML(), handle=None)
    s.start()
    deadline = time.time() + 5
    while len(s.mhz) < 3 and time.time() < deadline:
        time.sleep(0.005)
    s.stop.set()
    s.join()
    assert len(s.mhz) >= 3 and set(s.mhz) <= {1500, 1400} and set(s.watts) == {690.0}
    assert s.reasons == 0x84  # software power cap | hardware power brake, over the samples


def test_the_power_probe_names_bad_input_and_a_missing_gpu_before_measuring(tmp_path):
    import json as _json

    import pytest

    from validation.power_probe import main

    cfgs = tmp_path / "c.jsonl"
    cfgs.write_text(_json.dumps({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4,
                                 "num_stages": 3}) + "\n")
    out = tmp_path / "p.jsonl"
    with pytest.raises(SystemExit, match="expected MxNxK"):
        main(["--configs", str(cfgs), "--shapes", "512x4096", "--out", str(out)])
    with pytest.raises(SystemExit, match="No such file"):
        main(["--configs", str(tmp_path / "none.jsonl"), "--shapes", "512x4096x4096", "--out", str(out)])
    try:
        import pynvml  # noqa: F401
        import torch

        gpu = torch.cuda.is_available()
    except ImportError:
        gpu = False
    if not gpu:  # this machine cannot measure: the probe says why instead of failing inside the driver
        with pytest.raises(SystemExit, match="not installed|no CUDA GPU"):
            main(["--configs", str(cfgs), "--shapes", "512x4096x4096", "--out", str(out)])
    assert not out.exists()  # nothing written, nothing lost


def test_a_probe_file_splits_into_one_measurement_file_per_seed_that_the_staircase_reads(tmp_path):
    import json as _json

    import pytest

    from validation.measurements import load_measurements
    from validation.power_probe import main

    cfg = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 3}
    base = {"schema": 1, "kind": "power_probe", "gpu": "h200", "dtype": "bf16", "N": 4096, "K": 4096, "config": cfg}
    recs = [{**base, "M": 64 * (i + 1), "seed": seed, "status": "ok", "ms": 0.04 + 0.001 * i + 0.01 * seed,
             "sm_mhz": 1900 - 10 * i, "power_w": 600.0, "reasons": 4, "hold_s": 0.3 * seed}
            for seed in (0, 1) for i in range(3)]
    recs.append({**base, "M": 512, "seed": 1, "status": "error", "error": "out of resource: shared memory"})
    probe = tmp_path / "p.jsonl"
    probe.write_text("".join(_json.dumps(r) + "\n" for r in recs))
    main(["--split-passes", str(probe), "--out", str(tmp_path / "s")])
    p0, p1 = (load_measurements(tmp_path / f"s_seed{s}.jsonl") for s in (0, 1))
    assert [(m.problem.M, m.ms, m.record["sm_mhz"]) for m in p0] == [(64, 0.04, 1900), (128, 0.041, 1890),
                                                                      (192, 0.042, 1880)]
    assert [m.status for m in p1] == ["ok", "ok", "ok", "error"] and p1[0].ms == pytest.approx(0.05)
    assert all(m.record["regime"].startswith("burst") for m in p0)   # seed 0 was timed with no hold
    assert all(m.record["regime"].startswith("sustained: held 0.3 s") for m in p1)
    # a file that is not the probe's is named, and nothing is written for it
    bad = tmp_path / "m.jsonl"
    bad.write_text(_json.dumps({**base, "kind": "gemm", "M": 64, "seed": 0}) + "\n")
    with pytest.raises(SystemExit, match="not a power_probe record"):
        main(["--split-passes", str(bad), "--out", str(tmp_path / "t")])
    assert not list(tmp_path.glob("t_seed*"))
    with pytest.raises(SystemExit, match="--configs and --shapes are required"):
        main(["--out", str(tmp_path / "x.jsonl")])


def test_the_h200_write_flush_slows_short_launches_and_softens_their_first_co_residence_steps():
    """validation/data/h200/flush/flush_probe.json (session 25; validation/scripts/flush_probe.py): the profiler's L2
    flush (zeroing 512 MiB: the L2 left full of dirty lines) against a read of the buffer (clean lines) and against the
    write followed by ~100 us of GPU sleep. Launches of one CTA per SM run 4-7 us longer after the write, whether or not
    the GPU sleeps first (the dirty lines are written back as the launch misses, not drained by time), so their first
    co-residence step measures +6-11% where a clean L2 gives +18-33% (ncu's isolated launches: msweep_ncu); a launch of
    a few waves (128x256x64 at M = 4096, 184 us) is the same after either."""
    from pathlib import Path

    rows = json.loads((Path(__file__).resolve().parents[1] / "validation/data/h200/flush/flush_probe.json").read_text())
    t: dict = {}
    for r in rows["rows"]:
        t.setdefault((r["config"], r["M"], r["flush"]), []).append(r["ms"] * 1e3)
    us = {k: sum(v) / len(v) for k, v in t.items()}
    steps = [("128x128x64_g1_w4_s3", 512, 576), ("64x128x64_g8_w4_s3", 512, 576), ("64x64x64_g8_w4_s4", 256, 320),
             ("128x128x64_g16_w4_s3", 256, 320)]
    for cfg, lo, hi in steps:
        assert 4.0 < us[(cfg, lo, "write")] - us[(cfg, lo, "read")] < 8.0, cfg
        assert abs(us[(cfg, lo, "drain")] - us[(cfg, lo, "write")]) < 0.5, cfg
        jump = {f: us[(cfg, hi, f)] / us[(cfg, lo, f)] - 1 for f in ("write", "read")}
        assert jump["write"] < 0.12 and jump["read"] > 0.15 and jump["read"] > jump["write"] + 0.08, (cfg, jump)
    long = {f: us[("128x256x64_g8_w8_s3", 4096, f)] for f in ("write", "read")}
    assert abs(long["write"] / long["read"] - 1) < 0.02


def test_the_calibrations_short_launches_timed_clean_are_faster_than_their_write_flush_twins():
    """validation/data/h200/cleanflush/llm_short_cleanflush.jsonl.gz (session 26): the 42 LLM shapes with a median
    record under 0.1 ms, timed again after a clean eviction. Against the committed write-flush records of the same
    (shape, config) the write costs a median 3.4 us (6.9%), most where a launch holds up to two CTAs per SM (8-9%),
    little on larger grids: the same cost the flush probe found, over 7644 launches."""
    import gzip
    import math
    from pathlib import Path

    data = Path(__file__).resolve().parents[1] / "validation/data/h200"
    write = {(m.problem.M, m.problem.N, m.problem.K, m.config): m.ms
             for m in dedupe_latest(load_measurements([data / "gemm/llm.jsonl"], gpu="h200")) if m.ok and m.config}
    pairs = [(write[k], m.ms, k) for m in load_measurements([data / "cleanflush/llm_short_cleanflush.jsonl.gz"],
                                                            gpu="h200")
             if m.ok and (k := (m.problem.M, m.problem.N, m.problem.K, m.config)) in write]
    assert len(pairs) > 7000
    for name in ("llm_short_cleanflush", "k_sweep_cleanflush"):
        with gzip.open(data / f"cleanflush/{name}.jsonl.gz", "rt") as f:
            assert {json.loads(line).get("l2_flush") for line in f} == {"read"}
    us = np.array([(w - c) * 1e3 for w, c, _ in pairs])
    rel = np.array([w / c - 1 for w, c, _ in pairs])
    grid = np.array([math.ceil(k[0] / k[3].BLOCK_M) * math.ceil(k[1] / k[3].BLOCK_N) for _, _, k in pairs])
    assert 2.5 < np.median(us) < 4.5 and (us > 0).mean() > 0.85
    few, many = grid <= 2 * 132, grid > 2 * 132
    assert np.median(rel[few]) > 0.06 and np.median(rel[many]) < 0.03
