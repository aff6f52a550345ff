"""The floor under the rules: element types, result tiles, vector calls and fills of blocks.

Rule modules build on these and never on each other. `as_elem`/`cast` move a block between
element types (`casts`, below this module, plans the conversions and the fills; bf16 math goes
through float and int8 math through int16: the vector unit has neither), `dst_tile`
and `finish` place an op's result (in place into a loop accumulator or an `if`'s result where
possible), `materialize` turns a symbolic integer or mask block into a tile, `reduce_all` folds a
tile to one scalar, and the scalar-access fences order GetValue/SetValue against the vector unit.
"""

from __future__ import annotations

import functools
import math

from mlir import ir
from mlir.dialects import arith, scf

from ....dialects import ascendc as A
from ..irwalk import ancestor_in
from ..values import FLOAT, SIZE, Splat, Tile, elem_of, numel, round_up, shape_of
from .casts import cast, const_convert, fill, scalar_convert  # noqa: F401  (fill: for the rule modules)
from .intexact import Exact32

VEC_TYPES = {"Add": ("f16", "f32", "i16", "i32"), "Sub": ("f16", "f32", "i16", "i32"),
             "Mul": ("f16", "f32", "i16", "i32"), "Max": ("f16", "f32", "i16", "i32"),
             "Min": ("f16", "f32", "i16", "i32"), "Div": ("f16", "f32")}


def is_block(v: ir.Value) -> bool:
    return str(v.type).startswith("tensor<")


def compute_elem(ctx, elem: str, api: str) -> str:
    """The element type an instruction runs in: bf16 through float, int8 through int16 (whose low byte
    wraps as int8 arithmetic does; `finish` narrows back); an error where there is none."""
    if elem == "bf16":
        return "f32"
    if elem == "i8" and api in ("Add", "Sub", "Mul", "Max", "Min"):
        return "i16"
    allowed = VEC_TYPES.get(api, ("f16", "f32"))
    if elem not in allowed:
        raise ctx.error(f"the vector unit of {ctx.soc.name} has no {api} for {elem} "
                        f"(it has {', '.join(allowed)})")
    return elem


def as_elem(ctx, x, elem: str, unsigned: bool = False):
    """A Tile or Splat converted to `elem` (Cast into a temporary tile, or a scalar conversion);
    `unsigned`: an unsigned integer source (extui, uitofp) or destination (fptoui)."""
    if isinstance(x, Splat):
        if x.elem == elem:
            return x
        if x.scalar is None:
            return Splat(elem, x.shape, const=const_convert(x.const, x.elem, elem, unsigned))
        return Splat(elem, x.shape, scalar=scalar_convert(ctx, x.scalar, elem, unsigned))
    if x.elem == elem:
        return x
    t = ctx.temp(elem, x.shape)
    cast(ctx, t, x, unsigned=unsigned)
    return t


UNIFORM_SHAPES = ("xb.splat", "xb.broadcast", "xb.expand_dims", "xb.reshape")


def mask_of(ctx, value, shape: tuple | None = None) -> Tile:
    """A mask block as the bit mask Compare makes and Select reads. Bools loaded from memory hold
    a byte per element: cast to half (uint8 -> half is a legal A2 Cast) and compare with 0. A
    scalar condition (`if c: v = a else: v = b` over blocks) becomes a uniform mask of `shape`."""
    held = ctx.vmap.get(value)
    if is_block(value):
        shape = shape_of(value.type)
    src = value
    while is_block(src) and not isinstance(src.owner, ir.Block) and src.owner.name in UNIFORM_SHAPES:
        src = src.owner.operands[0]  # a scalar bool splat or broadcast to a block: one flag
    if is_block(value) and isinstance(held, Splat):
        flag = ctx.splat_scalar(held)
    elif not is_block(src):
        flag = ctx.scalar(src)
    else:
        flag = None
    if flag is not None:
        one = arith.SelectOp(flag, ctx.cst("f16", 1.0), ctx.cst("f16", 0.0)).result
        half = ctx.temp("f16", shape)
        ctx.duplicate(half, Splat("f16", shape, scalar=one), half.padded)
        out = ctx.new_tile("ui8", shape)
        A.op("compare_scalar", [out.value, half.value, ctx.cst("f16", 0.0), ctx.c64(half.padded)], mode="NE")
        return out
    t = ctx.tile(value)
    if t.elem != "i1":
        return t
    u8 = A.op("reinterpret", [t.value], A.local_type(ir.Type.parse("ui8")))
    half = ctx.temp("f16", t.shape)
    A.op("cast", [half.value, u8, ctx.c64(t.count)], round="CAST_NONE")
    out = ctx.new_tile("ui8", t.shape)
    A.op("compare_scalar", [out.value, half.value, ctx.cst("f16", 0.0), ctx.c64(half.padded)], mode="NE")
    return out


