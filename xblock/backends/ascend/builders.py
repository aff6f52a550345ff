"""Small typed builders for the ascendc module the lowering writes (constants, i64 index math, flags)."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ...dialects import ascendc as A
from .values import FLOAT, mlir_type


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
        if self.const_of(a) == 0:
            return b
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

    def line_base(self, m, n: int, post: int):
        """The first element of line `m` of a block seen as [pre, n, post] (the lines run along n)."""
        if post == 1:
            return self.mul(m, self.c64(n))
        return self.add(self.mul(arith.DivSIOp(m, self.c64(post)).result, self.c64(n * post)),
                        arith.RemSIOp(m, self.c64(post)).result)

    def when(self, cond, body) -> None:
        """`body()` under the scalar condition `cond` (no `if` when cond is None)."""
        if cond is None:
            body()
            return
        ifop = scf.IfOp(cond, [], has_else=False)
        with ir.InsertionPoint(ifop.then_block):
            body()
            scf.YieldOp([])

    def for_range(self, lb, ub, step=1):
        """An scf.for over i64 [lb, ub); returns the op (body via .body, index via .induction_variable)."""
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
