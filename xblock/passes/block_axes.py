"""xb-analyze-block-axes: which dimensions of a kernel's blocks index the same logical axis.

Every dimension of every block value (`tensor<...>`) starts as its own axis; ops tie the
dimensions they map one to one: an element-wise op (arith, math, load, store, addptr, select...)
ties the operands and results of one shape dimension by dimension, `broadcast` the dimensions it
keeps, `expand_dims` and `trans` the dimensions they move, a reduction every dimension but its
axis, `join`/`split` all but the minor one, `dot` the rows of `a`, the columns of `b` and the batch
dimension with those of its accumulator and result (and `a`'s columns with `b`'s rows: the
contracted axis), a `reshape` the leading dimensions it leaves as they are, and `scf.for/if/while`
each carried or yielded block with its initial value, region arguments and results. Dimensions of
extent 1 are never tied (they broadcast). Ops that mix elements across a dimension (`cat`,
`gather`, `histogram`, the regrouped dimensions of a `reshape`) tie nothing there, so their operands
and results stay apart; nor do the values a region yields together (`scf.yield`, `scf.condition`).
The result is a union-find over `(value, dim)` pairs: in `x = load(p + arange(0, B))`, `x`'s
dimension 0 and the arange's are one axis. `xb-strip-mine` splits one such axis into chunks.
"""

from __future__ import annotations

from mlir import ir

NAME = "xb-analyze-block-axes"

# ops whose operands are not one element-wise group: the region terminators (their parent op ties each
# yielded value with its own init, argument and result; the values a loop yields side by side, an
# accumulator [BLOCK_M, D] and a pointer block [BLOCK_N, D] advanced each step, are not one axis)
_NO_TIES = ("xb.cat", "xb.gather", "scf.yield", "scf.condition")


def shape_of(v: ir.Value) -> tuple | None:
    """The shape of a block value, or None for a scalar."""
    t = v.type
    return tuple(t.shape) if isinstance(t, ir.RankedTensorType) else None


def is_splat_constant(v: ir.Value) -> bool:
    o = v.owner
    if isinstance(o, ir.Block) or o is None or o.operation.name != "arith.constant":
        return False
    return isinstance(v.type, ir.RankedTensorType) and ir.DenseElementsAttr(o.operation.attributes["value"]).is_splat


