"""Exact resource oracle: compile the canonical Triton GEMM for any target GPU on a CPU-only machine.

How a real launch is reproduced (Triton 3.6, read from triton/runtime/jit.py):
``JITFunction.run`` binds the arguments with a binder made by ``create_function_from_signature`` over the
target's backend, which calls Triton's native ``specialize_impl`` on every non-constexpr argument:
pointers get ``tt.divisibility=16`` when ``data_ptr() % 16 == 0`` (torch allocations are 256-byte aligned),
integers get ``tt.divisibility=16`` when divisible by 16 and become the constexpr ``1`` when equal to 1
(our unit strides stride_ak, stride_bn, stride_cn). ``JITFunction._pack_args`` then turns that into
(options, signature, constexprs, attrs), and ``_do_compile`` calls
``triton.compile(ASTSource(fn, signature, constexprs, attrs), target=target, options=options.__dict__)``.
We call the very same three functions (binder, ``_pack_args``, ``triton.compile``) with a
``GPUTarget("cuda", <cc>, 32)`` instead of the active driver's target, and with pointer stand-ins whose
``data_ptr()`` is 0 (aligned, exactly like ``triton.runtime.jit.MockTensor`` used by ``kernel.warmup``).
Nothing is approximated: the same TTIR -> TTGIR -> LLIR -> PTX -> cubin pipeline and the same ptxas run.

What is read, and from where:

* registers/thread and spills: from the cubin, with the ``cuobjdump`` that Triton ships
  (``triton/backends/nvidia/bin/cuobjdump --dump-resource-usage``), fields ``REG``, ``STACK``, ``LOCAL``.
  Chosen over parsing ptxas ``-v`` output because the cubin is already produced and stored by
  ``triton.compile`` (``kernel.asm["cubin"]``): no second ptxas run, no dependence on Triton's ptxas
  flags or on its log (Triton only prints it with TRITON_DUMP_PTXAS_LOG). On a GPU, Triton's launcher
  reads ``CU_FUNC_ATTRIBUTE_NUM_REGS`` (= REG) and ``CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES`` and reports
  ``n_spills = local_size_bytes // 4`` (triton/backends/nvidia/driver.c, ``loadBinary``). With the ABI,
  ptxas puts register spills in the per-thread stack frame (checked here: the fp16 64x64x32 FMA-path
  kernel for sm_70 shows "368 bytes stack frame, 500 bytes spill stores" in ``ptxas -v`` and
  ``STACK:368 LOCAL:0`` in cuobjdump), and the local memory the driver reports per thread covers the
  stack frame, so ``spills = (STACK + LOCAL) // 4``. No sm_90 config of the shipped space spills
  (STACK = LOCAL = 0 for all 186), so the H200 records cannot test this rule; tables keep the raw
  ``stack_bytes`` and ``local_bytes`` so it can be revisited.
* load rounds (``load_rounds``, NVIDIA): from the cubin's SASS (``cuobjdump -sass``), how many times a K step of the
  main loop (the longest backward branch) waits on global loads one after another: a loop that loads its tiles into
  registers (LDG, then STS into shared memory: one stage, or a tile too narrow for cp.async) issues them in rounds that
  ptxas's register budget sets, and an LDG issued after an STS that waited on round r is in round r + 1
  (``sync_load_rounds``). 1 for a loop whose loads are all cp.async (LDGSTS) or that has none.
* loop length (``loop_instructions``, NVIDIA): the instructions of that loop's body, which each warp issues once per
  pass (``main_loop``), and its tensor-core instructions (``loop_mmas``: HMMA, HGMMA), by which the model tells how
  many K steps ptxas unrolled into one pass.
* AMD (``gfx942``): the HIP backend's AMDGCN assembly carries the assembler's kernel metadata:
  ``.vgpr_count`` (unified VGPRs incl. AGPRs, = ``regs_per_thread``), ``; NumVgprs`` / ``; NumAgprs``,
  ``.vgpr_spill_count`` (= ``spills``), ``.private_segment_fixed_size`` (scratch bytes); LDS bytes are
  ``metadata.shared``.
* shared memory: ``kernel.metadata.shared`` (bytes of dynamic shared memory the launcher requests; the
  same value validation/profiler.py records as ``shared_bytes``). The cubin's static ``SHARED`` is kept
  as ``static_smem_bytes`` for reference.

Results (also failures, with a reason) are cached on disk, one JSON per entry, under
``$WAVETUNE_CACHE_DIR`` (default ``~/.cache/wavetune``)/``resources/triton-<version>/<arch>/<dtype>/<key>.json``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from wavetune.config import DTYPE_BYTES, LaunchConfig

# Bump when the way records are produced changes (it is part of every record and of the cache path).
ORACLE_FORMAT = 4

# Default problem used to build the specialization: every size and stride divisible by 16, which is what
# a real launch of a 16-aligned problem gets (all of validation/shapesets' shapes are multiples of 16
# unless stated otherwise). Only divisibility matters, not the values (see module docstring).
DEFAULT_PROBLEM = (4096, 4096, 4096)

_TL_DTYPE_NAMES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


class OracleUnavailable(RuntimeError):
    """Raised when triton (or its NVIDIA backend) is not importable here."""


def parse_arch(arch: str) -> tuple[str, Any]:
    """'sm_90' -> ('cuda', 90); 'sm_90a' -> ('cuda', 90); 'gfx942' -> ('hip', 'gfx942')."""
    if not isinstance(arch, str):
        raise ValueError(f"arch {arch!r}: expected a string like 'sm_90' or 'gfx942'")
    m = re.fullmatch(r"sm_?(\d{2,3})a?", arch)
    if m:
        return "cuda", int(m.group(1))
    if re.fullmatch(r"gfx[0-9a-f]{3,4}", arch):
        return "hip", arch
    raise ValueError(f"unknown arch {arch!r}: expected an NVIDIA arch name like 'sm_90' (as "
                     f"hwspecs.load_gpu(...).arch.name gives) or an AMD one like 'gfx942'")


def check_dtype(dtype: str) -> str:
    if dtype not in DTYPE_BYTES:
        raise ValueError(f"dtype {dtype!r}: unsupported; use one of {sorted(DTYPE_BYTES)} "
                         f"(fp32 operands run tl.dot in tf32 on sm_80+)")
    return dtype


def triton_version() -> str | None:
    try:
        import triton
    except Exception:  # noqa: BLE001 - any import failure means "no oracle here"
        return None
    return triton.__version__


def cache_root() -> Path:
    return Path(os.environ.get("WAVETUNE_CACHE_DIR") or Path.home() / ".cache" / "wavetune")


def _problem_tag(problem: tuple[int, int, int] | None) -> str:
    """Tag for the specialization class of a problem (empty for the default, all-16-divisible one).

    Per size: 'D' divisible by 16 (tt.divisibility 16), '1' equal to 1 (becomes a constexpr), 'x' neither.
    The strides follow from the sizes (stride_am = K, stride_bk = stride_cm = N), so (M, N, K) is the key."""
    if problem is None:
        return ""
    M, N, K = problem
    sig = "".join("1" if v == 1 else ("D" if v % 16 == 0 else "x") for v in (M, N, K))
    return "" if sig == "DDD" else f"_spec{sig}"


def cache_path(config: LaunchConfig, arch: str, dtype: str, version: str,
               problem: tuple[int, int, int] | None = None) -> Path:
    return (cache_root() / "resources" / f"triton-{version}" / arch / dtype
            / f"{config.key}{_problem_tag(problem)}.json")


class _Pointer:
    """Stand-in for a tensor argument: what Triton's specializer reads (dtype, data_ptr), like MockTensor."""

    def __init__(self, dtype):
        self.dtype = dtype

    @staticmethod
    def data_ptr() -> int:
        return 0  # 16-byte aligned, as every torch allocation is (caching allocator: 512-byte blocks)


