"""wavesim.resources: committed tables, estimator vs oracle, oracle cache, errors, H200 ground truth."""

from __future__ import annotations

import gzip
import json
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

import wavesim.resources as res
from wavesim.resources import CompileFailure, KernelResources, clear_caches, gemm_resources, table_archs
from wavesim.resources import estimate, oracle
from wavetune.config import LaunchConfig

ROOT = Path(__file__).resolve().parents[1]
H200_DIR = ROOT / "validation" / "data" / "h200" / "gemm"

# The brief's shipped (arch, dtype) tables; fp32 tables ship too where built.
REQUIRED_TABLES = [("sm_90", "bf16"), ("sm_90", "fp16"), ("sm_80", "bf16"), ("sm_80", "fp16"),
                   ("sm_89", "bf16"), ("sm_89", "fp16"), ("sm_86", "bf16"), ("sm_86", "fp16"),
                   ("sm_100", "bf16"), ("sm_100", "fp16"), ("sm_120", "bf16"), ("sm_120", "fp16"),
                   ("sm_70", "fp16"), ("sm_75", "fp16")]


@pytest.fixture(autouse=True)
def _fresh(monkeypatch, tmp_path):
    monkeypatch.setenv("WAVETUNE_CACHE_DIR", str(tmp_path / "cache"))
    clear_caches()
    yield
    clear_caches()


# ---- golden values from the committed tables (Triton 3.6.0) -------------------------------------------

GOLDEN = [  # (config key, arch, dtype) -> (regs, spills, smem)
    ("128x128x64_g8_w4_s4", "sm_90", "bf16", 217, 0, 131072),
    ("128x128x64_g8_w4_s2", "sm_90", "bf16", 230, 0, 65536),
    ("64x128x64_g8_w4_s3", "sm_90", "bf16", 124, 0, 73728),
    ("64x64x32_g8_w4_s2", "sm_90", "bf16", 60, 0, 16384),
    ("128x256x64_g8_w8_s3", "sm_90", "bf16", 209, 0, 147456),
    ("32x64x64_g8_w4_s3", "sm_90", "bf16", 72, 0, 24576),     # BLOCK_M < 64: mma.sync path, S-1 buffers
    ("256x128x32_g8_w8_s3", "sm_80", "bf16", None, 0, 65536),  # epilogue reuse exceeds the pipeline
]


@pytest.mark.parametrize("key,arch,dtype,regs,spills,smem", GOLDEN)
def test_golden_table_values(key, arch, dtype, regs, spills, smem):
    r = gemm_resources(LaunchConfig.from_key(key), arch, dtype)
    assert r.source == "table"
    assert (r.spills, r.smem_bytes) == (spills, smem)
    if regs is not None:
        assert r.regs_per_thread == regs
    assert r.num_warps == LaunchConfig.from_key(key).num_warps


def test_required_tables_ship_and_cover_the_space():
    from tuner.space import load_space

    keys = {c.key for c in load_space("broad+wave-study+grouping")}
    assert len(keys) == 186
    shipped = set(table_archs())
    missing = [t for t in REQUIRED_TABLES if t not in shipped]
    assert not missing, f"missing tables {missing}: python3 -m wavesim.resources.build_tables"
    for arch, dtype in shipped:
        t = res.load_table(arch, dtype)
        assert set(t) == keys, (arch, dtype)
        for k, r in t.items():
            assert r["status"] in ("ok", "error")
            if r["status"] == "ok":
                # 255 regs/thread on NVIDIA (CUDA guide, technical specifications); 512 unified VGPRs+AGPRs
                # per lane on gfx90a/gfx942 (hwspecs/data/arch/gfx942.toml max_regs_per_thread, LLVM AMDGPU)
                cap = 512 if arch.startswith("gfx") else 255
                assert 0 < r["regs_per_thread"] <= cap and r["smem_bytes"] >= 0 and r["spills"] >= 0
            else:
                assert r["reason"]


