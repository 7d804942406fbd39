"""The cost of copying B transposed in the fp32 (tf32) GEMM kernel, derived from measurements (the source of the
GEMM model's tf32_b_element_cycles prior, wavesim/data/gemm_priors.toml).

With fp32 operands tl.dot runs tf32 wgmma on sm_90 wherever it runs bf16 wgmma (wavesim/kernels/gemm.py
uses_wgmma), but wgmma reads only 16-bit operands transposed, and the GEMM's B is N-major: the compiler copies B's
tile into K-major shared memory one 4-byte element per lane (LDGSTS.E, BK x BN of them per K step, where A gets
16-byte copies). The model adds tf32_b_element_cycles per element of B's tile to the SM-shared work of each K step.
This fits that one cost (least squares of the log time ratio, soft L1) on the fp32 records with the rest of the
model as calibrated (on bf16), scores every fp32 shape with it, and each (N, K) layer from a fit on the others.

    python3 -m validation.tf32 --gpu h200 --dtype fp32 validation/data/h200/holdout/llm_fp32.jsonl
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from validation.derivation import derivation_main, fit_costs, load_records, score
from wavesim.calibration import load_calibration
from wavesim.kernels.gemm import GemmParams, simulate_batch

FITTED = ("tf32_b_element_cycles",)


def derive(gpu: str, paths: list[str | Path], dtype: str = "fp32", calibration: str = "auto") -> dict:
    b, meas, shapes, configs = load_records(gpu, paths, dtype, hint="validation/scripts/collect_h200_fp32_fresh18.sh")
    if not b.transposed_b.any():
        raise ValueError(f"no {dtype} record on {gpu} copies B transposed (only wgmma configs with operands other "
                         f"than bf16/fp16 do): nothing to fit")
    base = load_calibration(calibration, gpu) or GemmParams.priors()
    everything = np.ones(meas.size, dtype=bool)
    fitted = fit_costs(b, meas, base, everything, FITTED)
    layers = sorted({s[1:] for s in shapes})
    held = {}
    for layer in layers if len(layers) > 1 else []:
        mine = np.array([s[1:] == layer for s in shapes])
        p = fit_costs(b, meas, base, ~mine, FITTED)
        held[f"{layer[0]}x{layer[1]}"] = {"cost": p.tf32_b_element_cycles,
                                          **score(simulate_batch(b, p).makespan_s, meas, shapes, configs, mine)}
    return {"gpu": gpu, "dtype": dtype, "records": int(meas.size), "cost": fitted.tf32_b_element_cycles,
            "before": score(simulate_batch(b, base).makespan_s, meas, shapes, configs, everything),
            "after": score(simulate_batch(b, fitted).makespan_s, meas, shapes, configs, everything),
            "held_out_layers": held}


def _line(name: str, s: dict) -> str:
    return (f"  {name:22s} {s['shapes']:3d} shapes: regret {s['regret_geomean']:.3f} (worst {s['regret_worst']:.2f}), "
            f"tau {s['tau_median']:.2f}, median |log error| {s['log_err_median']:.2f}")


def _show(r: dict) -> None:
    print(f"{r['records']} {r['dtype']} records: tf32_b_element_cycles = {r['cost']:.3f}")
    print(_line("with the prior", r["before"]))
    print(_line("with the fitted cost", r["after"]))
    for k, s in r["held_out_layers"].items():
        print(_line(f"{k} (cost {s['cost']:.3f} from the others)", s))


def main(argv: list[str] | None = None) -> int:
    return derivation_main(argv, "python3 -m validation.tf32", __doc__, derive, _show)


if __name__ == "__main__":
    raise SystemExit(main())