def dst_tile(ctx, op, elem: str, single: bool = True) -> Tile:
    """The result tile of `op`; an accumulator updated in place when `op` feeds only the loop's yield,
    or the `if`'s result tile when it feeds only the branch's yield (control.py)."""
    r = op.result
    uses = list(r.uses)
    y = uses[0].owner.operation if len(uses) == 1 and hasattr(uses[0].owner, "operation") else None
    if single and y is not None and y.name == "scf.yield" and y.block.owner.name == "scf.if":
        held = ctx.ext.if_results.get(y.block.owner.operation, {}).get(uses[0].operand_number)
        if isinstance(held, Tile) and held.elem == elem:
            return ctx.hold(held)
    loop = y.block.owner.name if y is not None and y.name == "scf.yield" else None
    if single and loop in ("scf.for", "scf.while"):  # a while's after block: its arguments are the carried
        body = y.block
        arg = body.arguments[uses[0].operand_number + (loop == "scf.for")]
        acc = ctx.vmap.get(arg)
        ops = [o.operation for o in body.operations]
        here = ops.index(op.operation)
        if isinstance(acc, Tile) and acc.elem == elem and all(
                ops.index(_in_block(u.owner, body)) <= here for u in arg.uses):
            return ctx.hold(acc)
    return ctx.new_tile(elem, shape_of(r.type), ctx.name_for(op), result=r if elem == elem_of(r.type) else None)


def _in_block(op, block: ir.Block):
    """The op of `block` that is `op` or holds it (a use inside an `if` in a loop body)."""
    return ancestor_in(block, op)


def finish(ctx, op, tile: Tile, elem: str, exact: bool = False) -> None:
    """Bind op's result: `tile` computed in `elem`, cast to the result's type when they differ
    (`exact`: the values are whole numbers in the result type's range, see casts.plan)."""
    want = elem_of(op.result.type)
    if want == elem:
        ctx.vmap[op.result] = tile
        return
    out = ctx.new_tile(want, tile.shape, ctx.name_for(op), result=op.result)
    cast(ctx, out, tile, exact=exact)
    ctx.vmap[op.result] = out


def select_types(elem: str):
    """(the type a Select of `elem` blocks runs in, the float type whose view it moves the bits
    through or None), or None: Select takes half and float lanes on A2; bf16 and int8 values
    convert exactly (to float, to half), int16/int32 bits move unchanged through half/float views."""
    ce = {"bf16": "f32", "i8": "f16"}.get(elem, elem)
    if ce not in ("f16", "f32", "i16", "i32"):
        return None
    return ce, {"i32": "f32", "i16": "f16"}.get(ce)


def negate(ctx, s: Splat) -> Splat:
    if s.scalar is None:
        return Splat(s.elem, s.shape, const=-s.const)
    v = arith.NegFOp(s.scalar).result if s.elem in FLOAT else arith.SubIOp(ctx.cst(s.elem, 0), s.scalar).result
    return Splat(s.elem, s.shape, scalar=v)


def reciprocal(ctx, s: Splat) -> Splat:
    if s.scalar is None:
        return Splat(s.elem, s.shape, const=1.0 / s.const if s.const else math.inf)
    return Splat(s.elem, s.shape, scalar=arith.DivFOp(ctx.cst(s.elem, 1.0), s.scalar).result)


def vec(ctx, api: str, dst: Tile, *srcs, count=None) -> None:
    count = ctx.c64(dst.count if count is None else count)
    A.op("vec", [dst.value] + [s.value for s in srcs] + [count], api=api)


def vec_scalar(ctx, api: str, dst: Tile, src: Tile, s: Splat, count=None) -> None:
    count = ctx.c64(dst.count if count is None else count)
    A.op("vec_scalar", [dst.value, src.value, ctx.splat_scalar(s), count], api=api)