def test_wave_study_ctas_per_sm_on_h200():
    """The guide's H200 staircase (1, 2, 3, 8 CTAs/SM) follows from the table's numbers via hwspecs."""
    hwspecs = pytest.importorskip("hwspecs")
    h200 = hwspecs.load_gpu("h200")
    assert h200.arch.name == "sm_90"
    for cfg, ctas in ((LaunchConfig(128, 128, 64, 8, 4, 4), 1), (LaunchConfig(128, 128, 64, 8, 4, 2), 2),
                      (LaunchConfig(64, 128, 64, 8, 4, 3), 3), (LaunchConfig(64, 64, 32, 8, 4, 2), 8)):
        r = gemm_resources(cfg, h200.arch.name, "bf16")
        occ = hwspecs.occupancy(h200, num_warps=r.num_warps, regs_per_thread=r.regs_per_thread,
                                smem_bytes=r.smem_bytes)
        assert occ.ctas_per_sm == ctas, (cfg.key, r, occ)


def test_lookup_is_fast_and_memoised():
    cfg = LaunchConfig(128, 128, 64, 8, 4, 4)
    a = gemm_resources(cfg, "sm_90", "bf16")
    t = time.perf_counter()
    for _ in range(20000):
        b = gemm_resources(cfg, "sm_90", "bf16")
    assert b == a and isinstance(b, KernelResources)
    assert time.perf_counter() - t < 1.0   # ~2 us per call measured; the simulator needs thousands per second


def test_sm_90a_is_sm_90():
    cfg = LaunchConfig(64, 64, 32, 8, 4, 2)
    assert gemm_resources(cfg, "sm_90a", "bf16") == gemm_resources(cfg, "sm_90", "bf16")


# ---- estimator vs the oracle tables -------------------------------------------------------------------

# Stated tolerances (measured figures are in wavesim/resources/data/estimate_constants.json "evidence").
SMEM_EXACT_MIN = 1.0          # the smem formula is exact on every shipped table
# MMA paths (sm_80+), 16-bit operands: >= 80 % of configs within +-16 registers, mean abs error <= 10;
# fp32 (tf32) operands: >= 70 % within +-16, mean abs error <= 13 (more of them hit 255 and spill).
REGS_BAND = {"bf16": (0.80, 10.0), "fp16": (0.80, 10.0), "fp32": (0.70, 13.0)}
FMA_ARCHS = {"sm_70", "sm_75"}  # FMA dot: registers are not modelled beyond a rough band


@pytest.mark.parametrize("arch,dtype", table_archs())
def test_estimator_smem_matches_oracle(arch, dtype):
    if arch.startswith("gfx"):
        pytest.skip("estimator is NVIDIA-only")
    rows = [(LaunchConfig.from_key(k), r) for k, r in res.load_table(arch, dtype).items() if r["status"] == "ok"]
    exact = sum(estimate.estimate_smem_bytes(c, arch, dtype) == r["smem_bytes"] for c, r in rows)
    assert exact >= SMEM_EXACT_MIN * len(rows), f"{arch}/{dtype}: smem exact {exact}/{len(rows)}"


@pytest.mark.parametrize("arch,dtype", [t for t in table_archs() if t[0] not in FMA_ARCHS
                                        and not t[0].startswith("gfx")])
def test_estimator_regs_within_band(arch, dtype):
    rows = [(LaunchConfig.from_key(k), r) for k, r in res.load_table(arch, dtype).items() if r["status"] == "ok"]
    errs = [abs(estimate.estimate_regs(c, arch, dtype) - r["regs_per_thread"]) for c, r in rows]
    within = sum(e <= 16 for e in errs) / len(errs)
    mae = sum(errs) / len(errs)
    min_within, max_mae = REGS_BAND[dtype]
    assert within >= min_within and mae <= max_mae, (arch, dtype, within, mae)


def test_estimate_source_and_fields():
    cfg = LaunchConfig(128, 128, 64, 8, 4, 4)
    e = gemm_resources(cfg, "sm_90", "bf16", source="estimate")
    assert e.source == "estimate" and e.smem_bytes == 131072 and e.num_warps == 4 and e.spills == 0
    assert abs(e.regs_per_thread - 217) <= 32
    assert gemm_resources(cfg, "sm_100", "fp16", source="estimate").smem_bytes == 131072 + 16


def test_auto_falls_back_to_estimate_without_triton(monkeypatch):
    monkeypatch.setattr(oracle, "triton_version", lambda: None)
    cfg = LaunchConfig(64, 32, 16, 8, 4, 7)  # 7 stages: in no table, the wide one included
    r = gemm_resources(cfg, "sm_90", "bf16")
    assert r.source == "estimate" and r.smem_bytes == 7 * (64 * 16 + 16 * 32) * 2
    with pytest.raises(oracle.OracleUnavailable, match="triton"):
        gemm_resources(cfg, "sm_90", "bf16", source="oracle")


