"""Occupancy calculator: golden values worked by hand from the rules in gpu-specs.md section 4
(cuda_occupancy.h) and LLVM AMDGPU, property tests, and edge cases."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hwspecs
from hwspecs.occupancy import AMD_LIMITS, NVIDIA_LIMITS, explain, occupancy

H200 = hwspecs.load_gpu("h200")
MI300X = hwspecs.load_gpu("mi300x")


# (gpu, warps, regs/thread, smem bytes, barriers) -> (CTAs/SM, limiter). Worked out in the comments.
GOLDEN = [
    # 128x128x64 GEMM, 4 stages: smem 131072 + 1024 reserved = 132096 -> 233472 // 132096 = 1;
    # regs 168*32 = 5376/warp -> 16384 // 5376 = 3 warps per partition -> 12 warps -> 3 CTAs
    (("h200", 4, 168, 131072, 1), (1, "shared_memory")),
    # 65536 + 1024 = 66560 -> 3; regs 128*32 = 4096 -> 4/partition -> 16 warps -> 4 CTAs
    (("h200", 4, 128, 65536, 1), (3, "shared_memory")),
    # 8 warps: regs 16 warps // 8 = 2; smem 3; warps 64 // 8 = 8
    (("h200", 8, 128, 65536, 1), (2, "registers")),
    # 64x64x32, 2 stages: smem 16384 + 1024 = 17408 -> 13; regs 64*32 = 2048 -> 8/partition -> 32 warps -> 8
    (("h200", 4, 64, 16384, 1), (8, "registers")),
    # tiny CTAs: warps 64, regs 1024/warp -> 64 warps -> 64, smem 1024 -> 228: the 32 CTA slots decide
    (("h200", 1, 32, 0, 1), (32, "blocks")),
    # 16 barriers per CTA: 2 x 32 = 64 barriers per SM -> 4
    (("h200", 4, 32, 0, 16), (4, "barriers")),
    # 1024 threads at 64 regs: 2048/warp x 32 = 65536 = regs per CTA -> 8/partition -> 32 warps -> 1
    # (warp slots would allow 64 // 32 = 2)
    (("h200", 32, 64, 0, 1), (1, "registers")),
    # 96 regs -> 3072/warp -> 5/partition -> 20 warps -> 5 CTAs of 4 warps; smem (2048+1024) -> 76
    (("h100-sxm", 4, 96, 2048, 1), (5, "registers")),
    # 100 regs -> 3200 rounded to 3328 -> 4/partition -> 16 warps -> 4
    (("h100-sxm", 4, 100, 0, 1), (4, "registers")),
    # V100 (CC 7.0): no reservation, 256 B granularity: 49152 -> 98304 // 49152 = 2
    (("v100-sxm2", 4, 64, 49152, 1), (2, "shared_memory")),
    # 49153 B needs the opt-in, rounds to 49408 -> 1
    (("v100-sxm2", 4, 64, 49153, 1), (1, "shared_memory")),
    # T4 (CC 7.5): 32 warps per SM // 8 = 4
    (("t4", 8, 32, 0, 1), (4, "warps")),
    # A100: 81920 + 1024 = 82944 -> 167936 // 82944 = 2
    (("a100-sxm4-80gb", 4, 128, 81920, 1), (2, "shared_memory")),
    # RTX 4090 (CC 8.9): 48 warps // 4 = 12 (24 slots, regs 16)
    (("rtx-4090", 4, 32, 0, 1), (12, "warps")),
    # A10 (CC 8.6): 16 CTA slots before 24 warps
    (("a10", 2, 32, 0, 1), (16, "blocks")),
    # RTX 5090 (CC 12.0): 1 barrier per slot -> 24 // 2 = 12
    (("rtx-5090", 1, 32, 0, 2), (12, "barriers")),
    # B200 (CC 10.0): 99 KB smem: 101376 + 1024 = 102400 -> 233472 // 102400 = 2
    (("b200", 8, 64, 101376, 1), (2, "shared_memory")),
    # MI300X: 4 waves, 128 VGPRs -> 4 waves/SIMD -> 16 waves -> 4; LDS 65536 // 32768 = 2
    (("mi300x", 4, 128, 32768, 1), (2, "lds")),
    # 256 VGPRs -> 2 waves/SIMD -> 8 waves -> 2 workgroups
    (("mi300x", 4, 256, 0, 1), (2, "vgprs")),
    # 100 VGPRs -> 104 -> 512 // 104 = 4 waves/SIMD -> 4 workgroups; LDS 1 B -> one 512 B granule -> 128
    (("mi300x", 4, 100, 1, 1), (4, "vgprs")),
    # single-wave workgroups: 32 waves, 32 workgroups
    (("mi250x", 1, 0, 0, 1), (32, "waves")),
    # 2-wave workgroups: 16 by waves and by the 16 barriers per CU
    (("mi250x", 2, 32, 0, 1), (16, "waves")),
]


@pytest.mark.parametrize("args, expected", GOLDEN, ids=[f"{a[0]}-w{a[1]}-r{a[2]}-s{a[3]}-b{a[4]}" for a, _ in GOLDEN])
def test_golden(args, expected):
    gid, warps, regs, smem, barriers = args
    occ = occupancy(hwspecs.load_gpu(gid), num_warps=warps, regs_per_thread=regs, smem_bytes=smem,
                    block_barriers=barriers)
    assert (occ.ctas_per_sm, occ.limiter) == expected
    assert occ.reason is None
    assert occ.warps_per_sm == occ.ctas_per_sm * warps


def test_golden_h200_limits_and_explain():
    occ = occupancy(H200, num_warps=4, regs_per_thread=168, smem_bytes=131072)
    assert dict(occ.limits) == {"warps": 16, "blocks": 32, "registers": 3, "shared_memory": 1, "barriers": 64}
    assert occ.smem_per_cta_bytes == 132096 and occ.regs_per_warp == 5376
    assert occ.occupancy_fraction == pytest.approx(4 / 64)
    text = hwspecs.occupancy.explain(occ)
    assert "NVIDIA H200" in text and "limited by shared_memory" in text and "132096" in text
    assert hwspecs.occupancy(H200, num_warps=4, regs_per_thread=168, smem_bytes=131072) == occ  # callable module


def test_ties_list_every_limiter():
    occ = occupancy(H200, num_warps=4, regs_per_thread=32, smem_bytes=0)
    assert occ.ctas_per_sm == 16 and occ.limiters == ("warps", "registers") and occ.limiter == "warps"


def test_carveout_rounds_up_to_a_legal_size():
    # 40000 + 1024 -> 41088 B per CTA
    assert occupancy(H200, num_warps=4, regs_per_thread=32, smem_bytes=40000, carveout_bytes=100 * 1024).ctas_per_sm == 2
    # 50000 B preference -> the 64 KB carveout -> 1
    assert occupancy(H200, num_warps=4, regs_per_thread=32, smem_bytes=40000, carveout_bytes=50000).ctas_per_sm == 1
    # a carveout too small for one CTA is bumped to the next legal size that holds it (64 KB)
    assert occupancy(H200, num_warps=4, regs_per_thread=32, smem_bytes=40000, carveout_bytes=0).ctas_per_sm == 1
    with pytest.raises(ValueError, match="carveout_bytes"):
        occupancy(H200, num_warps=4, regs_per_thread=32, smem_bytes=0, carveout_bytes=10**6)


# ---- cannot launch: 0 with a reason naming the limit ----

@pytest.mark.parametrize("gid, kw, limiter, words", [
    ("h200", dict(num_warps=4, regs_per_thread=168, smem_bytes=262144), "shared_memory",
     "needs 262144 B of shared memory per CTA, the NVIDIA H200 allows 232448 (opt-in maximum)"),
    ("h200", dict(num_warps=4, regs_per_thread=32, smem_bytes=232449), "shared_memory", "allows 232448"),
    ("h200", dict(num_warps=4, regs_per_thread=256, smem_bytes=0), "registers",
     "needs 256 registers per thread, the NVIDIA H200 allows 255"),
    ("h200", dict(num_warps=32, regs_per_thread=65, smem_bytes=0), "registers", "allows 65536"),
    ("h200", dict(num_warps=33, regs_per_thread=32, smem_bytes=0), "warps", "1056 threads"),
    ("h200", dict(num_warps=4, regs_per_thread=32, smem_bytes=0, block_barriers=65), "barriers", "65 block barriers"),
    ("t4", dict(num_warps=4, regs_per_thread=32, smem_bytes=65537), "shared_memory", "allows 65536"),
    ("mi300x", dict(num_warps=17, regs_per_thread=32, smem_bytes=0), "waves", "1088 work-items"),
    ("mi300x", dict(num_warps=4, regs_per_thread=513, smem_bytes=0), "vgprs", "allows 512"),
    ("mi300x", dict(num_warps=16, regs_per_thread=512, smem_bytes=0), "vgprs", "16 wavefronts"),
    ("mi300x", dict(num_warps=4, regs_per_thread=32, smem_bytes=65537), "lds", "65537 B of LDS"),
])
def test_cannot_launch(gid, kw, limiter, words):
    occ = occupancy(hwspecs.load_gpu(gid), **kw)
    assert occ.ctas_per_sm == 0 and occ.limiter == limiter and occ.warps_per_sm == 0
    assert words in occ.reason
    assert "cannot launch" in explain(occ)


def test_exact_opt_in_maximum_fits():
    assert occupancy(H200, num_warps=4, regs_per_thread=32, smem_bytes=232448).ctas_per_sm == 1


@pytest.mark.parametrize("kw", [dict(num_warps=0), dict(regs_per_thread=-1), dict(smem_bytes=-1),
                                dict(block_barriers=-1), dict(num_warps=2.0), dict(num_warps=True)])
def test_bad_arguments(kw):
    args = dict(num_warps=4, regs_per_thread=32, smem_bytes=0) | kw
    with pytest.raises(ValueError):
        occupancy(H200, **args)


def test_accepts_arch_and_rejects_other_types():
    occ = occupancy(H200.arch, num_warps=4, regs_per_thread=168, smem_bytes=131072)
    assert occ.ctas_per_sm == 1 and occ.device == "sm_90"
    with pytest.raises(TypeError):
        occupancy("h200", num_warps=4, regs_per_thread=32, smem_bytes=0)


# ---- properties, over every shipped architecture ----

ARCHS = [hwspecs.load_arch(a) for a in ("sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120",
                                        "gfx90a", "gfx942")]
archs = st.sampled_from(ARCHS)
warps = st.integers(1, 40)
regs = st.integers(0, 600)
smem = st.integers(0, 240 * 1024)
barriers = st.integers(0, 80)
FAST = settings(max_examples=150, deadline=None)


def _occ(arch, w, r, s, b=1, **kw):
    return occupancy(arch, num_warps=w, regs_per_thread=r, smem_bytes=s, block_barriers=b, **kw)


@FAST
@given(archs, warps, regs, smem, barriers, st.integers(0, 64), st.integers(0, 8192), st.integers(0, 4))
def test_more_resources_never_increase_ctas(arch, w, r, s, b, dr, ds, dw):
    base = _occ(arch, w, r, s, b).ctas_per_sm
    assert _occ(arch, w, r + dr, s, b).ctas_per_sm <= base
    assert _occ(arch, w, r, s + ds, b).ctas_per_sm <= base
    assert _occ(arch, w + dw, r, s, b).ctas_per_sm <= base
    assert _occ(arch, w, r, s, b + dw).ctas_per_sm <= base


@FAST
@given(archs, warps, regs, smem, barriers)
def test_invariants(arch, w, r, s, b):
    occ = _occ(arch, w, r, s, b)
    assert occ.ctas_per_sm * w <= arch.max_warps_per_sm
    assert occ.ctas_per_sm <= arch.max_ctas_per_sm
    assert occ.ctas_per_sm == min(occ.limits.values())
    assert (occ.ctas_per_sm == 0) == any(v == 0 for v in occ.limits.values())
    assert (occ.reason is not None) == (occ.ctas_per_sm == 0)
    assert set(occ.limits) == set(NVIDIA_LIMITS if arch.vendor == "nvidia" else AMD_LIMITS)
    assert 0 <= occ.occupancy_fraction <= 1


@FAST
@given(st.sampled_from(ARCHS[:8]), warps, st.integers(0, 255), smem, st.one_of(st.none(), st.integers(0, 228 * 1024)))
def test_smem_limit_is_carveout_over_rounded_smem(arch, w, r, s, carveout):
    if carveout is not None:
        carveout = min(carveout, arch.smem_per_sm_bytes)
    occ = _occ(arch, w, r, s, carveout_bytes=carveout)
    resv, gran = arch.reserved_smem_per_cta_bytes, arch.smem_alloc_granularity_bytes
    per_cta = -(-(s + resv) // gran) * gran
    if s > arch.smem_per_cta_optin_bytes:
        assert occ.limits["shared_memory"] == 0
        return
    # the effective carveout: the smallest legal size >= max(preference, one CTA)
    want = max(arch.smem_per_sm_bytes if carveout is None else carveout, per_cta)
    effective = min(c for c in arch.smem_carveouts_bytes if c >= want)
    if per_cta:
        assert occ.limits["shared_memory"] == effective // per_cta
        assert occ.smem_per_cta_bytes == per_cta
