"""Kernels of the runtime tests, in a module worker processes can import (parallel compiles, races).

`case(size)` builds a launch of `tuned_add` for `xblock tune tests/runtime/kernels.py:tuned_add`.
"""

from __future__ import annotations

import numpy as np

import xblock
import xblock.language as xl
from xblock.testing import Case


@xblock.jit
def add_one(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    xl.store(out_ptr + offs, xl.load(x_ptr + offs, mask=m) + 1, mask=m)


def _add_one(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    xl.store(out_ptr + offs, xl.load(x_ptr + offs, mask=m) + 1, mask=m)


TUNED_BLOCKS = (16, 32, 64, 128)
FAKE_TIMES = {16: 3.0, 32: 1.0, 64: 2.0, 128: 4.0}  # what the fixed timing function says of each config
BENCHED: list = []  # the BLOCK of each config the tuner runs, in order (the tuner's pre_hook)


def _record(kwargs, reset_only=False):
    if not reset_only:
        BENCHED.append(kwargs["BLOCK"])


def fixed_timing(kernel_call, quantiles=None):
    """A do_bench whose result depends only on the config: the choice is reproducible."""
    kernel_call()
    return FAKE_TIMES[BENCHED[-1]]


tuned_add = xblock.autotune([xblock.Config({"BLOCK": b}) for b in TUNED_BLOCKS], key=["n"], pre_hook=_record,
                            do_bench=fixed_timing)(xblock.jit(_add_one))


def grid(meta):
    return (xblock.cdiv(meta["n"], meta["BLOCK"]),)


def case(size, dtype=np.float32) -> Case:
    n = size if isinstance(size, int) else size[0]
    x = np.arange(n, dtype=dtype)
    return Case(tuned_add, grid, (x, np.zeros_like(x), n), {}, outputs={"out": 1}, expected={"out": x + 1})


def race(cache_dir: str, barrier, results) -> None:
    """One of the processes of the cache race: launch `add_one` on cpu at the same moment as the others."""
    import os

    os.environ["XBLOCK_CACHE_DIR"] = cache_dir
    x = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(x)
    barrier.wait()
    add_one[(xblock.cdiv(1000, 256),)](x, out, 1000, BLOCK=256, target="cpu")
    results.put(bool((out == x + 1).all()))
