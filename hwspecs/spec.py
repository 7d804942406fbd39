"""GPU specs as frozen dataclasses, loaded from the sourced TOML files in hwspecs/data.

Every hardware number lives in TOML as `key = { value = ..., status = ..., source = ... }` so that a
reader can see where it came from; this module only parses, checks and indexes them. A GPU file names
its architecture (`arch = "sm_90"`), whose per-SM limits come from data/arch/<arch>.toml.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

DATA_DIR = Path(__file__).parent / "data"
GPU_DIR = DATA_DIR / "gpus"
ARCH_DIR = DATA_DIR / "arch"

STATUSES = ("datasheet", "measured", "derived")
VENDORS = ("nvidia", "amd")
TENSOR_DTYPES = ("fp16", "bf16", "tf32", "fp8", "int8", "fp4")
# Spellings people pass for a dtype (torch names, numpy names) -> the key used in the TOML.
_DTYPE_ALIASES = {"float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float8": "fp8",
                  "float8_e4m3fn": "fp8", "float8_e5m2": "fp8", "e4m3": "fp8", "e5m2": "fp8",
                  "tfloat32": "tf32", "float4": "fp4"}
SOURCED_FIX = 'write it as  key = { value = ..., status = "datasheet"|"measured"|"derived", source = "where it comes from" }'


class SpecError(ValueError):
    """A spec file is wrong: the message names the file, the key, the problem and the fix."""

    def __init__(self, path: Path | str, key: str, problem: str, fix: str):
        self.path, self.key = str(path), key
        super().__init__(f"{path}: key '{key}': {problem}. Fix: {fix}")


class UnknownGPUError(ValueError):
    """No shipped GPU has this id, alias or name."""

    def __init__(self, name: str, known: list[str]):
        close = difflib.get_close_matches(_norm(name), known, n=3, cutoff=0.3)
        hint = f" Closest known ids: {', '.join(close)}." if close else ""
        super().__init__(f"unknown GPU '{name}'.{hint} `wavetune specs list` shows all known GPUs; "
                         "for another GPU write a TOML file and load it with hwspecs.load_gpu_file(path).")


class UnsupportedDtypeError(ValueError):
    """The GPU has no tensor-core rate for this dtype (e.g. bf16 on V100)."""


class FrozenMap(Mapping):
    """A read-only mapping that, unlike MappingProxyType, pickles and hashes (specs go to worker processes)."""

    __slots__ = ("_d",)

    def __init__(self, data: Mapping | None = None):
        self._d = dict(data or {})

    def __getitem__(self, key):
        return self._d[key]

    def __iter__(self) -> Iterator:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __hash__(self) -> int:
        return hash(frozenset(self._d.items()))

    def __repr__(self) -> str:
        return f"FrozenMap({self._d!r})"

    def __reduce__(self):
        return (FrozenMap, (self._d,))


# ---- schema: field -> (kind, required, zero allowed). kinds: int, float, str, ints (list of int) ----
_ARCH_SOURCED = {
    "compute_capability": ("str", False, False),
    "warp_size": ("int", True, False),
    "max_threads_per_sm": ("int", True, False),
    "max_warps_per_sm": ("int", True, False),
    "max_ctas_per_sm": ("int", True, False),
    "max_threads_per_cta": ("int", True, False),
    "regs_per_sm": ("int", True, False),
    "max_regs_per_cta": ("int", True, False),
    "max_regs_per_thread": ("int", True, False),
    "reg_alloc_unit": ("int", True, False),
    "warp_alloc_granularity": ("int", False, False),
    "smem_per_sm_bytes": ("int", True, False),
    "smem_per_cta_default_bytes": ("int", True, False),
    "smem_per_cta_optin_bytes": ("int", True, False),
    "reserved_smem_per_cta_bytes": ("int", True, True),
    "smem_alloc_granularity_bytes": ("int", True, False),
    "smem_carveouts_bytes": ("ints", True, True),
    "subpartitions_per_sm": ("int", True, False),
    "barriers_per_cta_slot": ("int", False, False),
    "cache_line_bytes": ("int", False, False),
    "smem_bytes_per_clock": ("int", False, False),
    # AMD CDNA only
    "simds_per_cu": ("int", False, False),
    "max_waves_per_simd": ("int", False, False),
    "vgprs_per_simd_lane": ("int", False, False),
    "vgpr_alloc_granule": ("int", False, False),
    "max_barrier_workgroups_per_cu": ("int", False, False),
}
_ARCH_VENDOR_REQUIRED = {
    "nvidia": ("compute_capability", "warp_alloc_granularity"),
    "amd": ("simds_per_cu", "max_waves_per_simd", "vgprs_per_simd_lane", "vgpr_alloc_granule",
            "max_barrier_workgroups_per_cu"),
}
_GPU_SOURCED = {
    "sm_count": ("int", True, False),
    "boost_clock_hz": ("int", True, False),
    "base_clock_hz": ("int", True, False),
    "l2_bytes": ("int", True, False),
    "dram_bytes": ("int", True, False),
    "dram_bandwidth_bytes_per_s": ("float", True, False),
    "tdp_w": ("float", True, False),
    "fp32_peak_flops": ("float", True, False),
    "fp32_flops_per_clock_per_sm": ("float", False, False),
    "sms_per_gpc": ("int", False, False),
}
_GPU_TABLES = ("tensor_peak_flops", "tensor_flops_per_clock_per_sm")
_GPU_PLAIN = {"id": str, "name": str, "vendor": str, "arch": str, "aliases": list, "note": str}
_ARCH_PLAIN = {"name": str, "vendor": str}
# A stored per-clock rate must reproduce the stored peak within this fraction (rounding in the TOML).
_RATE_TOLERANCE = 0.01


@dataclass(frozen=True, kw_only=True)
class ArchLimits:
    """Per-SM (per-CU on AMD) limits of one architecture: the inputs of the occupancy calculator.

    On AMD the shared names keep AMD meanings: sm = CU, warp = wavefront, CTA = workgroup,
    shared memory = LDS, regs = VGPRs (incl. AGPRs)."""

    name: str
    vendor: str
    compute_capability: str | None
    warp_size: int
    max_threads_per_sm: int
    max_warps_per_sm: int
    max_ctas_per_sm: int
    max_threads_per_cta: int
    regs_per_sm: int
    max_regs_per_cta: int
    max_regs_per_thread: int
    reg_alloc_unit: int
    warp_alloc_granularity: int | None
    smem_per_sm_bytes: int
    smem_per_cta_default_bytes: int
    smem_per_cta_optin_bytes: int
    reserved_smem_per_cta_bytes: int
    smem_alloc_granularity_bytes: int
    smem_carveouts_bytes: tuple[int, ...]
    subpartitions_per_sm: int
    barriers_per_cta_slot: int | None = None
    cache_line_bytes: int | None = None   # the unit of an SM's L2 requests (wavesim/kernels/gemm.py)
    smem_bytes_per_clock: int | None = None   # an SM's shared-memory bandwidth (masked pipeline copies: gemm.py)
    simds_per_cu: int | None = None
    max_waves_per_simd: int | None = None
    vgprs_per_simd_lane: int | None = None
    vgpr_alloc_granule: int | None = None
    max_barrier_workgroups_per_cu: int | None = None
    # field name -> (status, source); not part of equality: same numbers, same limits
    sources: Mapping[str, tuple[str, str]] = field(default_factory=FrozenMap, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "sources"}
        d["smem_carveouts_bytes"] = list(self.smem_carveouts_bytes)
        d["sources"] = {k: {"status": s, "source": src} for k, (s, src) in self.sources.items()}
        return d


@dataclass(frozen=True, kw_only=True)
class GPUSpec:
    """One GPU device (as PyTorch sees it: one MI250X GCD is one device)."""

    id: str
    name: str
    vendor: str
    arch: ArchLimits
    aliases: tuple[str, ...] = ()
    note: str | None = None
    sm_count: int
    boost_clock_hz: int
    base_clock_hz: int
    l2_bytes: int
    dram_bytes: int
    dram_bandwidth_bytes_per_s: float
    tdp_w: float
    fp32_peak_flops: float
    fp32_flops_per_clock_per_sm: float
    # SMs that one GPC's block dispatch fills with consecutive CTAs (the L2 coalescer's scope:
    # wavesim/kernels/gpc_share.py); None where no layout is known, and the model then merges no reads
    sms_per_gpc: int | None = None
    # dense tensor/matrix-core rates by dtype name (TENSOR_DTYPES); mappings are read-only
    tensor_peak_flops: Mapping[str, float]
    tensor_flops_per_clock_per_sm: Mapping[str, float]
    sources: Mapping[str, tuple[str, str]] = field(default_factory=FrozenMap, compare=False, repr=False)

    def peak_tensor_flops(self, dtype: str) -> float:
        """Datasheet dense tensor-core peak in FLOP/s (OP/s for int8) for `dtype`."""
        return self.tensor_peak_flops[self._dtype_key(dtype)]

    def _dtype_key(self, dtype: Any) -> str:
        key = str(dtype).lower().removeprefix("torch.").removeprefix("tl.")
        key = _DTYPE_ALIASES.get(key, key)
        if key not in TENSOR_DTYPES:
            raise UnsupportedDtypeError(f"unknown tensor dtype '{dtype}'; known: {', '.join(TENSOR_DTYPES)}")
        if key not in self.tensor_peak_flops:
            have = ", ".join(self.tensor_peak_flops) or "none"
            raise UnsupportedDtypeError(f"{self.name} ({self.id}) has no {key} tensor-core rate; it has: {have}")
        return key

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name == "arch":
                v = v.to_dict()
            elif f.name == "sources":
                v = {k: {"status": s, "source": src} for k, (s, src) in v.items()}
            elif isinstance(v, Mapping):
                v = dict(v)
            elif isinstance(v, tuple):
                v = list(v)
            d[f.name] = v
        return d


# ---- parsing ----

def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise
    except tomllib.TOMLDecodeError as e:
        raise SpecError(path, "(syntax)", f"not valid TOML: {e}", "fix the TOML syntax at that line") from None


def _check_value(path: Path, key: str, value: Any, kind: str, zero_ok: bool) -> Any:
    """Type and sign check of one value; returns it normalised (float for float, tuple for ints)."""
    def is_int(x):
        return isinstance(x, int) and not isinstance(x, bool)

    ok = {"int": is_int(value), "float": is_int(value) or isinstance(value, float),
          "str": isinstance(value, str) and value != "",
          "ints": isinstance(value, list) and bool(value) and all(is_int(x) for x in value)}[kind]
    if not ok:
        want = {"int": "an integer", "float": "a number", "str": "a non-empty string",
                "ints": "a non-empty list of integers"}[kind]
        raise SpecError(path, key, f"value {value!r} has the wrong type ({type(value).__name__})", f"give {want}")
    if kind in ("int", "float") and (value < 0 or (value == 0 and not zero_ok)):
        raise SpecError(path, key, f"value {value!r} must be {'>= 0' if zero_ok else '> 0'}",
                        "give the real (positive) value, in the unit the key name says")
    if kind == "ints":
        if any(x < 0 for x in value):
            raise SpecError(path, key, f"list {value!r} has a negative entry", "give sizes >= 0")
        return tuple(value)
    return float(value) if kind == "float" else value


def _sourced(path: Path, key: str, entry: Any, kind: str, zero_ok: bool) -> tuple[Any, str, str]:
    if not isinstance(entry, dict):
        raise SpecError(path, key, f"expected a table with value, status and source, got {entry!r}", SOURCED_FIX)
    extra = set(entry) - {"value", "status", "source"}
    if extra:
        raise SpecError(path, key, f"unknown field(s) {sorted(extra)} in the table", SOURCED_FIX)
    for sub in ("value", "status", "source"):
        if sub not in entry:
            raise SpecError(path, key, f"missing '{sub}'", SOURCED_FIX)
    status, source = entry["status"], entry["source"]
    if status not in STATUSES:
        raise SpecError(path, key, f"unknown status {status!r}", f"use one of {', '.join(STATUSES)}")
    if not isinstance(source, str) or not source.strip():
        raise SpecError(path, key, "missing source (empty)",
                        "name the datasheet, whitepaper, header or measurement; for derived values give the formula")
    return _check_value(path, key, entry["value"], kind, zero_ok), status, source


def _parse_fields(path: Path, raw: dict, plain: dict, sourced: dict, tables: tuple = ()):
    """Split a raw TOML dict into plain values, sourced values and their sources; reject unknown keys."""
    known = set(plain) | set(sourced) | set(tables)
    for key in raw:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            fix = f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(sorted(known))}"
            raise SpecError(path, key, "unknown key", fix)
    values: dict[str, Any] = {}
    sources: dict[str, tuple[str, str]] = {}
    for key, typ in plain.items():
        if key in raw:
            if not isinstance(raw[key], typ) or (typ is list and not all(isinstance(a, str) for a in raw[key])):
                raise SpecError(path, key, f"value {raw[key]!r} has the wrong type", f"give a {typ.__name__}"
                                + (" of strings" if typ is list else ""))
            values[key] = raw[key]
    for key, (kind, required, zero_ok) in sourced.items():
        if key not in raw:
            if required:
                raise SpecError(path, key, "missing key", f"add it: {SOURCED_FIX}")
            values[key] = None
            continue
        values[key], status, source = _sourced(path, key, raw[key], kind, zero_ok)
        sources[key] = (status, source)
    return values, sources


def _require_plain(path: Path, values: dict, keys: tuple[str, ...]) -> None:
    for key in keys:
        if key not in values:
            raise SpecError(path, key, "missing key", f'add it, e.g. {key} = "..."')


def load_arch_file(path: str | Path) -> ArchLimits:
    """Parse and check one architecture file (data/arch/<name>.toml format)."""
    path = Path(path)
    raw = _read_toml(path)
    values, sources = _parse_fields(path, raw, _ARCH_PLAIN, _ARCH_SOURCED)
    _require_plain(path, values, ("name", "vendor"))
    vendor = values["vendor"]
    if vendor not in VENDORS:
        raise SpecError(path, "vendor", f"unknown vendor {vendor!r}", f"use one of {', '.join(VENDORS)}")
    for key in _ARCH_VENDOR_REQUIRED[vendor]:
        if values[key] is None:
            raise SpecError(path, key, f"missing key (required for {vendor})", f"add it: {SOURCED_FIX}")
    v = values
    if v["max_warps_per_sm"] * v["warp_size"] != v["max_threads_per_sm"]:
        raise SpecError(path, "max_warps_per_sm", "max_warps_per_sm x warp_size != max_threads_per_sm",
                        "make the three consistent")
    if not v["smem_per_cta_default_bytes"] <= v["smem_per_cta_optin_bytes"] <= v["smem_per_sm_bytes"]:
        raise SpecError(path, "smem_per_cta_optin_bytes", "need default <= opt-in <= smem_per_sm_bytes",
                        "check the three shared-memory sizes")
    if max(v["smem_carveouts_bytes"]) != v["smem_per_sm_bytes"]:
        raise SpecError(path, "smem_carveouts_bytes", "the largest carveout must equal smem_per_sm_bytes",
                        "list every legal shared-memory capacity per SM, up to the maximum")
    return ArchLimits(**values, sources=FrozenMap(sources))


@functools.cache
def load_arch(name: str) -> ArchLimits:
    """The shipped architecture `name` ("sm_90", "gfx942")."""
    path = ARCH_DIR / f"{name}.toml"
    if not path.exists():
        raise FileNotFoundError(path)
    return load_arch_file(path)


def load_gpu_file(path: str | Path) -> GPUSpec:
    """Parse and check a GPU file (data/gpus/<id>.toml format); its arch comes from data/arch."""
    path = Path(path)
    raw = _read_toml(path)
    values, sources = _parse_fields(path, raw, _GPU_PLAIN, _GPU_SOURCED, _GPU_TABLES)
    _require_plain(path, values, ("id", "name", "vendor", "arch"))
    if values["vendor"] not in VENDORS:
        raise SpecError(path, "vendor", f"unknown vendor {values['vendor']!r}", f"use one of {', '.join(VENDORS)}")
    arch_name = values.pop("arch")
    try:
        arch = load_arch(arch_name)
    except FileNotFoundError:
        have = ", ".join(p.stem for p in sorted(ARCH_DIR.glob("*.toml")))
        raise SpecError(path, "arch", f"no architecture file {ARCH_DIR / (arch_name + '.toml')}",
                        f"use one of {have}, or add that arch file") from None
    if arch.vendor != values["vendor"]:
        raise SpecError(path, "vendor", f"vendor {values['vendor']!r} but arch {arch_name} is {arch.vendor!r}",
                        "make vendor and arch agree")
    if values["base_clock_hz"] > values["boost_clock_hz"]:
        raise SpecError(path, "base_clock_hz", "base clock above boost clock", "check both clocks")
    if values["sms_per_gpc"] is not None and values["sms_per_gpc"] > values["sm_count"]:
        raise SpecError(path, "sms_per_gpc", f"{values['sms_per_gpc']} SMs per GPC but only {values['sm_count']} SMs",
                        "give the SMs of one GPC (the most common size of the measured layout)")
    peaks, rates = _tensor_tables(path, raw, values, sources)
    values["fp32_flops_per_clock_per_sm"] = _rate(
        path, "fp32_flops_per_clock_per_sm", values["fp32_flops_per_clock_per_sm"], values["fp32_peak_flops"],
        values, sources, "fp32_peak_flops")
    values["aliases"] = tuple(values.get("aliases", ()))
    return GPUSpec(**values, arch=arch, tensor_peak_flops=FrozenMap(peaks),
                   tensor_flops_per_clock_per_sm=FrozenMap(rates), sources=FrozenMap(sources))


def _tensor_tables(path: Path, raw: dict, values: dict, sources: dict):
    tables = {}
    for tname in _GPU_TABLES:
        table = raw.get(tname, {})
        if not isinstance(table, dict):
            raise SpecError(path, tname, "expected a table [" + tname + "]", "write the dtypes under a [" + tname + "] header")
        out = {}
        for dtype, entry in table.items():
            key = f"{tname}.{dtype}"
            if dtype not in TENSOR_DTYPES:
                raise SpecError(path, key, "unknown dtype", f"use one of {', '.join(TENSOR_DTYPES)}")
            out[dtype], status, source = _sourced(path, key, entry, "float", False)
            sources[key] = (status, source)
        tables[tname] = out
    peaks, given = tables["tensor_peak_flops"], tables["tensor_flops_per_clock_per_sm"]
    for dtype in given.keys() - peaks.keys():
        raise SpecError(path, f"tensor_flops_per_clock_per_sm.{dtype}", "a rate without a peak",
                        f"add tensor_peak_flops.{dtype}")
    rates = {d: _rate(path, f"tensor_flops_per_clock_per_sm.{d}", given.get(d), p, values, sources,
                      f"tensor_peak_flops.{d}") for d, p in peaks.items()}
    return peaks, rates


def _rate(path, key, given, peak, values, sources, peak_key):
    """FLOP/clock/SM = peak / (SMs x boost clock): checked when the file gives it, derived when it doesn't."""
    derived = peak / (values["sm_count"] * values["boost_clock_hz"])
    if given is None:
        sources[key] = ("derived", f"{peak_key} / (sm_count x boost_clock_hz), computed on load")
        return derived
    if abs(given - derived) > _RATE_TOLERANCE * derived:
        raise SpecError(path, key, f"{given} disagrees with {peak_key} / (sm_count x boost_clock_hz) = {derived:.1f}",
                        "fix the peak, the clock, the SM count or the rate, or leave the rate out to derive it")
    return given


