"""A hand-off kernel's rows on both vector cores of an AI Core (MIX_AIC_1_2), the Cube serving both.

Fused attention hands both dots of each key step to the Cube (cube/handoff.py) and does the rest (the
online softmax, `exp2`, the rescale of `acc`, `p`'s conversion) on a vector core: one AIV per AI Core is
the bound. The hand-written 910B kernels split each score tile's rows over the two AIVs. So does this
plan (`AscendPlan.row_split`): `xb-strip-mine` computes the program in 2 chunks along the rows of the
handed-off dots (`dot_rows`: `offs_m`'s `arange(0, BM)` becomes `arange(0, BM / 2) + k * BM / 2`, every
block on that axis takes BM / 2 rows, loads and stores their rows, the dots their A rows), and the
lowering shares the chunk loop out: AIV k (`GetSubBlockIdx()`) runs chunk k, the AIC runs chunk 0 (the
index is read in an AIV section: the API defines it on the AIVs only) with every handed-off dot doubled to
BM rows. (A kernel that overflows UB is split in 4 or 8 chunks the same way: AIV k runs chunks k, k + 2,
..., the AIC chunks 0, 2, ..., each for the rows of two.) At each dot:
  - an A operand the Cube copies from GM (attention's q) is copied 2 x BM / 2 rows from chunk 0's first
    row (the rows are consecutive: the chunk's rows are k * BM / 2 + arange), its valid rows from the
    same limits; an A operand the vector core computes (`p`) is written by AIV k to rows
    [k * BM / 2, (k + 1) * BM / 2) of the input slot, and the Cube reads BM rows;
  - the Cube Fixpipes the whole BM x BN tile, and AIV k reads its BM / 2 rows of it;
  - the flags are the hand-off's, mode 2: a flag the AIC sets reaches both AIVs, and a flag the AIVs set
    counts on the AIC once both have set it, so the AIC waits for both halves of `p` (IN_READY) and for
    both reads of the output slot (OUT_FREE) before it uses or overwrites a slot.
The split is taken only where it is exact (`plan_row_split`, else None with the reason in the metadata,
and the kernel stays on one vector core: the planner keeps that plan): an even number of chunks, every
handed-off dot inside a chunk loop with BM / 2 rows, the control flow between the chunk loop and each dot
independent of the chunk (the AIC runs chunk 0's steps for both), chunk loops that carry nothing, no side
effect outside them, and chunks whose rows are whole 16-row fractals of the Cube's A tile; an A operand
read transposed from GM, or under a condition on the whole tile, fails the lowering of that plan (handoff.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf

from ....dialects import ascendc as A
from ..values import shape_of
from .match import owner_of
from .mixed import SIDE_EFFECTS, every_other, walk_ops

CHUNKS = "xb.chunks"
FRACTAL_ROWS = 16  # rows of a 16 x (32 B) fractal of the Cube's A tile: each AIV's half starts on one


@dataclass(frozen=True)
class RowSplit:
    """A row split taken: each vector core computes `rows` rows of every handed-off dot's `rows * 2`."""

    rows: int
    cores: int = 2


def dot_rows(kernel):
    """The axis `xb-strip-mine` splits for a row-split plan: the rows of the kernel's first 2-D dot
    (None: no such dot, the pass picks its default)."""
    stack = [kernel]
    while stack:
        o = stack.pop()
        o = o.operation if hasattr(o, "operation") else o
        if o.name == "xb.dot" and len(shape_of(o.results[0].type)) == 2:
            return o.results[0], 0
        for region in reversed(list(o.regions)):
            for b in reversed(list(region.blocks)):
                stack.extend(reversed([x.operation for x in b.operations]))
    return None


def plan_row_split(ctx, dots) -> RowSplit | None:
    """The row split of a `row_split` plan's kernel, or None (its reason in `metadata["row_split"]`)."""
    if not ctx.plan.row_split:
        return None
    why = _refusal(ctx, dots)
    if why is not None:
        ctx.meta["row_split"] = {"taken": False, "why": why}
        return None
    rows = shape_of(dots[0].results[0].type)[0]
    ctx.meta["row_split"] = {"taken": True, "rows": rows, "cores": 2}
    return RowSplit(rows)


