"""The cost of the kernel Triton compiles for shapes whose N or K is not a multiple of 16, derived from
measurements (the source of the GEMM model's unaligned_a_element_cycles, unaligned_b_element_cycles and
spill_word_cycles priors, wavesim/data/gemm_priors.toml).

Triton specializes K (A's row stride) and N (B's and C's) on divisibility by 16; where one is not, that operand
is loaded two bytes at a time into registers and stored to shared memory (LDG.E.U16 + STS.U16, no cp.async; B's
stores transposed into a K-major layout), so no stage is loaded ahead of the MMA, and the kernel often needs 255
registers and spills (wavesim/kernels/gemm.py). The model gives each K step of such a kernel no stage in flight,
a latency per element of A's tile per lane of the warp schedulers in use and per spilled word, and SM-shared work
per element of B's tile. This fits the three costs (least squares of the log time ratio, robust) on the shapes
where exactly one operand is unaligned, with the rest of the model as calibrated, and scores the shapes where both
are unaligned, which the fit never sees. Each one-operand layer left out in turn, it also reports how well the
others predict it.

    python3 -m validation.unaligned --gpu h200 validation/data/h200/fresh14/unaligned_study.jsonl \
        validation/data/h200/fresh14/llm_fresh14.jsonl validation/data/h200/fresh16/unaligned_fresh16.jsonl \
        validation/data/h200/fresh17/unaligned_fresh17.jsonl validation/data/h200/fresh21/unaligned_fresh21.jsonl
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from validation.derivation import derivation_main, fit_costs, load_records, score
from wavesim.calibration import load_calibration
from wavesim.kernels.gemm import GemmParams, simulate_batch, unaligned_strides

FITTED = ("unaligned_a_element_cycles", "unaligned_b_element_cycles", "spill_word_cycles")


def _class(N: int, K: int) -> str:
    return "+".join(sorted({"K": "A", "N": "B"}[s] for s in unaligned_strides(N, K)))


def load_unaligned(gpu: str, paths: list[str | Path], dtype: str = "bf16"):
    """(batch, measured seconds, shape, class and config of each record) of the unaligned shapes' records whose
    config launches (configs that cannot launch are skipped, as calibration does)."""
    b, meas, shapes, configs = load_records(
        gpu, paths, dtype, lambda m: bool(unaligned_strides(m.problem.N, m.problem.K)),
        " of shapes with N or K not a multiple of 16", "validation/scripts/collect_h200_session14_extra.sh")
    return b, meas, shapes, [_class(s[1], s[2]) for s in shapes], configs


def derive(gpu: str, paths: list[str | Path], dtype: str = "bf16", calibration: str = "auto") -> dict:
    b, meas, shapes, classes, configs = load_unaligned(gpu, paths, dtype)
    base = load_calibration(calibration, gpu) or GemmParams.priors()
    cls = np.array(classes)
    single = cls != "A+B"
    if not (np.any(cls == "A") and np.any(cls == "B")):
        raise ValueError("the fit needs shapes with A alone unaligned (K % 16 != 0) and with B alone (N % 16 != 0)")
    fitted = fit_costs(b, meas, base, single, FITTED)
    sim = simulate_batch(b, fitted).makespan_s
    out = {"gpu": gpu, "records": int(meas.size), "fitted_on": "shapes with one unaligned operand",
           "costs": {f: getattr(fitted, f) for f in FITTED},
           "by_class": {c: score(sim, meas, shapes, configs, cls == c) for c in sorted(set(classes))}}
    # each single-operand shape left out in turn (A's cost stays identified by the other A shapes, if any)
    held = {}
    for s in sorted({s[1:] for s, c in zip(shapes, classes) if c != "A+B"}):
        rest = single & np.array([x[1:] != s for x in shapes])
        if len(set(cls[rest])) < 2:
            continue
        p = fit_costs(b, meas, base, rest, FITTED)
        held[f"{s[0]}x{s[1]}"] = score(simulate_batch(b, p).makespan_s, meas, shapes, configs,
                                       np.array([x[1:] == s for x in shapes]))
    out["held_out_shapes"] = held
    return out


def _line(name: str, s: dict) -> str:
    return (f"  {name:12s} {s['shapes']:3d} shapes: regret {s['regret_geomean']:.3f} (worst {s['regret_worst']:.2f}), "
            f"tau {s['tau_median']:.2f}, median |log error| {s['log_err_median']:.2f}")


def _show(r: dict) -> None:
    print(f"{r['records']} records, costs fitted on {r['fitted_on']}: "
          + ", ".join(f"{k} = {v:.3g}" for k, v in r["costs"].items()))
    print("with these costs, by unaligned operand (A+B: never fitted):")
    for c, s in r["by_class"].items():
        print(_line(c, s))
    if r["held_out_shapes"]:
        print("each one-operand layer predicted by costs fitted on the others:")
        for k, s in r["held_out_shapes"].items():
            print(_line(k, s))


def main(argv: list[str] | None = None) -> int:
    return derivation_main(argv, "python3 -m validation.unaligned", __doc__, derive, _show)


if __name__ == "__main__":
    raise SystemExit(main())
