"""Config spaces of the canonical Triton GEMM.

The grid rules below are structural, not hardware numbers: they drop configs whose warps are badly
matched to their tile (too few warps for a 256-wide tile makes the fp32 accumulator alone exceed the
255-register budget; 8 warps on a tiny tile idle most of them) and pipeline depths that are pointless
for a K step (a 128-deep K step needs few stages; a 32-deep one needs at least 3 to hide latency).
Whether a config fits a given GPU is decided later by hwspecs.occupancy with real resource numbers;
configs that do not fit are recorded as failures, never silently dropped.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from wavetune.config import LaunchConfig
from wavetune.records import read_jsonl_file

# The Triton tutorial's default for large problems, and the issue's/guide's "default config".
DEFAULT_CONFIG = LaunchConfig(128, 256, 64, GROUP_M=8, num_warps=8, num_stages=3)

# Configs with 1, 2, 3 and 8 CTAs/SM on an H200 in bf16 (guide: the wave-staircase study), plus neighbours.
WAVE_STUDY = (
    LaunchConfig(128, 128, 64, 8, 4, 4),
    LaunchConfig(128, 128, 64, 8, 4, 2),
    LaunchConfig(64, 128, 64, 8, 4, 3),
    LaunchConfig(64, 64, 32, 8, 4, 2),
    LaunchConfig(128, 256, 64, 8, 8, 3),
    LaunchConfig(64, 64, 64, 8, 4, 4),
    LaunchConfig(128, 64, 32, 8, 4, 3),
    LaunchConfig(32, 64, 64, 8, 4, 3),
)


# Configs with 6-10 CTAs/SM on an H200 in bf16, wgmma (BLOCK_M >= 64) and mma.sync (BLOCK_M < 64) alike: the
# de-synchronisation study of dense occupancies (session 13), where the wave study has one config at 8/SM.
DENSE_STUDY = (
    LaunchConfig(64, 64, 32, 8, 4, 3),
    LaunchConfig(64, 32, 32, 8, 4, 3),
    LaunchConfig(64, 32, 64, 8, 4, 2),
    LaunchConfig(64, 64, 64, 8, 4, 2),
    LaunchConfig(128, 32, 32, 8, 4, 3),
    LaunchConfig(32, 64, 32, 8, 4, 3),
    LaunchConfig(32, 32, 64, 8, 4, 3),
    LaunchConfig(32, 64, 64, 8, 4, 2),
    LaunchConfig(32, 128, 32, 8, 4, 3),
)


def broad_space() -> list[LaunchConfig]:
    """The broad grid profiled on the H200 (172 configs before hardware limits)."""
    out = []
    for bm, bn, bk, w, s in itertools.product((16, 32, 64, 128, 256), (32, 64, 128, 256), (32, 64, 128),
                                              (4, 8), (2, 3, 4, 5)):
        acc_per_thread = bm * bn // (w * 32)
        if acc_per_thread > 128:          # fp32 accumulator alone would take > half the 255-reg budget
            continue
        if w == 8 and bm * bn < 128 * 64:  # 8 warps on a small tile: most warps idle
            continue
        if w == 4 and bm * bn > 128 * 128:
            continue
        if bm == 256 and bn < 128:        # tall-thin tiles re-read B; never competitive in the tutorial's tables
            continue
        if (bk == 128 and s > 3) or (bk == 32 and s < 3) or (s == 5 and bk != 32):
            continue
        out.append(LaunchConfig(bm, bn, bk, 8, w, s))
    return out


def grouping_variants() -> list[LaunchConfig]:
    """A few configs with other GROUP_M values, to measure how much launch order matters (micro parameter)."""
    base = (LaunchConfig(128, 128, 64, 8, 4, 3), LaunchConfig(64, 128, 64, 8, 4, 3), LaunchConfig(128, 256, 64, 8, 8, 3))
    return [LaunchConfig(c.BLOCK_M, c.BLOCK_N, c.BLOCK_K, g, c.num_warps, c.num_stages) for c in base for g in (1, 4, 16)]


def unseen_space() -> list[LaunchConfig]:
    """Configs outside broad/wave-study/grouping, measured only to check that the model generalises to
    configs it was never fitted on: 2 warps, 1 and 6 stages, GROUP_M 2 and 32, 256-deep K steps."""
    seen = set(broad_space()) | set(WAVE_STUDY) | set(grouping_variants())
    cand = []
    for bm, bn in ((16, 64), (32, 64), (32, 128), (64, 64), (64, 128), (128, 64), (128, 128), (64, 256)):
        cand += [LaunchConfig(bm, bn, 64, 8, 2, 3), LaunchConfig(bm, bn, 32, 8, 4, 6), LaunchConfig(bm, bn, 64, 8, 4, 1),
                 LaunchConfig(bm, bn, 64, 2, 4, 3), LaunchConfig(bm, bn, 64, 32, 4, 4)]
        if bm * bn <= 64 * 64:
            cand.append(LaunchConfig(bm, bn, 256, 8, 4, 2))
        if bm * bn >= 128 * 64:
            cand.append(LaunchConfig(bm, bn, 64, 8, 8, 2))
    return [c for c in dict.fromkeys(cand) if c not in seen]


# The power-of-two grid blind sets are drawn from (validation/scripts/make_blind_set.py) and the wide resource tables
# hold (wavesim/resources/build_tables.py): every tile 16..256, K step 16..256, 1-16 warps, 1-6 stages.
POW2_TILES = (16, 32, 64, 128, 256)
K_TILES = (16, 32, 64, 128, 256)
WARPS = (1, 2, 4, 8, 16)
STAGES = (1, 2, 3, 4, 5, 6)
MAX_ACCUMULATOR_PER_THREAD = 128  # fp32 accumulator elements per thread (BM x BN / threads), as broad_space


def pipeline_smem_lower_bound(bm: int, bn: int, bk: int, stages: int, elem_bytes: int) -> int:
    """Shared memory a config needs at least: Triton buffers num_stages - 1 stages of A and B tiles (at least one;
    wgmma keeps all num_stages: wavesim/resources/estimate.py)."""
    return max(stages - 1, 1) * (bm + bn) * bk * elem_bytes


def wide_space(elem_bytes: int = 2) -> list[LaunchConfig]:
    """The blind sets' grid at GROUP_M 8 (the resources of a 16-bit GEMM do not depend on GROUP_M but for a kernel that
    spills: the wide tables' samples), less what cannot launch on any GPU of hwspecs (the largest opt-in shared memory per CTA) or holds more
    accumulator than MAX_ACCUMULATOR_PER_THREAD."""
    import hwspecs

    smem = max(hwspecs.load_gpu(g).arch.smem_per_cta_optin_bytes for g in hwspecs.list_gpus())
    return [LaunchConfig(bm, bn, bk, 8, w, st)
            for bm, bn, bk, w, st in itertools.product(POW2_TILES, POW2_TILES, K_TILES, WARPS, STAGES)
            if pipeline_smem_lower_bound(bm, bn, bk, st, elem_bytes) <= smem
            and bm * bn <= MAX_ACCUMULATOR_PER_THREAD * 32 * w]


NAMED_SPACES = {
    "wide": wide_space,
    "unseen": unseen_space,
    "broad": broad_space,
    "wave-study": lambda: list(WAVE_STUDY),
    "dense-study": lambda: list(DENSE_STUDY),
    "grouping": grouping_variants,
    "default": lambda: [DEFAULT_CONFIG],
}


def load_space(spec: str) -> list[LaunchConfig]:
    """A named space (see NAMED_SPACES, '+'-joined) or a JSONL file with one config object per line."""
    p = Path(spec)
    if p.exists():
        recs = read_jsonl_file(p)
        cfgs = [LaunchConfig.from_dict(r.get("config", r), f"{p}:{i}") for i, r in enumerate(recs, 1)]
    else:
        cfgs = []
        for name in spec.split("+"):
            if name not in NAMED_SPACES:
                raise ValueError(f"config space {name!r}: no such file and not a named space; "
                                 f"named spaces: {sorted(NAMED_SPACES)}")
            cfgs.extend(NAMED_SPACES[name]())
    if not cfgs:
        raise ValueError(f"config space {spec!r} is empty")
    return list(dict.fromkeys(cfgs))  # de-duplicate, keep order