def _refusal(ctx, dots) -> str | None:
    if not getattr(ctx.opts, "row_split", False) or ctx.plan.vector_cores < 2:
        return "the option row_split is off"
    if ctx.plan.split % 2:
        return "an odd number of chunks"
    if not dots:
        return "no dot is handed to the vector core"
    rows = set()
    for dot in dots:
        shape = shape_of(dot.results[0].type)
        if len(shape) != 2:
            return "a batched dot"
        rows.add(shape[0])
        loop = _chunk_loop(dot)
        if loop is None:
            return "a dot outside the loop over the row chunks"
        if ir.IntegerAttr(loop.attributes[CHUNKS]).value % 2:
            return "an odd number of chunks"
        if _depends_on_chunk(dot, loop):
            return "control flow around a dot depends on the chunk (the Cube runs one chunk's steps for two)"
    if len(rows) != 1:
        return "dots of different row counts"
    half = rows.pop()
    if half % FRACTAL_ROWS:
        return f"{half} rows a vector core are not whole {FRACTAL_ROWS}-row fractals of the Cube's A tile"
    split = ctx.meta.get("split") or {}
    if not split.get("rows") or split.get("chunk") != half:
        return "the chunks are not the dots' rows"
    body = ctx.xb_module.body.operations[0].regions[0].blocks[0]
    top = [o.operation for o in body.operations]
    chunks = [o for o in top if o.name == "scf.for" and CHUNKS in o.attributes]
    if any(len(o.results) for o in chunks):
        return "a chunk loop carries a value from chunk to chunk (a reduction over the rows)"
    if any(o.name in SIDE_EFFECTS for o in walk_ops([o for o in top if o not in chunks])):
        return "a store or other side effect outside the chunk loops (both vector cores would make it)"
    return None


def _chunk_loop(op):
    """The chunk loop (`xb.chunks`) around `op`, or None."""
    p = op.parent
    while p is not None:
        p = p.operation if hasattr(p, "operation") else p
        if p.name == "scf.for" and CHUNKS in p.attributes:
            return p
        if p.name == "func.func":
            return None
        p = p.parent
    return None


def _depends_on_chunk(dot, loop) -> bool:
    """Whether a loop bound or condition between the chunk loop and `dot` depends on the chunk index."""
    iv = loop.regions[0].blocks[0].arguments[0]
    p = dot.parent
    while p is not None:
        p = p.operation if hasattr(p, "operation") else p
        if p == loop:
            return False
        if p.name == "scf.while":
            return True  # its condition is computed in its body: not followed here
        ins = list(p.operands)[:3] if p.name == "scf.for" else list(p.operands)[:1] if p.name == "scf.if" else []
        if any(_reaches(v, iv) for v in ins):
            return True
        p = p.parent
    return False


def _reaches(v, iv) -> bool:
    """Whether value `v` is computed from `iv` (through the ops that define it)."""
    todo, seen = [v], set()
    while todo:
        x = todo.pop()
        if x == iv:
            return True
        if x in seen:
            continue
        seen.add(x)
        o = owner_of(x)
        if o is not None:
            todo.extend(o.operands)
    return False


def share_rows(ctx):
    """The `ctx.ext.share_loop` of a row split: a chunk loop runs chunks lb + s, lb + s + 2, ... where s is
    `GetSubBlockIdx()` on an AIV and 0 on the AIC (read once before the grid loop, in an AIV section: the API
    names the AIVs' index only)."""
    i64 = ir.IntegerType.get_signless(64)
    with ctx.before_grid:
        aiv = A.op("core_is", [], ir.IntegerType.get_signless(1), core="AIV")
        sec = scf.IfOp(aiv, [i64], has_else=True)  # (the printer declares the result 0 before the AIV's branch)
        with ir.InsertionPoint(sec.then_block):
            scf.YieldOp([A.op("sub_block_idx", [], i64)])
        with ir.InsertionPoint(sec.else_block):
            scf.YieldOp([arith.ConstantOp(i64, 0).result])
    half = sec.results[0]

    def share(op, lb, step):
        return every_other(lb, step, half) if CHUNKS in op.attributes else (lb, step)

    return share


def sub_block(ctx):
    """GetSubBlockIdx() as i64: this AIV's half (0 on the AIC)."""
    return A.op("sub_block_idx", [], ctx.i64)


def half_offset(ctx, elems_per_half: int):
    """Elements before this AIV's half of a tile of two halves of `elems_per_half` elements."""
    return arith.MulIOp(sub_block(ctx), ctx.c64(elems_per_half)).result
