"""The Cube unit: dot patterns, tile planning, L1/L0 operand paths, mixed AIC/AIV kernels."""
