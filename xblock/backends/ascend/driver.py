"""The one walk that lowers an xb kernel to the ascendc dialect, applying `rules.RULES` per op.

It builds the kernel skeleton (GlobalTensors, tiling fields, the grid loop
`for (pid = GetBlockIdx(); pid < numPrograms; pid += GetBlockNum())`), walks the xb body in order,
frees every value after its last use, and finally sizes the queues and the scratch buffer and
checks the unified-buffer plan against the SoC.
"""

from __future__ import annotations

import ast
import linecache

from mlir import ir
from mlir.dialects import arith, func, scf

from ...dialects import ascendc as A
from ...errors import CompilationError
from ...passes.pointer_structure import PointerStructure
from .context import SIZE, TILE_ALIGN, Builders, Queue, Scratch, Splat, Struct, Tile, elem_of, numel, round_up, shape_of
from .rules import BEFORE_WALK


def source_loc(loc: ir.Location) -> tuple:
    """(file, line, col) of an op's location (the callee line for inlined helpers)."""
    if loc.is_a_file():
        return loc.filename, loc.start_line, loc.start_col
    if loc.is_a_fused():
        for sub in loc.locations:
            r = source_loc(sub)
            if r[1]:
                return r
    if loc.is_a_callsite():
        return source_loc(loc.callee)
    if loc.is_a_name():
        return source_loc(loc.child_loc)
    return "", 0, 0


class Names:
    """Python names of a kernel's assignments, by source line (`x = ...`, `acc += ...`)."""

    def __init__(self):
        self.files: dict = {}
        self.loops: dict = {}

    def loop_var(self, file: str, line: int) -> str | None:
        self.at(file, line)
        return self.loops.get(file, {}).get(line)

    def at(self, file: str, line: int) -> str | None:
        if file not in self.files:
            self.files[file] = {}
            try:
                tree = ast.parse("".join(linecache.getlines(file)))
            except SyntaxError:
                tree = None
            for node in ast.walk(tree) if tree else ():
                target = None
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    target = node.targets[0]
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                    target = node.target
                if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
                    self.loops.setdefault(file, {})[node.lineno] = node.target.id
                if isinstance(target, ast.Name):
                    self.files[file][node.lineno] = target.id
        return self.files[file].get(line)