def clone_scalar(ctx, op) -> None:
    new = ir.Operation.create(op.name, results=[r.type for r in op.results],
                              operands=[ctx.scalar(o) for o in op.operands],
                              attributes={k: op.attributes[k] for k in op.attributes})
    name = ctx.name_for(op)
    if name and len(new.results) == 1:
        new.attributes["name"] = ir.StringAttr.get(name)
    elif len(new.results) == 1 and (part := ctx.line_name(op)):  # a part of `part = ...` (emit.temp_name)
        new.attributes["line_name"] = ir.StringAttr.get(part)
    for r, n in zip(op.results, new.results):
        ctx.vmap[r] = n


def by_lanes(ctx, op, why: str, scalar=None) -> None:
    """An element-wise `op` of blocks the vector unit has no instruction for, lane by lane: the same op
    on the C++ scalars of each lane (splats as they are; `scalar(values)` builds it instead where the
    op needs more than one C++ operator), a GetValue/SetValue loop, with a warning."""
    ctx.warn(f"{why}; it runs as a scalar GetValue/SetValue loop")
    r = op.result
    shape = shape_of(r.type)
    srcs = []
    for o in op.operands:
        held = ctx.vmap.get(o)
        if not is_block(o):
            srcs.append(ctx.scalar(o))
        elif elem_of(o.type) == "i1":
            srcs.append(("bits", mask_of(ctx, o, shape)))
        else:
            srcs.append(held if isinstance(held, Splat) else ctx.tile(o))
    out = dst_tile(ctx, op, elem_of(r.type))
    before_scalar_reads(ctx)
    loop = ctx.for_range(0, out.count)
    with ir.InsertionPoint(loop.body):
        i = loop.induction_variable
        xs = []
        for s in srcs:
            if isinstance(s, ir.Value):
                xs.append(s)
            elif isinstance(s, tuple):  # lane i of a bit mask: bit i % 8 of byte i / 8
                u8 = A.op("reinterpret", [s[1].value], A.local_type(ir.IntegerType.get_signless(8)))
                byte = A.op("get_value", [u8, arith.ShRSIOp(i, ctx.c64(3)).result], ir.IntegerType.get_signless(8))
                wide = arith.ExtUIOp(ir.IntegerType.get_signless(64), byte).result
                bit = arith.AndIOp(arith.ShRSIOp(wide, arith.AndIOp(i, ctx.c64(7)).result).result, ctx.c64(1)).result
                xs.append(arith.CmpIOp(arith.CmpIPredicate.ne, bit, ctx.c64(0)).result)
            elif isinstance(s, Splat):
                xs.append(s.scalar if s.scalar is not None else ctx.cst(s.elem, s.const))
            else:
                xs.append(A.op("get_value", [s.value, i], ir.Type.parse(s.elem)))
        if scalar is not None:
            v = scalar(xs)
        else:
            attrs = {k: op.attributes[k] for k in op.attributes if k != "name"}
            v = ir.Operation.create(op.name, results=[ir.Type.parse(elem_of(r.type))], operands=xs,
                                    attributes=attrs).results[0]
        A.op("set_value", [out.value, i, v])
        scf.YieldOp([])
    after_scalar_writes(ctx, out)
    ctx.vmap[r] = out


def block_only(fn):
    """A rule written for block results: a scalar result is cloned as C++ scalar code instead."""

    @functools.wraps(fn)
    def rule_or_scalar(ctx, op):
        if not is_block(op.result):
            return clone_scalar(ctx, op)
        return fn(ctx, op)

    return rule_or_scalar


def data_wanted(ctx, r) -> bool:
    """Whether the symbolic block `r` is being computed as data (`materialize` of wrapped offsets)."""
    return any(r == x for x in ctx.ext.as_data)


def structured(ctx, r) -> bool:
    """Whether the integer or mask block `r` stays symbolic (a Struct): affine, a mask of bounds, or
    quasi-affine (`offs // d`) and only used to address loads and stores (lane by lane)."""
    e = elem_of(r.type)
    if data_wanted(ctx, r):
        return False
    if e == "i1":
        return ctx.ps.mask(r) is not None or (ctx.ps.quasi_mask(r) is not None and ctx.ps.addresses_only(r))
    if e in FLOAT:
        return False
    return ctx.ps.affine(r, wrapped=True) is not None or (ctx.ps.quasi(r) is not None and ctx.ps.addresses_only(r))


