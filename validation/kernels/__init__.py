"""Triton kernels that the simulator models (need the `gpu` extra: torch and triton)."""
