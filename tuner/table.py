"""DualTable: the fitted artifact of the tuner, and runtime selection from it in microseconds.

For every macro config (BLOCK_M, BLOCK_N), in each of two regimes (`macros`: the default specialization;
`m1_macros`: M == 1, which Triton compiles to a different kernel), and, in a table fitted on measurements,
a third set (`fallback_macros`) fitted on the simulator alone over a generic domain, which serves the
(N, K) layers that were never measured (measured anchors do not extrapolate well to other layers:
tuner/README.md):
  * a coefficient table indexed by wave count w (tuner.mapping.band_of): theta_w = (a, b, c, d), T_w(G, L) = a + b G + c L + d G L
    (rows 1..w_max; past w_max rows continue linearly: theta_w = theta_wmax + (w - w_max) * slope);
  * a micro-config table indexed by (w, L bucket) holding the best micro config (BLOCK_K, GROUP_M,
    num_warps, num_stages); L bucket = floor(log2 L), L = ceil(K / 64) (tuner.mapping); w past the table
    uses its last row.

`select(problem)`: the macro set is m1_macros for M == 1 (when there are any), else fallback_macros when
the table has them and (N, K) is not one of its domain's layers, else macros; shapes the macros cannot resolve
(N or K not a multiple of 16; 1 < M < 16, a single row of tiles whatever M is; K below the smallest K the serving
macros were anchored at) get the simulator's pick among
the table's configs instead, memoised per shape (select_simulated). Stage I evaluates every
macro's coefficients at its (G, L, w) and keeps the fastest
(ties: the first macro in sorted order, so selection is deterministic); stage II looks up the micro config.
No simulator call: the hot path is plain integer arithmetic over precomputed Python tuples (faster than
numpy for ~20 macros; see benchmarks/bench_tuner.py decision).

JSON format (version 2): {"format": "wavetune.dualtable", "version": 2, "gpu", "kernel", "dtype",
"triton", "sm_count", "ref_block_k", "l_buckets", "space_hash", "space_size", "source", "domain",
"model", "stats", "unfit": [{"config", "reason"}], "macros": [{"BLOCK_M", "BLOCK_N", "ref_ctas_per_sm",
"cap", "coef": [[a, b, c, d], ...], "slope": [..4], "micros": [{BLOCK_K, GROUP_M, num_warps, num_stages}],
"micro_table": [[micro index per L bucket] per w]}], "m1_macros": [...], "fallback_macros": [...]}.
Version 2 added fallback_macros (a version-1 reader would silently ignore them, hence the bump).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wavesim.kernels.gemm import TRITON_DIVISIBILITY
from wavetune.config import GemmProblem, LaunchConfig

from .mapping import REF_BLOCK_K, SIMULATED_BELOW_M, band_of
from .sampling import GENERIC_DOMAIN

TABLE_FORMAT = "wavetune.dualtable"
TABLE_VERSION = 2
N_L_BUCKETS = 12  # L = 1 .. 4095+ (K up to 256k with the 64-wide reference step)


def space_hash(configs) -> str:
    keys = sorted(c.key for c in configs)
    return "sha256:" + hashlib.sha256("\n".join(keys).encode()).hexdigest()[:16]


def l_bucket(L: int) -> int:
    return min(max(L, 1).bit_length() - 1, N_L_BUCKETS - 1)


@dataclass
class MacroEntry:
    BLOCK_M: int
    BLOCK_N: int
    ref_ctas_per_sm: int
    cap: int
    coef: list[list[float]]
    slope: list[float]
    micros: list[dict[str, int]]
    micro_table: list[list[int]]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class DualTable:
    gpu: str
    kernel: str
    dtype: str
    triton: str | None
    sm_count: int
    space_hash: str
    space_size: int
    source: dict[str, Any]
    macros: list[MacroEntry]
    domain: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    unfit: list[dict[str, Any]] = field(default_factory=list)
    m1_macros: list[MacroEntry] = field(default_factory=list)
    fallback_macros: list[MacroEntry] = field(default_factory=list)
    version: int = TABLE_VERSION

    def __post_init__(self) -> None:
        if not self.macros:
            raise ValueError("a DualTable needs at least one macro config")
        self._compile()

    # ---- runtime ---------------------------------------------------------------------------------
    def _compile(self) -> None:
        self._fast = self._compile_list(self.macros)
        self._fast_m1 = self._compile_list(self.m1_macros)
        self._fast_fb = self._compile_list(self.fallback_macros)
        self._layers = {(int(n), int(k)) for n, k in self.domain.get("NK", [])} if self._fast_fb else set()
        # the smallest K each macro set was anchored at (a (G, L) fit extrapolates badly below its smallest L):
        # the domain's for `macros`, the generic domain's for `fallback_macros`
        ks = [int(k) for _, k in self.domain.get("NK", [])]
        self._k_min = min(ks) if ks else 0
        self._k_min_fb = min(k for _, k in GENERIC_DOMAIN.NK) if self._fast_fb else 0
        self._nb = N_L_BUCKETS - 1
        self._simulated: dict[tuple[int, int, int], dict[LaunchConfig, float]] = {}  # simulated us per config
        self._simulated_picks: dict[tuple[int, int, int], LaunchConfig] = {}

    def _entries(self, M: int, N: int, K: int) -> list[tuple]:
        """The macro set that serves (M, N, K) (see the module docstring)."""
        if M == 1 and self._fast_m1:
            return self._fast_m1
        if self._fast_fb and (N, K) not in self._layers:
            return self._fast_fb
        return self._fast

    @staticmethod
    def _compile_list(macros: list[MacroEntry]) -> list[tuple]:
        fast = []
        for e in macros:
            rows = [tuple(float(x) for x in r) for r in e.coef]
            cfgs = [LaunchConfig(e.BLOCK_M, e.BLOCK_N, u["BLOCK_K"], u["GROUP_M"], u["num_warps"], u["num_stages"])
                    for u in e.micros]
            mt = [tuple(cfgs[i] for i in row) for row in e.micro_table]
            fast.append((e.BLOCK_M, e.BLOCK_N, e.cap, rows, len(rows), tuple(float(x) for x in e.slope), mt, len(mt)))
        return fast

    def covers(self, problem: GemmProblem) -> bool:
        """Whether the problem lies in the domain the table was fitted on (dtype and M range; the N and K
        ranges of the domain widened by 2x). Outside it select() still answers, by extrapolation."""
        if problem.dtype != self.dtype:
            return False
        d = self.domain
        if not d:
            return True
        ns = [nk[0] for nk in d.get("NK", [])] or [problem.N]
        ks = [nk[1] for nk in d.get("NK", [])] or [problem.K]
        return (problem.M <= 2 * d.get("M_max", problem.M) and min(ns) / 2 <= problem.N <= 2 * max(ns)
                and min(ks) / 2 <= problem.K <= 2 * max(ks))

    def predict_macros(self, M: int, N: int, K: int) -> list[tuple[float, int, int]]:
        """Stage I for every macro: (predicted latency in us, BLOCK_M, BLOCK_N)."""
        L = -(-K // REF_BLOCK_K)
        out = []
        for bm, bn, cap, rows, nrows, slope, _, _ in self._entries(M, N, K):
            G = (-(-M // bm)) * (-(-N // bn))
            v = band_of(G, cap)
            if v <= nrows:
                a, b, c, d = rows[v - 1]
            else:
                x = v - nrows
                a, b, c, d = (r + x * s for r, s in zip(rows[-1], slope))
            out.append((a + b * G + (c + d * G) * L, bm, bn))
        return out

    def select_mnk(self, M: int, N: int, K: int) -> LaunchConfig:
        """The hot path: ints in, LaunchConfig out (stage I: fastest macro; stage II: its micro cell). Two kinds of
        shape go to the simulator instead (select_simulated), the macros being blind to what sets their times:
          * N or K not a multiple of 16: Triton compiles another kernel (they are the row strides of contiguous
            operands, and the kernel wraps B's columns with % N and masks A's K tail), which the macros were not
            fitted on;
          * 1 < M < SIMULATED_BELOW_M: one row of tiles whatever M is, so the macros' (G, L) cannot tell M = 2 from
            M = 16, while the BLOCK_M / M wrapped copies of each row of A cost up to half of M = 1's same-row cost
            (wavesim.kernels.gemm.wrapped_row_share; M = 1 has its own macros);
          * K below every K the serving macros were anchored at: their (G, L) fit extrapolates badly below its
            smallest L (measured: validation/data/h200/fresh25-27, NOTES.md session 18)."""
        if self.simulated_shape(M, N, K):
            return self.select_simulated(M, N, K)
        return self.select_fitted(M, N, K)

    def simulated_shape(self, M: int, N: int, K: int) -> bool:
        """Whether select_mnk leaves the shape to the simulator (its docstring says why)."""
        if N % TRITON_DIVISIBILITY or K % TRITON_DIVISIBILITY or 1 < M < SIMULATED_BELOW_M:
            return True
        return K < (self._k_min_fb if self._fast_fb and (N, K) not in self._layers else self._k_min)

    def select_unaligned(self, M: int, N: int, K: int) -> LaunchConfig:
        """The pick for a launch whose strides are not multiples of 16 (whatever N and K are): select_simulated."""
        return self.select_simulated(M, N, K)

    def select_simulated(self, M: int, N: int, K: int) -> LaunchConfig:
        """The simulator's fastest config among the table's, for the kernel Triton compiles for this shape
        (wavesim.kernels.gemm: its own resources and costs), with the model parameters the table was built on.
        Milliseconds, once per shape (memoised). Where the simulator has no unaligned kernel (AMD) or cannot get the
        configs' resources for it here (no table, and no compiler that works: e.g. Triton's CPU interpreter), the
        table's own pick."""
        cfg = self._simulated_picks.get((M, N, K))
        if cfg is None:
            times = self._simulated_times(M, N, K)
            if not times:
                return self.select_fitted(M, N, K)
            from wavetune.config import fastest

            configs = list(times)
            cfg = self._simulated_picks.setdefault((M, N, K), configs[fastest(list(times.values()), configs)])
        return cfg

    def _simulated_times(self, M: int, N: int, K: int) -> dict[LaunchConfig, float]:
        """Simulated microseconds of the table's configs that launch for this shape's kernel ({} where it cannot be
        priced: see select_simulated); memoised per shape."""
        key = (M, N, K)
        times = self._simulated.get(key)
        if times is None:
            times = self._simulate(M, N, K)
            if len(self._simulated) >= 4096:  # bounded: a long-running server sees many shapes
                self._simulated.clear()
                self._simulated_picks.clear()
            self._simulated[key] = times
        return times

    def _simulate(self, M: int, N: int, K: int) -> dict[LaunchConfig, float]:
        import hwspecs
        from wavesim.kernels.gemm import (GemmBatch, config_occupancy, simulate_batch, specialization_problem,
                                          unaligned_strides)

        spec = hwspecs.load_gpu(self.gpu)
        if unaligned_strides(N, K) and specialization_problem(spec, N, K) is None:
            return {}   # no unaligned kernel priced on this GPU (AMD: not measured)

        def launches(c: LaunchConfig) -> bool:
            try:
                return config_occupancy(spec, c, self.dtype, N, K)[0].ctas_per_sm > 0
            except ValueError:  # CompileFailure: this kernel's resources cannot be had here, so it is not priced
                return False

        configs = [c for c in self.configs() if launches(c)]
        if not configs:
            return {}
        n = len(configs)
        b = GemmBatch.build(spec, self.dtype, [M] * n, [N] * n, [K] * n, configs)
        return dict(zip(configs, (simulate_batch(b, self._model_params()).makespan_s * 1e6).tolist()))

    def _model_params(self):
        """The simulator parameters the table was built on (its source's, or its prior's), else the GPU's shipped
        calibration."""
        from wavesim.kernels.gemm import GemmParams

        for src in (self.source, self.source.get("prior") or {}):
            if src.get("params"):
                return GemmParams.from_dict(src["params"], "table source")
        from tuner.sources import load_params

        return load_params("auto", self.gpu)

    def select_fitted(self, M: int, N: int, K: int) -> LaunchConfig:
        """select_mnk from the fitted macros alone, whatever N's and K's divisibility."""
        L = -(-K // REF_BLOCK_K)
        best_t = math.inf
        best = None
        for entry in self._entries(M, N, K):
            bm, bn, cap, rows, nrows, slope, _, _ = entry
            G = (-(-M // bm)) * (-(-N // bn))
            v = -(-G // cap)
            if v <= nrows:
                a, b, c, d = rows[v - 1]
            else:
                x = v - nrows
                a, b, c, d = (r + x * s for r, s in zip(rows[-1], slope))
            t = a + b * G + (c + d * G) * L
            if 0.0 < t < best_t:  # a non-positive prediction is a broken extrapolation: never picked
                best_t, best, best_v = t, entry, v
        mt, nmt = best[6], best[7]
        b = L.bit_length() - 1
        return mt[min(best_v, nmt) - 1][b if b < self._nb else self._nb]

    def micro_for(self, M: int, N: int, K: int, bm: int, bn: int) -> LaunchConfig | None:
        """Stage II for a given macro (None if the macro is not in the table)."""
        L = -(-K // REF_BLOCK_K)
        for e in self._entries(M, N, K):
            if e[0] == bm and e[1] == bn:
                w = band_of((-(-M // bm)) * (-(-N // bn)), e[2])
                return e[6][min(w, e[7]) - 1][min(L.bit_length() - 1, self._nb)]
        return None

    def predict_us(self, M: int, N: int, K: int, cfg: LaunchConfig) -> float:
        """A latency score for any config: its macro's stage-I prediction, times 1.05 when its micro config is
        not the table's stage-II pick (inf for a macro the table does not have). Used as Triton's perf_model.
        For the shapes select_mnk sends to the simulator, the simulated time of Triton's kernel for that shape (inf
        for a config the table does not have)."""
        if self.simulated_shape(M, N, K) and (times := self._simulated_times(M, N, K)):
            return times.get(cfg, math.inf)
        for t, bm, bn in self.predict_macros(M, N, K):
            if bm == cfg.BLOCK_M and bn == cfg.BLOCK_N:
                return t if self.micro_for(M, N, K, bm, bn) == cfg else t * 1.05
        return math.inf

    def select(self, problem: GemmProblem) -> LaunchConfig:
        if problem.dtype != self.dtype:
            raise ValueError(f"table is for dtype {self.dtype}, problem has {problem.dtype}")
        return self.select_mnk(problem.M, problem.N, problem.K)

    # ---- JSON ------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"format": TABLE_FORMAT, "version": self.version, "gpu": self.gpu, "kernel": self.kernel,
                "dtype": self.dtype, "triton": self.triton, "sm_count": self.sm_count, "ref_block_k": REF_BLOCK_K,
                "l_buckets": N_L_BUCKETS, "space_hash": self.space_hash, "space_size": self.space_size,
                "source": self.source, "domain": self.domain, "model": self.model, "stats": self.stats,
                "unfit": self.unfit, "macros": [m.to_dict() for m in self.macros],
                "m1_macros": [m.to_dict() for m in self.m1_macros],
                "fallback_macros": [m.to_dict() for m in self.fallback_macros]}

    def save(self, path: str | Path) -> None:
        """One line per header key, one compact line per macro entry (tables run to a few hundred kB)."""
        d = self.to_dict()
        head = {k: v for k, v in d.items() if k not in ("macros", "m1_macros", "fallback_macros")}
        parts = ["{\n" + ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in head.items())]
        for key in ("macros", "m1_macros", "fallback_macros"):
            rows = ",\n  ".join(json.dumps(m, separators=(",", ":")) for m in d[key])
            parts.append(f',\n "{key}": [' + (f"\n  {rows}\n ]" if rows else "]"))
        Path(path).write_text("".join(parts) + "\n}\n")

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str = "table") -> "DualTable":
        if not isinstance(d, dict) or d.get("format") != TABLE_FORMAT:
            raise ValueError(f"{where}: not a wavetune dual table (format {d.get('format') if isinstance(d, dict) else None!r},"
                             f" expected {TABLE_FORMAT!r})")
        if d.get("version") != TABLE_VERSION:
            raise ValueError(f"{where}: table version {d.get('version')!r} is not supported (this wavetune reads "
                             f"version {TABLE_VERSION}); re-run `wavetune tune`")
        if d.get("ref_block_k", REF_BLOCK_K) != REF_BLOCK_K or d.get("l_buckets", N_L_BUCKETS) != N_L_BUCKETS:
            raise ValueError(f"{where}: table built with ref_block_k={d.get('ref_block_k')}, l_buckets={d.get('l_buckets')};"
                             f" this wavetune uses {REF_BLOCK_K}, {N_L_BUCKETS}")
        try:
            macros = [cls._parse_entry(m, f"{where}: macros[{i}]") for i, m in enumerate(d["macros"])]
            m1 = [cls._parse_entry(m, f"{where}: m1_macros[{i}]") for i, m in enumerate(d.get("m1_macros", []))]
            fb = [cls._parse_entry(m, f"{where}: fallback_macros[{i}]")
                  for i, m in enumerate(d.get("fallback_macros", []))]
            return cls(gpu=d["gpu"], kernel=d["kernel"], dtype=d["dtype"], triton=d.get("triton"),
                       sm_count=int(d["sm_count"]), space_hash=d["space_hash"], space_size=int(d["space_size"]),
                       source=d["source"], macros=macros, domain=d.get("domain", {}), model=d.get("model", {}),
                       stats=d.get("stats", {}), unfit=d.get("unfit", []), m1_macros=m1, fallback_macros=fb)
        except KeyError as e:
            raise ValueError(f"{where}: missing key {e.args[0]!r}") from None
        except TypeError as e:
            raise ValueError(f"{where}: malformed table ({e})") from None

    @staticmethod
    def _parse_entry(m: dict[str, Any], where: str) -> MacroEntry:
        if not isinstance(m, dict):
            raise ValueError(f"{where}: expected an object")
        missing = [k for k in MacroEntry.__dataclass_fields__ if k not in m]
        if missing:
            raise ValueError(f"{where}: missing key(s) {missing}")
        e = MacroEntry(**{k: m[k] for k in MacroEntry.__dataclass_fields__})
        if len(e.coef) < 1 or any(len(r) != 4 for r in e.coef) or len(e.slope) != 4:
            raise ValueError(f"{where}: coef rows and slope must have 4 numbers")
        if not e.micro_table or any(len(r) != N_L_BUCKETS for r in e.micro_table):
            raise ValueError(f"{where}: micro_table rows must have {N_L_BUCKETS} entries")
        if any(not (0 <= j < len(e.micros)) for r in e.micro_table for j in r):
            raise ValueError(f"{where}: micro_table index out of range")
        return e

    @classmethod
    def load(cls, path: str | Path) -> "DualTable":
        p = Path(path)
        if not p.exists():
            raise FileNotFoundError(f"table file {p} does not exist")
        try:
            d = json.loads(p.read_text())
        except json.JSONDecodeError as e:
            raise ValueError(f"{p}: not valid JSON ({e.msg} at line {e.lineno})") from None
        return cls.from_dict(d, str(p))

    def configs(self) -> list[LaunchConfig]:
        return list(dict.fromkeys(
            LaunchConfig(e.BLOCK_M, e.BLOCK_N, u["BLOCK_K"], u["GROUP_M"], u["num_warps"], u["num_stages"])
            for e in self.macros + self.m1_macros + self.fallback_macros for u in e.micros))


DATA_DIR = Path(__file__).resolve().parent / "data"


def shipped_table_path(gpu: str, kernel: str = "gemm", dtype: str = "bf16") -> Path:
    return DATA_DIR / f"{gpu}_{kernel}_{dtype}.json"


def load_table(source: str | Path, gpu: str | None = None, kernel: str = "gemm", dtype: str = "bf16") -> DualTable:
    """"auto": the table shipped in tuner/data for (gpu, kernel, dtype); else a path."""
    if source == "auto":
        if gpu is None:
            raise ValueError("load_table('auto') needs a gpu id")
        p = shipped_table_path(gpu, kernel, dtype)
        if not p.exists():
            raise FileNotFoundError(f"no shipped table for {gpu}/{kernel}/{dtype} (looked for {p}); "
                                    f"build one with `wavetune tune`")
        return DualTable.load(p)
    return DualTable.load(source)
