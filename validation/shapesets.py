"""Named GEMM shape sets used for profiling and validation (M x N x K).

LLM layer shapes are (N, K) of real linear layers; M is the token count of a batch. Names say where
each (N, K) comes from so that held-out splits can be made by layer."""

from __future__ import annotations

from pathlib import Path

from wavetune.config import GemmProblem
from wavetune.records import read_jsonl_file

# (name, N, K): linear layers of Llama-3 8B (unsharded) and Llama-3 70B with 8-way tensor parallelism.
LLM_LAYERS = (
    ("llama3-8b.qkv", 6144, 4096),
    ("llama3-8b.o", 4096, 4096),
    ("llama3-8b.gate_up", 28672, 4096),
    ("llama3-8b.down", 4096, 14336),
    ("llama3-70b-tp8.qkv", 1280, 8192),
    ("llama3-70b-tp8.o", 8192, 1024),
    ("llama3-70b-tp8.gate_up", 7168, 8192),
    ("llama3-70b-tp8.down", 8192, 3584),
)
LLM_M = (1, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)

# Held out from everything we fit: layers of other models, and token counts that are not multiples of
# 16 (Triton compiles another specialization for them and the last row-tile is ragged).
LLM_HOLDOUT_LAYERS = (
    ("qwen2.5-7b.qkv", 4608, 3584),
    ("qwen2.5-7b.o", 3584, 3584),
    ("qwen2.5-7b.down", 3584, 18944),
    ("llama3-405b-tp8.qkv", 2304, 16384),
    ("llama3-405b-tp8.down", 16384, 6656),
)
HOLDOUT_M = (1, 8, 24, 48, 100, 200, 384, 777, 1500, 3000, 6000, 12000)


def llm_shapes(dtype: str = "bf16") -> list[GemmProblem]:
    return [GemmProblem(m, n, k, dtype) for _, n, k in LLM_LAYERS for m in LLM_M]


def llm_holdout_shapes(dtype: str = "bf16") -> list[GemmProblem]:
    return [GemmProblem(m, n, k, dtype) for _, n, k in LLM_HOLDOUT_LAYERS for m in HOLDOUT_M]


def llm_small(dtype: str = "bf16") -> list[GemmProblem]:
    """A subset for a second dtype: two layers, six token counts."""
    return [GemmProblem(m, n, k, dtype) for _, n, k in LLM_LAYERS[1:3] for m in (16, 64, 256, 1024, 4096, 16384)]


def unseen_check(dtype: str = "bf16") -> list[GemmProblem]:
    """Shapes for the never-seen configs: one fitted layer and two held-out ones, six token counts."""
    layers = ((4096, 4096), (4608, 3584), (16384, 6656))
    return [GemmProblem(m, n, k, dtype) for n, k in layers for m in (16, 100, 512, 1500, 4096, 12000)]


def m_sweep(dtype: str = "bf16") -> list[GemmProblem]:
    """Latency vs M across several wave boundaries of every wave-study config (N = K = 4096)."""
    return [GemmProblem(m, 4096, 4096, dtype) for m in range(64, 8192 + 1, 64)]


def m_sweep_holdout(dtype: str = "bf16") -> list[GemmProblem]:
    """The M sweep on a never-fitted layer (qwen2.5-7b.qkv of LLM_HOLDOUT_LAYERS): staircases out of sample."""
    _, n, k = LLM_HOLDOUT_LAYERS[0]
    return [GemmProblem(m, n, k, dtype) for m in range(64, 8192 + 1, 64)]


# Measured in session 4, after the model of that session was built (validation/data/h200/fresh/): a layer no
# earlier set has, for an M sweep and an M = 1 check that nothing was fitted or tuned on.
FRESH_LAYERS = (
    ("llama2-13b.o", 5120, 5120),
    ("llama2-13b.gate_up", 27648, 5120),
    ("llama2-13b.down", 5120, 13824),
)


def m_sweep_fresh(dtype: str = "bf16") -> list[GemmProblem]:
    """The M sweep on a layer measured only after the model was fixed (llama2-13b.o)."""
    _, n, k = FRESH_LAYERS[0]
    return [GemmProblem(m, n, k, dtype) for m in range(64, 8192 + 1, 64)]


def m1_fresh(dtype: str = "bf16") -> list[GemmProblem]:
    """Decode shapes (M = 1) and the same grids at M = 16 on the fresh layers: the M = 1 cost out of sample."""
    return [GemmProblem(m, n, k, dtype) for _, n, k in FRESH_LAYERS for m in (1, 16)]


# Measured in session 5, after that session's model (the chip-load slowdown) was fixed: a layer no earlier
# set sweeps (gemma2-9b.o: N = 3584, K = 4096), for staircases out of sample.
FRESH5_LAYER = ("gemma2-9b.o", 3584, 4096)


# Measured in session 6, after that session's model (queueing at the SM) was fixed: N = 8192 puts a wave
# boundary every ~4 row tiles of 128x128 (many steps per sweep) and K = 2048 makes the K loop short.
FRESH6_LAYER = ("llama3-70b-tp4.o", 8192, 2048)


# Measured in session 12, after that session's model (the L2 request overhead) was fixed: a layer no earlier
# set sweeps, with the longest K of the sweeps (Yi-34B's attention output: 56 heads x 128 = hidden 7168).
FRESH7_LAYER = ("yi-34b.o", 7168, 7168)


