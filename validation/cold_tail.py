"""Do CTAs that read cold tiles slow each other down? A probe of the launch's tail (session 28).

A lone CTA of a partial wave after full ones takes longer the more CTAs share that tail, at a steady clock (per-CTA
traces, NOTES.md session 28: 64x64x64 s4 on 5120^2 31.4k cycles with 4 tail CTAs, 42.8k with 84; 64x128x64 GROUP_M 1
51.9k with 4, 64.8k with 44), where the simulator moves it only by its chip-load slowdown. This probe runs n programs
of one CTA per SM (n <= the SMs: no SM holds two), each on its own tile, in the grouped order (`band`: consecutive
tiles, as a tail takes them) or scattered over C (`spread`), after a clean L2 eviction before every launch (`cold`:
each tile's first read waits on DRAM) and with A and B resident (`warm`, the control), and reports each CTA's time
against n. If the tail's slowdown is DRAM waits queueing under the tail's own load, the cold CTA time grows with n
and the warm one does not; if it is the reads concentrating on a few columns, `band` grows more than `spread`.

    python3 -m validation.cold_tail collect --out FILE       (GPU)
    python3 -m validation.cold_tail report FILE              (anywhere)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

# (N, K, M, config): the tails of NOTES session 28 (C's tiles over which the programs are placed)
CASES = ((5120, 5120, 704, "64x128x64_g1_w4_s3"), (5120, 5120, 384, "64x64x64_g8_w4_s4"))
PROGRAMS = (4, 8, 16, 32, 44, 66, 88, 132)
REPS = 7


def collect(out: Path, reps: int = REPS, log=print) -> None:
    from validation.gpc_scope import scatter_stride
    from validation.kernels.gemm import grid_size
    from validation.kernels.gemm_trace import case_operands, local_gpu_spec, warm_trace_medians
    from validation.profiler import _Bench

    spec = local_gpu_spec()
    bench = _Bench("cuda", "read")
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as f:
        for N, K, M, key, cfg, (a, b, c) in case_operands(CASES):
            G = grid_size(M, N, cfg)
            for order, stride in (("band", 1), ("spread", scatter_stride(G))):
                for n in (p for p in PROGRAMS if p <= spec.sm_count):
                    for l2, flush in (("cold", bench.flush), ("warm", None)):
                        rec = {"N": N, "K": K, "M": M, "config": key, "order": order, "stride": stride, "programs": n,
                               "cache": l2, **warm_trace_medians(a, b, cfg, c, n, reps, stride, flush=flush),
                               "time": time.strftime("%Y-%m-%dT%H:%M:%S")}
                        f.write(json.dumps(rec) + "\n")
                        f.flush()
                log(f"{key} {order}: done")


def load_records(path: str | Path) -> list[dict]:
    from wavetune.records import read_probe_records

    return read_probe_records(path, ("config", "order", "programs", "cache", "cta_ns", "cta_cycles", "max_ctas_on_an_sm"),
                              "python3 -m validation.cold_tail collect --out FILE")


def report_rows(path: str | Path) -> list[dict]:
    """Per record: its CTA time over that of the fewest programs of its (config, order, cache)."""
    recs = load_records(path)
    base: dict[tuple, dict] = {}
    for r in sorted(recs, key=lambda r: r["programs"]):
        base.setdefault((r["config"], r["order"], r["cache"]), r)
    return [{**r, "vs_fewest": r["cta_ns"] / base[(r["config"], r["order"], r["cache"])]["cta_ns"],
             "cycles_vs_fewest": r["cta_cycles"] / base[(r["config"], r["order"], r["cache"])]["cta_cycles"]}
            for r in recs]


def main(argv: list[str] | None = None) -> int:
    from validation.probe_cli import collect_or_explain

    ap = argparse.ArgumentParser(prog="python3 -m validation.cold_tail", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="time n one-per-SM programs on cold and warm tiles (needs an NVIDIA GPU)")
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--reps", type=int, default=REPS)
    r = sub.add_parser("report", help="each CTA time against the fewest programs'")
    r.add_argument("file")
    a = ap.parse_args(argv)
    if a.cmd == "collect":
        return collect_or_explain("validation.cold_tail", lambda: collect(a.out, a.reps))
    try:
        rows = report_rows(a.file)
    except (ValueError, FileNotFoundError) as e:
        print(f"validation.cold_tail: {e}", file=sys.stderr)
        return 2
    for x in sorted(rows, key=lambda x: (x["config"], x["order"], x["cache"], x["programs"])):
        print(f"{x['config']:22s} {x['order']:6s} {x['cache']:4s} {x['programs']:4d} programs: CTA {x['cta_ns'] / 1e3:6.1f} us "
              f"(x{x['vs_fewest']:.2f}), {x['cta_cycles']:8.0f} cycles (x{x['cycles_vs_fewest']:.2f}), "
              f"at most {x['max_ctas_on_an_sm']} on an SM")
    return 0


if __name__ == "__main__":
    sys.exit(main())
