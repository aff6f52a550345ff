"""Vector-core helpers the rules share: tiles, casts, math, gathers, row work, transposes, exact ints."""