def test_estimator_cli_check(capsys):
    assert estimate.main(["--check"]) == 0
    ev = json.loads(capsys.readouterr().out)
    assert ev["sm_90/bf16"]["smem_exact"] == ev["sm_90/bf16"]["n"] == 186


# ---- oracle: cache, failures (no triton needed: the compiler is faked) ---------------------------------

class _FakeKernel:
    def __init__(self, shared):
        self.metadata = SimpleNamespace(shared=shared)
        self.asm = {"cubin": b"fake"}


def _fake_oracle(monkeypatch, calls, fail=None):
    monkeypatch.setattr(oracle, "triton_version", lambda: "9.9.9-test")

    def fake_compile(config, arch, dtype, problem):
        calls.append((config.key, arch, dtype, problem))
        if fail:
            raise RuntimeError(fail)
        return _FakeKernel(12345)

    monkeypatch.setattr(oracle, "_compile", fake_compile)
    monkeypatch.setattr(oracle, "cubin_resources",
                        lambda cubin: {"regs": 77, "stack_bytes": 8, "static_smem_bytes": 0, "local_bytes": 0})
    monkeypatch.setattr(oracle, "cubin_sass", lambda cubin: "")


def test_oracle_second_call_hits_disk_cache(monkeypatch, tmp_path):
    calls = []
    _fake_oracle(monkeypatch, calls)
    cfg = LaunchConfig(64, 64, 16, 8, 4, 2)
    r1 = gemm_resources(cfg, "sm_87", "fp16", source="oracle")
    assert r1 == KernelResources(77, 2, 12345, 4, "oracle") and len(calls) == 1
    path = oracle.cache_path(cfg, "sm_87", "fp16", "9.9.9-test")
    assert path.is_file() and str(path).startswith(str(tmp_path / "cache"))
    assert "9.9.9-test" in str(path) and "sm_87" in str(path) and "fp16" in str(path) and cfg.key in path.name
    clear_caches()   # drop the in-process memo: the next call must come from disk
    assert gemm_resources(cfg, "sm_87", "fp16", source="oracle") == r1
    assert gemm_resources(cfg, "sm_87", "fp16") == r1   # auto: no table for sm_87 -> cached oracle
    assert len(calls) == 1
    # another dtype or config is another entry
    gemm_resources(cfg, "sm_87", "bf16", source="oracle")
    assert len(calls) == 2


def test_compile_failure_is_a_result_with_reason(monkeypatch):
    calls = []
    _fake_oracle(monkeypatch, calls, fail="error: bf16 dot is not supported on this target")
    cfg = LaunchConfig(64, 64, 16, 8, 4, 2)
    rec = oracle.oracle_record(cfg, "sm_87", "bf16")
    assert rec["status"] == "error" and "not supported" in rec["reason"]
    with pytest.raises(CompileFailure, match="does not compile for sm_87 bf16.*not supported") as ei:
        gemm_resources(cfg, "sm_87", "bf16", source="oracle")
    assert "not supported" in ei.value.reason
    assert len(calls) == 1   # the failure is cached too


def test_unknown_arch_and_bad_dtype_errors():
    cfg = LaunchConfig(64, 64, 32)
    with pytest.raises(ValueError, match=r"unknown arch 'h200'.*sm_90.*hwspecs"):
        gemm_resources(cfg, "h200", "bf16")
    with pytest.raises(ValueError, match=r"dtype 'int8'.*bf16.*fp16.*fp32"):
        gemm_resources(cfg, "sm_90", "int8")
    with pytest.raises(ValueError, match="source="):
        gemm_resources(cfg, "sm_90", "bf16", source="magic")
    with pytest.raises(LookupError, match="source='oracle'.*source='estimate'"):
        gemm_resources(cfg, "sm_87", "bf16", source="table")
    with pytest.raises(ValueError, match="no model for 'sm_61'.*source='oracle'"):
        gemm_resources(cfg, "sm_61", "bf16", source="estimate")
    with pytest.raises(TypeError, match="LaunchConfig"):
        gemm_resources(cfg.to_dict(), "sm_90", "bf16")