def nbytes(v: ir.Value) -> int:
    """Bytes of a block value (pointers count 8, i1 one)."""
    t = v.type
    width = getattr(t.element_type, "width", 64)  # a pointer (`!xb.ptr<T>`) has none: 64 bits
    n = 1
    for s in t.shape:
        n *= s
    return n * max(width // 8, 1)


def kept_prefix(src: tuple, dst: tuple) -> int:
    """How many leading dimensions a reshape from `src` to `dst` leaves as they are (the elements keep
    their indices along them: the rest of each shape holds as many elements)."""
    n = 0
    while n < min(len(src), len(dst)) - 1 and src[n] == dst[n]:
        n += 1
    return n


def _int_attr(op, name: str) -> int:
    return int(ir.IntegerAttr(op.attributes[name]).value)


def _last(block: ir.Block):
    ops = list(block.operations)
    return ops[-1] if ops else None


class BlockAxes:
    """Union-find over the dimensions of a kernel's block values (module docstring)."""

    def __init__(self, kernel, opaque=frozenset(), loose_splats: bool = False):
        """`opaque`: ops whose results are blocks of their own (they tie nothing, their bodies are not
        visited); `loose_splats`: splat constants tie nothing either (one constant block may serve
        blocks of different axes: a [M, K] and a [K, N] use of one zero block)."""
        self.parent: dict = {}
        self.values: list = []  # every block value, in program order
        self.opaque, self.loose = opaque, loose_splats
        kernel.operation.walk(self._visit, ir.WalkOrder.PRE_ORDER)

    def find(self, key):
        root = key
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while key != root:  # path compression
            key, self.parent[key] = self.parent[key], root
        return root

    def axis(self, v: ir.Value, d: int):
        """The axis (a class representative) that dimension d of block `v` belongs to."""
        return self.find((v, d))

    def tie(self, u: ir.Value, du: int, v: ir.Value, dv: int) -> None:
        su, sv = shape_of(u), shape_of(v)
        if su is None or sv is None or su[du] != sv[dv] or su[du] == 1:
            return
        a, b = self.find((u, du)), self.find((v, dv))
        if a != b:
            self.parent[a] = b

    def same(self, values) -> None:
        """Tie blocks of one shape dimension by dimension (blocks of other shapes stay apart)."""
        first: dict = {}
        for v in values:
            s = shape_of(v)
            if s is None:
                continue
            w = first.setdefault(s, v)
            for d in range(len(s)):
                self.tie(w, d, v, d)

    def _visit(self, op):
        op = op.operation
        if op in self.opaque:
            self.values.extend(r for r in op.results if shape_of(r) is not None)
            return ir.WalkResult.SKIP
        for region in op.regions:
            for block in region.blocks:
                self.values.extend(a for a in block.arguments if shape_of(a) is not None)
        self.values.extend(r for r in op.results if shape_of(r) is not None)
        self._tie_op(op)
        return ir.WalkResult.ADVANCE

    def _tie_dot(self, a, b, acc, out) -> None:
        r = len(shape_of(out))
        self.same([acc, out])
        self.tie(a, r - 2, out, r - 2)
        self.tie(b, r - 1, out, r - 1)
        self.tie(a, r - 1, b, r - 2)
        if r == 3:  # the batch dimension
            self.tie(a, 0, out, 0)
            self.tie(b, 0, out, 0)

    def _tie_op(self, op) -> None:
        n = op.name
        ins, outs = list(op.operands), list(op.results)
        if n == "xb.broadcast":
            s, r = ins[0], outs[0]
            for d in range(len(shape_of(r))):
                self.tie(s, d, r, d)
        elif n == "xb.expand_dims":
            a = _int_attr(op, "axis")
            for d in range(len(shape_of(ins[0]))):
                self.tie(ins[0], d, outs[0], d if d < a else d + 1)
        elif n == "xb.trans":
            for i, o in enumerate(ir.DenseI32ArrayAttr(op.attributes["order"])):
                self.tie(outs[0], i, ins[0], o)
        elif n == "xb.reduce":
            self.same(ins)
            a = _int_attr(op, "axis")
            for r in outs:
                for d in range(len(shape_of(r) or ())):
                    self.tie(ins[0], d if d < a else d + 1, r, d)
        elif n == "xb.join":
            self.same(ins)
            for d in range(len(shape_of(ins[0]))):
                self.tie(ins[0], d, outs[0], d)
        elif n == "xb.split":
            self.same(outs)
            for d in range(len(shape_of(outs[0]))):
                self.tie(ins[0], d, outs[0], d)
        elif n == "xb.histogram":
            self.same(ins)
        elif n == "xb.dot":
            self._tie_dot(*ins[:3], outs[0])
        elif n == "xb.reshape":
            for d in range(kept_prefix(shape_of(ins[0]), shape_of(outs[0]))):
                self.tie(ins[0], d, outs[0], d)
        elif n == "scf.for":
            body = op.regions[0].blocks[0]
            y = _last(body)
            for k, init in enumerate(ins[3:]):
                self.same([init, body.arguments[k + 1], y.operands[k], outs[k]])
        elif n == "scf.if":
            yields = [_last(r.blocks[0]) for r in op.regions if len(r.blocks)]
            for k, r in enumerate(outs):
                self.same([r] + [y.operands[k] for y in yields])
        elif n == "scf.while":
            before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
            cond, y = _last(before), _last(after)
            for k, init in enumerate(ins):
                self.same([init, before.arguments[k], y.operands[k]])
            for k, r in enumerate(outs):
                self.same([r, cond.operands[k + 1], after.arguments[k]])
        elif n not in _NO_TIES:
            self.same([v for v in ins + outs if not (self.loose and is_splat_constant(v))])
