"""The plan of one ascend lowering, and the typed outcomes of lowering it.

An `AscendPlan` is a frozen value: how many programs of axis 0 one instance computes, how many chunks
the blocks are split into, where dots go out, how many vector cores share a dot's epilogue, and
whether loads alike in every program and rows several loops read stay in UB. `planner.Planner`
yields plans; the pipeline prepares each (coarsens, strip-mines), lowers it, and tells the planner
what happened as one of the `Outcome`s below. The rules read the plan (`ctx.plan`); none of them
sets a flag for a later attempt.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from ....errors import CompilationError

# where a kernel's dots go out (`dots`)
FIXPIPE = "fixpipe"  # the Cube writes each dot's result (or its fusable epilogue) through Fixpipe
HAND_OFF = "hand_off"  # every dot's result goes to the vector core, which does the rest (cube/handoff.py)
SECTIONS = "sections"  # Fixpipe-only dots beside vector work of the kernel's own, in AIC and AIV sections
DOT_MODES = (FIXPIPE, HAND_OFF, SECTIONS)


@dataclass(frozen=True)
class AscendPlan:
    """What one lowering of a kernel does (the fields are the planner's choices, never retry flags).

    rows: programs of axis 0 that one program instance computes (`passes/coarsen_programs.py`); 1 is
        the kernel as written.
    split: chunks the blocks are computed in (`passes/strip_mine.py`); 1 is whole blocks.
    dots: FIXPIPE, HAND_OFF or SECTIONS (above).
    vector_cores: the most vector cores (AIVs) of an AI Core that may share a dot's epilogue chunks
        (MIX_AIC_1_2, cube/mixed.py); 1 keeps them on one.
    resident: loads every program makes alike are hoisted before the grid loop and stay in UB
        (plan/resident.py).
    row_cache: rows several loops of a program read are kept in UB slots (plan/row_cache.py).
    l2_bypass: the inputs whose GlobalTensors bypass L2 when the launch moves more than L2 holds
        (`GlobalTensor::SetL2CacheHint(CACHE_MODE_DISABLE)`): the arguments every program reads its own
        part of, once (plan/streaming.py).
    cube_tiles: the Cube tiles the lowering chose for the kernel's first dot, (baseM, baseN, baseK, the K
        depth of its L1 tile), recorded with the plan kept (pipeline.py; cube/tiling.py chooses them from
        the shapes and the SoC: a deep L1 tile holds several steps of the kernel's K loop, cube/depth.py);
        None while planning and for kernels without a dot.
    row_split: the `split` chunks run along the rows of the kernel's handed-off dots, and the two vector
        cores of an AI Core take every other chunk while the Cube runs each dot for two chunks at once
        (MIX_AIC_1_2, cube/rowsplit.py); False splits along the largest block, on one vector core.
    """

    rows: int = 1
    split: int = 1
    dots: str = FIXPIPE
    vector_cores: int = 2
    resident: bool = True
    row_cache: bool = True
    cube_tiles: tuple | None = None
    l2_bypass: tuple = ()
    row_split: bool = False

    def __post_init__(self):
        if self.dots not in DOT_MODES or self.rows < 1 or self.split < 1 or self.vector_cores not in (1, 2):
            raise ValueError(f"internal error: not an ascend plan: {self}")  # plans come from the planner

    def but(self, **changes) -> AscendPlan:
        return replace(self, **changes)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["cube_tiles"] = list(self.cube_tiles) if self.cube_tiles is not None else None
        d["l2_bypass"] = list(self.l2_bypass)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> AscendPlan:
        """The plan `as_dict` recorded (metadata["plan"])."""
        d = dict(d)
        if d.get("cube_tiles") is not None:
            d["cube_tiles"] = tuple(d["cube_tiles"])
        d["l2_bypass"] = tuple(d.get("l2_bypass") or ())
        return cls(**d)

    def describe(self) -> str:
        """One line, for `xblock profile` and the export's README."""
        parts = [f"{self.rows} row{'s' if self.rows > 1 else ''} of axis 0 per instance",
                 "whole blocks" if self.split == 1 else
                 f"rows in {self.split} chunks, one per vector core" if self.row_split else
                 f"blocks in {self.split} chunks",
                 f"dots {self.dots.replace('_', '-')}"]
        if self.vector_cores == 1:
            parts.append("one vector core per epilogue")
        parts.append("resident loads" if self.resident else "no resident loads")
        parts.append("row cache" if self.row_cache else "no row cache")
        if self.cube_tiles is not None:
            m, n, k, *l1 = self.cube_tiles
            parts.append(f"Cube L0 tile {m}x{n}x{k}" + (f", L1 K depth {l1[0]}" if l1 else ""))
        if self.l2_bypass:
            parts.append(f"{', '.join(self.l2_bypass)} bypass{'es' if len(self.l2_bypass) == 1 else ''} L2 when the "
                         "launch exceeds it")
        return ", ".join(parts)


# ----- outcomes: what lowering a plan gave --------------------------------------------------------
@dataclass(frozen=True)
class Outcome:
    """The typed result of one lowering, all the planner reads of it: `message`, an error's message;
    `chunks`, how a split plan's blocks were split (`strip_mine.Split.describe()`)."""

    message: str = ""
    chunks: str = ""


@dataclass(frozen=True)
class Fits(Outcome):
    """It lowered and fits UB. `single_buffered`: only with every queue single-buffered;
    `warned`: its warnings as (message, line); `kernel_type`; `vector_epilogue`: its dots' epilogues
    all run on the vector core after the Cube (cube/mixed.py); `handoff`: its dots hand their results to the
    vector core (cube/handoff.py)."""

    single_buffered: bool = False
    warned: frozenset = frozenset()
    kernel_type: str = ""
    vector_epilogue: bool = False
    handoff: bool = False


@dataclass(frozen=True)
class Overflow(Outcome):
    """It lowered, but its blocks need `total` bytes of UB, more than the SoC has; `handoff` as in Fits."""

    total: int = 0
    handoff: bool = False


@dataclass(frozen=True)
class NeedsVectorCore(Outcome):
    """A dot cannot go out through Fixpipe here: `why` is "dot_store" (its result is stored in a shape
    Fixpipe cannot write), "dot_operand" (an operand is not a tile the Cube copies from GM: a
    column-major or gathered load) or "vector_work" (the kernel also moves blocks through the vector core)."""

    why: str = "dot_store"


@dataclass(frozen=True)
class NoRoom(Outcome):
    """The resident tiles (`what` "resident") or the row caches ("cache") do not fit in UB."""

    what: str = "resident"


@dataclass(frozen=True)
class SplitRefused(Outcome):
    """`xb-strip-mine` cannot split the kernel (`exhausted`: no smaller chunks left)."""

    reason: str = ""
    loc: tuple | None = None
    exhausted: bool = False


@dataclass(frozen=True)
class Failed(Outcome):
    """Any other compilation error."""


class VectorCoreNeeded(CompilationError):
    """The error a rule raises where a dot cannot go out through Fixpipe (NeedsVectorCore): the
    planner answers it with a plan that hands the dots to the vector core, and it is shown only if
    no plan lowers."""

    def __init__(self, error: CompilationError, why: str):
        super().__init__(error.file, error.line, error.col, error.message, error.source_line)
        self.why = why


class HandOffRefused(CompilationError):
    """The error a rule raises where a dot cannot be handed to the vector core: `reason` says why, `hint`
    what to write instead. Shown alone when the kernel's dots must all be handed over; after a plan
    whose Cube path failed first (VectorCoreNeeded), the pipeline shows both reasons, this one first."""

    def __init__(self, error: CompilationError, reason: str, hint: str = ""):
        super().__init__(error.file, error.line, error.col, error.message, error.source_line)
        self.reason, self.hint = reason, hint


__all__ = ["AscendPlan", "DOT_MODES", "FIXPIPE", "Failed", "Fits", "HAND_OFF", "HandOffRefused", "NeedsVectorCore",
           "NoRoom", "Outcome", "Overflow", "SECTIONS", "SplitRefused", "VectorCoreNeeded"]
