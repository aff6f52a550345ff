"""MLIR text emitter of the cpu lowering: SSA names, hoisted constants and buffers, structured loops.

The lowering writes upstream `arith`/`math`/`vector`/`scf`/`memref` (and `llvm` for global memory)
as text. Constants and stack buffers are hoisted into the function's entry block, so that loops
never grow the stack and every use is dominated.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class V:
    """An SSA value of the emitted function: its name (`%v12`) and MLIR type string."""

    name: str
    type: str

    def __str__(self) -> str:
        return self.name


def vec(w: int, ety: str) -> str:
    return f"vector<{w}x{ety}>"


def is_float(ety: str) -> bool:
    return ety in ("f16", "bf16", "f32", "f64")


def bits(ety: str) -> int:
    return {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "f16": 16, "bf16": 16, "f32": 32,
            "f64": 64, "index": 64}[ety]


def elem_of(ty: str) -> str:
    """Element type of a vector type string, or the type itself for scalars."""
    return ty[ty.rindex("x") + 1 : -1] if ty.startswith("vector<") else ty


def lanes(ty: str) -> int:
    return int(ty[len("vector<") : ty.rindex("x")]) if ty.startswith("vector<") else 0


def index_sum(e, *terms) -> V:
    """Sum of index terms: ints are constants, V are index values, (V, k) is V * k."""
    total, const = None, 0
    for t in terms:
        if isinstance(t, int):
            const += t
            continue
        v, k = t if isinstance(t, tuple) else (t, 1)
        if k == 0:
            continue
        if k != 1:
            v = e.op(f"arith.muli {v}, {e.idx(k)} : index", "index")
        total = v if total is None else e.op(f"arith.addi {total}, {v} : index", "index")
    if total is None:
        return e.idx(const)
    return e.op(f"arith.addi {total}, {e.idx(const)} : index", "index") if const else total


class Emitter:
    """Accumulates the lines of one function body."""

    def __init__(self):
        self.prologue: list[str] = []
        self.body: list[str] = []
        self.consts: dict = {}
        self.counter = 0
        self.depth = 2
        self.stack_bytes = 0
        self.full_masks: set = set()  # ids of mask blocks known all-true where code is emitted

    def fresh(self, hint: str = "v") -> str:
        self.counter += 1
        return f"%{hint}{self.counter}"

    def line(self, text: str) -> None:
        self.body.append("  " * self.depth + text)

    def op(self, rhs: str, ty: str, hint: str = "v") -> V:
        name = self.fresh(hint)
        self.line(f"{name} = {rhs}")
        return V(name, ty)

    # ---------------------------------------------------------------- hoisted values
    def const(self, value, ty: str) -> V:
        """A scalar or splat-vector constant, defined once in the entry block."""
        key = (repr(value), ty)
        if key not in self.consts:
            name = self.fresh("c")
            ety = elem_of(ty)
            if ety == "i1":
                lit = "true" if value else "false"
            elif is_float(ety):
                lit = _float_literal(float(value), ety)
            else:
                lit = str(int(value))
            attr = f"dense<{lit}> : {ty}" if ty.startswith("vector<") else lit if ety == "i1" else f"{lit} : {ty}"
            self.prologue.append(f"    {name} = arith.constant {attr}")
            self.consts[key] = V(name, ty)
        return self.consts[key]

    def const_attr(self, attr: str, ty: str) -> V:
        """A constant from an attribute literal (`dense<[0, 1]> : vector<2xi32>`)."""
        key = ("attr", attr)
        if key not in self.consts:
            name = self.fresh("c")
            self.prologue.append(f"    {name} = arith.constant {attr}")
            self.consts[key] = V(name, ty)
        return self.consts[key]

    def iota(self, w: int, ety: str = "i32") -> V:
        return self.const_attr(f"dense<[{', '.join(map(str, range(w)))}]> : {vec(w, ety)}", vec(w, ety))

    def idx(self, i: int) -> V:
        return self.const(i, "index")

    def alloca(self, n: int, ety: str) -> V:
        """A stack buffer `memref<n x ety>` allocated once at function entry."""
        name = self.fresh("buf")
        ty = f"memref<{n}x{ety}>"
        self.stack_bytes += n * max(1, bits(ety) // 8)
        self.prologue.append(f"    {name} = memref.alloca() {{alignment = 64 : i64}} : {ty}")
        return V(name, ty)

    # ---------------------------------------------------------------- structured control flow
    def for_(self, lo: V, hi: V, step: V, body, inits=(), hint="i") -> list[V]:
        """`scf.for` over [lo, hi) by step; body(iv, iters) emits ops and returns the yields."""
        iv = V(self.fresh(hint), lo.type)
        iters = [V(self.fresh("it"), v.type) for v in inits]
        res = self.fresh("r") if inits else None
        head = f"scf.for {iv} = {lo} to {hi} step {step}"
        if inits:
            pairs = ", ".join(f"{a} = {b}" for a, b in zip(iters, inits))
            head += f" iter_args({pairs}) -> ({', '.join(v.type for v in inits)})"
        if lo.type != "index":
            head += f" : {lo.type}"
        self.line((f"{res}:{len(inits)} = " if res else "") + head + " {")
        self.depth += 1
        ys = body(iv, iters) or []
        if ys:
            self.line(f"scf.yield {', '.join(map(str, ys))} : {', '.join(y.type for y in ys)}")
        self.depth -= 1
        self.line("}")
        return [V(f"{res}#{k}", v.type) for k, v in enumerate(inits)]

    def range_(self, n: int, step: int, body, inits=()) -> list[V]:
        """A loop over the constant index range [0, n) by `step`."""
        return self.for_(self.idx(0), self.idx(n), self.idx(step), body, inits)

    def if_(self, cond: V, then_fn, else_fn=None, types=()) -> list[V]:
        """`scf.if`; the branch functions emit ops and return their yields (matching `types`)."""
        res = self.fresh("r") if types else None
        head = f"scf.if {cond}" + (f" -> ({', '.join(types)})" if types else "")
        self.line((f"{res}:{len(types)} = " if res else "") + head + " {")
        for k, fn in enumerate((then_fn, else_fn)):
            if fn is None:
                continue
            if k == 1:
                self.line("} else {")
            self.depth += 1
            ys = fn() or []
            if ys:
                self.line(f"scf.yield {', '.join(map(str, ys))} : {', '.join(y.type for y in ys)}")
            self.depth -= 1
        self.line("}")
        return [V(f"{res}#{k}", t) for k, t in enumerate(types)]

    def function(self, signature: str) -> str:
        return "\n".join([signature + " {"] + self.prologue + self.body + ["    return", "  }"])


def _float_literal(v: float, ety: str) -> str:
    if v != v:
        return {"f16": "0x7E00", "bf16": "0x7FC0", "f32": "0x7FC00000", "f64": "0x7FF8000000000000"}[ety]
    if v in (float("inf"), float("-inf")):
        pos = {"f16": "0x7C00", "bf16": "0x7F80", "f32": "0x7F800000", "f64": "0x7FF0000000000000"}[ety]
        neg = {"f16": "0xFC00", "bf16": "0xFF80", "f32": "0xFF800000", "f64": "0xFFF0000000000000"}[ety]
        return pos if v > 0 else neg
    return repr(v)
