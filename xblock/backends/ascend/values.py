"""The values of the xb -> ascendc lowering: what a block lowers to, and how UB is packed.

A block value lowers to one of: `Tile` (a LocalTensor in a VECIN/VECOUT queue buffer or in the
VECCALC scratch `TBuf`), `Splat` (the same scalar everywhere; feeds the scalar forms Adds/Muls/...)
or `Struct` (an integer, pointer or mask block the pointer-structure analysis describes; it only
becomes a Tile if a rule needs its elements). Every Tile is counted: it is freed (its scratch
returned, or its queue buffer `FreeTensor`ed) after its last use, so the plan is a liveness-based
packing computed while lowering; the totals are checked against the SoC's usable UB.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir

SIZE = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i16": 2, "i8": 1, "i64": 8, "f64": 8, "i1": 1, "ui8": 1,
        "ui16": 2, "ui32": 4}
FLOAT = ("f16", "bf16", "f32", "f64")
TILE_ALIGN = 256  # every tile is a whole number of 256-byte repeats (Compare needs it)


def mlir_type(elem: str) -> ir.Type:
    return ir.Type.parse(elem)


def shape_of(t: ir.Type) -> tuple:
    return tuple(ir.RankedTensorType(t).shape) if str(t).startswith("tensor<") else ()


def elem_of(t: ir.Type) -> str:
    return str(ir.RankedTensorType(t).element_type) if str(t).startswith("tensor<") else str(t)


def numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def round_up(x: int, m: int) -> int:
    return (x + m - 1) // m * m


@dataclass(eq=False)
class Queue:
    name: str
    position: str  # "VECIN" | "VECOUT"
    bytes: int = 0
    num: int = 2  # buffers (InitBuffer's num): 2 double-buffers, 1 when a TPosition runs short of buffers
    busy: bool = False
    lines: set = field(default_factory=set)
    decl: object = None  # the ascendc.tque op, sized at the end


@dataclass(eq=False)
class Tile:
    """A LocalTensor holding a block: row-major over `shape`, `bytes` a multiple of 256."""

    value: ir.Value
    elem: str
    shape: tuple
    bytes: int
    kind: str  # "buf" (scratch), "vecin", "vecout", "view"
    queue: Queue | None = None
    offset: int = 0
    parent: Tile | None = None
    refs: int = 1
    freed: bool = False
    line: int = 0
    scalar_written: bool = False  # the scalar pipe wrote it (SetValue): MTE3 must wait before a copy out

    @property
    def count(self) -> int:
        return numel(self.shape)

    @property
    def padded(self) -> int:
        return self.bytes // SIZE[self.elem]


@dataclass(frozen=True)
class Splat:
    """A block whose elements all equal `scalar` (a new-IR value) or the Python constant `const`."""

    elem: str
    shape: tuple
    scalar: object = None
    const: object = None


@dataclass(frozen=True)
class Struct:
    """An integer, pointer or mask block kept symbolic (see passes/pointer_structure.py)."""

    xb: ir.Value


class Scratch:
    """First-fit packing of scratch tiles into the one VECCALC TBuf; records the peak."""

    def __init__(self):
        self.free: list = []  # [(offset, bytes)]
        self.top = 0
        self.peak = 0

    def alloc(self, nbytes: int) -> int:
        for i, (off, n) in enumerate(self.free):
            if n >= nbytes:
                if n == nbytes:
                    self.free.pop(i)
                else:
                    self.free[i] = (off + nbytes, n - nbytes)
                return off
        off = self.top
        self.top += nbytes
        self.peak = max(self.peak, self.top)
        return off

    def release(self, off: int, nbytes: int) -> None:
        self.free.append((off, nbytes))
        self.free.sort()
        merged = []
        for o, n in self.free:
            if merged and merged[-1][0] + merged[-1][1] == o:
                merged[-1] = (merged[-1][0], merged[-1][1] + n)
            else:
                merged.append((o, n))
        if merged and merged[-1][0] + merged[-1][1] == self.top:
            self.top = merged.pop()[0]
        self.free = merged
