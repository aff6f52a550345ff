"""Ascend target options and the SoC profiles whose limits the compiler checks."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...errors import OptionError
from ..base import BaseOptions


@dataclass(frozen=True)
class SocProfile:
    """What xblock needs to know about one Ascend part (facts from shared/ascendc/REFERENCE.md §2)."""

    name: str
    vector_cores: int
    ub_bytes: int  # unified buffer per vector core
    ub_usable: int  # minus the space the AscendC APIs reserve for themselves
    has_data_copy_pad: bool
    npu_arch: str  # the bisheng --npu-arch of CANN 9, for the exported project
    cube_cores: int = 0  # AIC count of a separated (910B) part; 0 where xblock has no Cube path
    vector_dtypes: tuple = ("f16", "f32", "i16", "i32")
    ub_align: int = 32
    repeat_bytes: int = 256
    # L2 bytes a launch may fill before lines are replaced; 0 where GlobalTensor::SetL2CacheHint is not
    # supported (asc-devkit GlobalTensor/SetL2CacheHint.md: A2/A3 and 950 only): no L2 hint there
    l2_bytes: int = 0


_910B = dict(ub_bytes=192 * 1024, ub_usable=184 * 1024, has_data_copy_pad=True, npu_arch="dav-2201",
             l2_bytes=192 * 2 ** 20)  # l2_size of Ascend910B1.ini as publicly quoted (model/cost.py _L2)
SOCS = {
    "910B1": SocProfile("Ascend910B1", vector_cores=48, cube_cores=24, **_910B),
    "910B2": SocProfile("Ascend910B2", vector_cores=48, cube_cores=24, **_910B),
    "910B3": SocProfile("Ascend910B3", vector_cores=40, cube_cores=20, **_910B),
    "910B4": SocProfile("Ascend910B4", vector_cores=40, cube_cores=20, **_910B),
    # 310P: coupled architecture, 256 KB UB (248 KB usable), no DataCopyPad; its core count is not
    # in the reference, 8 is the Atlas 300I Duo's per-chip AI Core count and only sizes the grid.
    "310P": SocProfile("Ascend310P3", vector_cores=8, ub_bytes=256 * 1024, ub_usable=248 * 1024,
                       has_data_copy_pad=False, npu_arch="dav-2002"),
}


# int64s per launched block in the device_assert status buffer: one 64-byte DataCache line each
# (backends/ascend/lower/ops/debug.py), so a block's SetValue + flush cannot overwrite another block's slot
STATUS_SLOT = 8

# KERNEL_TASK_TYPE_DEFAULT of a kernel (metadata["kernel_type"]), emitted for every kernel
AIV_ONLY, AIC_ONLY, MIX_AIC_1_1 = "KERNEL_TYPE_AIV_ONLY", "KERNEL_TYPE_AIC_ONLY", "KERNEL_TYPE_MIX_AIC_1_1"
MIX_AIC_1_2 = "KERNEL_TYPE_MIX_AIC_1_2"


def launch_cores(metadata: dict) -> tuple:
    """(blocks a launch may use, what they are) for a compiled kernel on its SoC.

    A vector-only kernel launches one block per AIV; an AIC-only kernel one per AIC; a mixed
    kernel one per AI Core group (one AIC and one (1:1) or both (1:2) of its AIVs), as many as
    there are AICs.
    """
    soc = SOCS[metadata["soc"]]
    kind = metadata.get("kernel_type")
    if kind == AIC_ONLY:
        return soc.cube_cores, "cube core (AIC)"
    if kind == MIX_AIC_1_1:
        return soc.cube_cores, "AI Core group (1 AIC + 1 AIV)"
    if kind == MIX_AIC_1_2:
        return soc.cube_cores, "AI Core group (1 AIC + 2 AIV)"
    return soc.vector_cores, "vector core (AIV)"


def rows_per_instance(programs: int, rows: int, cores: int) -> int:
    """How many of its R rows each instance of a coarsened kernel (`passes/coarsen_programs.py`)
    computes in a launch of `programs` programs along axis 0: R, or fewer when R would leave some of
    the `cores` without an instance (97 rows on 40 cores: 3 rows per instance on 33 cores, not 4 on
    25). Fewer than that would not save vector work: an instance computes its whole R-row tile."""
    return max(1, min(rows, -(-programs // max(1, cores))))


def row_groups_for(programs: int, most: int, cores: int) -> int:
    """How many AI Cores share each program of a row-grouped kernel (`cube/rowsplit.py`, `row_groups`): the
    power of two G <= `most` whose launch of programs x G instances of 1 / G of a program gives the busiest
    core the least work, ceil(programs x G / cores) / G (the fewest groups on ties: each group reloads the
    keys and values). 32 programs on 24 cores: 2 (3 halves, not 2 wholes); 64: 1 (6 halves = 3 wholes)."""
    best, g = 1, 2
    while g <= most:
        if -(-programs * g // cores) * best < -(-programs * best // cores) * g:
            best = g
        g *= 2
    return best


def launch_blocks(metadata: dict, programs: int, arg_bytes: dict | None = None) -> int:
    """blockDim of a launch of `programs` program instances: one per core, at most.

    `arg_bytes` (argument name -> bytes of the array passed): when a vector kernel reads some
    arguments whole on every core (`metadata["per_core_args"]`: resident loads and per-core row caches,
    plan/resident.py and plan/row_cache.py), each more block reads them once more, and the cores
    reading the same 512-B windows wait for each other (docs/ASCEND_MODEL.md); fewer blocks each do
    more of the rest. With S the bytes of those arguments and W the launch's other bytes, a core's time
    goes as W / blocks + S * blocks, least at sqrt(W / S) blocks: the launch takes that many (rounded),
    at most one per core and one per program. layernorm 97 x 3001 (w and b 24 KB, x, y 2.3 MB): 10
    blocks, not 40."""
    blocks = max(1, min(programs, launch_cores(metadata)[0]))
    shared = metadata.get("per_core_args")
    if not arg_bytes or not shared or metadata.get("kernel_type", AIV_ONLY) != AIV_ONLY:
        return blocks
    s = sum(arg_bytes.get(n, 0) for n in shared)
    w = sum(arg_bytes.values()) - s
    if s <= 0:
        return blocks
    return max(1, min(blocks, math.floor(math.sqrt(w / s) + 0.5)))  # as the exported host (project/host.py)


@dataclass(frozen=True)
class AscendOptions(BaseOptions):
    """Options of `xblock.compile(..., target="ascend")`.

    Attributes:
        soc: one of SOCS ("910B1", "910B2", "910B3", "910B4", "310P").
        buffer_num: buffers per TQue; 2 overlaps the copy-in of one program with another's compute.
        line_directives: emit `#line` directives (off: the source line is a comment above its code).
        coarsen: let one program instance compute several consecutive programs of axis 0 (their
            rows move in one DataCopy; `passes/coarsen_programs.py`); False lowers the kernel as
            written, one program per instance.
        resident: keep data the kernel reads again in the unified buffer: loads alike in every
            program copied once per core before the grid loop (`resident.py`), and rows several
            loops read kept in UB slots (`row_cache.py`); False reads them from GM each time.
        cube_depth: let the Cube's L1 tile hold several steps of a dot's K loop (one copy of A and
            of B for them: `cube/depth.py`, `cube/tiling.py` deepen); False copies the user's
            BLOCK_K slices one step at a time.
        cube_join: let a core run several programs of a small-tile dot together (their K loops in
            one, operand tiles they share copied and loaded once, one L0C accumulator each:
            `lower/ops/dot.py` _emit_joined, `cube/tiling.py` join); False runs one program at a time.
        cube_pool: let a joined kernel run 8 programs together whose distinct tiles share one L1 pool
            (a 4 x 2 block of 64 x 64 tiles keeps 256-deep L1 tiles: `lower/ops/dot.py` _pooled_step);
            False joins at most 4, each with L1 slots of its own.
        l2_bypass: keep the inputs every program reads its own part of, once, out of L2 when the launch
            moves more than L2 holds (`GlobalTensor::SetL2CacheHint`, `plan/streaming.py`); False reads
            every input through L2.
        row_split: let a kernel whose dots are handed to the vector core (attention) run on both vector
            cores of an AI Core (MIX_AIC_1_2): the program's rows are halved, each AIV computes its half of
            every row-indexed block, the AIC runs each dot for both halves at once (`cube/rowsplit.py`);
            False keeps the program on one vector core.
        row_groups: let a row-split kernel whose rows are in 4 or more chunks spread its pairs of chunks over
            AI Cores when its programs would leave cores idle (BLOCK_M 128 attention on 24 AI Cores: 32
            programs, 2 rounds; 64 halves, 3 rounds of half the work): the host picks the groups per program
            (`row_groups_for`), `cube/rowsplit.py`; False runs each program's chunks on one AI Core.
        row_chunks: the number of row chunks a row split takes (2, 4, 8, ...) instead of the planner's
            choice (the fewest that fit): more chunks let `row_groups` spread a program over more AI
            Cores (BLOCK_M 128 attention at S = 8192: 8 chunks, 4 AI Cores a program), at the price of
            smaller vector instructions; 0 (the default) leaves it to the planner. A count that does not
            lower is warned about and the planner's choice is kept.
    """

    soc: str = "910B3"
    buffer_num: int = 2
    line_directives: bool = False
    coarsen: bool = True
    resident: bool = True
    cube_depth: bool = True
    cube_join: bool = True
    cube_pool: bool = True
    l2_bypass: bool = True
    row_split: bool = True
    row_groups: bool = True
    row_chunks: int = 0

    def __post_init__(self):
        if self.soc not in SOCS:
            raise OptionError(f"unknown Ascend soc '{self.soc}' (known: {', '.join(SOCS)})")
        for name in ("coarsen", "resident", "cube_depth", "cube_join", "cube_pool", "l2_bypass",
                     "row_split", "row_groups"):
            if not isinstance(getattr(self, name), bool):
                raise OptionError(f"{name} must be True or False, got {getattr(self, name)!r}")
        rc = self.row_chunks
        if isinstance(rc, bool) or not isinstance(rc, int) or rc < 0 or rc == 1 or rc & (rc - 1) or rc > 64:
            raise OptionError(f"row_chunks must be 0 (the planner's choice) or a power of two from 2 to 64, got {rc!r}")
        if self.buffer_num not in (1, 2):
            raise OptionError(f"buffer_num must be 1 or 2, got {self.buffer_num!r}")

    @property
    def profile(self) -> SocProfile:
        return SOCS[self.soc]
