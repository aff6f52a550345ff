"""A test-only target: the simulator with one perturbed lowering rule (arith.divf * 1.01)."""

import dataclasses

from xblock.sim.backend import BACKEND as SIM
from xblock.sim.backend import _load
from xblock.sim.rules import SIM_RULES


def _bad_div(ex, ins, a, b):
    return (SIM_RULES["arith.divf"](ex, ins, a, b) * 1.01).astype(a.dtype)


BACKEND = dataclasses.replace(SIM, name="sim-faulty",
                              load=lambda asm, md: _load(asm, md, {"arith.divf": _bad_div}))
