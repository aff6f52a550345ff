"""A test-only target for the fuzzer's self-check: the simulator with small planted faults.

`XBLOCK_PLANTED_FAULT` picks the fault: "mulf" (float products off by 2**-10, relative), "addi"
(integer sums off by one where the exact sum is 3 mod 7), "exp" (exp off by 1e-3, relative),
"hang" (the launch never returns), "abort" (the process aborts, as a crashing native kernel would).
"""

import dataclasses
import os
import time

import numpy as np

from xblock.sim.backend import BACKEND as SIM
from xblock.sim.backend import _load
from xblock.sim.rules import SIM_RULES


def _mulf(ex, ins, a, b):
    r = SIM_RULES["arith.mulf"](ex, ins, a, b)
    return (np.asarray(r, np.float64) * (1 + 2.0 ** -10)).astype(np.asarray(r).dtype)


def _addi(ex, ins, a, b):
    r = SIM_RULES["arith.addi"](ex, ins, a, b)
    r = np.asarray(r)
    if r.dtype == np.bool_:
        return r
    return np.where(r % 7 == 3, r + 1, r).astype(r.dtype)


def _exp(ex, ins, a):
    r = np.asarray(SIM_RULES["math.exp"](ex, ins, a))
    return (r.astype(np.float64) * 1.001).astype(r.dtype)


FAULTS = {"mulf": {"arith.mulf": _mulf}, "addi": {"arith.addi": _addi}, "exp": {"math.exp": _exp}}


def _planted_load(asm, md):
    fault = os.environ.get("XBLOCK_PLANTED_FAULT", "addi")
    if fault == "hang":
        def launch(grid, args):
            while True:
                time.sleep(1)
        return launch
    if fault == "abort":
        def launch(grid, args):
            os.abort()
        return launch
    return _load(asm, md, FAULTS[fault])


BACKEND = dataclasses.replace(SIM, name="sim-planted", load=_planted_load)