# ---- the shipped registry ----

def _norm(name: str) -> str:
    """'NVIDIA H200' -> 'nvidia-h200': case and punctuation don't matter in ids and aliases."""
    return re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-")


@functools.cache
def _index() -> dict[str, str]:
    """Normalised id / alias / name -> id, read cheaply (no full parse) from every shipped GPU file."""
    index: dict[str, str] = {}
    for path in sorted(GPU_DIR.glob("*.toml")):
        raw = _read_toml(path)
        gid = raw.get("id")
        if gid != path.stem:
            raise SpecError(path, "id", f"id {gid!r} differs from the file name", f'set id = "{path.stem}"')
        for name in [gid, raw.get("name", ""), *raw.get("aliases", [])]:
            key = _norm(name)
            if index.get(key, gid) != gid:
                raise SpecError(path, "aliases", f"'{name}' also names {index[key]}", "make aliases unique")
            index[key] = gid
    return index


def list_gpus() -> list[str]:
    """Sorted ids of the shipped GPUs."""
    return sorted(set(_index().values()))


def resolve_gpu_id(name: str) -> str:
    """The shipped id for an id, alias or device name ('NVIDIA H200', 'h100'); UnknownGPUError if none."""
    index, key = _index(), _norm(name)
    for candidate in (key, re.sub(r"^(nvidia|amd-instinct|amd|tesla)-", "", key)):
        if candidate in index:
            return index[candidate]
    raise UnknownGPUError(name, list_gpus())


def load_gpu(id_or_alias: str) -> GPUSpec:
    """The shipped GPU for an id, alias or device name (cached)."""
    return _load_shipped(resolve_gpu_id(id_or_alias))


@functools.cache
def _load_shipped(gid: str) -> GPUSpec:
    return load_gpu_file(GPU_DIR / f"{gid}.toml")