def test_build_tables_cli(monkeypatch, tmp_path):
    from wavesim.resources import build_tables

    calls = []
    _fake_oracle(monkeypatch, calls)
    out = tmp_path / "tables"
    assert build_tables.main(["--arch", "sm_87", "--dtype", "fp16", "--space", "wave-study", "--out-dir", str(out)]) == 0
    (p,) = out.glob("*.json")
    t = json.loads(p.read_text())
    assert p.name == "gemm_triton-9.9.9-test_sm_87_fp16.json"
    assert t["n_ok"] == 8 and len(t["records"]) == 8 and len(calls) == 8
    assert "compile_s" not in next(iter(t["records"].values()))


def test_wide_table_serves_other_group_m_and_dtypes_only_where_its_checks_found_none_that_differs(monkeypatch,
                                                                                                 tmp_path):
    """build_tables --wide compiles the blind sets' grid at GROUP_M 8 and a sample at the other GROUP_M values (and in
    each --serve-dtype); the lookup reads another GROUP_M's or dtype's resources off the table only if no sampled one
    differed."""
    from tuner.space import wide_space
    from wavesim.resources import build_tables

    calls = []
    _fake_oracle(monkeypatch, calls)
    monkeypatch.setattr(res, "DATA_DIR", tmp_path)
    monkeypatch.setattr(res, "TABLE_TRITON_VERSION", "9.9.9-test")
    build = ["--arch", "sm_87", "--dtype", "bf16", "--wide", "--serve-dtype", "fp16", "--out-dir", str(tmp_path)]
    path = tmp_path / "gemm_triton-9.9.9-test_sm_87_bf16_wide.json.gz"
    assert build_tables.main(build) == 0
    t = json.loads(gzip.decompress(path.read_bytes()))
    n = len(wide_space())
    assert len(t["records"]) == n and t["group_m"] == 8 and t["group_m_invariant"] is True
    sample = t["group_m_check"]["sample"]
    assert t["group_m_check"]["compiled"] == sample * 5 and t["fp16_check"]["compiled"] == sample
    assert len(calls) == n + sample * 6 and t["serves_dtypes"] == ["fp16"]
    assert table_archs() == []   # a wide table is not a main table
    cfg = LaunchConfig(32, 256, 16, 3, 2, 6)         # GROUP_M 3: compiled by no one
    monkeypatch.setattr(oracle, "triton_version", lambda: None)
    clear_caches()
    assert gemm_resources(cfg, "sm_87", "bf16").source == gemm_resources(cfg, "sm_87", "fp16").source == "table"
    # a GROUP_M and a dtype that change the registers: the checks say so and the table serves its own keys only
    monkeypatch.setattr(oracle, "triton_version", lambda: "9.9.9-test")
    monkeypatch.setattr(oracle, "cache_root", lambda: tmp_path / "cache2")
    real = oracle.compile_record
    monkeypatch.setattr(oracle, "compile_record", lambda c, arch, dtype, *a: {
        **real(c, arch, dtype, *a), "regs_per_thread": 70 + c.GROUP_M + (dtype == "fp16"), "spills": 0})
    build_tables.main(build)
    t = json.loads(gzip.decompress(path.read_bytes()))
    assert t["group_m_invariant"] is False and len(t["group_m_check"]["differ"]) == t["group_m_check"]["compiled"]
    assert t["serves_dtypes"] == [] and len(t["fp16_check"]["differ"]) == sample
    monkeypatch.setattr(oracle, "triton_version", lambda: None)
    clear_caches()
    assert gemm_resources(cfg, "sm_87", "bf16").source == "estimate"
    g8 = LaunchConfig(32, 256, 16, 8, 2, 6)
    assert gemm_resources(g8, "sm_87", "bf16").regs_per_thread == 78
    assert gemm_resources(g8, "sm_87", "fp16").source == "estimate"
    # GROUP_M changes only kernels that spill (BLOCK_K 256 here): the table serves the others at any GROUP_M
    monkeypatch.setattr(oracle, "triton_version", lambda: "9.9.9-test")
    monkeypatch.setattr(oracle, "cache_root", lambda: tmp_path / "cache3")
    spills = lambda c: 5 if c.BLOCK_K == 256 else 0  # noqa: E731
    monkeypatch.setattr(oracle, "compile_record", lambda c, *a: {
        **real(c, *a), "spills": spills(c), "regs_per_thread": 70 + (c.GROUP_M if spills(c) else 8)})
    build_tables.main(build)
    t = json.loads(gzip.decompress(path.read_bytes()))
    assert t["group_m_invariant"] == "unless_spilling" and t["group_m_check"]["differ"]
    monkeypatch.setattr(oracle, "triton_version", lambda: None)
    clear_caches()
    assert gemm_resources(cfg, "sm_87", "bf16").source == "table"
    assert gemm_resources(LaunchConfig(32, 256, 256, 3, 8, 2), "sm_87", "bf16").source == "estimate"


