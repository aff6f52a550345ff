"""The rule context: the state of one xb -> ascendc lowering, as every rule sees it (`ctx`).

It maps each xb value to what it lowered to (`vmap`), packs the unified buffer while lowering
(queue tensors for blocks that come from or go to GM while a TPosition has queue buffers left,
first-fit scratch for the rest, each freed after its last use), names C++ variables after the
kernel's Python names, and raises a rule's errors at the op being lowered. `driver.Lowering`
adds the walk that fills it.
"""

from __future__ import annotations

import contextlib
import warnings

from mlir import ir
from mlir.dialects import arith, scf

from ....dialects import ascendc as A
from ....dialects.locations import UNKNOWN, error_at, name_of, source_loc
from ....errors import XBlockWarning
from ....passes.pointer_structure import PointerStructure, Wrapped
from ..builders import Builders
from ..values import SIZE, TILE_ALIGN, Queue, Scratch, Splat, Struct, Tile, numel, round_up
from ..vector.tiles import fill, materialize
from .rules import TARGET
from .shared import Shared

# Queue buffers per TPosition. On A2 each HardEvent has 8 ids, one pool per TPipe; a VECIN buffer once freed
# holds an id of V_MTE2 (a VECOUT one of MTE3_V) until it is allocated again, and an enqueued one an id of
# MTE2_V (V_MTE3). So 7, not 8: the explicit SetFlag/WaitFlag pairs the plan emits (ctx.sync: a spilled block,
# a gather window, the Cube hand-off) fetch an id of those events too, and with 8 buffers all 8 may be held
# (docs/ASCEND_MODEL.md section 9, the event-id pool).
QUEUE_BUFFERS = 7


