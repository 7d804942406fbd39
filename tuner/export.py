"""Export a DualTable in the JSON format vLLM's and SGLang's Triton kernels read.

One file per (N, K): ``N={N},K={K},device_name={device}.json`` (vLLM's fused-MoE files are named
``E=..,N=..,device_name=...json``; the dense form drops E), an object keyed by M as a string, each value
``{"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"}``.
At runtime those engines take the entry of the nearest M key, so the keys are vLLM's benchmark batch
sizes plus the M values of the requested shapes.
"""

from __future__ import annotations

import json
from pathlib import Path

from wavetune.config import GemmProblem, LaunchConfig

# vLLM benchmarks/kernels/benchmark_moe.py default batch sizes.
VLLM_BATCH_SIZES = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096)


def vllm_entry(cfg: LaunchConfig) -> dict[str, int]:
    return {"BLOCK_SIZE_M": cfg.BLOCK_M, "BLOCK_SIZE_N": cfg.BLOCK_N, "BLOCK_SIZE_K": cfg.BLOCK_K,
            "GROUP_SIZE_M": cfg.GROUP_M, "num_warps": cfg.num_warps, "num_stages": cfg.num_stages}


def from_vllm_entry(d: dict[str, int]) -> LaunchConfig:
    return LaunchConfig(d["BLOCK_SIZE_M"], d["BLOCK_SIZE_N"], d["BLOCK_SIZE_K"], d.get("GROUP_SIZE_M", 8),
                        d.get("num_warps", 4), d.get("num_stages", 3))


def device_name_of(gpu_id: str) -> str:
    """vLLM's device_name: torch.cuda.get_device_name() with spaces replaced by underscores."""
    import hwspecs

    return hwspecs.load_gpu(gpu_id).name.replace(" ", "_")


def vllm_filename(N: int, K: int, device_name: str) -> str:
    return f"N={N},K={K},device_name={device_name}.json"


def export_vllm(table, shapes: list[GemmProblem], out_dir: str | Path, *, device_name: str | None = None,
                m_values: list[int] | None = None) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    device = device_name or device_name_of(table.gpu)
    by_nk: dict[tuple[int, int], set[int]] = {}
    for p in shapes:
        by_nk.setdefault((p.N, p.K), set()).add(p.M)
    paths = []
    for (N, K), ms in sorted(by_nk.items()):
        keys = sorted(set(m_values) if m_values else set(VLLM_BATCH_SIZES) | ms)
        body = {str(m): vllm_entry(table.select_mnk(m, N, K)) for m in keys}
        path = out / vllm_filename(N, K, device)
        path.write_text(json.dumps(body, indent=4) + "\n")
        paths.append(path)
    return paths


def nearest_m(table: dict[str, dict], M: int) -> dict:
    """vLLM's lookup: the entry whose M key is nearest to M."""
    return table[min(table, key=lambda k: (abs(int(k) - M), int(k)))]