def test_specialization_tag_for_unaligned_problems():
    cfg = LaunchConfig(64, 64, 32)
    assert oracle.cache_path(cfg, "sm_90", "bf16", "3.6.0", (4096, 4096, 4096)) == \
        oracle.cache_path(cfg, "sm_90", "bf16", "3.6.0")
    assert oracle.cache_path(cfg, "sm_90", "bf16", "3.6.0", (100, 4096, 4096)).name.endswith("_specxDD.json")


# ---- the real compiler (CPU is enough) -----------------------------------------------------------------

@pytest.mark.triton
def test_oracle_compiles_sm90_and_matches_table(monkeypatch):
    pytest.importorskip("triton")
    if oracle.triton_version() != res.TABLE_TRITON_VERSION:
        pytest.skip(f"tables are for triton {res.TABLE_TRITON_VERSION}, installed {oracle.triton_version()}")
    n = []
    real = oracle._compile
    monkeypatch.setattr(oracle, "_compile", lambda *a: (n.append(a), real(*a))[1])
    cfg = LaunchConfig(64, 64, 32, 8, 4, 2)
    r = gemm_resources(cfg, "sm_90", "bf16", source="oracle")
    assert len(n) == 1
    t = gemm_resources(cfg, "sm_90", "bf16", source="table")
    assert (r.regs_per_thread, r.spills, r.smem_bytes, r.num_warps) == \
        (t.regs_per_thread, t.spills, t.smem_bytes, t.num_warps)
    rec = oracle.cached_record(cfg, "sm_90", "bf16")
    assert rec["status"] == "ok" and rec["triton"] == "3.6.0"
    clear_caches()
    gemm_resources(cfg, "sm_90", "bf16", source="oracle")
    assert len(n) == 1   # second call: disk cache


@pytest.mark.triton
def test_compiled_sm90_kernels_take_the_mma_path_and_b_copies_the_model_assumes():
    """The simulator's MMA path (uses_wgmma) and its fp32 B copy (transposed_b: BK x BN single-element cp.async per
    K step, LDGSTS.E, where 16-bit operands get 16-byte copies) are what Triton compiles: the TTGIR's MMA version
    and the SASS of the prologue's num_stages - 1 stages plus one loop step."""
    import re
    import subprocess

    pytest.importorskip("triton")
    import hwspecs
    from wavesim.kernels.gemm import GemmBatch

    spec = hwspecs.load_gpu("h200")
    for key, dtype in [("128x128x32_g8_w4_s3", "fp32"), ("64x256x32_g8_w8_s3", "fp32"), ("32x256x32_g8_w4_s3", "fp32"),
                       ("128x128x32_g8_w4_s3", "bf16")]:
        cfg = LaunchConfig.from_key(key)
        k = oracle._compile(cfg, "sm_90", dtype, oracle.DEFAULT_PROBLEM)
        b = GemmBatch.build(spec, dtype, [4096], [4096], [4096], [cfg])
        assert ("versionMajor = 3" in k.asm["ttgir"]) == bool(b.wgmma[0]), key
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "k.cubin"
            path.write_bytes(k.asm["cubin"])
            sass = subprocess.run([str(oracle._cuobjdump_path()), "-sass", str(path)], capture_output=True, text=True,
                                  check=True).stdout
        single = len(re.findall(r"LDGSTS\.E ", sass))
        per_thread_step = cfg.BLOCK_K * cfg.BLOCK_N // (32 * cfg.num_warps)
        assert single == (cfg.num_stages * per_thread_step if b.transposed_b[0] else 0), (key, dtype, single)