def divmod_tile(ctx, op, bind: bool = True) -> Tile:
    """C's truncating x / y or x % y of integer blocks. The vector unit divides floats only: the
    quotient is a float Div truncated to int32, exact while |x| + |y| < 2**24 (int8 and int16 always:
    they divide in int32 lanes, zero-extended for divui/remui, and wrap back); signed int32 lanes are
    then corrected to C's exact quotient (intexact.Exact32); uint32 ones stay exact below 2**24 (a kernel's
    uint32 blocks divide lane by lane instead: elementwise.py).
    `bind`: the tile is op's result (else a temporary, e.g. for `materialize`)."""
    elem = elem_of(op.result.type)
    if elem not in ("i8", "i16", "i32"):
        raise ctx.error(f"integer division of {elem} blocks is not supported on ascend: the 910B vector unit has "
                        f"no 64-bit lanes (int8, int16 and int32 divide)")
    unsigned = op.name in ("arith.divui", "arith.remui")
    x, y = (as_elem(ctx, ctx.tile(o), "i32", unsigned) for o in op.operands)
    rem = op.name in ("arith.remsi", "arith.remui")
    name, result = (ctx.name_for(op), op.result) if bind else (None, None)
    if elem == "i32" and not unsigned:  # exact past 2**24 (intexact.py)
        q, r = Exact32(ctx, x.shape).divmod(x, y)
        keep = r if rem else q
        ctx.release(q if rem else r)
        out = ctx.new_tile(elem, x.shape, name, result=result)
        A.op("data_copy", [out.value, keep.value, ctx.c64(out.padded)])
        ctx.release(keep)
        return out
    q = ctx.temp("f32", x.shape)
    wide = unsigned and elem == "i32"  # uint32: through float as unsigned values, truncated back as such
    vec(ctx, "Div", q, as_elem(ctx, x, "f32", wide), as_elem(ctx, y, "f32", wide))
    out = ctx.new_tile(elem, x.shape, name, result=result)
    qi = out if elem == "i32" and not rem else ctx.temp("i32", x.shape)
    cast(ctx, qi, q, unsigned=wide)
    if rem:
        vec(ctx, "Mul", qi, qi, y)
        vec(ctx, "Sub", out if elem == "i32" else qi, x, qi)
    if elem != "i32":
        cast(ctx, out, qi)
    return out


def after_scalar_writes(ctx, t: Tile) -> None:
    ctx.sync("S_V")
    if t.kind == "vecout":
        ctx.sync("S_MTE3")
    else:
        t.scalar_written = True  # a store that copies it out directly syncs S->MTE3 then


def before_scalar_reads(ctx) -> None:
    ctx.sync("MTE2_S")
    ctx.sync("V_S")


def _lower_as_data(ctx, op, v: ir.Value) -> Tile | None:
    """`v`, a block built from wrapped offsets (`x0 = xindex % n`, widened, broadcast, compared...),
    which stays symbolic for addressing, computed as data: `op`'s own rule, told that `v` is data
    (`structured` is False for it meanwhile), on tiles of its operands. The tile is a temporary: `v`
    stays symbolic for the ops that address memory with it."""
    held = ctx.vmap.get(v)
    as_data = ctx.ext.as_data
    as_data.append(v)
    try:
        ctx.lower_op(op)
    finally:
        as_data.pop()
    t = ctx.vmap.get(v)
    ctx.vmap[v] = held
    return t if isinstance(t, Tile) else None


def _mask_as_data(ctx, v: ir.Value) -> Tile:
    """A mask block with no bounds per dimension (`(r % L) >= k`, kept symbolic while it only masks a
    load lane by lane) as the bit mask its compare and logic ops make on tiles of their operands, the
    way `tl.where` computes such a condition: for a masked load with a block `other` (load.py), which
    selects `other` with it after the load."""
    owner = v.owner
    if not isinstance(owner, ir.Block) and (t := _lower_as_data(ctx, owner, v)) is not None:
        return t
    raise ctx.error("this mask (not bounds like `offs < n` per dimension) cannot be computed as a block on ascend "
                    "here; for a load with a block `other`, load with a scalar `other` and tl.where after it")