# Measured in session 14, with session 13's model fixed: layers no earlier set has, with sizes off the tiles' multiples
# (K = 3696 and 3000 leave a ragged last K step; N = 5000 ragged edge tiles) and token counts that are not multiples
# of 16: a check of config selection on shapes nothing was fitted or tuned on.
FRESH14_LAYERS = (
    ("phi3-mini.qkv", 9216, 3072),
    ("mixtral-8x7b.w1", 14336, 4096),
    ("qwen2-72b-tp8.down", 8192, 3696),
    ("ragged", 5000, 3000),
)
FRESH14_M = (16, 40, 130, 333, 1000, 2222, 5000)


def llm_fresh14(dtype: str = "bf16") -> list[GemmProblem]:
    return [GemmProblem(m, n, k, dtype) for _, n, k in FRESH14_LAYERS for m in FRESH14_M]


# Session 14: data for modelling the unaligned specialization later (wavesim.kernels.gemm.alignment_note): only A's
# row stride unaligned (K = 3000), only B's and C's (N = 5000), and N = 4104 (divisible by 8, not by 16: does Triton's
# 16-divisibility alone decide?).
UNALIGNED_STUDY_LAYERS = ((8192, 3000), (5000, 4096), (4104, 4096))


def unaligned_study(dtype: str = "bf16") -> list[GemmProblem]:
    return [GemmProblem(m, n, k, dtype) for n, k in UNALIGNED_STUDY_LAYERS for m in (16, 130, 1000, 5000)]


def groupm_study(dtype: str = "bf16") -> list[GemmProblem]:
    """Two aligned fresh14 layers at larger M, for the whole broad space at GROUP_M 1 and 32 (session 14)."""
    return [GemmProblem(m, n, k, dtype) for _, n, k in FRESH14_LAYERS[:2] for m in (333, 1000, 2222, 5000)]


def _m_sweep_of(layer: tuple[str, int, int], dtype: str) -> list[GemmProblem]:
    _, n, k = layer
    return [GemmProblem(m, n, k, dtype) for m in range(64, 8192 + 1, 64)]


def m_sweep_fresh5(dtype: str = "bf16") -> list[GemmProblem]:
    """The M sweep on a layer measured only after session 5's model was fixed (gemma2-9b.o)."""
    return _m_sweep_of(FRESH5_LAYER, dtype)


def m_sweep_fresh6(dtype: str = "bf16") -> list[GemmProblem]:
    """The M sweep on a layer measured only after session 6's model was fixed (llama3-70b-tp4.o)."""
    return _m_sweep_of(FRESH6_LAYER, dtype)


def m_sweep_fresh7(dtype: str = "bf16") -> list[GemmProblem]:
    """The M sweep on a layer measured only after session 12's model was fixed (yi-34b.o)."""
    return _m_sweep_of(FRESH7_LAYER, dtype)


# Session 13: the width study. The wave de-synchronisation the sweeps imply is about half as fast on the two widest
# layers (N = 8192, 7168) as on N = 3584-5120 for every config (NOTES session 12); these layers vary N alone.
N_STUDY_WIDTHS = (2048, 4096, 8192, 16384)
N_STUDY_K = 4096


def m_sweep_n_study(dtype: str = "bf16") -> list[GemmProblem]:
    """M sweeps (M = 64..8192) at K = 4096 on four widths N: does de-synchronisation depend on N?"""
    return [GemmProblem(m, n, N_STUDY_K, dtype) for n in N_STUDY_WIDTHS for m in range(64, 8192 + 1, 64)]


def k_sweep(dtype: str = "bf16") -> list[GemmProblem]:
    """Latency vs K (the inner-loop length L) at fixed grids: one and three waves of 128x128 tiles."""
    return [GemmProblem(m, 4096, k, dtype) for m in (512, 1536) for k in range(256, 8192 + 1, 256)]


NAMED_SHAPES = {"llm": llm_shapes, "llm-holdout": llm_holdout_shapes, "llm-small": llm_small, "unseen-check": unseen_check,
                "m-sweep": m_sweep, "m-sweep-holdout": m_sweep_holdout, "k-sweep": k_sweep,
                "m-sweep-fresh": m_sweep_fresh, "m1-fresh": m1_fresh, "m-sweep-fresh5": m_sweep_fresh5,
                "m-sweep-fresh6": m_sweep_fresh6, "m-sweep-fresh7": m_sweep_fresh7,
                "m-sweep-n-study": m_sweep_n_study, "llm-fresh14": llm_fresh14,
                "unaligned-study": unaligned_study, "groupm-study": groupm_study}


def parse_shape(text: str, dtype: str) -> GemmProblem:
    try:
        m, n, k = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"shape {text!r}: expected MxNxK, e.g. 512x4096x4096") from None
    return GemmProblem(m, n, k, dtype)


def load_shapes(spec: str, dtype: str = "bf16") -> list[GemmProblem]:
    """Named sets ('+'-joined), a JSONL file of {M, N, K[, dtype]} objects, or a comma list of MxNxK."""
    p = Path(spec)
    if "," not in spec and p.exists():   # a long comma list is no path (stat would fail: name too long)
        return [GemmProblem.from_record({"dtype": dtype, **r}, f"{p}:{i}") for i, r in enumerate(read_jsonl_file(p), 1)]
    out: list[GemmProblem] = []
    for part in spec.split("+") if "x" not in spec else [spec]:
        if part in NAMED_SHAPES:
            out.extend(NAMED_SHAPES[part](dtype))
        elif "x" in part:
            out.extend(parse_shape(s.strip(), dtype) for s in part.split(",") if s.strip())
        else:
            raise ValueError(f"shapes {part!r}: not a file, not MxNxK and not a named set; named sets: {sorted(NAMED_SHAPES)}")
    return list(dict.fromkeys(out))