@pytest.mark.triton
def test_mma_v2_warp_grid_is_the_one_triton_compiles():
    """mma_v2_warps, which sets how often an mma.sync CTA's warps read A and B from shared memory, is the warpsPerCTA
    of the sm_90 TTGIR's #nvidia_mma layout: warps along M or N by the tiles' slices, and past both sides' slices
    (16 warps on 16 x 64) along M, holding copies."""
    import re

    pytest.importorskip("triton")
    from wavesim.kernels.gemm import mma_v2_warps

    for key in ("16x64x256_g8_w16_s5", "32x64x64_g8_w4_s3", "32x32x256_g32_w8_s4", "32x128x64_g8_w8_s3",
                "16x16x32_g16_w8_s3", "16x32x32_g2_w16_s1", "128x32x32_g1_w2_s5", "32x16x128_g4_w4_s1"):
        cfg = LaunchConfig.from_key(key)
        ttgir = oracle._compile(cfg, "sm_90", "bf16", oracle.DEFAULT_PROBLEM).asm["ttgir"]
        got = re.search(r"versionMajor = 2[^}]*warpsPerCTA = \[(\d+), (\d+)\]", ttgir)
        assert got and (int(got[1]), int(got[2])) == mma_v2_warps(cfg), key


@pytest.mark.triton
def test_mma_v2_copies_and_narrow_loads_are_what_triton_compiles():
    """mma_v2_copies is the compiled kernel's MMA count over the tile's (mma.sync per warp in the PTX x warps), and
    the narrow-operand rule (a tile of < 4 bytes a thread, gemm.workload_arrays) is where the sm_90 SASS loads an
    operand with LDG.E.U16 instead of cp.async's LDGSTS."""
    import re
    import subprocess
    import tempfile

    pytest.importorskip("triton")
    from wavesim.kernels.gemm import mma_v2_copies

    for key in ("16x64x64_g8_w16_s3", "32x32x64_g8_w16_s4", "16x32x64_g8_w8_s3", "32x64x64_g8_w4_s3",
                "16x128x16_g4_w16_s5", "32x16x16_g16_w16_s5", "16x32x32_g2_w16_s5", "64x64x64_g8_w1_s3"):
        cfg = LaunchConfig.from_key(key)
        kernel = oracle._compile(cfg, "sm_90", "bf16", oracle.DEFAULT_PROBLEM)
        mmas = len(re.findall(r"mma\.sync", kernel.asm["ptx"])) * cfg.num_warps
        assert mmas == cfg.BLOCK_M * cfg.BLOCK_N * cfg.BLOCK_K // (16 * 8 * 16) * mma_v2_copies(cfg), key
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(kernel.asm["cubin"])
            f.flush()
            sass = subprocess.run([str(oracle._cuobjdump_path()), "-sass", f.name], capture_output=True, text=True,
                                  check=True).stdout
        narrow = min(cfg.BLOCK_M, cfg.BLOCK_N) * cfg.BLOCK_K * 2 < 4 * 32 * cfg.num_warps
        assert ("LDG.E.U16" in sass) == narrow, key


def test_sync_load_rounds_follow_the_loop_body():
    """An LDG issued after an STS that waited on round r is in round r + 1; only the main loop (the longest backward
    branch, whose instructions are its length) counts; a loop of cp.async copies alone is one round."""
    sass = """
        /*0000*/                   LDG.E.128 R20, desc[UR4][R2.64] ;
        /*0010*/                   STS.128 [R1], R20 ;
        /*0020*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
        /*0030*/              @!P0 LDG.E.128 R8, desc[UR4][R2.64] ;
        /*0040*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0050*/                   STS.128 [R1+0x10], R4 ;
        /*0060*/                   LDG.E.128 R12, desc[UR4][R2.64] ;
        /*0070*/                   STS.128 [R1+0x20], R8 ;
        /*0080*/                   STS.128 [R1+0x30], R12 ;
        /*0090*/              @!P1 BRA 0x20 ;
        /*00a0*/                   EXIT ;
    """
    assert oracle.loop_record(sass) == {"load_rounds": 2, "loop_instructions": 8, "loop_mmas": 0}
    assert oracle.loop_record(sass.replace("LDG.E.128 R12", "LDGSTS.E.128 [R1], "))["load_rounds"] == 1
    assert oracle.loop_record(sass.replace("BAR.SYNC.DEFER_BLOCKING 0x0", "HMMA.16816.F32.BF16 R4, R8, R12, R4"))[
        "loop_mmas"] == 1
    assert oracle.loop_record("/*0000*/ EXIT ;") == {"load_rounds": 1, "loop_instructions": 0, "loop_mmas": 0}


