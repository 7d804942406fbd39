"""`wavetune specs ...`: list the shipped GPUs, show one with every value's status and source, and
run the occupancy calculator. Registered into the `wavetune` command by wavetune/cli.py."""

from __future__ import annotations

import argparse
import json
import sys

from hwspecs import occupancy as occ_mod
from hwspecs.spec import GPUSpec, list_gpus, load_gpu


def register(subparsers) -> None:
    p = subparsers.add_parser("specs", help="GPU hardware specs: list, show, occupancy",
                              description="Sourced GPU hardware specs shipped in hwspecs/data.")
    p.set_defaults(func=lambda args: (p.print_help(sys.stderr), 2)[1])
    sub = p.add_subparsers(dest="specs_command", metavar="SUBCOMMAND")

    lp = sub.add_parser("list", help="one line per known GPU")
    lp.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    lp.set_defaults(func=cmd_list)

    sp = sub.add_parser("show", help="every value of one GPU with its status and source")
    sp.add_argument("gpu", metavar="ID", help="id, alias or device name (e.g. h200, 'NVIDIA H200')")
    sp.add_argument("--json", action="store_true", help="print the spec as JSON")
    sp.set_defaults(func=cmd_show)

    op = sub.add_parser("occupancy", help="CTAs per SM of a kernel on one GPU")
    op.add_argument("gpu", metavar="ID")
    op.add_argument("--warps", type=int, required=True, help="warps per CTA (wavefronts on AMD)")
    op.add_argument("--regs", type=int, required=True, help="registers per thread (VGPRs incl. AGPRs on AMD)")
    op.add_argument("--smem", type=int, required=True, help="shared memory (LDS) bytes per CTA")
    op.add_argument("--barriers", type=int, default=1, help="block barriers per CTA (CC >= 9)")
    op.add_argument("--json", action="store_true")
    op.set_defaults(func=cmd_occupancy)


def _summary(spec: GPUSpec) -> dict:
    return {"id": spec.id, "name": spec.name, "vendor": spec.vendor, "arch": spec.arch.name,
            "sm_count": spec.sm_count, "boost_clock_hz": spec.boost_clock_hz, "l2_bytes": spec.l2_bytes,
            "dram_bandwidth_bytes_per_s": spec.dram_bandwidth_bytes_per_s,
            "bf16_tensor_peak_flops": spec.tensor_peak_flops.get("bf16")}


def cmd_list(args: argparse.Namespace) -> int:
    rows = [_summary(load_gpu(g)) for g in list_gpus()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    table = [("id", "name", "arch", "SMs", "boost MHz", "L2 MiB", "DRAM GB/s", "bf16 TFLOP/s")]
    for r in rows:
        bf16 = r["bf16_tensor_peak_flops"]
        table.append((r["id"], r["name"], r["arch"], str(r["sm_count"]), f"{r['boost_clock_hz'] / 1e6:.0f}",
                      f"{r['l2_bytes'] / 2**20:g}", f"{r['dram_bandwidth_bytes_per_s'] / 1e9:.0f}",
                      f"{bf16 / 1e12:.1f}" if bf16 else "-"))
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        print("  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip())
    return 0


def _show_lines(obj, prefix: str = "") -> list[str]:
    """'key = value  [status] source' for every sourced value of a GPUSpec or ArchLimits."""
    lines = []
    for key, (status, source) in obj.sources.items():
        if "." in key:
            table, dtype = key.split(".", 1)
            value = getattr(obj, table)[dtype]
        else:
            value = getattr(obj, key)
        lines.append(f"{prefix}{key} = {value:g}  [{status}] {source}" if isinstance(value, float)
                     else f"{prefix}{key} = {value}  [{status}] {source}")
    return lines


def cmd_show(args: argparse.Namespace) -> int:
    spec = load_gpu(args.gpu)
    if args.json:
        print(json.dumps(spec.to_dict(), indent=2))
        return 0
    print(f"{spec.id}: {spec.name} ({spec.vendor}, {spec.arch.name})")
    if spec.aliases:
        print(f"aliases: {', '.join(spec.aliases)}")
    if spec.note:
        print(f"note: {spec.note}")
    print("\n".join(_show_lines(spec)))
    print(f"\narch {spec.arch.name}:")
    print("\n".join(_show_lines(spec.arch, "  ")))
    return 0


def cmd_occupancy(args: argparse.Namespace) -> int:
    spec = load_gpu(args.gpu)
    occ = occ_mod.occupancy(spec, num_warps=args.warps, regs_per_thread=args.regs, smem_bytes=args.smem,
                            block_barriers=args.barriers)
    if args.json:
        print(json.dumps({"gpu": spec.id, "ctas_per_sm": occ.ctas_per_sm, "limiter": occ.limiter,
                          "limiters": list(occ.limiters), "limits": dict(occ.limits), "reason": occ.reason,
                          "warps_per_sm": occ.warps_per_sm, "occupancy_fraction": occ.occupancy_fraction}))
    else:
        print(occ_mod.explain(occ))
    return 0
