"""`xblock.profile`: run a kernel on the AscendC CPU model and estimate its time per pipe.

The estimate comes from `cost.py` (constants from the dev kit's tables and published 910B
measurements, each with its source; some assumptions): it ranks variants and names the limiting
pipe; it is not a hardware measurement.

**Sampling.** A launch at a real size (a 2048^3 matmul, an 8192^2 add) takes minutes to hours on
the CPU model, which runs every block. With `sample=True` (the default above `SAMPLE_BYTES` of
arrays, or for any Cube kernel above `SAMPLE_CUBE_BYTES`), only a few blocks run: block 0 (the most
programs), the last block (the fewest), and the blocks that hold the launch's last program and the
last program of each grid axis (the boundary tiles of a row-major or 1-D order). Every block not run
is priced as the run block with its number of programs (block 0 or the last); the launch's totals
(GM bytes, L2 reuse) are the sum over all blocks so priced. The Cube's arithmetic is skipped
(`XBEMU_CUBE_COUNT_ONLY=1`: every check and counter still runs) and the outputs are not written.
The Profile says so (`sampled_blocks`). Exact when every block with the same number of programs
does the same work; tests/ascend/model/test_profile_sampling.py compares it with full runs.
"""

from __future__ import annotations

import ctypes
import os

import numpy as np

from ....host import normalize_grid
from ...common import services
from ...common.native import load_library
from ..options import STATUS_SLOT, launch_blocks
from . import cost, launch, profile_shim

SAMPLE_BYTES = 16 * 2**20  # arrays above this: sample by default
SAMPLE_CUBE_BYTES = 2 * 2**20  # the same for kernels with a Cube section (their model run is the Cube's arithmetic)


def minimum_gm_bytes(args) -> int:
    """Every array argument moved once: inputs read once, outputs written once."""
    return int(sum(a.nbytes for a in args if isinstance(a, np.ndarray) or hasattr(a, "nbytes")))


def profile(kernel, grid, *args, target: str = "ascend", soc: str = "910B3", sample: bool | None = None,
            **meta) -> cost.Profile:
    """Run `kernel[grid](*args, **meta)` on the AscendC CPU model and return its cost-model Profile.

    Args:
        kernel: an `@xblock.jit` kernel (or a plain function, jitted here).
        grid: the launch grid (int, tuple, or callable of the meta-parameters), as for a launch.
        *args, **meta: the launch's arguments and constexprs / target options. Outputs are written,
            unless the launch is sampled.
        target: only "ascend" has a cost model.
        soc: the SoC profile whose constants price the counters (cost.SOC_CONSTANTS).
        sample: run only a representative subset of the blocks and extrapolate (module docstring);
            None: when the arrays exceed SAMPLE_BYTES (SAMPLE_CUBE_BYTES for a Cube kernel).

    Returns a `cost.Profile` (`.counters`, `.pipes`, `.bound`, `.estimate_us`, `.floor_us`,
    `.sampled_blocks`).
    """
    if target != "ascend":
        raise cost.ProfileError(f"xblock.profile: no cost model for target '{target}' (only 'ascend')")
    cost.soc_cost(soc)  # an unknown soc fails before anything is compiled
    k = services.jit(kernel)  # the runtime's jit (an @xblock.jit kernel stays as it is)
    if getattr(k, "__xblock_tuner__", False):  # @heuristics: the kernel under it, its values filled in
        k, meta = k.resolve(args, meta)
    ck = k.warmup(*args, target="ascend", soc=soc, **meta)
    md = ck.metadata
    params = set(k.source.params)
    bound = k.bind(args, {n: v for n, v in meta.items() if n in params})
    runtime = k.specialize(bound)[2]
    grid3 = normalize_grid(grid, bound)
    coarse = launch.coarse_grid(md, grid3, {})
    programs = coarse[0] * coarse[1] * coarse[2]
    blocks = launch_blocks(md, programs, {n: int(a.nbytes) for n, t, a in zip(md["arg_names"], md["arg_types"], args)
                                          if t.startswith("*") and hasattr(a, "nbytes")})
    min_bytes = minimum_gm_bytes(args)
    if sample is None:
        sample = min_bytes > (SAMPLE_CUBE_BYTES if md.get("cube") else SAMPLE_BYTES)
    picked = sample_blocks(programs, blocks, coarse) if sample else []
    if len(picked) >= blocks:
        picked = []  # every block would run: a full run
    so = profile_shim.build(ck.asm["cpp"], md)
    lib = load_library(so, launch.KIND)
    run = launch.load({"so": so, "cpp": ck.asm["cpp"]}, md)
    sel = (ctypes.c_int64 * max(1, len(picked)))(*picked)
    lib.xblock_profile_select(sel, len(picked))
    if picked:
        work = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in runtime]
        old = os.environ.get("XBEMU_CUBE_COUNT_ONLY")
        os.environ["XBEMU_CUBE_COUNT_ONLY"] = "1"
        try:
            run(grid3, work)
        finally:
            if old is None:
                del os.environ["XBEMU_CUBE_COUNT_ONLY"]
            else:
                os.environ["XBEMU_CUBE_COUNT_ONLY"] = old
    else:
        run(grid3, list(runtime))
        # the launch ran in full: the kernel's own launcher reports it, as if it had run it
        ck.launcher.last_counters, ck.launcher.last_block_counters = run.last_counters, run.last_block_counters
    totals = dict(run.last_counters)
    entries = [dict(e) for e in run.last_block_counters if not picked or e["block"] in picked]
    for e in entries:
        out = (ctypes.c_uint64 * len(profile_shim.FIELDS))()
        lib.xblock_profile_counters(ctypes.c_int64(e["block"]), ctypes.c_int64(CORE_CODES[e["core"]]), out,
                                    ctypes.c_int64(len(profile_shim.FIELDS)))
        e.update(zip(profile_shim.FIELDS, map(int, out)))
    reads = _read_sizes(lib, runtime, md, blocks)
    if picked:
        special = boundary_blocks(programs, blocks, coarse) - {0, blocks - 1}
        entries, totals = extrapolate(entries, totals, programs, blocks, reads, special)
    else:
        totals["buffer_reads"] = reads
    p = cost.estimate(md, totals, entries, min_bytes, soc)
    if picked:
        p.sampled_blocks = sorted(picked)
        p.sampled_programs = sum(len(range(b, programs, blocks)) for b in picked)
    return p