@pytest.mark.triton
def test_load_rounds_are_read_from_the_compiled_kernel():
    """The oracle's load_rounds for one-stage kernels of the stages_warps study, whose one- over two-stage time at one
    CTA per SM follows them (1 round: 1.24-1.26x, 2: 1.41-1.71x, 3: 1.92x; NOTES.md session 35); 1 for cp.async."""
    pytest.importorskip("triton")
    for key, rounds in (("128x64x64_g8_w4_s1", 1), ("64x128x64_g8_w4_s1", 2), ("32x64x64_g8_w2_s1", 3),
                        ("64x128x64_g8_w4_s3", 1)):
        rec = oracle.compile_record(LaunchConfig.from_key(key), "sm_90", "bf16")
        assert rec["status"] == "ok" and rec["load_rounds"] == rounds, (key, rec.get("load_rounds"))


@pytest.mark.triton
def test_loop_instructions_per_k_step_are_read_from_the_compiled_kernel():
    """The main loop's length over the K steps ptxas unrolled into it (NOTES.md session 36: 16 of 480 mma.sync loops of
    the blind sets hold 4 K steps, their HMMA count 4x one step's; every wgmma loop holds one)."""
    pytest.importorskip("triton")
    import hwspecs
    from wavesim.kernels.gemm import loop_instructions_per_step, mmas_per_step

    spec = hwspecs.load_gpu("h200")
    for key, steps in (("64x32x64_g8_w16_s3", 1), ("128x128x64_g8_w4_s3", 1), ("32x32x256_g1_w16_s2", 4)):
        cfg = LaunchConfig.from_key(key)
        rec = oracle.compile_record(cfg, "sm_90", "bf16")
        assert rec["loop_mmas"] == steps * mmas_per_step(spec, cfg, "bf16"), key
        res = gemm_resources(cfg, "sm_90", "bf16", source="oracle")
        assert loop_instructions_per_step(spec, cfg, "bf16", res) == rec["loop_instructions"] / steps, key


WIDE_TABLES = [("sm_90", "bf16"), ("sm_90", "fp16"), ("sm_100", "bf16"), ("sm_80", "bf16"), ("sm_89", "bf16"),
               ("sm_120", "bf16"), ("sm_86", "bf16")]


@pytest.mark.parametrize("arch, dtype", WIDE_TABLES)
def test_the_wide_tables_cover_the_wide_space(arch, dtype):
    """The committed wide tables hold every config tuner.space.wide_space draws (rebuild them when it changes) and were
    checked at every other GROUP_M of the blind sets on a sample, which no GROUP_M changed; a bf16 table serves fp16
    only where its sample compiled alike in fp16."""
    from tuner.space import wide_space

    doc = res._table_doc(arch, dtype, res.WIDE)
    assert sorted(doc["records"]) == sorted(c.key for c in wide_space())
    differ = doc["group_m_check"]["differ"]
    assert doc["group_m_check"]["sample"] >= 100 and doc["group_m_invariant"] == (True if not differ else "unless_spilling")
    assert all(doc["records"][replace(LaunchConfig.from_key(k), GROUP_M=doc["group_m"]).key]["spills"] for k in differ)
    served = doc.get("serves_dtypes", [])
    assert all(doc[f"{d}_check"]["compiled"] >= 100 and not doc[f"{d}_check"]["differ"] for d in served)
    assert res._table_doc(arch, "fp16", res.WIDE) is not None or "fp16" in served


@pytest.mark.triton
def test_the_wide_table_is_what_the_compiler_gives_at_any_group_m():
    pytest.importorskip("triton")
    import random

    keys = sorted(k for k, r in res._table_doc("sm_90", "bf16", res.WIDE)["records"].items() if r["status"] == "ok")
    for key in random.Random(38).sample(keys, 3):
        cfg = LaunchConfig.from_key(key.replace("_g8_", "_g3_"))   # GROUP_M 3: neither the table's nor its check's
        t = gemm_resources(cfg, "sm_90", "bf16", source="table")
        o = gemm_resources(cfg, "sm_90", "bf16", source="oracle")
        assert (t.regs_per_thread, t.spills, t.smem_bytes, t.load_rounds, t.loop_instructions, t.loop_mmas) == \
            (o.regs_per_thread, o.spills, o.smem_bytes, o.load_rounds, o.loop_instructions, o.loop_mmas), key