def _cuobjdump_path() -> Path:
    import triton

    return Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"


_RES_RE = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")


def _cuobjdump(cubin: bytes, option: str) -> str:
    """The output of the cuobjdump Triton ships, run with one option on a cubin."""
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "k.cubin"
        p.write_bytes(cubin)
        return subprocess.run([str(_cuobjdump_path()), option, str(p)], capture_output=True, text=True,
                              check=True).stdout


def cubin_resources(cubin: bytes) -> dict[str, int]:
    """REG / STACK / SHARED / LOCAL of the single kernel in a cubin."""
    out = _cuobjdump(cubin, "--dump-resource-usage")
    m = _RES_RE.search(out)
    if not m:
        raise RuntimeError(f"cuobjdump output not understood:\n{out}")
    reg, stack, shared, local = (int(x) for x in m.groups())
    return {"regs": reg, "stack_bytes": stack, "static_smem_bytes": shared, "local_bytes": local}


_SASS_LINE_RE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?);")
_PREDICATE_RE = re.compile(r"^@!?U?P\w+\s+")


def main_loop(sass: str) -> list[str]:
    """The instructions of a kernel's main loop in its SASS, in issue order: the body of its longest backward branch
    (the K loop of the GEMM: Triton does not unroll it, ptxas puts 4 K steps in one pass for 16 of the 480 mma.sync
    loops of the blind sets, never for a one-stage loop, whose load rounds are counted here). Empty for a kernel
    without a loop."""
    body: list[str] = []
    lines = _SASS_LINE_RE.findall(sass)
    addr = [int(a, 16) for a, _ in lines]
    for j, (a, text) in enumerate(lines):
        m = re.search(r"BRA (0x[0-9a-f]+)", text)
        if m and int(m.group(1), 16) < int(a, 16) and int(m.group(1), 16) in addr:
            start = addr.index(int(m.group(1), 16))
            if j + 1 - start > len(body):
                body = [t for _, t in lines[start:j + 1]]
    return body


