"""wavetune: wave-aware launch-config selection for tile-based GPU kernels.

This package holds what the other packages share: the launch-config and problem types
(`wavetune.config`), JSONL record handling (`wavetune.records`) and the `wavetune` command (`wavetune.cli`).
"""

__version__ = "0.1.0"
