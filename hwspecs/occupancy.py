"""How many CTAs of a kernel fit on one SM (one CU on AMD): the CUDA occupancy calculator's rules.

NVIDIA follows `cudaOccMaxActiveBlocksPerMultiprocessor` of cuda_occupancy.h (CUDA 13.0), transcribed
in shared/reference/gpu-specs.md section 4: warp slots, CTA slots, registers allocated per warp in
`reg_alloc_unit` units within `subpartitions_per_sm` register-file partitions, shared memory rounded
up to its allocation granularity with the per-CTA reservation (CC >= 8) inside a legal carveout, and
the block-barrier limit (CC >= 9). AMD CDNA follows LLVM AMDGPU: waves per SIMD, VGPR granules,
LDS granules and the workgroup/barrier limit per CU. Every number comes from the ArchLimits (TOML).

Evidence: on our H200, 1640/1640 cases (12 compiled Triton GEMM kernels x block sizes x dynamic shared
sizes) match cuOccupancyMaxActiveBlocksPerMultiprocessor (data/evidence/h200_occupancy.json, recorded
by tools/record_occupancy.py, pinned by tests/test_occupancy_evidence.py). AMD is not yet checked on hardware.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field
from typing import Mapping

from hwspecs.spec import ArchLimits, FrozenMap, GPUSpec

# Tie order for `limiter` when several limits give the same CTA count (all tied ones are in `limiters`).
NVIDIA_LIMITS = ("warps", "registers", "shared_memory", "blocks", "barriers")
AMD_LIMITS = ("waves", "vgprs", "lds", "workgroups")


@dataclass(frozen=True)
class Occupancy:
    """The result: `ctas_per_sm` (0 = cannot launch) and which resource decided it, and why."""

    ctas_per_sm: int
    limiter: str
    limits: Mapping[str, int]  # CTAs/SM each resource alone allows
    reason: str | None  # when ctas_per_sm == 0: the violated limit, as a sentence
    warps_per_sm: int
    occupancy_fraction: float  # resident warps / max warps per SM
    limiters: tuple[str, ...] = ()  # every resource at the minimum
    details: Mapping[str, str] = field(default_factory=FrozenMap, compare=False)  # how each limit came out
    device: str = ""
    num_warps: int = 0
    smem_per_cta_bytes: int = 0  # allocated: rounded, with the reservation
    regs_per_warp: int = 0  # allocated


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(a: int, b: int) -> int:
    return _ceil_div(a, b) * b


def _align_up_to_carveout(arch: ArchLimits, nbytes: int) -> int:
    """The smallest legal shared-memory capacity per SM that holds `nbytes` (the driver rounds up)."""
    return min((c for c in arch.smem_carveouts_bytes if c >= nbytes), default=arch.smem_per_sm_bytes)


def occupancy(spec_or_arch: GPUSpec | ArchLimits, *, num_warps: int, regs_per_thread: int, smem_bytes: int,
              block_barriers: int = 1, carveout_bytes: int | None = None) -> Occupancy:
    """CTAs per SM for a CTA of `num_warps` warps (wavefronts on AMD), `regs_per_thread` registers
    (VGPRs incl. AGPRs on AMD), `smem_bytes` of static + dynamic shared memory (LDS), and
    `block_barriers` named barriers (CC >= 9). `carveout_bytes` is the preferred shared-memory
    capacity per SM (None: the maximum, as cudaSharedmemCarveoutDefault); AMD ignores barriers and carveout."""
    if isinstance(spec_or_arch, GPUSpec):
        arch, device = spec_or_arch.arch, spec_or_arch.name
    elif isinstance(spec_or_arch, ArchLimits):
        arch, device = spec_or_arch, spec_or_arch.name
    else:
        raise TypeError(f"expected a GPUSpec or ArchLimits, got {type(spec_or_arch).__name__}")
    for name, v, lo in (("num_warps", num_warps, 1), ("regs_per_thread", regs_per_thread, 0),
                        ("smem_bytes", smem_bytes, 0), ("block_barriers", block_barriers, 0)):
        if not isinstance(v, int) or isinstance(v, bool) or v < lo:
            raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    if carveout_bytes is not None and not 0 <= carveout_bytes <= arch.smem_per_sm_bytes:
        raise ValueError(f"carveout_bytes must be in [0, {arch.smem_per_sm_bytes}] on {device}, got {carveout_bytes}")
    rule = _amd if arch.vendor == "amd" else _nvidia
    limits, details, reasons, order, smem_cta, regs_warp = rule(
        arch, device, num_warps, regs_per_thread, smem_bytes, block_barriers, carveout_bytes)
    ctas = min(limits.values())
    tied = tuple(k for k in order if limits[k] == ctas)
    return Occupancy(
        ctas_per_sm=ctas, limiter=tied[0], limits=FrozenMap(limits),
        reason=reasons.get(tied[0]) if ctas == 0 else None,
        warps_per_sm=ctas * num_warps, occupancy_fraction=ctas * num_warps / arch.max_warps_per_sm,
        limiters=tied, details=FrozenMap(details), device=device, num_warps=num_warps,
        smem_per_cta_bytes=smem_cta, regs_per_warp=regs_warp)


def _nvidia(arch, device, warps, regs, smem, barriers, carveout):
    lim, det, why = {}, {}, {}
    slots = arch.max_ctas_per_sm  # a resource that does not constrain is reported at the CTA slot limit
    threads = warps * arch.warp_size
    # 1) warp slots; a CTA is at most max_threads_per_cta threads
    if threads > arch.max_threads_per_cta:
        lim["warps"] = 0
        why["warps"] = (f"a CTA of {warps} warps has {threads} threads, the {device} allows "
                        f"{arch.max_threads_per_cta} threads per CTA")
    else:
        lim["warps"] = arch.max_warps_per_sm // warps
    det["warps"] = f"{arch.max_warps_per_sm} warps/SM // {warps} warps/CTA"
    # 2) CTA slots
    lim["blocks"] = slots
    det["blocks"] = f"{slots} CTA slots per SM"
    # 3) registers: whole warps get reg_alloc_unit-sized chunks from one of the sub-partition files
    regs_warp = _round_up(regs * arch.warp_size, arch.reg_alloc_unit)
    cta_regs = regs_warp * _round_up(warps, arch.warp_alloc_granularity)
    part = arch.regs_per_sm // arch.subpartitions_per_sm
    if regs > arch.max_regs_per_thread:
        lim["registers"] = 0
        why["registers"] = f"needs {regs} registers per thread, the {device} allows {arch.max_regs_per_thread}"
    elif cta_regs > arch.max_regs_per_cta:
        lim["registers"] = 0
        why["registers"] = (f"needs {cta_regs} registers per CTA ({regs_warp} per warp x {warps} warps rounded up "
                            f"to {arch.warp_alloc_granularity}), the {device} allows {arch.max_regs_per_cta}")
    else:
        lim["registers"] = (part // regs_warp) * arch.subpartitions_per_sm // warps if regs_warp else slots
    det["registers"] = (f"{regs} regs/thread -> {regs_warp} regs/warp; {arch.subpartitions_per_sm} partitions of "
                        f"{part} regs hold {part // regs_warp if regs_warp else 'any number of'} warps each")
    # 4) shared memory: the reservation is part of each CTA's allocation; over 48 KB needs the opt-in
    resv = arch.reserved_smem_per_cta_bytes
    smem_cta = _round_up(smem + resv, arch.smem_alloc_granularity_bytes)
    optin = smem > arch.smem_per_cta_default_bytes
    cap = arch.smem_per_cta_optin_bytes if optin else arch.smem_per_cta_default_bytes
    if smem_cta > cap + resv:
        lim["shared_memory"] = 0
        why["shared_memory"] = (f"needs {smem} B of shared memory per CTA, the {device} allows "
                                f"{arch.smem_per_cta_optin_bytes} (opt-in maximum)")
        det["shared_memory"] = f"{smem} B > {cap} B"
    else:
        pref = arch.smem_per_sm_bytes if carveout is None else _align_up_to_carveout(arch, carveout)
        sm_smem = pref if pref >= smem_cta else _align_up_to_carveout(arch, smem_cta)
        lim["shared_memory"] = sm_smem // smem_cta if smem_cta else slots
        det["shared_memory"] = (f"{sm_smem} B carveout // {smem_cta} B per CTA "
                                f"({smem} B + {resv} B reserved, rounded to {arch.smem_alloc_granularity_bytes} B)"
                                if smem_cta else "no shared memory")
    # 5) CC >= 9: named block barriers, barriers_per_cta_slot per CTA slot
    if arch.barriers_per_cta_slot and barriers:
        avail = arch.barriers_per_cta_slot * slots
        lim["barriers"] = avail // barriers
        why["barriers"] = f"uses {barriers} block barriers per CTA, the {device} has {avail} per SM"
        det["barriers"] = f"{avail} barriers/SM // {barriers} per CTA"
    else:
        lim["barriers"] = slots
        det["barriers"] = "no block-barrier limit on this architecture" if not arch.barriers_per_cta_slot \
            else "no block barriers"
    return lim, det, why, NVIDIA_LIMITS, smem_cta, regs_warp


def _amd(arch, device, waves, vgprs, lds, _barriers, _carveout):
    lim, det, why = {}, {}, {}
    simds = arch.simds_per_cu
    threads = waves * arch.warp_size
    # waves spread over the SIMDs; a CU holds simds x max_waves_per_simd waves
    if threads > arch.max_threads_per_cta:
        lim["waves"] = 0
        why["waves"] = (f"a workgroup of {waves} wavefronts has {threads} work-items, the {device} allows "
                        f"{arch.max_threads_per_cta}")
    else:
        lim["waves"] = simds * arch.max_waves_per_simd // waves
    det["waves"] = f"{simds} SIMDs x {arch.max_waves_per_simd} waves // {waves} waves/workgroup"
    # VGPRs: per-lane count rounded to the granule; each SIMD has vgprs_per_simd_lane per lane
    granule = arch.vgpr_alloc_granule
    alloc = _round_up(vgprs, granule)
    if vgprs > arch.max_regs_per_thread:
        lim["vgprs"] = 0
        why["vgprs"] = f"needs {vgprs} VGPRs per lane, the {device} allows {arch.max_regs_per_thread}"
        per_simd = 0
    else:
        per_simd = min(arch.max_waves_per_simd, arch.vgprs_per_simd_lane // alloc) if alloc else arch.max_waves_per_simd
        lim["vgprs"] = simds * per_simd // waves
        why["vgprs"] = (f"needs {waves} wavefronts at {per_simd} per SIMD ({alloc} VGPRs each), "
                        f"more than the {simds} SIMDs of a {device} CU hold")
    det["vgprs"] = f"{vgprs} VGPRs -> {alloc} allocated -> {per_simd} waves/SIMD x {simds} SIMDs // {waves}"
    # LDS in granules
    lds_wg = _round_up(lds, arch.smem_alloc_granularity_bytes)
    if lds > arch.smem_per_cta_optin_bytes:
        lim["lds"] = 0
        why["lds"] = f"needs {lds} B of LDS per workgroup, the {device} allows {arch.smem_per_cta_optin_bytes}"
    else:
        lim["lds"] = arch.smem_per_sm_bytes // lds_wg if lds_wg else arch.max_ctas_per_sm
    det["lds"] = f"{arch.smem_per_sm_bytes} B // {lds_wg} B per workgroup" if lds_wg else "no LDS"
    # workgroups: single-wave ones need no barrier; multi-wave ones share the CU's barriers
    lim["workgroups"] = arch.max_ctas_per_sm if waves == 1 else \
        min(arch.max_ctas_per_sm, arch.max_barrier_workgroups_per_cu)
    det["workgroups"] = (f"{arch.max_ctas_per_sm} workgroups/CU" if waves == 1
                         else f"{arch.max_barrier_workgroups_per_cu} barriers/CU for multi-wave workgroups")
    return lim, det, why, AMD_LIMITS, lds_wg, alloc * arch.warp_size


def explain(occ: Occupancy) -> str:
    """A few readable lines: the result, then each limit and how it came out."""
    unit = "CTA" if occ.limiter in NVIDIA_LIMITS else "workgroup"
    head = (f"{occ.device}: {occ.ctas_per_sm} {unit}(s)/SM, {occ.warps_per_sm} warps/SM "
            f"({occ.occupancy_fraction:.1%} occupancy), limited by {' = '.join(occ.limiters)}")
    lines = [head] + ([f"  cannot launch: {occ.reason}"] if occ.reason else [])
    width = max(len(k) for k in occ.limits)
    lines += [f"  {k:<{width}} {v:>4}  {occ.details.get(k, '')}" for k, v in occ.limits.items()]
    return "\n".join(lines)


class _CallableModule(types.ModuleType):
    """`hwspecs.occupancy` is this module (for `hwspecs.occupancy.explain`) and also callable as
    `hwspecs.occupancy(spec, ...)`, so both spellings other packages use work."""

    def __call__(self, *args, **kwargs) -> Occupancy:
        return occupancy(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