class Lowering(Builders):
    """State of one xb -> ascendc lowering."""

    def __init__(self, module: ir.Module, options, metadata: dict):
        self.xb_module = module
        self.opts, self.soc = options, options.profile
        self.meta = metadata
        self.ps = PointerStructure()
        self.vmap: dict = {}
        self.scratch = Scratch()
        self.queues: list = []
        self.temps: list = []
        self.iotas: dict = {}
        self.iota_ops: list = []
        self.names = Names()
        self.loc = ("", 0, 0)
        self.warnings: list = []
        self.largest: tuple = (0, None)  # (bytes, (file, line, col)) of the largest tile
        self.program_ids: dict = {}
        self.absorbed: set = set()  # ops another op's rule lowers (or dropped): the walk skips them
        self.ext: dict = {}  # per-lowering state of rule modules, by module (cube.py keeps its queues here)

    # ----- errors and names --------------------------------------------------------------
    def error(self, msg: str, loc=None) -> CompilationError:
        file, line, col = loc or self.loc
        return CompilationError(file, line, col, msg, linecache.getline(file, line) or None)

    def warn(self, msg: str) -> None:
        import warnings

        file, line, _ = self.loc
        text = f"{file}:{line}: {msg}"
        self.warnings.append(text)
        warnings.warn(text, stacklevel=2)

    # ----- skeleton ----------------------------------------------------------------------
    def run(self) -> ir.Module:
        kernel = next(op for op in self.xb_module.body.operations if "xb.kernel" in op.attributes)
        ctx = self.xb_module.context
        A.load(ctx)
        arg_names = [ir.StringAttr(a).value for a in ir.ArrayAttr(kernel.attributes["xb.arg_names"])]
        body = kernel.regions[0].blocks[0]
        self.module = ir.Module.create(loc=ir.Location.unknown(ctx))
        with ctx, ir.Location.unknown(ctx):
            gm_args = [(n, a) for n, a in zip(arg_names, body.arguments) if str(a.type).startswith("!xb.ptr<")]
            fn = func.FuncOp(ir.StringAttr(kernel.attributes["sym_name"]).value,
                             ([A.gm_addr_type()] * len(gm_args), []), ip=ir.InsertionPoint(self.module.body))
            fn.attributes["ascendc.kernel"] = ir.UnitAttr.get()
            fn.attributes["ascendc.arg_names"] = ir.ArrayAttr.get([ir.StringAttr.get(n) for n, _ in gm_args])
            entry = fn.add_entry_block()
            with ir.InsertionPoint(entry):
                self._prologue(arg_names, body, gm_args, entry)
                func.ReturnOp([])
            for hook in BEFORE_WALK:
                hook(self)
            with ir.InsertionPoint(self.grid.body):
                self.lower_block(body)
                scf.YieldOp([])
            self._finish(fn)
        return self.module

    def _prologue(self, arg_names, body, gm_args, entry):
        fields = []
        for (name, _), arg in zip(gm_args, entry.arguments):
            xbv = body.arguments[arg_names.index(name)]
            elem = str(xbv.type)[len("!xb.ptr<"):-1]
            self.vmap[xbv] = A.op("set_global_buffer", [arg], A.global_type(ir.Type.parse(elem)), dtype=elem,
                                  name=_gm_name(name))
        for name, arg in zip(arg_names, body.arguments):
            if not str(arg.type).startswith("!xb.ptr<"):
                self.vmap[arg] = A.op("tiling_field", [], arg.type, name=name)
                fields.append((name, str(arg.type)))
        self.num_programs = A.op("tiling_field", [], self.i64, name="numPrograms")
        self.grid_x = A.op("tiling_field", [], self.i32, name="gridX")
        self.grid_y = A.op("tiling_field", [], self.i32, name="gridY")
        self.fields = fields + [("numPrograms", "i64"), ("gridX", "i32"), ("gridY", "i32")]
        self.calc = A.op("tbuf", [], sym_name="calcBuf", bytes=0)
        bidx = A.op("block_idx", [], self.i64)
        bnum = A.op("block_num", [], self.i64)
        self.grid = scf.ForOp(bidx, self.num_programs, bnum)
        self.grid.attributes["ascendc.grid_loop"] = ir.UnitAttr.get()
        self.pid = self.grid.induction_variable
        self.before_grid = ir.InsertionPoint(self.grid.operation)

    def _dce(self, fn) -> None:
        """Erase pure ops whose results are unused (lowering builds some values speculatively)."""
        pure = ("ascendc.tiling_field", "ascendc.block_idx", "ascendc.block_num", "ascendc.gm_at", "ascendc.ub_at",
                "ascendc.reinterpret", "ascendc.get_with_offset")
        changed = True
        while changed:
            changed = False
            stack = [fn.operation]
            dead = []
            while stack:
                o = stack.pop()
                for region in o.regions:
                    for b in region.blocks:
                        for x in b.operations:
                            stack.append(x.operation)
                if (o.name.startswith("arith.") or o.name in pure) and len(o.results) and \
                        not any(True for r in o.results for _ in r.uses):
                    dead.append(o)
            for o in dead:
                o.erase()
                changed = True

    def _cse(self, block: ir.Block, seen: dict) -> None:
        """Merge identical scalar arith ops (each rule computes counts and offsets on its own)."""
        for o in list(block.operations):
            op = o.operation
            if op.name.startswith("arith.") and len(op.results) == 1 and not op.regions:
                attrs = tuple((k, str(op.attributes[k])) for k in op.attributes if k != "name")
                key = (op.name, tuple(op.operands), attrs, str(op.results[0].type))
                try:
                    hash(key)
                except TypeError:
                    continue
                if key in seen:
                    keep = seen[key]
                    if "name" in op.attributes and "name" not in keep.attributes:
                        keep.attributes["name"] = op.attributes["name"]
                    op.results[0].replace_all_uses_with(keep.results[0])
                    op.erase()
                    continue
                seen[key] = op
            for region in op.regions:
                for b in region.blocks:
                    self._cse(b, dict(seen))

    def _finish(self, fn):
        self._cse(fn.regions[0].blocks[0], {})
        self._dce(fn)
        top = round_up(self.scratch.peak, TILE_ALIGN)
        for op, nbytes in self.iota_ops:
            op.attributes["offset"] = ir.IntegerAttr.get(self.i64, top)
            top += nbytes
        self.scratch.peak = top
        self.calc.attributes["bytes"] = ir.IntegerAttr.get(self.i64, max(self.scratch.peak, 32))
        for q in self.queues:
            q.decl.attributes["bytes"] = ir.IntegerAttr.get(self.i64, q.bytes)
        plan = self.ub_plan()
        if plan["total"] > self.soc.ub_usable:
            parts = ", ".join(f"{q.name} {self.opts.buffer_num} x {q.bytes} B" for q in self.queues)
            raise self.error(
                f"ascend: this kernel's blocks need {plan['total']} B of unified buffer ({parts}, scratch "
                f"{plan['scratch']} B), more than the {self.soc.ub_usable} B usable on {self.soc.name}; "
                f"the largest block here is {self.largest[0]} B: use smaller BLOCK sizes", self.largest[1])
        fn.attributes["ascendc.fields"] = ir.ArrayAttr.get(
            [ir.StringAttr.get(f"{n}:{t}") for n, t in self.fields])

    def ub_plan(self) -> dict:
        queues = {q.name: {"position": q.position, "buffers": self.opts.buffer_num, "bytes": q.bytes}
                  for q in self.queues}
        scratch = round_up(max(self.scratch.peak, 32), 32)
        total = scratch + sum(self.opts.buffer_num * q.bytes for q in self.queues)
        return {"queues": queues, "scratch": scratch, "total": total, "usable": self.soc.ub_usable}

    # ----- the walk ----------------------------------------------------------------------
    def lower_block(self, block: ir.Block, on_yield=None) -> None:
        """Lower the ops of `block` at the current insertion point; `on_yield(op)` lowers its yield (or a
        `while`'s condition)."""
        ops = list(block.operations)
        dying = self.last_uses(block, ops)
        for a in block.arguments:
            if not any(True for _ in a.uses):
                self.drop(a)
        for i, op in enumerate(ops):
            if op.name == "func.return":
                continue
            self.loc = source_loc(op.location)
            with ir.Location.file(self.loc[0] or "?", self.loc[1], self.loc[2]):
                if op.name in ("scf.yield", "scf.condition", "gpu.yield"):
                    on_yield(op)
                else:
                    self.lower_op(op)
                for t in self.temps:
                    self.release(t)
                self.temps = []
                for v in dying.get(i, ()):
                    self.drop(v)
                for r in op.results:
                    if not any(True for _ in r.uses):
                        self.drop(r)

    def last_uses(self, block, ops) -> dict:
        """{i: values of `block` whose last use is in ops[i] (or nested in it)}."""
        index: dict = {}
        for i, op in enumerate(ops):
            stack = [op.operation]
            while stack:
                o = stack.pop()
                index[o] = i
                for region in o.regions:
                    for b in region.blocks:
                        stack.extend(x.operation for x in b.operations)
        values = list(block.arguments) + [r for op in ops for r in op.results]
        dying: dict = {}
        for v in values:
            last = max((index.get(u.owner.operation if hasattr(u.owner, "operation") else u.owner, -1)
                        for u in v.uses), default=-1)
            if last >= 0:
                dying.setdefault(last, []).append(v)
        return dying

    def absorb(self, ops) -> None:
        """Mark `ops` as lowered by another op's rule (a Cube K loop takes its loads and store)."""
        self.absorbed.update(o.operation if hasattr(o, "operation") else o for o in ops)

    def lower_op(self, op) -> None:
        from .lowering import rule_for

        if op.operation in self.absorbed:
            return
        rule = rule_for(self, op)
        if rule is None and op.name.startswith("arith.") and not any(
                str(r.type).startswith("tensor<") for r in op.results):
            from .lowering import _clone_scalar as rule
        if rule is None:
            raise self.error(f"no 'ascend' lowering for {op.name}")
        rule(self, op)

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
                f = self.to64(self.scalar(self.ps.values[key]))
                term = f if term is None else self.mul(term, f)
            if term is None:
                term = self.c64(coeff)
            elif coeff != 1:
                term = self.mul(term, self.c64(coeff))
            total = term if total is None else self.add(total, term)
        return total if total is not None else self.c64(0)

    def gm_offset(self, ptr: ir.Value, base) -> ir.Value:
        """The element offset `base` (a Lin) of the pointer block `ptr`, as an i64 value named after
        the kernel's Python name for its offsets (`offs` in `x_ptr + offs`, `a_ptrs`)."""
        v = self.lin(base)
        name = self._offsets_name(ptr)
        return self.named(v, name) if name else v

    def _offsets_name(self, ptr: ir.Value) -> str | None:
        """`arg + offsets` (one or more addptr, every offset from one source line): that line's name."""
        lines = set()
        o = ptr.owner
        while True:
            if isinstance(o, ir.Block):  # a loop-carried pointer is named where it starts; an argument ends
                if o.owner is None or o.owner.name != "scf.for" or ptr not in list(o.arguments)[1:]:
                    break
                ptr = o.owner.operands[3 + list(o.arguments).index(ptr) - 1]
            elif o.name == "xb.addptr" and not isinstance(o.operands[1].owner, ir.Block):
                off = o.operands[1].owner
                lines.add(source_loc(off.location)[:2])
                ptr = o.operands[0]
            elif o.name in ("xb.splat", "xb.broadcast", "xb.expand_dims"):
                ptr = o.operands[0]
            else:
                return None
            o = ptr.owner
        if len(lines) != 1:
            return None
        return self.names.at(*next(iter(lines)))

    def line_name(self, op) -> str | None:
        """The Python name assigned on `op`'s source line (`x = ...`), if any."""
        file, line, _ = source_loc(op.location)
        return self.names.at(file, line)

    def name_for(self, op) -> str | None:
        """The Python name assigned on `op`'s line, if `op` is the last op there with results."""
        file, line, _ = source_loc(op.location)
        name = self.names.at(file, line)
        if name is None:
            return None
        nxt = op.operation.next_op if hasattr(op.operation, "next_op") else None
        block_ops = list(op.operation.block.operations)
        idx = [o.operation for o in block_ops].index(op.operation)
        for later in block_ops[idx + 1:]:
            if len(later.results) and source_loc(later.location)[:2] == (file, line):
                return None
        del nxt
        return name

    # ----- tiles -------------------------------------------------------------------------
    def new_tile(self, elem: str, shape: tuple, name: str | None = None, result=None) -> Tile:
        """A scratch tile, or a VECOUT queue tensor when `result` is next stored to GM."""
        nbytes = round_up(max(numel(shape), 1) * SIZE[elem], TILE_ALIGN)
        if nbytes > self.largest[0]:
            self.largest = (nbytes, self.loc)
        store = self._feeds_store(result) if result is not None else None
        if store is not None:
            label = name or self.store_label(store)
            q = self.queue("VECOUT", nbytes, label)
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

    def queue(self, position: str, nbytes: int, name: str | None) -> Queue:
        for q in self.queues:
            if q.position == position and not q.busy:
                break
        else:
            stem = "inQueue" if position == "VECIN" else "outQueue"
            label = (name or str(len(self.queues)))
            q = Queue(stem + label[0].upper() + label[1:], position)
            if any(x.name == q.name for x in self.queues):
                q.name += str(len(self.queues))
            n_at_pos = sum(1 for x in self.queues if x.position == position) + 1
            if n_at_pos * self.opts.buffer_num > 8:
                raise self.error(f"ascend: more than {8 // self.opts.buffer_num} {position} blocks live at once "
                                 f"(at most 8 queue buffers per TPosition)")
            with self.before_grid:
                q.decl = A.op("tque", [], sym_name=q.name, position=position, depth=1, num=self.opts.buffer_num,
                              bytes=0)
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
            from .lowering import materialize

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
        count = count if isinstance(count, ir.Value) else self.c64(count)
        A.op("duplicate", [t.value, self.splat_scalar(s), count])

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


def _gm_name(arg: str) -> str:
    stem = arg[:-4] if arg.endswith("_ptr") and len(arg) > 4 else arg
    return stem + "Gm"


def _n(name):
    return {"name": name} if name else {}


__all__ = ["Lowering", "Splat", "Struct", "Tile", "elem_of", "shape_of", "source_loc"]
