"""What an L2 request costs an SM beyond its bytes, derived from measurements (the source of the GEMM model's
`l2_request_overhead_bytes` prior, wavesim/data/gemm_priors.toml).

An SM loads a tile as one request per contiguous row segment of up to a cache line (hwspecs arch
`cache_line_bytes`): a BLOCK_K = 32 bf16 row of A is half a line and still one request. The bytes-or-requests
study (validation/data/h200/requests/, validation/scripts/collect_h200_requests.sh) measures pairs of configs
with the same tile (BM x BN), the same CTAs/SM and the same K depth in flight ((num_stages - 1) x BLOCK_K) that
differ only in BLOCK_K, so they move the same bytes but the smaller BLOCK_K issues more requests. Once every
SM holds a full wave the SM's loads set the pace, and the time ratio r of a pair gives the cost h per request:
per K element, (bytes + h x requests_a) / (bytes + h x requests_b) = r. Fixed costs (launch, prologue) dilute
r, so h is a lower bound; partial waves are left out (there a lone CTA waits on latency, not on its port).

    python3 -m validation.l2_requests --gpu h200 validation/data/h200/requests/requests*.jsonl
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from pathlib import Path

import hwspecs
from validation.derivation import derivation_main
from validation.measurements import dedupe_latest, load_measurements
from wavesim.kernels.gemm import config_occupancy, l2_requests_per_k_step
from wavetune.config import DTYPE_BYTES

# Two smem stages in flight at least: with one, a CTA waits out each load's latency and its port does not set
# the pace (the LLM sets' num_stages = 2 configs).
MIN_STAGES = 3


def request_overhead(gpu: str, paths: list[str | Path], dtype: str = "bf16") -> dict:
    """Per pair (see the module docstring) the median time ratio over launches of at least one full wave and
    the request cost it implies; `overhead_bytes` is the median over pairs."""
    spec = hwspecs.load_gpu(gpu)
    if spec.arch.cache_line_bytes is None:
        raise ValueError(f"{spec.name}: its architecture ({spec.arch.name}) has no sourced cache_line_bytes; "
                         "add it to hwspecs/data/arch to count requests")
    elem = DTYPE_BYTES[dtype]
    times: dict[tuple, dict] = defaultdict(lambda: defaultdict(list))  # (N, K) -> (config, M) -> ms
    for path in paths:  # passes are separate files: average them, keeping the latest record of each
        for m in dedupe_latest(load_measurements(path, gpu=spec.id)):
            if m.ok and m.config is not None and m.problem.dtype == dtype:
                times[(m.problem.N, m.problem.K)][(m.config, m.problem.M)].append(m.ms)
    pairs = []
    for (N, K), t in times.items():
        configs = {c for c, _ in t}
        for a in configs:
            for b in configs:
                occ = config_occupancy(spec, a, dtype)[0].ctas_per_sm
                if ((a.BLOCK_M, a.BLOCK_N, a.num_warps, a.GROUP_M) != (b.BLOCK_M, b.BLOCK_N, b.num_warps, b.GROUP_M)
                        or a.BLOCK_K >= b.BLOCK_K or occ == 0
                        or occ != config_occupancy(spec, b, dtype)[0].ctas_per_sm
                        or (a.num_stages - 1) * a.BLOCK_K != (b.num_stages - 1) * b.BLOCK_K
                        or min(a.num_stages, b.num_stages) < MIN_STAGES):
                    continue
                # per BLOCK_K of b: the same bytes, a's requests scaled to that K
                req_a = l2_requests_per_k_step(a.BLOCK_M, a.BLOCK_N, a.BLOCK_K, elem, spec.arch.cache_line_bytes) \
                    * b.BLOCK_K / a.BLOCK_K
                req_b = l2_requests_per_k_step(b.BLOCK_M, b.BLOCK_N, b.BLOCK_K, elem, spec.arch.cache_line_bytes)
                if req_a <= req_b:   # rows of a line or more in both: the same requests, nothing to learn
                    continue
                full = [M for (c, M) in t if c == a and (b, M) in t
                        and math.ceil(M / a.BLOCK_M) * math.ceil(N / a.BLOCK_N) >= spec.sm_count * occ]
                if not full:
                    continue
                r = statistics.median(statistics.fmean(t[(a, M)]) / statistics.fmean(t[(b, M)]) for M in full)
                nbytes = (a.BLOCK_M + a.BLOCK_N) * b.BLOCK_K * elem
                h = (r - 1) * nbytes / (req_a - r * req_b) if req_a > r * req_b else math.inf
                pairs.append({"shape": (N, K), "a": a.key, "b": b.key, "ctas_per_sm": occ, "launches": len(full),
                              "ratio": r, "overhead_bytes": h})
    if not pairs:
        raise ValueError(f"no pair of configs (same tile, CTAs/SM and K depth in flight, 2+ stages in flight, BLOCK_K "
                         f"rows of A shorter than a line in one of them) measured "
                         f"at a full wave in {list(map(str, paths))}: run validation/scripts/collect_h200_requests.sh")
    return {"pairs": pairs, "overhead_bytes": statistics.median(p["overhead_bytes"] for p in pairs)}


def _show(r: dict) -> None:
    for p in r["pairs"]:
        print(f"{p['a']} / {p['b']} ({p['ctas_per_sm']} CTAs/SM, N x K = {p['shape'][0]} x {p['shape'][1]}, "
              f"{p['launches']} full-wave launches): time ratio {p['ratio']:.3f} -> {p['overhead_bytes']:.1f} B a request")
    print(f"L2 request overhead: {r['overhead_bytes']:.1f} B a request (median of {len(r['pairs'])} pairs)")


def main(argv: list[str] | None = None) -> int:
    return derivation_main(argv, "python3 -m validation.l2_requests", __doc__, request_overhead, _show)


if __name__ == "__main__":
    raise SystemExit(main())
