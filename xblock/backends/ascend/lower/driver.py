"""The one walk that lowers an xb kernel to the ascendc dialect, applying `rules.RULES` per op.

It builds the kernel skeleton (GlobalTensors, tiling fields, the grid loop
`for (pid = GetBlockIdx(); pid < numPrograms; pid += GetBlockNum())`), walks the xb body in order,
frees every value after its last use, and finally sizes the queues and the scratch buffer and
checks the unified-buffer plan against the SoC. It knows no rule module: `pipeline` imports
them, and they fill the table in `rules`.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import func, scf

from ....dialects import ascendc as A
from ....dialects.locations import kernel_of, missing_rule
from ..options import AIC_ONLY, AIV_ONLY
from ..plan import resident, row_cache, streaming
from ..plan.plan import AscendPlan, VectorCoreNeeded
from ..values import TILE_ALIGN, round_up
from ..vector.tiles import clone_scalar
from .context import LoweringContext
from .rules import AFTER_WALK, BEFORE_WALK, FP8_NAMES, FP8_REASON, TARGET, UNSUPPORTED, rule_for

TERMINATORS = ("scf.yield", "scf.condition", "gpu.yield")
PURE = ("ascendc.tiling_field", "ascendc.block_idx", "ascendc.block_num", "ascendc.gm_at", "ascendc.ub_at",
        "ascendc.reinterpret", "ascendc.get_with_offset")  # ops _dce may erase when unused


class Lowering(LoweringContext):
    """One xb -> ascendc lowering: the rule context plus the walk that fills it."""

    def __init__(self, module: ir.Module, options, metadata: dict, plan: AscendPlan):
        super().__init__(options, metadata, plan)
        self.xb_module = module
        self.overflow = None  # the UB plan, when it exceeds the SoC's unified buffer (the planner splits blocks)
        self.hoist = plan.resident  # loads alike in every program before the grid loop (plan/resident.py)
        self.row_cache = plan.row_cache  # rows several loops read, kept in UB (plan/row_cache.py)

    # ----- skeleton ----------------------------------------------------------------------
    def run(self) -> ir.Module:
        """The ascendc module of the plan; `resident.NoRoom` when its resident loads or row caches do
        not fit in UB (the planner then gives them up)."""
        kernel = kernel_of(self.xb_module)
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
            if self.hoist:
                resident.hoist(self)
            if self.row_cache:
                row_cache.plan(self)
            with ir.InsertionPoint(self.grid.body):
                self.lower_block(body)
                scf.YieldOp([])
            for hook in AFTER_WALK:
                hook(self)
            for hook in self.ext.after_walk:  # this lowering's, e.g. the core sections of a mixed kernel
                hook(self)
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
        streaming.lower_hints(self, {name: self.vmap[body.arguments[arg_names.index(name)]] for name, _ in gm_args})
        self.calc = A.op("tbuf", [], sym_name="calcBuf", bytes=0)
        bidx = A.op("block_idx", [], self.i64)
        bnum = A.op("block_num", [], self.i64)
        self.grid = scf.ForOp(bidx, self.num_programs, bnum)
        self.grid.attributes["ascendc.grid_loop"] = ir.UnitAttr.get()
        self.pid = self.grid.induction_variable
        self.before_grid = ir.InsertionPoint(self.grid.operation)

    def _dce(self, fn) -> None:
        """Erase pure ops whose results are unused (lowering builds some values speculatively)."""
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
                if (o.name.startswith("arith.") or o.name in PURE) and len(o.results) and \
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
        vector = [q for q in self.queues if q.position in ("VECIN", "VECOUT")]
        ub_work = vector or self.scratch.peak > 0 or self.iota_ops or self.resident_ops  # UB outside queues too
        if self.meta.get("kernel_type") == AIC_ONLY and ub_work:
            line = min(min(q.lines) for q in vector if q.lines) if any(q.lines for q in vector) else self.loc[1]
            # the planner answers with the Cube and vector work in sections of their cores
            raise VectorCoreNeeded(self.error(
                "this kernel's dots run on the Cube unit alone (their results go out through Fixpipe), so it "
                "is a cube-only (AIC) kernel, and it also moves blocks through the vector core here; a kernel "
                "mixing the two that way is not supported yet: make the vector work depend on the dot's result, "
                "or split it into its own kernel", (self.loc[0], line, 1)), "vector_work")
        if "kernel_type" not in self.meta:  # no Cube op: say so explicitly, as REFERENCE 0.1 asks
            self.meta["kernel_type"] = AIV_ONLY
            with ir.InsertionPoint.at_block_begin(self.grid.operation.block):
                A.op("kernel_type", [], type=AIV_ONLY)
        row_cache.place(self)  # patches constants: before _cse merges them
        self._cse(fn.regions[0].blocks[0], {})
        self._dce(fn)
        top = round_up(self.scratch.peak, TILE_ALIGN)
        for op, nbytes in self.iota_ops + self.resident_ops:  # tiles that live through the kernel
            op.attributes["offset"] = ir.IntegerAttr.get(self.i64, top)
            top += nbytes
        self.scratch.peak = top
        self.calc.attributes["bytes"] = ir.IntegerAttr.get(self.i64, max(self.scratch.peak, 32))
        self._check_residents()
        if self.ub_plan()["total"] > self.soc.ub_usable:  # single buffers (no copy-in overlap) if that fits
            for q in self.queues:
                q.num = 1
        for q in self.queues:
            q.decl.attributes["bytes"] = ir.IntegerAttr.get(self.i64, q.bytes)
            q.decl.attributes["num"] = ir.IntegerAttr.get(self.i64, q.num)
        plan = self.ub_plan()
        if plan["total"] > self.soc.ub_usable:
            self.overflow = plan
            parts = ", ".join(f"{q.name} {q.num} x {q.bytes} B" for q in self.queues)
            raise self.error(
                f"this kernel's blocks need {plan['total']} B of unified buffer ({parts}, scratch "
                f"{plan['scratch']} B), more than the {self.soc.ub_usable} B usable on {self.soc.name}; "
                f"the largest block here is {self.largest[0]} B: use smaller BLOCK sizes", self.largest[1])
        fn.attributes["ascendc.fields"] = ir.ArrayAttr.get(
            [ir.StringAttr.get(f"{n}:{t}") for n, t in self.fields])

    def _check_residents(self) -> None:
        """NoRoom (run lowers again without them) when the resident tiles do not fit even with single
        buffers, or cost the queues their double buffering, which the plan without them would keep."""
        if not self.resident_ops:
            return
        usable, total = self.soc.ub_usable, self.ub_plan()["total"]
        if total <= usable:
            return
        single = total - sum((q.num - 1) * q.bytes for q in self.queues)
        if single > usable or total - sum(n for _, n in self.resident_ops) <= usable:
            raise resident.NoRoom()

    def ub_plan(self) -> dict:
        queues = {q.name: {"position": q.position, "buffers": q.num, "bytes": q.bytes} for q in self.queues}
        scratch = round_up(max(self.scratch.peak, 32), 32)
        total = scratch + sum(q.num * q.bytes for q in self.queues)
        return {"queues": queues, "scratch": scratch, "total": total, "usable": self.soc.ub_usable}

    # ----- the walk ----------------------------------------------------------------------
    def lower_block(self, block: ir.Block, on_yield=None) -> None:
        """Lower the ops of `block` at the current insertion point; `on_yield(op)` lowers its yield (or a
        `while`'s condition)."""
        for a in block.arguments:
            if not any(True for _ in a.uses):
                self.drop(a)
        self.lower_ops(block, list(block.operations), on_yield)

    def lower_ops(self, block: ir.Block, ops: list, on_yield=None) -> None:
        """Lower `ops` (of `block`, in order), freeing each value after its last use among them."""
        dying = self.last_uses(block, ops)
        for i, op in enumerate(ops):
            if op.name == "func.return":
                continue
            with self.located(op):
                if op.name in TERMINATORS and on_yield is not None:
                    on_yield(op)
                    emitted = list(ir.InsertionPoint.current.block.operations)
                    if emitted and emitted[-1].name in ("scf.yield", "scf.condition"):
                        with ir.InsertionPoint(emitted[-1]):  # values dying at the yield: freed before it
                            self.release_after(op, dying.get(i, ()))
                        continue
                else:
                    self.lower_op(op)
                self.release_after(op, dying.get(i, ()))

    def release_after(self, op, dying) -> None:
        """Free the temporaries of `op`, the values whose last use it is, and its unused results."""
        for t in self.temps:
            self.release(t)
        self.temps = []
        for v in dying:
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
        # an absorbed op that a later op may lower after all (a dot's operand load, lowered at the dot):
        # its operands are used there
        for o, at in self.ext.deferred.items():
            if o in index and at in index:
                index[o] = max(index[o], index[at])
        values = list(block.arguments) + [r for op in ops for r in op.results]
        dying: dict = {}
        for v in values:
            last = max((index.get(u.owner.operation if hasattr(u.owner, "operation") else u.owner, -1)
                        for u in v.uses), default=-1)
            if last >= 0:
                dying.setdefault(last, []).append(v)
        return dying

    def lower_op(self, op) -> None:
        """Apply `op`'s rule (scalar arith without one is cloned as C++ scalar code)."""
        if op.operation in self.absorbed:
            return
        fp8 = next((FP8_NAMES[n] for v in list(op.operands) + list(op.results) for n in FP8_NAMES
                    if n in str(v.type)), None)
        if fp8 is not None:
            raise self.error(FP8_REASON.format(fp8))
        rule = rule_for(self, op)
        if rule is None and op.name.startswith("arith.") and not any(
                str(r.type).startswith("tensor<") for r in op.results):
            rule = clone_scalar
        if rule is None:
            if op.name in UNSUPPORTED:
                raise self.error(UNSUPPORTED[op.name])
            raise missing_rule(op, TARGET)
        rule(self, op)


def _gm_name(arg: str) -> str:
    stem = arg[:-4] if arg.endswith("_ptr") and len(arg) > 4 else arg
    return stem + "Gm"


__all__ = ["Lowering"]
