"""Inputs a kernel streams: every program reads its own part of the argument, once. Their GlobalTensors
bypass L2 when the launch moves more than L2 holds (`GlobalTensor::SetL2CacheHint(CACHE_MODE_DISABLE)`).

Why (asc-devkit, docs/zh/guide/算子实践参考/SIMD算子性能优化/内存访问/设置合理的L2-CacheMode.md, and the
add_high_performance example's case 5): reads and writes of GM go through L2 by default; when a launch
moves more data than L2 holds, L2 replaces lines, and a replaced line that was written must first be
written back to HBM, taking HBM bandwidth from the reads. Data read only once gains nothing from L2;
kept out of it (CACHE_MODE_DISABLE), it leaves L2 to the outputs (and to what is read again). The
published Add 8192^2 fp16 went from 264.0 to 187.7 us with its two inputs kept out of L2.

The rule, decided before lowering from the kernel as written (`analyse`), for each pointer argument:
- the kernel never writes it (`metadata["written_args"]`), and makes no pointer from an integer;
- it is read by exactly one `xb.load`, at the top level of the kernel (not in a loop), and by no other
  op (a descriptor, an atomic, a dot's own copy of it all count as other reads);
- that load is a tile of rows (`PointerStructure.tile_access`) whose offset is
  `rowIndex * S + colIndex` with `rowIndex = pid_a * Ea + r` (r < rows <= Ea) and
  `colIndex = pid_b * Eb + c` (c < cols <= Eb; either part optional), where pid_a and pid_b are distinct
  program ids and the rest of the offset depends on neither, and the column index is held below the row
  stride S (by a mask `colIndex < S`, or S a constant at least the column span): then no byte is read
  by two programs or twice by one. A 1-D block `pid * E + arange(0, n)` (n <= E) is the case without
  rows. Its rows are at least 512 B (`WINDOW`), and it is a block (a scalar load goes through the core's
  DataCache, 64-B lines that neighbouring programs share). A program id the offset does not use must
  have one program on its axis: the hint's guard checks it at run time (`gridX`, `gridY`, `numPrograms`).
The hint is set at run time when the launch's programs move more than L2 holds (`numPrograms` times
the bytes one program loads and stores at the top level, `SocProfile.l2_bytes`); parts without an L2
hint (310P) get none.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf

from ....dialects import ascendc as A
from ....dialects.locations import kernel_of
from ....passes import written_args
from ....passes.pointer_structure import Lin, PointerStructure, Wrapped

_THROUGH = ("xb.addptr", "xb.splat", "xb.broadcast", "xb.expand_dims", "xb.reshape", "xb.trans", "xb.ptr_cast",
            "arith.select")
# the GM request window (cost.py `same_address_window`): a tile whose rows are shorter shares its windows
# with the next program's, which L2 would serve once; out of L2, each core would fetch them from HBM
WINDOW = 512


@dataclass(frozen=True)
class Streamed:
    """The kernel's streamed inputs: `args`, ((argument name, the program-id axes its offset uses), ...);
    `program_bytes`, the bytes one program loads and stores at the top level of the kernel."""

    args: tuple = ()
    program_bytes: int = 0

    def names(self) -> tuple:
        return tuple(n for n, _ in self.args)

    def axes(self, name: str) -> tuple:
        return dict(self.args)[name]


def _lanes_bytes(t: ir.Type) -> int:
    if not str(t).startswith("tensor<"):
        return 0
    rt = ir.RankedTensorType(t)
    n = 1
    for d in rt.shape:
        n *= d
    e = rt.element_type
    bits = ir.IntegerType(e).width if isinstance(e, ir.IntegerType) else ir.FloatType(e).width \
        if isinstance(e, ir.FloatType) else 64
    return n * max(1, bits // 8)


def analyse(module: ir.Module, written, makes_pointers: bool = False) -> Streamed:
    """The streamed inputs of the kernel of `module` (the module docstring); nothing when an access
    cannot be traced to arguments."""
    kernel = kernel_of(module)
    entry = kernel.regions[0].blocks[0]
    if written is None or makes_pointers:
        return Streamed()
    names = [ir.StringAttr(a).value for a in ir.ArrayAttr(kernel.attributes["xb.arg_names"])]
    loads: dict = {}  # argument position -> [load ops]
    other: set = set()  # arguments read some other way
    program_bytes = 0
    traced = True

    def visit(op):
        nonlocal program_bytes, traced
        op = op.operation
        if op.name in _THROUGH:
            return ir.WalkResult.ADVANCE
        if op.name in ("xb.load", "xb.store") and op.block == entry:
            program_bytes += _lanes_bytes(op.results[0].type if op.name == "xb.load" else op.operands[1].type)
        for i, v in enumerate(op.operands):
            if "!xb.ptr" not in str(v.type):
                continue
            roots = written_args.roots(v, entry)
            if roots is None:
                traced = False
                continue
            for r in roots:
                if op.name == "xb.load" and i == 0:
                    loads.setdefault(r, []).append(op)
                else:
                    other.add(r)
        return ir.WalkResult.ADVANCE

    kernel.operation.walk(visit)
    if not traced:
        return Streamed()
    ps = PointerStructure()
    out = []
    for r, ops in sorted(loads.items()):
        if r in other or r in set(written) or len(ops) != 1 or ops[0].block != entry:
            continue
        axes = _disjoint(ps, ops[0])
        if axes is not None:
            out.append((names[r], axes))
    return Streamed(tuple(out), program_bytes)


def _unwrap(ps: PointerStructure, lin: Lin) -> Lin:
    """`lin` with every wrapped polynomial replaced by the polynomial (the hint is a performance hint:
    an offset that wraps at 2**31 is not one a streamed kernel computes)."""
    out = Lin()
    for mono, c in lin.terms.items():
        term = Lin.const(c)
        for k in mono:
            v = ps.values[k]
            term = term * (_unwrap(ps, v.lin) if isinstance(v, Wrapped) else Lin.var(k))
        out = out + term
    return out


def _pid_axis(ps: PointerStructure, k: int) -> int | None:
    v = ps.values[k]
    if isinstance(v, Wrapped) or isinstance(v.owner, ir.Block):
        return None
    op = v.owner.operation
    return ir.IntegerAttr(op.attributes["axis"]).value if op.name == "xb.program_id" else None


def _argument(ps: PointerStructure, k: int) -> bool:
    v = ps.values[k]
    return not isinstance(v, Wrapped) and isinstance(v.owner, ir.Block)


def _split(ps: PointerStructure, base: Lin) -> tuple | None:
    """({pid axis: its coefficient}, {pid axis: its variable}, rest) of an offset linear in the program
    ids, whose other terms are of kernel arguments and constants; None otherwise."""
    coeff: dict = {}
    keys: dict = {}
    rest = Lin()
    for mono, c in base.terms.items():
        pids = [k for k in mono if _pid_axis(ps, k) is not None]
        if any(not _argument(ps, k) for k in mono if k not in pids) or len(pids) > 1:
            return None
        if not pids:
            rest = rest + Lin({mono: c})
            continue
        axis = _pid_axis(ps, pids[0])
        if keys.setdefault(axis, pids[0]) != pids[0]:
            return None
        others = list(mono)
        others.remove(pids[0])
        coeff[axis] = coeff.get(axis, Lin()) + Lin({tuple(others): c})
    return coeff, keys, rest


def _ratio(a: Lin, b: Lin) -> int | None:
    """The positive integer e with a == b * e, else None."""
    if b.is_zero() or a.is_zero():
        return None
    mono, c = next(iter(b.terms.items()))
    if mono not in a.terms or a.terms[mono] % c:
        return None
    e = a.terms[mono] // c
    return e if e > 0 and b * Lin.const(e) == a else None


def _disjoint(ps: PointerStructure, load) -> tuple | None:
    """The program-id axes the load's offset uses, when no byte it reads is read by two programs or
    twice (the module docstring); else None."""
    seg = list(ir.DenseI32ArrayAttr(load.attributes["operandSegmentSizes"]))
    acc = ps.tile_access(load.operands[0], load.operands[1] if seg[1] else None)
    t = load.results[0].type
    row_bytes = acc.cols * _lanes_bytes(t) // max(1, acc.rows * acc.cols) if acc is not None else 0
    if acc is None or acc.assumed is not None or row_bytes < WINDOW:
        return None  # a gather, wrapped offsets, short rows or a scalar (_lanes_bytes 0)
    split = _split(ps, _unwrap(ps, acc.base))
    if split is None or not split[0]:
        return None  # the same bytes in every program
    coeff, keys, _ = split
    stride = _unwrap(ps, acc.row_stride) if acc.rows > 1 else None
    row_axis = col_axis = None
    for axis, k in coeff.items():
        e = _ratio(k, stride) if stride is not None else None
        if e is not None and e >= acc.rows and row_axis is None:
            row_axis = axis
        elif k.as_const() is not None and k.as_const() >= acc.cols and col_axis is None:
            col_axis = axis
        elif stride is None and acc.rows == 1 and k.as_const() is None and row_axis is None:
            row_axis, stride = axis, k  # one row per program: pid * S + c
        else:
            return None
    if stride is not None:  # rows: the column index must stay below the row stride
        shift = coeff[col_axis] * Lin.var(keys[col_axis]) if col_axis is not None else Lin()
        limits = [_unwrap(ps, lim) + shift for lim in acc.col_limits]
        bounded = any(lim == stride for lim in limits)
        if not bounded and col_axis is None:
            s = stride.as_const()
            bounded = s is not None and acc.cols <= s
        if not bounded:
            return None
    return tuple(sorted(coeff))


def lower_hints(ctx, gms: dict) -> None:
    """Before the grid loop: `if (numPrograms * bytes > L2 [&& the unused program-id axes have one
    program]) { xGm.SetL2CacheHint(CacheMode::CACHE_MODE_DISABLE); }` for each input of `ctx.plan.l2_bypass`
    (`gms`: argument name -> its GlobalTensor). `ctx.meta["streamed"]` holds what `analyse` found."""
    found = ctx.meta.get("streamed") or {}
    axes = {n: tuple(a) for n, a in found.get("args") or ()}
    l2 = ctx.soc.l2_bytes
    names = [n for n in ctx.plan.l2_bypass if n in gms and n in axes]
    if not names or not l2:
        return
    rows = ctx.plan.rows  # a coarsened instance computes `rows` programs of axis 0
    per = int(found.get("program_bytes") or 0) * rows
    if per <= 0:
        return

    def const(v: int, t) -> ir.Value:
        return arith.ConstantOp(t, v).result

    moved = arith.MulIOp(ctx.num_programs, const(per, ctx.i64)).result
    big = arith.CmpIOp(arith.CmpIPredicate.sgt, moved, const(l2, ctx.i64)).result
    groups: dict = {}  # the inputs of one guard: the program-id axes their offsets use
    for name in names:
        if 0 in axes[name] or rows == 1:  # else a coarsened instance's programs would read the same part
            groups.setdefault(axes[name], []).append(name)
    for used, group in groups.items():
        cond = big
        if 0 not in used:
            cond = arith.AndIOp(cond, arith.CmpIOp(arith.CmpIPredicate.eq, ctx.grid_x, const(1, ctx.i32)).result).result
        if 1 not in used:
            cond = arith.AndIOp(cond, arith.CmpIOp(arith.CmpIPredicate.eq, ctx.grid_y, const(1, ctx.i32)).result).result
        if 2 not in used:
            gx, gy = arith.ExtSIOp(ctx.i64, ctx.grid_x).result, arith.ExtSIOp(ctx.i64, ctx.grid_y).result
            xy = arith.MulIOp(gx, gy).result
            cond = arith.AndIOp(cond, arith.CmpIOp(arith.CmpIPredicate.eq, ctx.num_programs, xy).result).result
        guard = scf.IfOp(cond, [], has_else=False)
        with ir.InsertionPoint(guard.then_block):
            for name in group:
                A.op("l2_cache_hint", [gms[name]], mode="disable")
            scf.YieldOp([])


__all__ = ["Streamed", "analyse", "lower_hints"]