class LoweringContext(Builders):
    """What the rules of one lowering share: lowered values, the UB plan, names, errors."""

    def __init__(self, options, metadata: dict, plan):
        self.opts, self.soc = options, options.profile
        self.meta = metadata
        self.plan = plan  # the AscendPlan this lowering carries out (plan/plan.py): rules read it, never retry flags
        self.ps = PointerStructure()
        self.vmap: dict = {}
        self.scratch = Scratch()
        self.queues: list = []
        self.temps: list = []
        self.iotas: dict = {}
        self.iota_ops: list = []
        self.resident_ops: list = []  # (get_with_offset op, bytes) of hoisted loads (resident.py)
        self.resident_at = None  # while a hoisted load lowers: where its tile is declared (before the grid)
        self.loc = UNKNOWN  # (file, line, col) of the op being lowered
        self.where = None  # its MLIR location (errors inside tl.sort-like library code say so)
        self.warnings: list = []
        self.largest: tuple = (0, None)  # (bytes, (file, line, col)) of the largest tile
        self.program_ids: dict = {}
        self.absorbed: set = set()  # ops another op's rule lowers (or dropped): the walk skips them
        self.ext = Shared()  # what rule modules and their helpers hand each other (shared.py)

    # ----- errors ------------------------------------------------------------------------
    def error(self, message: str, where=None):
        """The error a rule raises (`raise ctx.error("...")`): `"ascend: message"` at the op being
        lowered, or at `where` (an op, a location or a (file, line, col) tuple)."""
        if where is None:
            where = self.where if self.where is not None else self.loc
        return error_at(where, message, prefix=TARGET)

    def warn(self, message: str) -> None:
        """A warning at the op being lowered (also kept in the metadata)."""
        file, line, _ = self.loc
        text = f"{file}:{line}: {TARGET}: {message}"
        self.warnings.append(text)
        # shown at the kernel's line (as `file:line: UserWarning...`), not at xblock's
        warnings.warn_explicit(f"{TARGET}: {message}", XBlockWarning, file, line or 1)

    @contextlib.contextmanager
    def located(self, op):
        """Lower at `op`: errors and warnings point at its source line, new ops carry its location."""
        self.loc = source_loc(op.location)
        self.where = op.location
        file = "?" if self.loc == UNKNOWN else self.loc[0]
        with ir.Location.file(file, self.loc[1], self.loc[2]):
            yield

    def absorb(self, ops) -> None:
        """Mark `ops` as lowered by another op's rule (a Cube K loop takes its loads and store)."""
        self.absorbed.update(o.operation if hasattr(o, "operation") else o for o in ops)

    # ----- values ------------------------------------------------------------------------
    def drop(self, v: ir.Value) -> None:
        """`v` is dead: release its tile."""
        t = self.vmap.get(v)
        if isinstance(t, Tile):
            self.release(t)

    def release(self, t: Tile) -> None:
        t.refs -= 1
        if t.refs > 0 or t.freed:
            return
        t.freed = True
        if t.kind == "buf":
            self.scratch.release(t.offset, t.bytes)
        elif t.kind == "view":
            self.release(t.parent)
        elif t.kind in ("vecin", "vecout"):
            A.op("free_tensor", [t.value], queue=t.queue.name)
            t.queue.busy = False

    def hold(self, t: Tile) -> Tile:
        t.refs += 1
        return t

    def scalar(self, v: ir.Value) -> ir.Value:
        s = self.vmap.get(v)
        if s is None:
            raise self.error(f"internal: no lowered value for {v.get_name()}")
        return s

    def lin(self, lin) -> ir.Value:
        """A pointer-structure polynomial as an i64 value."""
        total = None
        for mono, coeff in sorted(lin.terms.items(), key=lambda kv: len(kv[0])):
            term = None
            for key in mono:
                f = self._lin_value(self.ps.values[key])
                term = f if term is None else self.mul(term, f)
            if term is None:
                term = self.c64(coeff)
            elif coeff != 1:
                term = self.mul(term, self.c64(coeff))
            total = term if total is None else self.add(total, term)
        return total if total is not None else self.c64(0)

    def _lin_value(self, v) -> ir.Value:
        """A variable of a polynomial as an i64 value: a lowered scalar, or a polynomial of i32 values
        wrapped as Triton's int32 arithmetic wraps (`pid * 2**30` is negative in program 2), computed
        in 64 bits and truncated (two's complement: the low bits of a product or sum do not depend on
        the high bits of its operands)."""
        if isinstance(v, Wrapped):
            narrow = arith.TruncIOp(ir.IntegerType.get_signless(v.bits), self.lin(v.lin)).result
            return arith.ExtSIOp(self.i64, narrow).result
        return self.to64(self.scalar(v))

    def gm_offset(self, ptr: ir.Value, base) -> ir.Value:
        """The element offset `base` (a Lin) of the pointer block `ptr`, as an i64 value named after
        the kernel's Python name for its offsets (`offs` in `x_ptr + offs`, `a_ptrs`)."""
        v = self.lin(base)
        name = self._offsets_name(ptr)
        return self.named(v, name) if name else v

    def _offsets_name(self, ptr: ir.Value) -> str | None:
        """`arg + offsets` (one or more addptr, every offset from one source line): the name it is bound to."""
        lines, names = set(), set()
        o = ptr.owner
        while True:
            if isinstance(o, ir.Block):  # a loop-carried pointer is named where it starts; an argument ends
                if o.owner is None or o.owner.name != "scf.for" or ptr not in list(o.arguments)[1:]:
                    break
                ptr = o.owner.operands[3 + list(o.arguments).index(ptr) - 1]
            elif o.name == "xb.addptr" and not isinstance(o.operands[1].owner, ir.Block):
                off = o.operands[1].owner
                lines.add(source_loc(off.location)[:2])
                names.add(name_of(off.location))
                ptr = o.operands[0]
            elif o.name in ("xb.splat", "xb.broadcast", "xb.expand_dims"):
                ptr = o.operands[0]
            else:
                return None
            o = ptr.owner
        if len(lines) != 1 or len(names) != 1:
            return None
        return names.pop()

    def loop_name(self, loop) -> str | None:
        """The Python name of the induction variable of the `for` that built `loop` (`for k in ...`)."""
        return name_of(loop.location)

    def line_name(self, op) -> str | None:
        """The Python name of the assignment that built `op` (`x = ...`), if any."""
        return name_of(op.location)

    def name_for(self, op) -> str | None:
        """The Python name of the assignment that built `op`, if `op` is the last op of that line with
        results (the value the name is bound to)."""
        name = name_of(op.location)
        file, line, _ = source_loc(op.location)
        if name is None:
            return None
        block_ops = list(op.operation.block.operations)
        idx = [o.operation for o in block_ops].index(op.operation)
        for later in block_ops[idx + 1:]:
            if len(later.results) and source_loc(later.location)[:2] == (file, line):
                return None
        return name

    # ----- tiles -------------------------------------------------------------------------
    def new_tile(self, elem: str, shape: tuple, name: str | None = None, result=None) -> Tile:
        """A scratch tile, or a VECOUT queue tensor when `result` is next stored to GM."""
        nbytes = round_up(max(numel(shape), 1) * SIZE[elem], TILE_ALIGN)
        if nbytes > self.largest[0]:
            self.largest = (nbytes, self.loc)
        store = self._feeds_store(result) if result is not None else None
        q = self.queue("VECOUT", nbytes, name or self.store_label(store), spill=True) if store is not None else None
        if q is not None:  # else all VECOUT buffers hold live blocks: scratch, stored from there (access.py)
            label = name or self.store_label(store)
            v = A.op("alloc_tensor", [], A.local_type(ir.Type.parse(elem)), queue=q.name, name=label + "Local")
            return Tile(v, elem, shape, nbytes, "vecout", q, line=self.loc[1])
        off = self.scratch.alloc(nbytes)
        v = A.op("get_with_offset", [], A.local_type(ir.Type.parse(elem)), buf="calcBuf",
                 count=nbytes // SIZE[elem], offset=off, **_n(name))
        return Tile(v, elem, shape, nbytes, "buf", offset=off, line=self.loc[1])

    def temp(self, elem: str, shape_or_count) -> Tile:
        shape = shape_or_count if isinstance(shape_or_count, tuple) else (shape_or_count,)
        t = self.new_tile(elem, shape)
        self.temps.append(t)
        return t

    def queue(self, position: str, nbytes: int, name: str | None, spill: bool = False) -> Queue | None:
        """A free queue of `position` for a block of `nbytes` (a new one is declared before the grid loop).

        A TPosition has QUEUE_BUFFERS (7) queue buffers (each holds an event id; one id of each queue
        event stays free for the explicit syncs). Queues are double-buffered while that fits; past 3
        live blocks, the newest double-buffered queue gives up its second buffer for each new one, so
        up to 7 blocks are live in single-buffered queues. Past 7, `spill` returns None (the caller
        keeps the block in the VECCALC scratch, with explicit syncs); without it, an error."""
        for q in self.queues:
            if q.position == position and not q.busy:
                break
        else:
            used = sum(x.num for x in self.queues if x.position == position)
            if used >= QUEUE_BUFFERS:
                double = next((x for x in reversed(self.queues) if x.position == position and x.num > 1), None)
                if double is None:
                    if spill:
                        return None
                    raise self.error(f"more than {QUEUE_BUFFERS} {position} blocks live at once "
                                     f"(at most {QUEUE_BUFFERS} queue buffers per TPosition)")
                double.num -= 1
                used -= 1
            stem = "inQueue" if position == "VECIN" else "outQueue"
            label = (name or str(len(self.queues)))
            num = min(self.opts.buffer_num, QUEUE_BUFFERS - used)
            q = Queue(stem + label[0].upper() + label[1:], position, num=num)
            if any(x.name == q.name for x in self.queues):
                q.name += str(len(self.queues))
            with self.before_grid:
                q.decl = A.op("tque", [], sym_name=q.name, position=position, depth=1, num=q.num, bytes=0)
            self.queues.append(q)
        q.busy = True
        q.bytes = max(q.bytes, nbytes)
        q.lines.add(self.loc[1])
        return q

    def store_label(self, store) -> str:
        """A name for a stored block: its pointer's kernel argument (`out_ptr` -> `out`)."""
        p = self.ps.pointer(store.operands[0])
        g = self.vmap.get(p.root) if p is not None else None
        if g is not None and "name" in g.owner.attributes:
            return ir.StringAttr(g.owner.attributes["name"]).value[:-2]
        return "out"

    def _feeds_store(self, result: ir.Value):
        """The store/atomic of `result` when it is its last use, in the same block; else None."""
        owner = result.owner
        block = owner.operation.block if hasattr(owner, "operation") else owner.block
        ops = [o.operation for o in block.operations]
        last, last_op = -1, None
        for u in result.uses:
            o = u.owner.operation if hasattr(u.owner, "operation") else u.owner
            if o not in ops:
                return None
            i = ops.index(o)
            if i > last:
                last, last_op = i, o
        ok = last_op is not None and last_op.name in ("xb.store", "xb.atomic_rmw") and last_op.operands[1] == result
        return last_op if ok else None

    def tile(self, v: ir.Value) -> Tile:
        """The block `v` as a Tile, materializing splats and structured values."""
        x = self.vmap.get(v)
        if isinstance(x, Tile):
            return x
        if isinstance(x, Splat):
            t = self.temp(x.elem, x.shape)
            self.duplicate(t, x, t.padded)
            return t
        if isinstance(x, Struct) or x is None:
            t = materialize(self, v)
            self.temps.append(t)
            return t
        raise self.error(f"internal: {v.get_name()} is not a block")

    def splat_scalar(self, s: Splat) -> ir.Value:
        if s.scalar is not None:
            return s.scalar
        return self.cst(s.elem, s.const)

    def duplicate(self, t: Tile, s: Splat, count) -> None:
        """Fill `count` elements of `t` with the splat value (bit patterns for types Duplicate lacks)."""
        fill(self, t, 0, count, s)

    def iota(self, shape: tuple, dim: int) -> Tile:
        """A float tile whose element i holds its index along `dim`, built once before the grid loop."""
        key = (shape, dim)
        if key not in self.iotas:
            n = numel(shape)
            inner = numel(shape[dim + 1:])
            nbytes = round_up(n * 4, TILE_ALIGN)
            off = -1  # lives through the kernel: placed after the scratch peak by _finish
            with self.before_grid:
                v = A.op("get_with_offset", [], A.local_type(ir.Type.parse("f32")), buf="calcBuf",
                         count=nbytes // 4, offset=0, name=f"iota{dim}_{n}")
                self.iota_ops.append((v.owner, nbytes))
                if not self._iota_by_vector(v, shape, dim):
                    loop = self.for_range(0, n)
                    with ir.InsertionPoint(loop.body):
                        i = loop.induction_variable
                        idx = arith.DivSIOp(i, self.c64(inner)).result if inner > 1 else i
                        if dim > 0:
                            idx = arith.RemSIOp(idx, self.c64(shape[dim])).result
                        A.op("set_value", [v, i, arith.SIToFPOp(ir.F32Type.get(), idx).result])
                        scf.YieldOp([])
                    self.sync("S_V")
            self.iotas[key] = Tile(v, "f32", shape, nbytes, "buf", offset=off, refs=1 << 30)
        return self.iotas[key]

    def _iota_by_vector(self, v: ir.Value, shape: tuple, dim: int) -> bool:
        """Fill the iota tile `v` with vector instructions where its runs are whole 32-byte blocks:
        along the last axis, 8 scalar writes then Adds that double the run (0..7 -> 0..15 -> ...); along
        another, a Duplicate of k per run of `inner` lanes; the period then repeated by UB->UB
        DataCopys. False (nothing emitted) where the runs are not whole blocks."""
        n, inner, n0 = numel(shape), numel(shape[dim + 1:]), shape[dim]
        period = n0 * inner
        f32 = ir.F32Type.get()
        if inner == 1 and n0 % 8 == 0:
            for k in range(8):
                A.op("set_value", [v, self.c64(k), self.cst("f32", float(k))])
            self.sync("S_V")
            have = 8
            while have < n0:
                count = min(have, n0 - have)
                A.op("vec_scalar", [self.at(v, self.c64(have)), v, self.cst("f32", float(have)), self.c64(count)],
                     api="Adds")
                have += count
        elif inner > 1 and inner % 8 == 0:
            loop = self.for_range(0, n0)
            with ir.InsertionPoint(loop.body):
                k = loop.induction_variable
                A.op("duplicate", [self.at(v, self.mul(k, self.c64(inner))), arith.SIToFPOp(f32, k).result,
                                   self.c64(inner)])
                scf.YieldOp([])
        else:
            return False
        if n > period:
            loop = self.for_range(1, n // period)
            with ir.InsertionPoint(loop.body):
                at = self.mul(loop.induction_variable, self.c64(period))
                A.op("data_copy", [self.at(v, at), v, self.c64(period)])
                scf.YieldOp([])
        return True

    def resident_tile(self, elem: str, shape: tuple, nbytes: int, name: str | None) -> Tile:
        """A scratch tile that lives through the kernel, for a load hoisted before the grid loop
        (resident.py): declared before the loop, placed after the scratch peak by _finish, never freed."""
        with self.resident_at:
            v = A.op("get_with_offset", [], A.local_type(ir.Type.parse(elem)), buf="calcBuf",
                     count=nbytes // SIZE[elem], offset=0, name=(name or "w") + "Resident")
        self.resident_ops.append((v.owner, nbytes))
        return Tile(v, elem, shape, nbytes, "buf", offset=-1, refs=1 << 30, line=self.loc[1])

    def program_id(self, axis: int) -> ir.Value:
        if axis not in self.program_ids:
            with ir.InsertionPoint.at_block_begin(self.grid.body):
                gx = self.to64(self.grid_x)
                gy = self.to64(self.grid_y)
                if axis == 0:
                    v = arith.RemSIOp(self.pid, gx).result
                elif axis == 1:
                    v = arith.RemSIOp(arith.DivSIOp(self.pid, gx).result, gy).result
                else:
                    v = arith.DivSIOp(self.pid, self.mul(gx, gy)).result
                v = arith.TruncIOp(self.i32, v).result
            v.owner.attributes["name"] = ir.StringAttr.get(f"pid{'xyz'[axis]}")
            self.program_ids[axis] = v
        return self.program_ids[axis]



def _n(name):
    return {"name": name} if name else {}
