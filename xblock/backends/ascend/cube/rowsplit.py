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
A program of 4 or more chunks may also run as several instances, each on its own AI Core with its pairs of
chunks (`plan_groups`, option `row_groups`): a launch of few programs (BLOCK_M 128) fills more cores.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf

from ....dialects import ascendc as A
from ..values import shape_of
from .match import owner_of
from .mixed import SIDE_EFFECTS, every_other, state, walk_ops

CHUNKS = "xb.chunks"
FRACTAL_ROWS = 16  # rows of a 16 x (32 B) fractal of the Cube's A tile: each AIV's half starts on one


@dataclass(frozen=True)
class RowSplit:
    """A row split taken: each vector core computes `rows` rows of every handed-off dot's `rows * 2`."""

    rows: int
    cores: int = 2
    groups: int = 1  # the most AI Cores a program's pairs of chunks may be spread over (`plan_groups`)


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
    return RowSplit(rows, groups=plan_groups(ctx))


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


GROUPS_ARG = "xbRowGroups"  # the tiling field the host sets: G, the instances of each program


def plan_groups(ctx) -> int:
    """The most AI Cores each program of a row-split kernel may be spread over (1: none; the reason in
    `metadata["row_split"]["groups"]`), and, when more than one, the program's decoding for them.

    A program whose rows are in N >= 4 chunks is N / 2 pairs, each a whole step of the AIC (one dot of two
    chunks' rows) and one chunk of each AIV. Launched as G instances along x (the host's choice, G a power of
    two dividing N / 2: `options.row_groups_for`, `tiling.xbRowGroups`, gridX = G x the user's x), instance
    x' computes program x' / G's pairs [g N / 2G, (g + 1) N / 2G), g = x' mod G: every chunk loop runs
    those chunks only (`share_rows`), the code outside the chunk loops, free of side effects (the row split's
    condition), runs once per instance. Exact for the reasons the row split is: the chunks of a loop are
    computed independently (each vector core already runs half of them), and every chunk loop has the same
    chunks, so an instance's loops cover the same rows. BLOCK_M 128 attention at S = 4096 on 24 AI Cores: 32
    programs take 2 rounds; 64 half programs take 3 rounds of half the work (the host picks G = 2)."""
    why = _groups_refusal(ctx)
    if isinstance(why, str):
        ctx.meta["row_split"]["groups"] = {"most": 1, "why": why}
        return 1
    most = why
    ctx.meta["row_split"]["groups"] = {"most": most}
    ctx.meta["row_groups"] = {"most": most, "arg": GROUPS_ARG}
    with ctx.before_grid:
        g_count = ctx.named(A.op("tiling_field", [], ctx.i64, name=GROUPS_ARG), "groups")
    ctx.fields.insert(len(ctx.fields) - 3, (GROUPS_ARG, "i64"))  # before numPrograms, gridX, gridY
    with ir.InsertionPoint.at_block_begin(ctx.grid.body):
        x = arith.RemSIOp(ctx.pid, ctx.to64(ctx.grid_x)).result
        pid = arith.TruncIOp(ctx.i32, arith.DivSIOp(x, g_count).result).result
        pid.owner.attributes["name"] = ir.StringAttr.get("pidx")
        ctx.program_ids[0] = pid
        group = ctx.named(arith.RemSIOp(x, g_count).result, "group")
    state(ctx).row_groups = (group, g_count)
    return most


def _groups_refusal(ctx):
    """Why a row-split kernel's programs cannot be spread over AI Cores, or the most groups (an int)."""
    if not getattr(ctx.opts, "row_groups", False):
        return "the option row_groups is off"
    if ctx.plan.rows > 1:
        return "the kernel is coarsened (its instances compute several programs)"
    if state(ctx).join > 1:
        return "the kernel's programs are joined"
    if 0 in ctx.program_ids:
        return "internal: program_id(0) was lowered before the row split was planned"
    body = ctx.xb_module.body.operations[0].regions[0].blocks[0]
    top = [o.operation for o in body.operations]
    counts = set()
    for o in walk_ops(top):
        if o.name == "scf.for" and CHUNKS in o.attributes:
            if o not in top:
                return "a chunk loop inside control flow"
            if any(_constant(v) is None for v in list(o.operands)[:3]):
                return "a chunk loop with bounds not known at compile time"
            counts.add(ir.IntegerAttr(o.attributes[CHUNKS]).value)
        elif o.name == "xb.num_programs" and ir.IntegerAttr(o.attributes["axis"]).value == 0:
            return "num_programs(0) is read (it would count the instances)"
        elif o.name in ("xb.print", "xb.assert"):
            return "a print or device_assert (its report names the program)"
    if len(counts) != 1:
        return "chunk loops of different chunk counts"
    pairs = counts.pop() // 2
    most = 1
    while pairs % (most * 2) == 0:
        most *= 2
    if most == 1:
        return "one pair of chunks a program (nothing to spread)"
    return most


def _constant(v):
    o = owner_of(v)
    return ir.IntegerAttr(o.attributes["value"]).value if o is not None and o.name == "arith.constant" else None


def share_rows(ctx):
    """The `ctx.ext.share_loop` of a row split: a chunk loop runs chunks lb + s, lb + s + 2, ... where s is
    `GetSubBlockIdx()` on an AIV and 0 on the AIC (read once before the grid loop, in an AIV section: the API
    names the AIVs' index only). In a row-grouped kernel (`plan_groups`) it runs its group's share of them."""
    i64 = ir.IntegerType.get_signless(64)
    with ctx.before_grid:
        aiv = A.op("core_is", [], ir.IntegerType.get_signless(1), core="AIV")
        sec = scf.IfOp(aiv, [i64], has_else=True)  # (the printer declares the result 0 before the AIV's branch)
        with ir.InsertionPoint(sec.then_block):
            scf.YieldOp([A.op("sub_block_idx", [], i64)])
        with ir.InsertionPoint(sec.else_block):
            scf.YieldOp([arith.ConstantOp(i64, 0).result])
    half = sec.results[0]

    grouped = state(ctx).row_groups

    def share(op, lb, step):
        if CHUNKS not in op.attributes:
            return lb, step
        if grouped is None:
            return every_other(lb, step, half)
        group, count = (v if v.type == lb.type else arith.TruncIOp(lb.type, v).result for v in grouped)
        lo, hi = (_constant(v) for v in list(op.operands)[:2])
        span = arith.DivSIOp(arith.ConstantOp(lb.type, hi - lo).result, count).result  # exact: G divides N / 2
        first = arith.AddIOp(lb, arith.MulIOp(group, span).result).result
        return (*every_other(first, step, half), arith.AddIOp(first, span).result)

    return share


def sub_block(ctx):
    """GetSubBlockIdx() as i64: this AIV's half (0 on the AIC)."""
    return A.op("sub_block_idx", [], ctx.i64)


def half_offset(ctx, elems_per_half: int):
    """Elements before this AIV's half of a tile of two halves of `elems_per_half` elements."""
    return arith.MulIOp(sub_block(ctx), ctx.c64(elems_per_half)).result