@pytest.mark.triton
def test_oracle_reproduces_the_jit_specialization():
    pytest.importorskip("triton")
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend
    from triton.runtime.jit import create_function_from_signature

    from validation.kernels.gemm import gemm_kernel as k

    binder = create_function_from_signature(k.signature, k.params, make_backend(GPUTarget("cuda", 90, 32)))
    p = oracle._Pointer(tl.bfloat16)
    _, spec, _ = binder(p, p, p, 4096, 4096, 4096, 4096, 1, 4096, 1, 4096, 1,
                        BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8)
    assert [s[1] for s in spec[:12]] == ["D"] * 7 + [1, "D", 1, "D", 1]
    assert [s[0] for s in spec[7:12:2]] == ["constexpr"] * 3


# ---- ground truth: H200 measurements (validation/data/h200/gemm/*.jsonl) -------------------------------
# Each Triton record carries the loaded kernel's n_regs / n_spills (CU_FUNC_ATTRIBUTE_NUM_REGS,
# LOCAL_SIZE_BYTES // 4) and shared_bytes (metadata.shared); out_of_resources records carry the launcher's
# "Required: <bytes>" shared memory. The committed sm_90 tables must reproduce all of them exactly.

def _h200_records():
    from wavetune.records import read_jsonl_file

    return [r for p in sorted(H200_DIR.glob("*.jsonl")) for r in read_jsonl_file(p)   # some are gzip-compressed
            if r.get("backend", "triton") == "triton" and isinstance(r.get("config"), dict)]


def _spec_of(r):
    return oracle._problem_tag((r["M"], r["N"], r["K"]))


def test_tables_match_h200_measurements():
    recs = [r for r in _h200_records() if r.get("n_regs") is not None]
    if not recs:
        pytest.skip("no H200 records with n_regs in validation/data/h200/gemm")
    checked, mismatches, classes = 0, [], set()
    for r in recs:
        spec = _spec_of(r)
        if res.load_table("sm_90", r["dtype"], spec) is None:
            continue   # a specialization class without a committed table (none in the current data)
        cfg = LaunchConfig.from_dict(r["config"])
        t = gemm_resources(cfg, "sm_90", r["dtype"], source="table", problem=(r["M"], r["N"], r["K"]))
        checked += 1
        classes.add(spec or "DDD")
        got = (t.regs_per_thread, t.spills, t.smem_bytes)
        want = (r["n_regs"], r["n_spills"], r["shared_bytes"])
        if got != want:
            mismatches.append((cfg.key, spec, got, want))
    assert checked >= 0.9 * len(recs), f"only {checked}/{len(recs)} H200 records have a table to check against"
    assert not mismatches, f"{len(mismatches)}/{checked} H200 records differ from the table: {mismatches[:5]}"


def test_tables_match_h200_out_of_resources():
    recs = [r for r in _h200_records() if r.get("status") == "out_of_resources"]
    if not recs:
        pytest.skip("no out_of_resources records")
    import re

    for r in recs:
        m = re.search(r"shared memory, Required: (\d+)", r.get("reason", ""))
        if not m:
            continue
        cfg = LaunchConfig.from_dict(r["config"])
        spec = _spec_of(r)
        if res.load_table("sm_90", r["dtype"], spec) is None:
            continue
        t = gemm_resources(cfg, "sm_90", r["dtype"], source="table", problem=(r["M"], r["N"], r["K"]))
        assert t.smem_bytes == int(m.group(1)), (cfg.key, spec)


@pytest.mark.triton
@pytest.mark.parametrize("key", ["64x16x16_g1_w4_s1", "32x32x64_g1_w8_s1", "16x128x32_g8_w8_s2", "64x128x64_g1_w2_s3"])
def test_estimator_on_held_out_configs(key):
    """Configs outside the fitted space (num_stages 1, num_warps 2, BLOCK_K 16): compile and compare."""
    pytest.importorskip("triton")
    cfg = LaunchConfig.from_key(key)
    o = gemm_resources(cfg, "sm_90", "bf16", source="oracle")
    e = gemm_resources(cfg, "sm_90", "bf16", source="estimate")
    assert e.smem_bytes == o.smem_bytes
    assert abs(e.regs_per_thread - o.regs_per_thread) <= 32
