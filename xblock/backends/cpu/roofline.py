"""The cpu target's roofline constants, for the autotuner's cost model (`backends/common/roofline.py`).

Measured on the 2-core x86-64 VM xblock is developed on (Intel Xeon, AVX-512; 2026-12-01, other
sessions' jobs running beside), with kernels compiled by this target (`docs/BENCHMARKS.md`,
"Autotune cold start", says how); one set of numbers for every host, except the core count,
which is read here. They rank configs of one kernel: the ratios matter, not the figures.
"""

from __future__ import annotations

from ..common.roofline import Roofline

BANDWIDTH = 25e9  # B/s: a 1M-element fp32 add (12 B a lane) on one thread: 25.6 GB/s; on two, 17-21 GB/s
LANE_OPS = 40e9  # lane ops/s, one core: 47e9 for a chain of fp32 a*x+1 (two ops a lane) over 1024-wide blocks
DOT_FLOPS = 30e9  # flop/s, one core: a 256^3 fp32 matmul runs at 55-61 Gflop/s on the two cores
PROGRAM_S = 5e-9  # one program: 65536 programs of 16 lanes take 0.1 ms more than 1024 of 1024 lanes
SPREAD_S = 40e-6  # a launch of more than one program hands the grid to the pool's threads: 45-50 us
OVERLAP = 0.5  # assumption: one thread overlaps part of its loads with its vector work


def roofline() -> Roofline:
    from .launch import cores

    n = cores()
    return Roofline(f"cpu, {n} cores (constants of xblock/backends/cpu/roofline.py)", n, BANDWIDTH, BANDWIDTH,
                    LANE_OPS, {("", ""): DOT_FLOPS}, PROGRAM_S, SPREAD_S, OVERLAP)
