"""The runtime: @jit and launches, compile(), the on-disk cache, bundles and the autotuner."""
