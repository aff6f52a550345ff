"""`xblock.profile`: run a kernel once on the AscendC CPU model and estimate its time per pipe.

The estimate comes from `cost.py` (documented constants, several of them assumptions): it ranks
variants and names the limiting pipe; it is not a hardware measurement.
"""

from __future__ import annotations

import numpy as np

from ...common import services
from . import cost


def minimum_gm_bytes(args) -> int:
    """Every array argument moved once: inputs read once, outputs written once."""
    return int(sum(a.nbytes for a in args if isinstance(a, np.ndarray) or hasattr(a, "nbytes")))


def profile(kernel, grid, *args, target: str = "ascend", soc: str = "910B3", **meta) -> cost.Profile:
    """Run `kernel[grid](*args, **meta)` on the AscendC CPU model and return its cost-model Profile.

    Args:
        kernel: an `@xblock.jit` kernel (or a plain function, jitted here).
        grid: the launch grid (int, tuple, or callable of the meta-parameters), as for a launch.
        *args, **meta: the launch's arguments and constexprs / target options. Outputs are written.
        target: only "ascend" has a cost model.
        soc: the SoC profile whose constants price the counters (cost.SOC_CONSTANTS).

    Returns a `cost.Profile` (`.counters`, `.pipes`, `.bound`, `.estimate_us`, `.floor_us`).
    """
    if target != "ascend":
        raise cost.ProfileError(f"xblock.profile: no cost model for target '{target}' (only 'ascend')")
    cost.soc_cost(soc)  # an unknown soc fails before anything is compiled
    k = services.jit(kernel)  # the runtime's jit (an @xblock.jit kernel stays as it is)
    ck = k.warmup(*args, target="ascend", soc=soc, **meta)
    k[grid](*args, target="ascend", soc=soc, **meta)  # the launch of `ck`: its launcher keeps the counters
    totals = dict(ck.launcher.last_counters)
    blocks = [dict(b) for b in ck.launcher.last_block_counters]
    return cost.estimate(ck.metadata, totals, blocks, minimum_gm_bytes(args), soc)
