"""hwspecs.occupancy against the CUDA driver on our H200: cuOccupancyMaxActiveBlocksPerMultiprocessor
for 12 compiled Triton bf16 GEMM kernels x block sizes x dynamic shared sizes, recorded by
hwspecs/tools/record_occupancy.py into hwspecs/data/evidence/h200_occupancy.json."""

import json
from pathlib import Path

import pytest

import hwspecs

EVIDENCE = json.loads((Path(hwspecs.__file__).parent / "data/evidence/h200_occupancy.json").read_text())
H200 = hwspecs.load_gpu("h200")
KERNELS = [k for k in EVIDENCE["kernels"] if "error" not in k]


def test_evidence_is_for_the_h200():
    assert EVIDENCE["device"] == H200.name
    assert len(KERNELS) == 12 and sum(len(k["cases"]) for k in KERNELS) >= 1000


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: "x".join(map(str, k["config"])))
def test_matches_the_driver_for_every_recorded_case(kernel):
    mismatches = []
    for block, dyn, ctas in kernel["cases"]:
        occ = hwspecs.occupancy(H200, num_warps=-(-block // H200.arch.warp_size), regs_per_thread=kernel["num_regs"],
                                smem_bytes=kernel["static_smem"] + dyn)
        if occ.ctas_per_sm != ctas:
            mismatches.append((block, dyn, ctas, occ.ctas_per_sm))
    assert not mismatches


def test_guide_staircases_from_compiled_kernels():
    """The GUIDE's measured wave steps (132, 264, 396, 1056 tiles = SMs x CTAs/SM) follow from the
    compiled kernels' registers and shared memory."""
    by_cfg = {tuple(k["config"]): k for k in KERNELS}
    for cfg, ctas, limiter in [((128, 128, 64, 4, 4), 1, "shared_memory"), ((128, 128, 64, 4, 2), 2, "registers"),
                               ((64, 128, 64, 4, 3), 3, "shared_memory"), ((64, 64, 32, 4, 2), 8, "registers")]:
        k = by_cfg[cfg]
        occ = hwspecs.occupancy(H200, num_warps=k["num_warps"], regs_per_thread=k["num_regs"],
                                smem_bytes=k["triton_shared"])
        assert (occ.ctas_per_sm, occ.limiter) == (ctas, limiter), cfg
        assert H200.sm_count * occ.ctas_per_sm in (132, 264, 396, 1056)