def sync_load_rounds(body: list[str]) -> int:
    """Rounds of dependent global loads in one iteration of a main loop (``main_loop``; see the module docstring):
    walking the body in issue order, an LDG's round is one more than the round of the latest STS before it that
    stored an LDG's register (in-order issue: an STS waits on its data). At least 1."""
    loaded: dict[str, int] = {}    # register an LDG wrote -> its round
    done = rounds = 0
    for text in body:
        ins = _PREDICATE_RE.sub("", text.strip())
        if ins.startswith("LDG."):
            m = re.match(r"LDG\S*\s+(R\d+)", ins)
            if m:
                loaded[m.group(1)] = done + 1
                rounds = max(rounds, done + 1)
        elif ins.startswith("STS"):
            m = re.search(r"\],\s*(R\d+)", ins)
            if m and m.group(1) in loaded:
                done = max(done, loaded.pop(m.group(1)))
    return max(rounds, 1)


def loop_record(sass: str) -> dict[str, int]:
    """What the model reads off a kernel's main loop: its load rounds, its length in instructions, which every warp
    issues once per pass, and its tensor-core instructions (HMMA, HGMMA), which tell how many K steps ptxas unrolled
    into one pass (4 for some small mma.sync tiles)."""
    body = main_loop(sass)
    mmas = sum(1 for t in body if re.match(r"HG?MMA\.", _PREDICATE_RE.sub("", t.strip())))
    return {"load_rounds": sync_load_rounds(body), "loop_instructions": len(body), "loop_mmas": mmas}


def cubin_sass(cubin: bytes) -> str:
    """The SASS of a cubin."""
    return _cuobjdump(cubin, "-sass")


_AMD_FIELDS = {"vgpr_count": r"\.vgpr_count:\s+(\d+)", "vgpr_spill_count": r"\.vgpr_spill_count:\s+(\d+)",
               "sgpr_count": r"\.sgpr_count:\s+(\d+)",
               "private_segment_fixed_size": r"\.private_segment_fixed_size:\s+(\d+)",
               "NumVgprs": r"; NumVgprs:\s+(\d+)", "NumAgprs": r"; NumAgprs:\s+(\d+)"}


def amdgcn_resources(asm: str) -> dict[str, int]:
    """Register/scratch fields of the AMDGPU assembler's metadata in Triton's ``asm["amdgcn"]``."""
    out = {}
    for name, pat in _AMD_FIELDS.items():
        m = re.search(pat, asm)
        if not m:
            raise RuntimeError(f"amdgcn assembly has no {name} field")
        out[name] = int(m.group(1))
    return out


def _compile(config: LaunchConfig, arch: str, dtype: str, problem: tuple[int, int, int], traced: str | None = None):
    """Compile exactly what ``gemm_kernel[grid](...)`` would for this config on ``arch``; returns the kernel.
    traced: "trace" or "steps" compiles validation/kernels/gemm_trace.py's kernel instead (without / with the per-step
    clock), as ``gemm_traced`` launches it."""
    try:
        import triton
        import triton.language as tl
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource, make_backend
        from triton.runtime.jit import create_function_from_signature
    except Exception as e:  # noqa: BLE001
        raise OracleUnavailable(f"triton is not importable ({e}); install the 'gpu' extra "
                                f"(pip install 'triton==3.6.0') or use source='table'/'estimate'") from e
    from validation.kernels.gemm import gemm_kernel as kernel

    if traced not in (None, "trace", "steps"):
        raise ValueError(f"traced={traced!r}: expected None, 'trace' or 'steps'")
    if traced:
        from validation.kernels.gemm_trace import gemm_kernel_traced as kernel
    backend_name, cc = parse_arch(arch)
    target = GPUTarget(backend_name, cc, 32 if backend_name == "cuda" else 64)
    backend = make_backend(target)
    binder = create_function_from_signature(kernel.signature, kernel.params, backend)
    tdt = getattr(tl, _TL_DTYPE_NAMES[dtype])
    a = b = c = _Pointer(tdt)
    M, N, K = problem
    # A row-major MxK, B row-major KxN, C row-major MxN: the strides gemm() passes (validation/kernels/gemm.py).
    args = (a, b, c, M, N, K, K, 1, N, 1, N, 1)
    kwargs = dict(BLOCK_M=config.BLOCK_M, BLOCK_N=config.BLOCK_N, BLOCK_K=config.BLOCK_K, GROUP_M=config.GROUP_M,
                  num_warps=config.num_warps, num_stages=config.num_stages)
    if traced:
        i64 = _Pointer(tl.int64)
        args = (a, b, c, i64, *args[3:])
        kwargs.update(steps_ptr=i64, RECORD_STEPS=traced == "steps", TILE_STRIDE=1,
                      TILE_BLOCK=1, MAPPED=False)
    # JITFunction.run adds these two before binding (jit.py); debug defaults to off.
    kwargs["debug"] = False
    kwargs["instrumentation_mode"] = triton.knobs.compilation.instrumentation_mode
    bound, specialization, options = binder(*args, **kwargs)
    options, signature, constexprs, attrs = kernel._pack_args(backend, kwargs, bound, specialization, options)
    src = ASTSource(kernel, signature, constexprs, attrs)
    return triton.compile(src, target=target, options=options.__dict__)


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    # Triton's CompilationError puts the message after the source excerpt; keep the most telling line.
    lines = [ln.strip() for ln in text if ln.strip()]
    msg = next((ln for ln in reversed(lines) if "error" in ln.lower() or "unsupported" in ln.lower()),
               lines[-1] if lines else "")
    return f"{type(e).__name__}: {msg}"[:300]


