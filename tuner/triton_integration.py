"""Triton integration: a perf_model for `triton.autotune(prune_configs_by=...)`, and a drop-in decorator that
launches with the table's config (no benchmarking), falling back to Triton's autotuner outside the table.

Triton 3.6 (triton/runtime/autotuner.py, Autotuner.prune_configs) calls
``perf_model(**named_args, **kwargs, **config.all_kwargs())`` for each config and keeps the `top_k` with the
smallest values (top_k: an int, or a float <= 1 as a fraction of the configs). So:

    @triton.autotune(configs=[c.to_triton() for c in table.configs()], key=["M", "N", "K"],
                     prune_configs_by=prune_configs_by(table, top_k=3))
    @triton.jit
    def gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, ..., BLOCK_M: tl.constexpr, ...): ...

benchmarks only the 3 configs the table rates best. The drop-in:

    gemm = table_autotune(table, key=["M", "N", "K"])(gemm_kernel)   # gemm_kernel: a @triton.jit function
    gemm[grid](a, b, c, M, N, K, ...)                               # grid: a tuple or lambda META: ...

picks table.select(M, N, K) at each launch (a few microseconds, no benchmarking); a shape outside
`table.covers()` goes to `triton.autotune(configs=table.configs(), key=key)` with one log line per shape. A launch
whose N or K, or a stride argument (names with "stride"), is not a multiple of 16 gets, once per shape, the
simulator's pick for the kernel Triton compiles then (2-byte unpipelined loads, which the table's macros were not
fitted on: `DualTable.select_unaligned`, wavesim.kernels.gemm.alignment_note), with one log line when a stride is
the cause. Padding the rows alone does not help: the canonical kernel wraps B's columns with `% N` and masks A's
K tail with `< K`, and with N = 32001 on 16-divisible strides the H200 ran the same slow kernel
(validation/data/h200/triton_integration_h200.json, M = 2048, K = 4096: 6.0 ms against 5.1 contiguous with the same
config, and 0.82 ms with N padded to 32016); pad N and K as well.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from wavesim.kernels.gemm import TRITON_DIVISIBILITY
from wavetune.config import LaunchConfig

log = logging.getLogger("wavetune.tuner")

META_NAMES = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")


def perf_model(table, m_arg: str = "M", n_arg: str = "N", k_arg: str = "K") -> Callable[..., float]:
    """A Triton perf_model: keyword args of the launch and of the config -> predicted latency (us)."""

    def model(**kw: Any) -> float:
        cfg = LaunchConfig(kw["BLOCK_M"], kw["BLOCK_N"], kw["BLOCK_K"], kw.get("GROUP_M", 8),
                           kw.get("num_warps", 4), kw.get("num_stages", 3))
        return table.predict_us(int(kw[m_arg]), int(kw[n_arg]), int(kw[k_arg]), cfg)

    return model


def prune_configs_by(table, top_k: int | float = 3, **arg_names) -> dict[str, Any]:
    return {"perf_model": perf_model(table, **arg_names), "top_k": top_k}


class TableLauncher:
    """`kernel[grid](*args, **kwargs)` with the config chosen from a DualTable."""

    def __init__(self, fn, table, key=("M", "N", "K"), fallback: Callable | None = None):
        self.fn = fn
        self.table = table
        self.key = tuple(key)
        self.arg_names = list(getattr(fn, "arg_names", []))
        self._stride_positions = [i for i, n in enumerate(self.arg_names) if "stride" in n]
        self._fallback_factory = fallback
        self._fallback = None
        self._logged: set[tuple] = set()
        self._unaligned_logged: set[tuple] = set()
        # Decisions by (M, N, K, dtype, odd strides): a repeated shape skips select() (~10 us on a server CPU, measured
        # on the H200 machine: validation/data/h200/triton_integration_h200.json) for a dict lookup.
        self._chosen: dict[tuple, LaunchConfig | None] = {}
        self.last_config: LaunchConfig | None = None
        self.last_path: str | None = None

    def _fallback_kernel(self):
        if self._fallback is None:
            if self._fallback_factory is not None:
                self._fallback = self._fallback_factory(self.fn)
            else:
                import triton

                self._fallback = triton.autotune(configs=[c.to_triton() for c in self.table.configs()],
                                                 key=list(self.key))(self.fn)
        return self._fallback

    def _stride_values(self, args, kwargs):
        for i in self._stride_positions:
            if i < len(args):
                yield args[i]
        for k, v in kwargs.items():
            if "stride" in k:
                yield v

    def _mnk(self, args, kwargs) -> tuple[int, int, int]:
        named = dict(zip(self.arg_names, args))
        named.update(kwargs)
        try:
            return tuple(int(named[k]) for k in self.key)
        except KeyError as e:
            raise ValueError(f"launch has no argument {e.args[0]!r}; key={self.key}, args={self.arg_names}") from None

    def choose(self, M: int, N: int, K: int, dtype: str | None = None,
               unaligned_strides: bool | None = None) -> LaunchConfig | None:
        """The table's config, or None when the launch is outside its coverage (other dtype, shape range).
        unaligned_strides: whether a stride argument is not a multiple of 16 (N and K decide as well, as in
        DualTable.select_mnk)."""
        from wavetune.config import GemmProblem

        if dtype is not None and dtype != self.table.dtype:
            return None
        if not self.table.covers(GemmProblem(M, N, K, self.table.dtype)):
            return None
        return self.table.select_unaligned(M, N, K) if unaligned_strides else self.table.select_mnk(M, N, K)

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            M, N, K = self._mnk(args, kwargs)
            # Triton compiles another kernel when a stride is not 16-divisible, so that is part of the decision's key
            odd_strides = any(type(v) is int and v != 1 and v % TRITON_DIVISIBILITY
                              for v in self._stride_values(args, kwargs))
            key = (M, N, K, _operand_dtype(args), odd_strides)
            try:
                cfg = self._chosen[key]
            except KeyError:  # a new shape or stride class: decide it once (not on every launch)
                cfg = self.choose(M, N, K, key[3], unaligned_strides=odd_strides)
                if len(self._chosen) < 65536:
                    self._chosen[key] = cfg
                if odd_strides and (M, N, K) not in self._unaligned_logged:
                    self._unaligned_logged.add((M, N, K))
                    odd = _unaligned_strides(named_args(self.arg_names, args, kwargs))
                    log.warning("wavetune: M=%d N=%d K=%d launches with %s, not multiples of %d: Triton compiles "
                                "2-byte unpipelined loads for it (2-8x slower on the H200); its config is the "
                                "simulator's pick for that kernel, not the table's: pad the rows (and N and K) to "
                                "multiples of %d for the faster one", M, N, K, ", ".join(f"{k}={v}" for k, v in odd),
                                TRITON_DIVISIBILITY, TRITON_DIVISIBILITY)
            if cfg is None:
                if (M, N, K) not in self._logged:
                    self._logged.add((M, N, K))
                    log.warning("wavetune: shape M=%d N=%d K=%d is outside the table's coverage (%s); "
                                "falling back to triton.autotune", M, N, K, self.table.domain)
                self.last_config, self.last_path = None, "autotune"
                return self._fallback_kernel()[grid](*args, **kwargs)
            meta = {"BLOCK_M": cfg.BLOCK_M, "BLOCK_N": cfg.BLOCK_N, "BLOCK_K": cfg.BLOCK_K, "GROUP_M": cfg.GROUP_M}
            g = grid({**named_args(self.arg_names, args, kwargs), **meta}) if callable(grid) else grid
            self.last_config, self.last_path = cfg, "table"
            return self.fn[g](*args, **kwargs, **meta, num_warps=cfg.num_warps, num_stages=cfg.num_stages)

        return launch


# torch dtype name -> the dtype names of wavetune.config (tables are fitted per operand dtype)
_TORCH_DTYPES = {"torch.bfloat16": "bf16", "torch.float16": "fp16", "torch.float32": "fp32"}


def _operand_dtype(args) -> str | None:
    """The dtype of the first tensor argument (the A operand), or None if no argument has one."""
    for a in args:
        dt = getattr(a, "dtype", None)
        if dt is not None:
            return _TORCH_DTYPES.get(str(dt), str(dt))
    return None


def _unaligned_strides(named: dict[str, Any]) -> list[tuple[str, int]]:
    """The stride arguments Triton cannot specialize as 16-divisible (1 is specialized on its own, and fine)."""
    return [(k, v) for k, v in named.items() if "stride" in k and isinstance(v, int) and not isinstance(v, bool)
            and v != 1 and v % TRITON_DIVISIBILITY]


def named_args(names, args, kwargs) -> dict[str, Any]:
    d = dict(zip(names, args))
    d.update(kwargs)
    return d


def table_autotune(table, key=("M", "N", "K"), fallback: Callable | None = None):
    """Decorator: `table_autotune(table)(jit_fn)` -> a TableLauncher (see the module docstring)."""

    def deco(fn):
        return TableLauncher(fn, table, key, fallback)

    return deco
