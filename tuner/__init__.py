"""The WaveTune tuner: unified (G, L, w) mapping, wave-aware bilinear models fitted from sparse
samples (simulator or measurements), the dual table for runtime selection, baselines and exports.

Modules: mapping (coordinates, macro/micro split), model (WaveModel), sampling (anchors), sources
(simulator / measurements), tune (build_table), table (DualTable, select), baselines + evaluate
(strategies and the regret harness), export (vLLM/SGLang JSON), triton_integration (perf_model,
table_autotune), cli (tune, select, export, tune-eval). See tuner/README.md.
"""
