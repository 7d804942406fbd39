"""Real-hardware side of wavetune: the Triton kernels, the GPU profiler, measurement files,
calibration of the simulator and the validation suite. Only `validation.kernels` and the profiler
need torch/triton; measurement loading, calibration and replay run on any machine."""
