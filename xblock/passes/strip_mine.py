"""xb-strip-mine: compute a kernel's blocks in chunks along one axis, in loops over the chunks.

A backend whose local memory cannot hold a kernel's blocks (a GPU-sized BLOCK of 65536 elements, a
128x256 tile) calls `run(module, factor)` on a copy of the xb module, with factor 2, 4, 8, ...,
until the blocks fit; the user's BLOCK stays the logical size. The pass is target-agnostic.

**The split axis.** `block_axes` groups the dimensions of all blocks into logical axes (on a copy
whose aranges and splats CSE shared between axes are given one copy per use first:
`shared_sources`). The axis split is the first non-unit dimension of the largest block (rows of a
2-D tile, the only axis of a 1-D one), with every other axis of the same extent found at that
position in blocks of that rank (two independent `arange(0, BLOCK)`), unless a block holds it beside
the split axis (the keys of an attention score block as long as its queries). A block *on* the split
axis (extent E, chunk C = E / factor) is computed C elements (rows) at a time; blocks off it and
scalars are left alone.

**Sinks and cones.** Ops that consume blocks on the split axis without producing one are sinks:
stores, `atomic_add` whose old value is unused, `device_assert`, reductions along the split axis
(`sum`, `max`, `min`, `argmax`, `argmin`, `prod`, `xor_sum`, a combine function with scalar results,
`histogram`). A sink's cone is every op on the split axis it depends on. Each sink goes into an
`scf.for` over the chunks that recomputes its cone for chunk k: `arange(s, s + E)` becomes
`arange(s, s + C) + k * C`, splats, broadcasts and splat constants get the chunk shape, loads and
stores the chunk's pointers and masks, element-wise ops (and `scf.for/if/while` that carry blocks on
the axis and are free of side effects) just change shape. A dot whose rows (or batch) are split and
whose `b` is not is the chunk's rows of the product, so a loop carrying an attention's accumulator,
row maxima and sums runs whole per chunk of query rows; a reshape that keeps the split dimension in
its leading dimensions (`tl.interleave`) just changes shape, and a reshape of a row broadcast into
rows all alike (AWQ's nibble shifts) becomes the same row broadcast to the chunk. Reductions across
the axis stay inside a chunk. A reduction along it carries an accumulator through the loop (a
scalar, or a block for axis 0 of a 2-D tile): the partial reduction of each chunk combined with it
(`sum` in f32 for f16/bf16; `max`/`min` ignore NaN as the reduction does; `argmax`/`argmin` carry
the best value and its index, first index on ties; a combine function is applied to the carried and
the partial values). A scan along the axis (`cumsum`, `cumprod`) carries the running total: chunk
k's scan plus the total of the chunks before it (a reverse scan walks the chunks backwards).

**Phases.** A sink that uses the result of a reduction (softmax: `max`, then `sum(exp(x - max))`,
then the store) goes into a later loop than that reduction, which recomputes (reloads) its cone: a
kernel becomes a sequence of loops and the scalar code between them. Loop positions respect every
dependence, and memory order: accesses that may touch the same kernel argument (`written_args`)
keep their program order, two stores to one argument never share a loop, and a load recomputed in
a loop must see the memory it saw in the original program (only an in-place update, a store to the
very pointers loaded in the same loop, may share its loop with the store). Ops inside
`scf.for/if/while` bodies are split in their own block the same way.

**Kept whole.** A backend may name ops that stay whole (`keep`): the Cube unit's K loop of a dot,
whose accumulator never lives in the local memory being split. Such an op, and the blocks it is
computed from, are left in place, computed once; a chunk loop that uses its result takes the
chunk's rows of it (`tensor.extract_slice`). The chunk loops the pass makes carry the attribute
`xb.chunks` (the factor), so a backend can share them out between cores.

**Refused** (`Refused.reason` says which op and why): reshape (other than above), cat, gather (sort,
topk, flip), dots whose `b` or contracted dimension is on the split axis, atomic_cas, atomics whose
old value is used, device_print, non-splat constants and transposes that put the split axis twice in
a block; scans with a combine function along the axis; reductions with a combine function to a
block; loops carrying blocks on the axis that store or reduce along it, or reshape a block onto it; a
load that would see memory the program stored to after (or before) it; volatile loads read again by
several loops."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf, tensor

from ..dialects import xb
from ..dialects.locations import kernel_of, op_loc
from . import dce, shared_sources, written_args
from .block_axes import BlockAxes, is_splat_constant, kept_prefix, nbytes, shape_of
from .chunk_folds import Folds
from .pointer_structure import PointerStructure

NAME = "xb-strip-mine"

# ops whose chunk comes from the chunks of their operands alone: copied with chunk shapes
_CHUNKWISE = ("xb.splat", "xb.broadcast", "xb.expand_dims", "xb.addptr", "xb.load", "xb.fp_to_fp", "xb.ptr_cast",
              "xb.int_to_ptr", "xb.ptr_to_int", "xb.trans", "xb.join", "xb.split", "xb.arange", "xb.reduce",
              "xb.scan", "arith.constant", "xb.dot", "xb.reshape")  # (the dots and reshapes needs_whole allows)
_REGIONS = ("scf.for", "scf.if", "scf.while")
_WHY = {  # ops whose result depends on the whole block along the split axis
    "xb.reshape": "tl.reshape (view, ravel) regroups the elements of the split axis",  # unless kept in place
    "xb.cat": "tl.cat concatenates blocks along the split axis",
    "xb.gather": "tl.gather (and tl.sort, topk, flip, which use it) reads across the split axis",
    "xb.dot": "tl.dot multiplies whole blocks (only its rows, or its batch, can be split)",
    "xb.atomic_cas": "atomic_cas returns old values that later chunks would see changed",
    "xb.print": "device_print prints whole blocks",
    "xb.histogram": "a histogram with as many bins as the split axis is long",
}
_FOLDS = ("xb.reduce", "xb.histogram")
_NOTHING = frozenset()


class Refused(Exception):
    """The pass cannot split this kernel; `reason` says why, `where` is the op (or None), `loc` its
    (file, line, col)."""

    def __init__(self, reason: str, where=None, exhausted: bool = False):
        super().__init__(reason)
        self.reason, self.where, self.exhausted = reason, where, exhausted
        self.loc = op_loc(where) if where is not None else None  # (file, line, col) of `where`


@dataclass(frozen=True)
class Split:
    """What the pass did: the split axis' extent, the factor, the chunk and the loops it made; `rows`
    when the axis is the rows of 2-D blocks."""

    extent: int
    factor: int
    chunk: int
    loops: int
    rows: bool = False

    def describe(self) -> str:
        return f"{self.factor} chunks of {self.chunk} {'row' if self.rows else 'element'}{'s' * (self.chunk > 1)}"


def run(module: ir.Module, factor: int, keep=None, along=None) -> Split:
    """Split the kernel's blocks into `factor` chunks along one axis (module docstring); `keep(op)`
    says which ops of the kernel's body stay whole (none by default); `along(kernel)`, when given, names
    the axis as (a block value, its dimension) instead of the largest block's first (a backend that splits
    a dot's rows between cores), or None for the default.

    Raises:
        Refused: the kernel cannot be split (`exhausted` when `factor` exceeds the axis' extent).
    """
    kernel = kernel_of(module)
    with module.context, ir.Location.unknown():
        sources = shared_sources.untie(kernel)  # an arange CSE shared between axes ties none of them
    kept, whole = _kept(kernel, keep)
    # what stays whole ties none of the chunked axes, nor do constant blocks it shares with them
    axes = BlockAxes(kernel, opaque=kept, loose_splats=bool(kept))
    shared_sources.retie(sources, axes)
    if not axes.values:
        raise Refused("the kernel has no blocks")
    # a loose splat constant is on no axis of its own: it takes the chunk shape of the block it is used
    # beside (`splat_for`), or of the axis a loop or join ties it to; never an axis split for itself
    candidates = [v for v in axes.values if not _in_kept(v, kept, whole) and not (axes.loose and is_splat_constant(v))]
    big = max(candidates or axes.values, key=nbytes)
    picked = along(kernel) if along is not None else None
    if picked is not None and picked[0] in axes.values:
        big = picked[0]
    shape = shape_of(big)
    d = picked[1] if picked is not None and big is picked[0] else next((i for i, s in enumerate(shape) if s > 1), 0)
    extent = shape[d]
    if factor > extent or extent % factor:
        raise Refused(f"its blocks are {extent} long along the axis xblock splits, which does not split into "
                      f"{factor} chunks", _owner(big), exhausted=True)
    strip = _strip_axes(axes, candidates or axes.values, axes.axis(big, d), d, len(shape), extent)
    miner = _Miner(kernel, axes, strip, extent // factor, factor, kept, whole)
    with module.context, ir.Location.unknown():
        miner.block(kernel.regions[0].blocks[0])
        miner.erase()
    dce.run(module)  # what only the chunks' copies used (a repeated row's whole broadcast)
    return Split(extent, factor, extent // factor, miner.loops, rows=len(shape) == 2 and d == 0)


def _strip_axes(axes: BlockAxes, values, first, d: int, rank: int, extent: int) -> set:
    """The axes split: `first`, and every other axis of `extent` at dimension `d` of blocks of `rank`
    (two independent `arange(0, BLOCK)`), unless a block has it beside one already taken (the keys of
    a [BLOCK_M, BLOCK_N] score block when BLOCK_N == BLOCK_M: the query rows are split, not them)."""
    dims = [[axes.axis(v, i) for i, n in enumerate(shape_of(v)) if n > 1] for v in values]
    strip = {first}
    for v in values:
        s = shape_of(v)
        if len(s) != rank or s[d] != extent or axes.axis(v, d) in strip:
            continue
        x = axes.axis(v, d)
        if not any(x in ds and strip.intersection(ds) for ds in dims):
            strip.add(x)
    return strip


def _ops(block: ir.Block) -> list:
    return [o.operation for o in block.operations]


def _in_kept(v: ir.Value, kept, whole) -> bool:
    """`v` belongs to what stays whole: computed by an op of `whole`, inside a kept op, or a result of
    one that nothing uses (a kept loop's pointers)."""
    if not kept:
        return False
    owner = _owner(v)
    if owner is not None and owner in kept:
        return not any(True for _ in v.uses)
    if owner is not None and owner in whole:
        return True
    op = owner if owner is not None else v.owner.owner  # a block argument: the op whose region holds it
    while op is not None:
        op = op.operation
        if op in kept:
            return True
        op = op.parent
    return False


def _kept(kernel, keep) -> tuple:
    """(the ops of the kernel's body that `keep` keeps whole, the block-valued ops of the body they are
    computed from)."""
    if keep is None:
        return frozenset(), frozenset()
    body = kernel.regions[0].blocks[0]
    kept = {op for op in _ops(body) if keep(op)}
    whole, stack = set(), list(kept)
    while stack:
        op = stack.pop()
        vals = list(op.operands)
        for region in op.regions:  # values a kept loop's body uses from outside it
            for b in region.blocks:
                for o in b.operations:
                    o.operation.walk(lambda x: vals.extend(x.operands) or ir.WalkResult.ADVANCE)
        for v in vals:
            owner = _owner(v)
            if owner is None or owner in kept or owner in whole or shape_of(v) is None:
                continue
            anchor = _anchor(owner, body)
            if anchor is not None and anchor == owner:
                whole.add(owner)
                stack.append(owner)
    return frozenset(kept), frozenset(whole)


def _attr(op, name: str):
    a = op.attributes[name]
    return ir.StringAttr(a).value if isinstance(a, ir.StringAttr) else int(ir.IntegerAttr(a).value)


def _union(a, b):
    return None if a is None or b is None else a | b


def _overlap(a, b) -> bool:
    if a == _NOTHING or b == _NOTHING:
        return False
    return a is None or b is None or bool(a & b)


@dataclass
class _Effect:
    op: object
    pos: int
    reads: frozenset | None
    writes: frozenset | None
    sink: bool

    def conflicts(self, reads, writes) -> bool:
        return _overlap(self.writes, reads) or _overlap(self.writes, writes) or _overlap(self.reads, writes)


class _Miner:
    """The state of one strip-mining: the split axis, the chunk, and the originals to erase."""

    def __init__(self, kernel, axes: BlockAxes, strip: set, chunk: int, factor: int, kept=frozenset(),
                 whole=frozenset()):
        self.entry = kernel.regions[0].blocks[0]
        self.kept, self.whole = kept, whole  # ops left whole (module docstring, "Kept whole")
        self.axes, self.strip, self.chunk, self.factor = axes, strip, chunk, factor
        self.dims: dict = {}
        self.dead: list = []
        self.dead_set: set = set()
        self.loops = 0
        self.ps = PointerStructure()
        self.roots_of: dict = {}
        self.base = None  # first index of the chunk, while a loop body is built
        # results of split reductions -> the loops' results; replaced at the end, since the bindings'
        # hash of an op changes with its operands and ops are keys here until then
        self.replace: dict = {}
        self.all_writes = self.effects(kernel.operation)[1]

    # ----- the split axis ------------------------------------------------------------------
    def dim(self, v: ir.Value) -> int | None:
        """The dimension of block `v` on the split axis, or None."""
        if v not in self.dims:
            found = [d for d in range(len(shape_of(v) or ())) if self.axes.axis(v, d) in self.strip]
            if len(found) > 1:
                raise Refused("a block has the split axis twice (a transpose of a square block?)", _owner(v))
            self.dims[v] = found[0] if found else None
        return self.dims[v]

    def on_axis(self, v: ir.Value) -> bool:
        return self.dim(v) is not None

    def chunk_type(self, v: ir.Value) -> ir.Type:
        d = self.dim(v)
        if d is None:
            return v.type
        shape = list(shape_of(v))
        shape[d] = self.chunk
        return ir.RankedTensorType.get(shape, v.type.element_type)

    def along(self, op) -> bool:
        """A reduction or scan along the split axis."""
        return self.dim(op.operands[0]) == _attr(op, "axis")

    # ----- one block -----------------------------------------------------------------------
    def block(self, block: ir.Block) -> None:
        """Split the sinks of `block` into chunk loops (ops in nested bodies first)."""
        ops = _ops(block)
        term, ops = ops[-1], ops[:-1]
        for op in ops:
            if op.name in _REGIONS and op not in self.kept and not self.carries_blocks(op):
                for region in op.regions:
                    for b in region.blocks:
                        self.block(b)
        kinds = {op: self.kind(op) for op in ops}
        if all(k == "plain" for k in kinds.values()):
            return
        index = {op: i for i, op in enumerate(ops)}
        pos, effects = self.positions(block, ops, kinds)
        self.check_loads(block, ops, kinds, pos, effects, index)
        groups, loops = defaultdict(list), defaultdict(list)
        for op in ops:
            if kinds[op] != "chunk":
                (groups if kinds[op] == "plain" else loops)[pos[op]].append(op)
        for p in sorted(set(groups) | set(loops)):
            for op in groups.get(p, ()):
                op.move_before(term)
            if p in loops:
                self.loop(loops[p], term)
        for op in reversed(ops):
            if kinds[op] != "plain":
                self.dead.append(op)
                self.dead_set.add(op)

    def carries_blocks(self, op) -> bool:
        return any(self.on_axis(v) for v in list(op.operands) + list(op.results))

    def kind(self, op) -> str:
        """"plain" (left in place), "chunk" (recomputed in the loops that need it) or "sink"."""
        n = op.name
        if op in self.kept or op in self.whole:
            return "plain"
        ins, outs = any(self.on_axis(v) for v in op.operands), any(self.on_axis(r) for r in op.results)
        if n in _REGIONS:
            if ins or outs:
                self.check_pure(op)
                self.check_results(op)
                return "chunk"
            return "plain"
        if not ins and not outs:
            return "plain"
        if self.needs_whole(op):
            raise Refused(_WHY[n], op)
        if n in ("xb.histogram", "xb.store", "xb.assert"):
            return "sink"
        if n == "xb.atomic_rmw":
            if any(True for _ in op.results[0].uses):
                raise Refused("an atomic whose old value is used: later chunks would see it changed", op)
            return "sink"
        if n in ("xb.reduce", "xb.scan") and self.along(op):
            if _attr(op, "kind") == "generic" and (n == "xb.scan" or any(shape_of(r) for r in op.results)):
                what = "scan" if n == "xb.scan" else "reduction to a block"
                raise Refused(f"a {what} with a combine function along the split axis", op)
            return "sink" if n == "xb.reduce" else "chunk"
        if n == "arith.constant" and not ir.DenseElementsAttr(op.attributes["value"]).is_splat:
            raise Refused("a constant block that is not one repeated value", op)
        if not n.startswith(("arith.", "math.")) and n not in _CHUNKWISE:
            raise Refused(f"{n} is not split into chunks", op)
        self.check_results(op)
        return "chunk"

    def needs_whole(self, op) -> bool:
        """`op` (on the split axis) needs whole blocks: a `_WHY` op, but for a dot whose rows (or batch)
        are split and its `b` is not (rows of a product are products of rows) and a reshape that keeps
        the split dimension where it is (`tl.interleave`'s merge of its two minor dimensions)."""
        n = op.name
        if n == "xb.dot":
            return not self.rows_of_dot(op)
        if n == "xb.reshape":
            src, dst = op.operands[0], op.results[0]
            d = self.dim(dst)
            if d == 0 and self.repeated_row(op) is not None:
                return False
            return d is None or d != self.dim(src) or d >= kept_prefix(shape_of(src), shape_of(dst))
        return n in _WHY and (n != "xb.histogram" or any(self.on_axis(r) for r in op.results))

    def repeated_row(self, op):
        """The row `[1, n]` when reshape `op` (not on the split axis before, on it after) regroups a block
        of that row broadcast to `[R, n]` into rows of a multiple of n elements, all alike (the nibble
        shifts of an AWQ dequantization): a chunk is a smaller block of the same row. Else None."""
        src, dst = op.operands[0], op.results[0]
        b = _owner(src)
        if self.on_axis(src) or b is None or b.name != "xb.broadcast" or len(shape_of(src)) != 2:
            return None
        row, n = b.operands[0], shape_of(src)[1]
        ok = shape_of(row) == (1, n) and len(shape_of(dst)) == 2 and shape_of(dst)[1] % n == 0
        return row if ok else None

    def rows_of_dot(self, op) -> bool:
        a, b, acc = op.operands[:3]
        r = len(shape_of(acc))
        if self.dim(acc) != self.dim(op.results[0]) or self.dim(a) not in (None, r - 2, 0):
            return False
        split = self.dim(acc)
        if split == r - 2:  # the rows: `b` is used whole by every chunk
            return self.dim(a) == split and self.dim(b) is None
        return split == 0 and r == 3 and self.dim(a) == self.dim(b) == 0  # the batch

    def check_results(self, op) -> None:
        """An op computed again for each chunk may give blocks on the split axis only (an `scf.for`
        carrying such blocks and a scalar would compute the scalar once per chunk)."""
        if any(not self.on_axis(r) and any(True for _ in r.uses) for r in op.results):
            raise Refused(f"{op.name} gives blocks along the split axis and values that are not, used later", op)

    def check_pure(self, op) -> None:
        """A loop or `if` carrying blocks on the split axis is recomputed per chunk: no side effects."""
        found = []

        def visit(o):
            o = o.operation
            try:
                bad = o.name in ("xb.store", "xb.atomic_rmw", "xb.atomic_cas", "xb.print", "xb.assert") or (
                    o.name in _FOLDS + ("xb.scan",) and o.name != "xb.histogram" and self.along(o)) or (
                    o.name in _WHY and any(self.on_axis(v) for v in list(o.operands) + list(o.results))
                    and self.needs_whole(o))  # (a reshape may put a block on the split axis that was not)
            except Refused as r:
                found.append(r)
                return ir.WalkResult.INTERRUPT
            if bad:
                found.append(o)
                return ir.WalkResult.INTERRUPT
            return ir.WalkResult.ADVANCE
        op.walk(visit)  # (an exception raised inside the walk's callback would reach here as a RuntimeError)
        if found and isinstance(found[0], Refused):
            raise found[0]
        if found:
            raise Refused(f"a loop (or if) that carries blocks along the split axis contains {found[0].name}, which "
                          "needs the whole block", found[0])

    # ----- order ---------------------------------------------------------------------------
    def positions(self, block, ops, kinds):
        """Even positions for the plain ops (scalar code between loops), odd ones for the loops."""
        pos: dict = {}
        effects: list = []
        order: dict = {}  # loop position -> True when it walks the chunks backwards (for reverse scans)
        for op in ops:
            k = kinds[op]
            if k == "chunk":
                continue
            if k == "plain":
                need = max((self.vpos(v, block, pos) for v in self.inputs(op)), default=0)
                reads, writes = self.effects(op)
            else:
                cone = self.cone([op])
                need = max((self.vpos(v, block, pos) for o in cone + [op] for v in self.inputs(o)
                            if not self.on_axis(v) or _owner(v) in self.kept), default=0) + 1
                reads, writes = self.effects(op)
                for o in cone:
                    reads = _union(reads, self.effects(o)[0])
            after = [e.pos + (1 if e.sink or k == "sink" else 0) for e in effects if e.conflicts(reads, writes)]
            p = max([need] + after)
            p += (p % 2) if k == "plain" else 1 - p % 2
            if k == "sink":
                backwards = self.backwards(cone)
                while order.get(p, backwards) != backwards:
                    p += 2
                if backwards is not None:
                    order[p] = backwards
            pos[op] = p
            if reads != _NOTHING or writes != _NOTHING:
                effects.append(_Effect(op, p, reads, writes, k == "sink"))
        return pos, effects

    def vpos(self, v, block, pos) -> int:
        owner = _owner(v)
        anchor = _anchor(owner, block) if owner is not None else None
        if anchor is None:
            return 0
        if anchor not in pos:
            raise Refused("internal: a value on the split axis reaches scalar code", anchor)
        return pos[anchor]

    def check_loads(self, block, ops, kinds, pos, effects, index) -> None:
        """Every load a loop recomputes sees the memory it saw in the original program."""
        loops: dict = defaultdict(set)
        for s in (op for op in ops if kinds[op] == "sink"):
            p = pos[s]
            for load in self.loads(self.cone([s]) + [s]):
                loops[load].add(p)
                self.check_load(load, p, block, effects, index)
        for load, where in loops.items():
            if len(where) > 1 and ir.BoolAttr(load.attributes["volatile"]).value:
                raise Refused("a volatile load would be read again in each pass over the chunks", load)

    def check_load(self, load, p, block, effects, index) -> None:
        roots = self.roots(load.operands[0])
        anchor = _anchor(load, block)
        if anchor is None:
            if _overlap(roots, self.all_writes):
                raise Refused("a block loaded outside this loop body would be loaded again inside it, and "
                              "the kernel stores to that memory", load)
            return
        for e in effects:
            if not _overlap(e.writes, roots):
                continue
            before = index[e.op] < index[anchor]  # the store comes first in the program
            line = op_loc(e.op)[1]
            if e.sink and e.pos == p:  # in this loop: fine only for the store of an in-place update
                if before or not self.in_place(load, e.op):
                    raise Refused(f"this load and the store at line {line} (to the same memory) would run chunk "
                                  "by chunk in one loop, so later chunks could load what earlier ones stored", load)
            elif e.pos < p and not before:
                raise Refused(f"each chunk of this load would be loaded again after the store at line {line} has "
                              "changed that memory", load)
            elif e.pos > p and before:
                raise Refused(f"the chunks of this load would be loaded before the store at line {line}, which "
                              "comes first in the kernel, has changed that memory", load)

    def in_place(self, load, store) -> bool:
        """The store writes the very addresses the load read, chunk by chunk (an in-place update)."""
        if store.name != "xb.store":
            return False
        a, b = self.ps.pointer(load.operands[0]), self.ps.pointer(store.operands[0])
        d = self.dim(load.operands[0])
        return a is not None and a == b and d is not None and not a.offset.strides[d].is_zero()

    def roots(self, ptr):
        if ptr not in self.roots_of:
            self.roots_of[ptr] = written_args.roots(ptr, self.entry)
        return self.roots_of[ptr]

    def effects(self, op):
        """(arguments read, arguments written) by `op` and the ops nested in it (None: unknown)."""
        acc = [_NOTHING, _NOTHING]

        def visit(o):
            o = o.operation
            if o in self.dead_set:
                return ir.WalkResult.SKIP
            n = o.name
            if n in ("xb.load", "xb.atomic_rmw", "xb.atomic_cas"):
                acc[0] = _union(acc[0], self.roots(o.operands[0]))
            if n in ("xb.store", "xb.atomic_rmw", "xb.atomic_cas"):
                acc[1] = _union(acc[1], self.roots(o.operands[0]))
            if n == "xb.print":
                acc[1] = _union(acc[1], frozenset({"print"}))
            return ir.WalkResult.ADVANCE
        op.walk(visit, ir.WalkOrder.PRE_ORDER)
        return acc[0], acc[1]

    def loads(self, ops) -> list:
        found = []

        def visit(o):
            if o.operation.name == "xb.load":
                found.append(o.operation)
            return ir.WalkResult.ADVANCE
        for op in ops:
            op.walk(visit)
        return found

    # ----- cones ---------------------------------------------------------------------------
    def inputs(self, op) -> list:
        """Operands of `op` and the values its nested ops use from outside it."""
        vals = list(op.operands)
        if len(op.regions):
            def visit(o):
                o = o.operation
                if o in self.dead_set:
                    return ir.WalkResult.SKIP
                if o != op:
                    vals.extend(v for v in o.operands if not _inside(v, op))
                return ir.WalkResult.ADVANCE
            op.walk(visit, ir.WalkOrder.PRE_ORDER)
        return vals

    def deps(self, op) -> list:
        out = []
        for v in self.inputs(op):
            if self.on_axis(v):
                owner = _owner(v)
                if owner is None:
                    raise Refused("a block argument on the split axis", op)
                if owner not in self.kept:  # a kept op's result is sliced, not computed again
                    out.append(owner)
        return out

    def cone(self, sinks) -> list:
        """The ops on the split axis the sinks depend on, operands first."""
        order, seen = [], set(sinks)
        for s in sinks:
            stack = [(s, iter(self.deps(s)))]
            while stack:
                op, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    stack.pop()
                    if op not in sinks:
                        order.append(op)
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, iter(self.deps(nxt))))
        return order

    def backwards(self, cone) -> bool | None:
        """Whether the scans along the split axis in `cone` are reverse ones (None: no scans)."""
        scans = [op for op in cone if op.name == "xb.scan" and self.along(op)]
        flags = {bool(ir.BoolAttr(op.attributes["reverse"]).value) for op in scans}
        if len(flags) > 1:
            raise Refused("a scan and a reverse scan along the split axis in one expression", scans[0])
        return flags.pop() if flags else None

    # ----- a chunk loop --------------------------------------------------------------------
    def loop(self, sinks, term) -> None:
        """One `scf.for` over the chunks computing `sinks` (and their cones), before `term`."""
        cone = self.cone(sinks)
        scans = [op for op in cone if op.name == "xb.scan" and self.along(op)]
        backwards = self.backwards(cone)
        carried = scans + [s for s in sinks if s.name in _FOLDS]
        folds = Folds(self)
        where = ir.Location.file(*op_loc(sinks[0]))
        loc = ir.Location.name("chunk", childLoc=where)
        with loc, ir.InsertionPoint(term):
            inits, span = [], {}
            for op in carried:
                vals = folds.init(op)
                span[op] = (len(inits), len(vals))
                inits += vals
            loop = scf.ForOp(_i32(0), _i32(self.factor), _i32(1), inits)
            loop.attributes["xb.chunks"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), self.factor)
        args = list(loop.inner_iter_args)
        carry = {op: args[a:a + n] for op, (a, n) in span.items()}
        m, out = {}, {}
        with ir.Location.name("chunk_start", childLoc=where), ir.InsertionPoint(loop.body):
            iv = loop.induction_variable
            k = arith.subi(_i32(self.factor - 1), iv) if backwards else iv
            self.base = arith.muli(k, _i32(self.chunk))
            for op in cone + sinks:
                if op in carry:
                    out[op] = folds.step(op, m, carry[op], iv)
                else:
                    self.copy(op, m)
            scf.YieldOp([v for op in carried for v in out[op]])
        with where, ir.InsertionPoint(term):
            results = list(loop.results)
            for op in carried:
                if op.name in _FOLDS:
                    a, n = span[op]
                    self.replace.update(zip(op.results, folds.finish(op, results[a:a + n])))
        self.base = None
        self.loops += 1

    def copy(self, op, m: dict):
        """A copy of `op` for the current chunk: operands through `m`, chunk shapes, nested regions."""
        n = op.name
        if n == "xb.arange" and self.on_axis(op.results[0]):
            start = _attr(op, "start")
            r = xb.arange(start, start + self.chunk, loc=op.location)
            m[op.results[0]] = arith.addi(r, xb.splat(self.base, r.type, loc=op.location), loc=op.location)
            return None
        if n == "arith.constant" and self.on_axis(op.results[0]):
            t = self.chunk_type(op.results[0])
            attr = ir.DenseElementsAttr.get_splat(t, ir.DenseElementsAttr(op.attributes["value"]).get_splat_value())
            m[op.results[0]] = arith.constant(t, attr, loc=op.location)
            return None
        if n == "xb.reshape" and self.on_axis(op.results[0]) and not self.on_axis(op.operands[0]):
            # a repeated row (repeated_row); a reshape off the split axis altogether (the interleaved `b`
            # of a dot whose rows are split, in a loop body copied whole) is copied as it is, below
            t = self.chunk_type(op.results[0])
            row = self.repeated_row(op)
            if row is None:  # (needs_whole, through kind or check_pure, lets no other such reshape through)
                raise Refused("internal: a reshape onto the split axis that is not a repeated row", op)
            width = shape_of(row)[1]
            rows = ir.RankedTensorType.get([t.shape[0] * t.shape[1] // width, width], row.type.element_type)
            m[op.results[0]] = xb.reshape(xb.broadcast(row, rows, loc=op.location), t, loc=op.location)
            return None
        for v in op.operands:
            if v not in m and self.on_axis(v) and _owner(v) in self.kept:
                m[v] = self.slice(v)
            if v not in m and not self.on_axis(v) and is_splat_constant(v):
                self.splat_for(v, op, m)
            if v not in m and self.on_axis(v):
                raise Refused(f"internal: {n} uses a block of the split axis not computed for the chunk", op)
        new = ir.Operation.create(n, results=[self.chunk_type(r) for r in op.results],
                                  operands=[m.get(v, self.replace.get(v, v)) for v in op.operands],
                                  attributes={k: op.attributes[k] for k in op.attributes},
                                  regions=len(op.regions), loc=op.location)
        for src, dst in zip(op.regions, new.regions):
            for b in src.blocks:
                nb = dst.blocks.append(*[self.chunk_type(a) for a in b.arguments],
                                       arg_locs=[a.location for a in b.arguments])
                m.update(zip(b.arguments, nb.arguments))
                with ir.InsertionPoint(nb):
                    for o in b.operations:
                        self.copy(o.operation, m)
        m.update(zip(op.results, new.results))
        return new

    def splat_for(self, v: ir.Value, op, m: dict) -> None:
        """A constant block of no axis (BlockAxes' loose splats) used beside blocks of the split axis
        of its shape: a constant of their chunk shape."""
        twin = next((w for w in list(op.operands) + list(op.results) if w != v and shape_of(w) == shape_of(v)
                     and self.on_axis(w)), None)
        if twin is None:
            return
        t = ir.RankedTensorType.get(list(self.chunk_type(twin).shape), v.type.element_type)
        value = ir.DenseElementsAttr(_owner(v).attributes["value"]).get_splat_value()
        m[v] = arith.constant(t, ir.DenseElementsAttr.get_splat(t, value), loc=_owner(v).location)

    def slice(self, v: ir.Value) -> ir.Value:
        """The current chunk of the result `v` of an op kept whole: its rows base..base+chunk."""
        d = self.dim(v)
        shape = list(shape_of(v))
        offsets = [0] * len(shape)
        offsets[d] = ir.ShapedType.get_dynamic_size()
        sizes = list(shape)
        sizes[d] = self.chunk
        at = arith.index_cast(ir.IndexType.get(), self.base)
        return tensor.extract_slice(self.chunk_type(v), v, [at], [], [], offsets, sizes, [1] * len(shape))

    def erase(self) -> None:
        for old, new in self.replace.items():
            old.replace_all_uses_with(new)
        for op in self.dead:
            if any(True for r in op.results for _ in r.uses):
                raise Refused(f"internal: {op.name} is still used after the split", op)
            op.erase()


def _i32(v: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(32), v)


def _owner(v: ir.Value):
    """The op that defines `v`, or None for a block argument."""
    o = v.owner
    return None if isinstance(o, ir.Block) else o.operation


def _anchor(op, block: ir.Block):
    """The op of `block` that is `op` or holds it, or None when `op` is outside `block`."""
    while op is not None and op.name != "func.func":
        if op.block == block:
            return op
        op = op.parent.operation
    return None


def _inside(v: ir.Value, op) -> bool:
    """`v` is defined inside `op`'s regions."""
    o = v.owner
    o = o.owner if isinstance(o, ir.Block) else o
    o = o.operation if o is not None else None
    while o is not None:
        if o == op:
            return True
        o = o.parent
        o = o.operation if o is not None else None
    return False