def _affine_i32(ctx, a, shape: tuple) -> Tile:
    """base + sum(stride_d * index_d) in int32 lanes: exact and wrapping as in C (float lanes lose
    integers past 2**24). The index along each dimension is the float iota cast to int32 (exact)."""
    out = ctx.new_tile("i32", shape)
    base = scalar_convert(ctx, ctx.lin(a.base), "i32")
    A.op("duplicate", [out.value, base, ctx.c64(out.padded)])
    for d, s in enumerate(a.strides):
        if s.is_zero():
            continue
        idx = ctx.temp("i32", shape)
        A.op("cast", [idx.value, ctx.iota(shape, d).value, ctx.c64(idx.count)], round="CAST_RINT")
        if s.as_const() != 1:
            A.op("vec_scalar", [idx.value, idx.value, scalar_convert(ctx, ctx.lin(s), "i32"), ctx.c64(idx.count)],
                 api="Muls")
        A.op("vec", [out.value, out.value, idx.value, ctx.c64(out.count)], api="Add")
    return out


def _affine_i64(ctx, a, shape: tuple) -> Tile:
    """base + sum(stride_d * index_d) in int64 lanes, lane by lane in scalar code: A2 has no 64-bit
    vector Add or Mul (asc-devkit Add.md, Mul.md), and int32 lanes would wrap a base past 2**31 (an
    int64 loaded from memory, `k * offs - c`)."""
    out = ctx.new_tile("i64", shape)
    base = ctx.lin(a.base)
    strides = [(d, ctx.lin(s)) for d, s in enumerate(a.strides) if not s.is_zero()]
    before_scalar_reads(ctx)  # the scratch may still be read by issued vector instructions
    loop = ctx.for_range(0, numel(shape))
    with ir.InsertionPoint(loop.body):
        lane, value = loop.induction_variable, base
        for d, s in strides:
            inner = numel(shape[d + 1:])
            idx = arith.DivSIOp(lane, ctx.c64(inner)).result if inner > 1 else lane
            if d > 0:
                idx = arith.RemSIOp(idx, ctx.c64(shape[d])).result
            value = ctx.add(value, ctx.mul(idx, s))
        A.op("set_value", [out.value, lane, value])
        scf.YieldOp([])
    after_scalar_writes(ctx, out)
    return out


