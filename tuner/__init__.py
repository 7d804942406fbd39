"""The WaveTune tuner: unified (G, L, w) mapping, wave-aware bilinear models fitted from sparse
samples (simulator or measurements), the dual table for runtime selection, baselines and exports."""