CORE_CODES = {"AIV": 0, "AIC": 1, "AIV0": 2, "AIV1": 3}  # emu_launch.h's core codes (launch.CORE_NAMES)


SAMPLE_SPREAD = 6  # blocks spread evenly over the launch, beside the first, the last and the boundary ones


def boundary_blocks(programs: int, blocks: int, grid: tuple) -> set:
    """The blocks holding the last program of the launch and of each grid axis (pid = program index
    along x fastest, as the kernels' grid loop counts): the boundary tiles of a row-major or 1-D order."""
    gx, gy, _ = grid
    last = {programs - 1, gx - 1, (gy - 1) * gx, gx * gy - 1}
    return {p % blocks for p in last if 0 <= p < programs}


def sample_blocks(programs: int, blocks: int, grid: tuple) -> list:
    """The blocks a sampled launch runs: 0, the last, the boundary blocks, and SAMPLE_SPREAD spread
    evenly between them (programs that differ by their addresses: row alignment, strides)."""
    spread = {round(i * (blocks - 1) / (SAMPLE_SPREAD + 1)) for i in range(1, SAMPLE_SPREAD + 1)}
    return sorted({0, blocks - 1} | boundary_blocks(programs, blocks, grid) | spread)


def extrapolate(entries: list, totals: dict, programs: int, blocks: int, reads: list,
                special: set = frozenset()) -> tuple[list, dict]:
    """Per-core entries of every block of the launch, and its totals, from the sampled blocks' entries:
    a block not run takes the mean of the run blocks with its number of programs, the boundary blocks
    (`special`) left out where others exist (the module docstring). `reads`: (bytes read in the sampled
    run, size) per GM buffer."""
    by_block: dict = {}
    for e in entries:
        by_block.setdefault(e["block"], []).append(e)
    count = {b: len(range(b, programs, blocks)) for b in range(blocks)}
    classes: dict = {}
    for b in sorted(by_block):
        classes.setdefault(count[b], []).append(b)
    full = []
    for b in range(blocks):
        if b in by_block:
            full += [dict(e, block=b) for e in by_block[b]]
            continue
        same = classes.get(count[b]) or classes[max(classes)]
        reps = [r for r in same if r not in special] or same
        full += [_mean([by_block[r][i] for r in reps], b) for i in range(len(by_block[reps[0]]))]
    sampled_reads = sum(e["datacopy_in_bytes"] + e["gm_to_l1_bytes"] for e in entries)
    all_reads = sum(e["datacopy_in_bytes"] + e["gm_to_l1_bytes"] for e in full)
    scale = all_reads / sampled_reads if sampled_reads else 1.0
    out = dict(totals, block_dim=blocks, programs=programs)
    for k in ("gm_read_bytes", "gm_write_bytes", "vector_instructions", "vector_repeats", "scalar_ub_accesses",
              "scalar_gm_accesses"):
        out[k] = sum(e[k] for e in full)
    out["unique_read_bytes"] = int(sum(min(size, r * scale) for r, size in reads))
    out["buffer_reads"] = [(int(r * scale), size) for r, size in reads]
    return full, out


def _mean(cores: list, block: int) -> dict:
    """The element-wise mean of the counters of like cores (the same core of several blocks)."""
    out = dict(cores[0], block=block)
    for k, v in cores[0].items():
        if k not in ("block", "core") and isinstance(v, (int, float)):
            out[k] = round(sum(c[k] for c in cores) / len(cores))
    return out


def _read_sizes(lib, runtime, md: dict, blocks: int) -> list:
    """(bytes read, size) of each GM buffer of the last launch, in the launcher's order."""
    sizes = [a.nbytes for a, t in zip(runtime, md["arg_types"]) if t.startswith("*")]
    for extra in launch.extra_gm_args(md):
        sizes.append(md["workspace_bytes"] * blocks if extra == "workspace" else blocks * STATUS_SLOT * 8)
    out = (ctypes.c_uint64 * max(1, len(sizes)))()
    lib.xblock_emu_region_reads(out, ctypes.c_int64(len(sizes)))
    return [(int(out[i]), s) for i, s in enumerate(sizes)]
