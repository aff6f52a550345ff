"""What the xb -> ascendc rules share: value kinds, the UB plan (queues + scratch), IR builders.

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
from mlir.dialects import arith

from ...dialects import ascendc as A

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


class Builders:
    """Small typed builders for the new (ascendc) module; ops go to the current insertion point."""

    i64 = property(lambda self: ir.IntegerType.get_signless(64))
    i32 = property(lambda self: ir.IntegerType.get_signless(32))

    def c64(self, v: int) -> ir.Value:
        return arith.ConstantOp(self.i64, int(v)).result

    def cst(self, elem: str, v) -> ir.Value:
        t = mlir_type(elem)
        if elem in FLOAT:
            return arith.ConstantOp(t, ir.FloatAttr.get(t, float(v))).result
        return arith.ConstantOp(t, int(v)).result

    def named(self, v: ir.Value, name: str) -> ir.Value:
        """Give the scalar `v` a C++ variable name (a constant stays a literal)."""
        o = v.owner
        if not isinstance(o, ir.Block) and o.name != "arith.constant" and "name" not in o.attributes:
            o.attributes["name"] = ir.StringAttr.get(name)
        return v

    def to64(self, v: ir.Value) -> ir.Value:
        s = str(v.type)
        if s == "i64":
            return v
        if s == "index":
            return arith.IndexCastOp(self.i64, v).result
        return arith.ExtSIOp(self.i64, v).result

    @staticmethod
    def const_of(v: ir.Value):
        """The integer value of an arith.constant scalar, else None."""
        o = v.owner
        if getattr(o, "name", None) == "arith.constant" and isinstance(o.attributes["value"], ir.IntegerAttr):
            return ir.IntegerAttr(o.attributes["value"]).value
        return None

    def _fold(self, a, b, fn, build):
        x, y = self.const_of(a), self.const_of(b)
        if x is not None and y is not None and str(a.type) == "i64":
            return self.c64(fn(x, y))
        return build(a, b).result

    def add(self, a, b):
        if self.const_of(b) == 0:
            return a
        return self._fold(a, b, lambda x, y: x + y, arith.AddIOp)

    def sub(self, a, b):
        if self.const_of(b) == 0:
            return a
        return self._fold(a, b, lambda x, y: x - y, arith.SubIOp)

    def mul(self, a, b):
        if self.const_of(b) == 1:
            return a
        return self._fold(a, b, lambda x, y: x * y, arith.MulIOp)

    def smin(self, a, b):
        return self._fold(a, b, min, arith.MinSIOp)

    def smax(self, a, b):
        return self._fold(a, b, max, arith.MaxSIOp)

    def clamp(self, x, lo: int, hi: int):
        return self.smin(self.smax(x, self.c64(lo)), self.c64(hi))

    def round_up64(self, x, m: int):
        """((x + m - 1) / m) * m for x >= 0."""
        c = self.const_of(x)
        if c is not None:
            return self.c64((c + m - 1) // m * m)
        q = arith.DivSIOp(self.add(x, self.c64(m - 1)), self.c64(m)).result
        return self.mul(q, self.c64(m))

    def sync(self, event: str) -> None:
        """SetFlag/WaitFlag pair on one event id fetched from the pipe."""
        e = A.op("fetch_event_id", [], self.i32, event=event)
        A.op("set_flag", [e], event=event)
        A.op("wait_flag", [e], event=event)

    def for_range(self, lb, ub, step=1):
        """An scf.for over i64 [lb, ub); returns the op (body via .body, index via .induction_variable)."""
        from mlir.dialects import scf

        lb = lb if isinstance(lb, ir.Value) else self.c64(lb)
        ub = ub if isinstance(ub, ir.Value) else self.c64(ub)
        return scf.ForOp(lb, ub, self.c64(step) if not isinstance(step, ir.Value) else step)

    def at(self, v: ir.Value, offset) -> ir.Value:
        """tensor[offset] for a LocalTensor or GlobalTensor."""
        if isinstance(offset, int):
            if offset == 0:
                return v
            offset = self.c64(offset)
        name = "ub_at" if A.is_local(v.type) else "gm_at"
        return A.op(name, [v, offset], v.type)
