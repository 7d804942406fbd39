"""The same-row cost of the canonical Triton GEMM at small M, derived from measurements (the source of the GEMM
model's `single_row_l2_fraction` prior, wavesim/data/gemm_priors.toml).

The kernel wraps A's rows onto the matrix (`offs_am % M`), so for M < BLOCK_M each CTA's A tile is BLOCK_M / M
copies of each of M rows, and every co-resident CTA requests those same lines in every K step. The model charges
the copies beyond the first (`wrapped_row_share`: 1 at M = 1, (BM / M - 1) / (BM - 1) below BM, 0 from BM on) an
extra time per K step proportional to the concurrent CTAs x BM x BK x element bytes: a chip-wide rate. Measured at
M = 1 against M = 16 (same grid when BLOCK_M >= 16, so the same work everywhere else; M = 16 pays its own small
share, which the difference leaves out). The rate is reported as a fraction of the chip-wide L2 pool of the
model's prior (l2_bytes_per_clock_per_sm x sm_count x boost clock), so it carries to other GPUs through their L2.
How it carries to 1 < M < BLOCK_M was decided on decode batch sizes measured for it and never fitted
(validation/data/h200/fresh23/, M = 2..12: NOTES.md session 18).

    python3 -m validation.single_row --gpu h200 validation/data/h200/gemm/llm.jsonl
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from pathlib import Path

import hwspecs
from validation.derivation import derivation_main
from validation.measurements import load_measurements
from wavesim.kernels.gemm import GemmParams, config_occupancy, wrapped_row_share
from wavetune.config import DTYPE_BYTES

REFERENCE_M = 16  # the smallest M of the LLM shape set above 1 whose grid equals M = 1's when BLOCK_M >= 16


def single_row_rate(gpu: str, paths: list[str | Path], dtype: str = "bf16") -> dict:
    """Median same-row rate (bytes/s) over every (layer, config) measured at both M = 1 and M = 16."""
    spec = hwspecs.load_gpu(gpu)
    times: dict[tuple, dict[int, float]] = defaultdict(dict)
    for m in load_measurements(paths, gpu=spec.id):
        if m.ok and m.config is not None and m.problem.dtype == dtype and m.problem.M in (1, REFERENCE_M):
            times[(m.problem.N, m.problem.K, m.config)][m.problem.M] = m.ms * 1e-3
    per_byte = []
    for (N, K, cfg), t in times.items():
        if len(t) < 2 or cfg.BLOCK_M < REFERENCE_M:
            continue
        occ = config_occupancy(spec, cfg, dtype)[0].ctas_per_sm
        if occ == 0:
            continue
        grid = math.ceil(N / cfg.BLOCK_N)
        concurrent = min(grid, spec.sm_count * occ)
        extra_per_step = (t[1] - t[REFERENCE_M]) / math.ceil(K / cfg.BLOCK_K)
        share = 1.0 - float(wrapped_row_share(REFERENCE_M, cfg.BLOCK_M))   # M = 1's share less M = 16's
        per_byte.append(extra_per_step / (share * concurrent * cfg.BLOCK_M * cfg.BLOCK_K * DTYPE_BYTES[dtype]))
    if not per_byte:
        raise ValueError(f"no (layer, config) measured at both M = 1 and M = {REFERENCE_M} in {list(map(str, paths))}: "
                         "profile the 'llm' shape set (it has both) to derive the rate")
    rate = 1.0 / statistics.median(per_byte)
    prior = GemmParams.priors()
    pool = prior.l2_bytes_per_clock_per_sm * spec.sm_count * spec.boost_clock_hz
    q1, _, q3 = statistics.quantiles(per_byte, n=4)
    return {"pairs": len(per_byte), "rate_Bps": rate, "rate_Bps_iqr": (1.0 / q3, 1.0 / q1),
            "l2_pool_Bps": pool, "fraction_of_l2_pool": rate / pool}


def _show(r: dict) -> None:
    lo, hi = r["rate_Bps_iqr"]
    print(f"{r['pairs']} (layer, config) pairs at M = 1 and M = {REFERENCE_M}: same-row rate {r['rate_Bps'] / 1e12:.2f} TB/s "
          f"(IQR {lo / 1e12:.2f}-{hi / 1e12:.2f}) = {r['fraction_of_l2_pool']:.3f} of the prior L2 pool "
          f"({r['l2_pool_Bps'] / 1e12:.2f} TB/s)")


def main(argv: list[str] | None = None) -> int:
    return derivation_main(argv, "python3 -m validation.single_row", __doc__, single_row_rate, _show)


if __name__ == "__main__":
    raise SystemExit(main())
