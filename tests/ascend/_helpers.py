"""Shared by the ascend tests of shape ops and permutes: input data and a launch that records warnings."""

from __future__ import annotations

import warnings

import numpy as np


def data(rng, shape, dtype):
    """Random data of `dtype`: integers in [-1000, 1000), floats standard normal."""
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-1000, 1000, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def last_counters(kernel, args, **meta) -> dict:
    """The AscendC model's counters of the last launch of `kernel` with these arguments on ascend (the
    launcher of that specialization keeps them: `last_counters`, model/launch.py)."""
    return kernel.warmup(*args, target="ascend", **meta).launcher.last_counters


def run_ascend(kernel, args, **meta) -> list[str]:
    """Launch `kernel` on one ascend program; the texts of the warnings it gave."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        kernel[(1,)](*args, target="ascend", **meta)
    return [str(x.message) for x in w]