def materialize(ctx, v: ir.Value) -> Tile:
    """A Struct (integer or mask block) as a Tile: from iota tiles built once before the grid loop."""
    shape = shape_of(v.type)
    elem = elem_of(v.type)
    if elem == "i1":
        b = ctx.ps.mask(v)
        if b is None:
            return _mask_as_data(ctx, v)
        bits = ctx.new_tile("ui8", shape)
        conds = list(b.dims)
        if not conds:
            conds = [(0, None)]
        parts = []
        for k, (d, lim) in enumerate(conds):
            limit = ctx.c64(shape[d] if shape else 1) if lim is None else ctx.lin(lim)
            if k == 0:
                for u in b.uniform:
                    on = arith.CmpIOp(arith.CmpIPredicate.sgt, ctx.lin(u), ctx.c64(0)).result
                    limit = arith.SelectOp(on, limit, ctx.c64(0)).result
            io = ctx.iota(shape or (1,), d)
            dst = bits if k == 0 else ctx.temp("ui8", shape)
            A.op("compare_scalar", [dst.value, io.value, arith.SIToFPOp(ir.F32Type.get(), limit).result,
                                    ctx.c64(io.padded)], mode="LT")
            parts.append(dst)
        u16 = A.local_type(ir.Type.parse("ui16"))
        for p in parts[1:]:
            views = [A.op("reinterpret", [t.value], u16) for t in (bits, bits, p)]
            A.op("vec", views + [ctx.c64(bits.bytes // 2)], api="And")
        return bits
    if elem.startswith("!xb.ptr"):
        raise ctx.error("a block of pointers cannot be used as data")
    a = ctx.ps.affine(v)
    owner = v.owner
    if a is None and not isinstance(owner, ir.Block) and owner.name in ("arith.remsi", "arith.divsi"):
        return divmod_tile(ctx, owner, bind=False)  # a wrapped offset (or a row index `i // n`) as data after all
    if a is None and not isinstance(owner, ir.Block) and ctx.ps.affine(v, wrapped=True) is not None and \
            (t := _lower_as_data(ctx, owner, v)) is not None:
        return t
    if a is None and ctx.ps.affine(v, wrapped=True) is not None:
        raise ctx.error("offsets that wrap around (`% n`) can address the operands of a dot (the Cube path) "
                        "or be stored as they are; other uses are not supported yet")
    if a is None:
        raise ctx.error("internal: integer block without structure")
    if elem == "i32":
        return _affine_i32(ctx, a, shape)
    if elem == "i64" and not all(s.is_zero() for s in a.strides):
        return _affine_i64(ctx, a, shape)
    if elem in ("i8", "i16") and not all(s.is_zero() for s in a.strides):
        # exact int32 lanes, then sign-extended or wrapped as C (and Triton) convert them
        lanes = _affine_i32(ctx, a, shape)
        out = ctx.new_tile(elem, shape)
        cast(ctx, out, lanes)
        ctx.release(lanes)
        return out
    if elem in ("i8", "i16", "i64"):
        # every lane the same: the scalar wrapped to the element's width as C (and Triton) wraps it,
        # not through float, whose cast back would saturate (-1 - 250 * 6289 is 613 in int16)
        t = ctx.new_tile(elem, shape)
        v = ctx.to64(ctx.lin(a.base))
        narrow = v if elem == "i64" else arith.TruncIOp(ir.IntegerType.get_signless(SIZE[elem] * 8), v).result
        fill(ctx, t, 0, t.padded, Splat(elem, shape, scalar=narrow))
        return t
    f = ctx.new_tile("f32", shape)
    base = arith.SIToFPOp(ir.F32Type.get(), ctx.lin(a.base)).result
    A.op("duplicate", [f.value, base, ctx.c64(f.padded)])
    for d, s in enumerate(a.strides):
        if s.is_zero():
            continue
        io = ctx.iota(shape, d)
        if s.as_const() == 1:
            A.op("vec", [f.value, f.value, io.value, ctx.c64(f.count)], api="Add")
        else:
            tmp = ctx.temp("f32", shape)
            A.op("vec_scalar", [tmp.value, io.value, arith.SIToFPOp(ir.F32Type.get(), ctx.lin(s)).result,
                                ctx.c64(f.count)], api="Muls")
            A.op("vec", [f.value, f.value, tmp.value, ctx.c64(f.count)], api="Add")
    if elem == "f32":
        return f
    out = ctx.new_tile(elem, shape)
    A.op("cast", [out.value, f.value, ctx.c64(f.count)], round="CAST_RINT")
    ctx.release(f)
    return out


FOLD = {"sum": "Add", "max": "Max", "min": "Min"}
REDUCE = {"sum": "ReduceSum", "max": "ReduceMax", "min": "ReduceMin", "argmax": "ReduceMax",
          "argmin": "ReduceMin"}


def reduce_tmp_elems(count: int, sz: int, cal_index: bool) -> int:
    """Scratch ReduceMax/ReduceMin need (the emulator checks the same rule)."""
    per, blk = 256 // sz, 32 // sz
    first = max(1, -(-count // per))
    need = round_up(2 * first, blk)
    if cal_index:
        need += round_up(2 * -(-2 * first // per), blk)
    return need


def reduce_all(ctx, t: Tile, kind: str, name):
    """A scalar: the fold-to-256-bytes idiom, then one count-form reduction."""
    ce = "f32" if t.elem not in ("f16", "f32") else t.elem
    if ce != t.elem:
        t = as_elem(ctx, t, ce)
    sz = SIZE[ce]
    per = 256 // sz
    n = t.count
    src, count = t, n
    if kind in FOLD and n >= 2 * per and n & (n - 1) == 0:
        half = n // 2
        work = ctx.temp(ce, half)
        A.op("vec", [work.value, t.value, ctx.at(t.value, half), ctx.c64(half)], api=FOLD[kind])
        while half > per:
            half //= 2
            A.op("vec", [work.value, work.value, ctx.at(work.value, half), ctx.c64(half)], api=FOLD[kind])
        src, count = work, half
    dst = ctx.temp(ce, 32 // sz)
    tmp = ctx.temp(ce, reduce_tmp_elems(count, sz, kind.startswith("arg")))
    A.op("reduce", [dst.value, src.value, tmp.value, ctx.c64(count)], api=REDUCE[kind],
         cal_index=kind.startswith("arg"))
    ctx.sync("V_S")
    kw = {"name": name} if name else {}
    if kind.startswith("arg"):
        it = "i32" if sz == 4 else "i16"  # the index is stored in the bits of dst[1]
        bits = A.op("reinterpret", [dst.value], A.local_type(ir.Type.parse(it)))
        idx = A.op("get_value", [bits, ctx.c64(1)], ir.Type.parse(it))
        if it == "i16":
            idx = arith.ExtUIOp(ir.IntegerType.get_signless(32), idx).result
        return idx, kw
    return A.op("get_value", [dst.value, ctx.c64(0)], ir.Type.parse(ce), **kw), kw