def compile_record(config: LaunchConfig, arch: str, dtype: str,
                   problem: tuple[int, int, int] | None = None) -> dict[str, Any]:
    """Compile one config and return its record (never raises for a compile failure)."""
    check_dtype(dtype)
    backend_name, _ = parse_arch(arch)
    version = triton_version()
    if version is None:
        raise OracleUnavailable("triton is not importable; install triton==3.6.0 or use source='table'/'estimate'")
    rec: dict[str, Any] = {"config": config.key, "arch": arch, "dtype": dtype, "triton": version,
                           "oracle_format": ORACLE_FORMAT, "num_warps": config.num_warps}
    if problem is not None:
        rec["problem"] = list(problem)
    t0 = time.perf_counter()
    try:
        k = _compile(config, arch, dtype, problem or DEFAULT_PROBLEM)
        md = k.metadata
        rec["smem_bytes"] = int(md.shared)
        if backend_name == "cuda":
            res = cubin_resources(k.asm["cubin"])
            rec.update(status="ok", regs_per_thread=res["regs"],
                       spills=(res["local_bytes"] + res["stack_bytes"]) // 4,
                       local_bytes=res["local_bytes"], stack_bytes=res["stack_bytes"],
                       static_smem_bytes=res["static_smem_bytes"],
                       **loop_record(cubin_sass(k.asm["cubin"])))
        else:
            res = amdgcn_resources(k.asm["amdgcn"])
            rec.update(status="ok", regs_per_thread=res["vgpr_count"], spills=res["vgpr_spill_count"],
                       vgprs=res["NumVgprs"], agprs=res["NumAgprs"], sgprs=res["sgpr_count"],
                       scratch_bytes=res["private_segment_fixed_size"], lds_bytes=int(md.shared))
    except OracleUnavailable:
        raise
    except Exception as e:  # noqa: BLE001 - a compile failure is a result with a reason
        rec.update(status="error", reason=_first_line(e))
    rec["compile_s"] = round(time.perf_counter() - t0, 3)
    return rec


def oracle_record(config: LaunchConfig, arch: str, dtype: str, *, problem: tuple[int, int, int] | None = None,
                  use_cache: bool = True) -> dict[str, Any]:
    """The record for (config, arch, dtype): from the on-disk cache when present, else compiled and cached."""
    check_dtype(dtype)
    parse_arch(arch)
    version = triton_version()
    if version is None:
        raise OracleUnavailable("triton is not importable; install triton==3.6.0 or use source='table'/'estimate'")
    path = cache_path(config, arch, dtype, version, problem)
    if use_cache:
        cached = read_cached(path)
        if cached is not None:
            return cached
    rec = compile_record(config, arch, dtype, problem)
    if use_cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(rec, sort_keys=True))
        os.replace(tmp, path)
    return rec


def read_cached(path: Path) -> dict[str, Any] | None:
    try:
        rec = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return rec if rec.get("oracle_format") == ORACLE_FORMAT else None


def cached_record(config: LaunchConfig, arch: str, dtype: str,
                  problem: tuple[int, int, int] | None = None) -> dict[str, Any] | None:
    """The cached record if one exists for the installed triton (no compile); None otherwise."""
    version = triton_version()
    if version is None:
        return None
    return read_cached(cache_path(config, arch, dtype, version, problem))
