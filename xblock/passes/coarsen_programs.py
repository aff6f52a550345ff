"""xb-coarsen-programs: one program instance computes R consecutive programs of axis 0 at once.

A backend whose cost is in the number and size of its transfers (ascend: a fixed cost per DataCopy,
a kernel of one row per program moves 1-4 KB per copy) calls `run(module, rows)` on a copy of the
xb module. The pass is target-agnostic; the backend picks `rows` and the launcher adapts the grid.

**What it does.** `program_id(0)` becomes the block `rows = program_id(0) * Q + arange(0, R)`
(Q <= R, the rows an instance computes, is chosen at launch so that every core gets an instance),
and every value that depends on it gains a leading axis of R: a scalar becomes an [R] block, a [B]
block an [R, B] block. Reductions and scans move to the axis they had plus one; `splat` of a
per-row scalar becomes `expand_dims` + `broadcast`; values that do not depend on the program id
(weights, column offsets, constants) keep their shape and are broadcast where they meet one that
does. Loops and `if`s keep their control flow; the blocks they carry gain the axis. Every load,
store and atomic that depends on the program id is masked with `rows < P` and `arange(0, R) < Q`,
where P, the number of programs along axis 0 of the launch, and Q are two scalar arguments appended
to the kernel (`ARG`, `ARG_ROWS`); the launcher passes the grid's x extent and
Q there (ascend: `options.rows_per_instance`) and launches ceil(x / Q) programs along x.
`num_programs(0)` reads P.

Why this is exact: programs of one launch are independent in the language (no order between them
is defined), and the pass changes nothing inside a program's row: each row's lanes compute what
that program computed, in the same order. What would make rows interact is refused.

**Refused** (`Refused.reason` names the op): a kernel without `program_id(0)`; control flow that
depends on the program id (a loop bound, an `if` or `while` condition); `while` loops that carry
values depending on it; dots, gathers, histograms, cat, prints and asserts (whose report names a
program) on such values; a store or atomic whose address does not depend on the program id but
whose value or mask does (programs racing for one address); atomics whose address does not depend
on it (each program would add once); pointer tables (`int_to_ptr`) and tensor descriptors.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from ..dialects import xb
from ..dialects.locations import kernel_of, op_loc

NAME = "xb-coarsen-programs"
ARG = "xb_programs_x"  # the first appended scalar argument: programs along axis 0 of the launch
ARG_ROWS = "xb_rows_per_instance"  # the second: programs one instance computes, 1 <= it <= R

# ops whose operands and results share one shape (element-wise), besides arith.* and math.*
_ELEMENTWISE = ("xb.addptr", "xb.load", "xb.store", "xb.atomic_rmw", "xb.fp_to_fp", "xb.ptr_cast", "xb.ptr_to_int")
# ops whose results are reshaped from their operands (handled one by one)
_SHAPED = ("xb.splat", "xb.broadcast", "xb.expand_dims", "xb.trans", "xb.reshape", "xb.join", "xb.split",
           "xb.reduce", "xb.scan")
_CONTROL = ("scf.for", "scf.if", "scf.yield")
_WHY = {
    "xb.dot": "tl.dot", "xb.gather": "tl.gather", "xb.histogram": "tl.histogram", "xb.cat": "tl.cat",
    "xb.print": "a device print", "xb.assert": "tl.device_assert", "xb.atomic_cas": "atomic_cas",
    "xb.int_to_ptr": "a pointer made from an integer", "scf.while": "a while loop",
}


class Refused(Exception):
    """The kernel cannot be coarsened; `reason` says why, `loc` is (file, line, col) of the op."""

    def __init__(self, reason: str, loc=("", 0, 0)):
        super().__init__(reason)
        self.reason, self.loc = reason, loc


def _shape(t: ir.Type) -> list:
    return list(ir.RankedTensorType(t).shape) if isinstance(t, ir.RankedTensorType) else []


def _elem(t: ir.Type) -> ir.Type:
    return ir.RankedTensorType(t).element_type if isinstance(t, ir.RankedTensorType) else t


def _tensor(shape: list, elem: ir.Type) -> ir.Type:
    return ir.RankedTensorType.get(list(shape), elem)


def _walk(block: ir.Block):
    """Every op of `block` and of the regions nested in it, in program order."""
    for op in block.operations:
        yield op
        for region in op.regions:
            for b in region.blocks:
                yield from _walk(b)


class _Coarsen:
    def __init__(self, module: ir.Module, rows: int):
        self.func = kernel_of(module)
        self.entry = self.func.regions[0].blocks[0]
        self.rows = rows
        self.varying: set = set()  # values that depend on program_id(0)
        self.orig: dict = {}  # varying value -> its type before the pass
        self.masks: dict = {}  # shape suffix -> the row-validity mask of that shape

    # ------------------------------------------------------------------ analysis
    def analyse(self) -> None:
        pids = [op for op in _walk(self.entry) if op.operation.name == "xb.program_id"
                and ir.IntegerAttr(op.attributes["axis"]).value == 0]
        if not pids:
            raise Refused("the kernel does not use program_id(0)")
        self.pids = pids
        self.varying = {op.result for op in pids}
        changed = True
        while changed:  # to a fixed point: values carried around loops
            before = len(self.varying)
            for op in _walk(self.entry):
                self._propagate(op)
            changed = len(self.varying) != before
        for op in _walk(self.entry):
            self._check(op)
        for v in self.varying:
            self.orig[v] = v.type

    def _varies(self, v) -> bool:
        return v in self.varying

    def _propagate(self, op) -> None:
        name = op.operation.name
        if name == "scf.for":
            body = op.regions[0].blocks[0]
            y = body.operations[len(body.operations) - 1]
            for k, res in enumerate(op.results):
                if self._varies(op.operands[3 + k]) or self._varies(y.operands[k]) or self._varies(res):
                    self.varying.update((res, body.arguments[k + 1]))
        elif name == "scf.if":
            for region in op.regions:
                if region.blocks:
                    b = region.blocks[0]
                    y = b.operations[len(b.operations) - 1]
                    for k, res in enumerate(op.results):
                        if self._varies(y.operands[k]):
                            self.varying.add(res)
        elif name == "scf.while":
            if any(self._varies(o) for o in op.operands):
                self.varying.update(op.results)
        elif name in ("xb.reduce", "xb.scan"):
            if any(self._varies(o) for o in op.operands):
                self.varying.update(op.results)
        elif len(op.regions) == 0 and any(self._varies(o) for o in op.operands):
            self.varying.update(op.results)

    def _check(self, op) -> None:
        name = op.operation.name
        uses = any(self._varies(o) for o in op.operands) or any(self._varies(r) for r in op.results)
        inside = any(self._varies(v) for r in op.regions for b in r.blocks for o in _walk(b)
                     for v in list(o.operands) + list(o.results)) if op.regions else False
        if name == "xb.atomic_rmw" and not self._varies(op.operands[0]):
            raise Refused("an atomic at an address that does not depend on program_id(0) (every program "
                          "updates it)", op_loc(op))
        if name in _WHY and (uses or inside or name in ("xb.print", "xb.assert")):
            raise Refused(f"{_WHY[name]} in a kernel whose programs would be merged", op_loc(op))
        if name in ("xb.make_tensor_descriptor", "xb.descriptor_load", "xb.descriptor_store",
                    "xb.descriptor_reduce"):
            raise Refused("tensor descriptors", op_loc(op))
        if name == "scf.for" and any(self._varies(o) for o in op.operands[:3]):
            raise Refused("a loop whose bounds depend on program_id(0)", op_loc(op))
        if name == "scf.if" and self._varies(op.operands[0]):
            raise Refused("an if whose condition depends on program_id(0)", op_loc(op))
        if name == "xb.store" and not self._varies(op.operands[0]) and uses:
            raise Refused("a store of values that depend on program_id(0) to an address that does not "
                          "(programs race for it)", op_loc(op))
        if not uses or name in _CONTROL or name == "xb.program_id" or name in _ELEMENTWISE or name in _SHAPED:
            return
        if name.startswith(("arith.", "math.")) and not op.regions:
            return
        raise Refused(f"{name} on values that depend on program_id(0)", op_loc(op))

    # ------------------------------------------------------------------ rewriting helpers
    def _lifted_type(self, t: ir.Type) -> ir.Type:
        return _tensor([self.rows] + _shape(t), _elem(t))

    def _spread(self, v, suffix: list, loc, ip):
        """An [R] (or [R] + prefix) value `v` widened to [R] + suffix along trailing axes."""
        have = _shape(v.type)
        for ax in range(len(have), 1 + len(suffix)):
            shape = _shape(v.type) + [1]
            v = xb.expand_dims(v, ax, _tensor(shape, _elem(v.type)), loc=loc, ip=ip)
        if _shape(v.type) != [self.rows] + list(suffix):
            v = xb.broadcast(v, _tensor([self.rows] + list(suffix), _elem(v.type)), loc=loc, ip=ip)
        return v

    def _lift(self, v, loc, ip):
        """A value that does not depend on the program id, repeated for each of the R rows."""
        shape = _shape(v.type)
        if not shape:
            return xb.splat(v, _tensor([self.rows], v.type), loc=loc, ip=ip)
        e = xb.expand_dims(v, 0, _tensor([1] + shape, _elem(v.type)), loc=loc, ip=ip)
        return xb.broadcast(e, _tensor([self.rows] + shape, _elem(v.type)), loc=loc, ip=ip)

    def _valid(self, suffix: list, loc):
        key = tuple(suffix)
        if key not in self.masks:
            ip = ir.InsertionPoint(self.anchor)
            self.masks[key] = self._spread(self.valid, list(suffix), loc, ip) if suffix else self.valid
        return self.masks[key]

    def _orig_shape(self, v) -> list:
        return _shape(self.orig.get(v, v.type))

    def _match(self, op, i: int, main: list, ip) -> None:
        """Operand i of an element-wise op made [R] + main, as the op now computes."""
        v = op.operands[i]
        shape = self._orig_shape(v)
        if shape == main and not self._varies(v):
            op.operands[i] = self._lift(v, op.location, ip)
        elif not shape and main and self._varies(v):  # a per-row scalar (a select's condition)
            op.operands[i] = self._spread(v, main, op.location, ip)

    # ------------------------------------------------------------------ rewriting
    def rewrite(self) -> None:
        i32 = ir.IntegerType.get_signless(32)
        loc = self.func.location
        ip = ir.InsertionPoint(self.entry.operations[0])
        programs = self.entry.add_argument(i32, loc)
        per = self.entry.add_argument(i32, loc)
        self._add_arguments()
        g = xb.program_id(0, loc=loc, ip=ip)
        base = arith.MulIOp(g, per, loc=loc, ip=ip).result
        rt = _tensor([self.rows], i32)
        lanes = xb.arange(0, self.rows, loc=loc, ip=ip)
        rows = arith.AddIOp(xb.splat(base, rt, loc=loc, ip=ip), lanes, loc=loc, ip=ip).result
        exist = arith.CmpIOp(arith.CmpIPredicate.slt, rows, xb.splat(programs, rt, loc=loc, ip=ip),
                             loc=loc, ip=ip).result
        mine = arith.CmpIOp(arith.CmpIPredicate.slt, lanes, xb.splat(per, rt, loc=loc, ip=ip), loc=loc, ip=ip).result
        self.valid = arith.AndIOp(exist, mine, loc=loc, ip=ip).result
        self.anchor = arith.ConstantOp(i32, 0, loc=loc, ip=ip)  # masks of other shapes go before it
        for op in [o for o in _walk(self.entry) if o.operation.name == "xb.num_programs"
                   and ir.IntegerAttr(o.attributes["axis"]).value == 0]:
            op.result.replace_all_uses_with(programs)
            op.operation.erase()
        for pid in self.pids:
            self.varying.discard(pid.result)
            self.orig[rows] = i32
            self.varying.add(rows)
            pid.result.replace_all_uses_with(rows)
            pid.operation.erase()
        for op in list(_walk(self.entry)):
            self._rewrite(op)

    def _add_arguments(self) -> None:
        f = self.func
        ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
        inputs = list(ftype.inputs) + [ir.IntegerType.get_signless(32)] * 2
        f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, list(ftype.results)))
        if "arg_attrs" in f.attributes:
            attrs = list(ir.ArrayAttr(f.attributes["arg_attrs"])) + [ir.DictAttr.get({})] * 2
            f.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
        names = [ir.StringAttr(a).value for a in ir.ArrayAttr(f.attributes["xb.arg_names"])] + [ARG, ARG_ROWS]
        f.attributes["xb.arg_names"] = ir.ArrayAttr.get([ir.StringAttr.get(n) for n in names])

    def _rewrite(self, op) -> None:
        name = op.operation.name
        if name == "scf.yield":
            return self._yield(op)
        varying_results = [r for r in op.results if self._varies(r)]
        if not varying_results and name not in ("xb.store", "xb.atomic_rmw"):
            return
        if name in ("xb.store", "xb.atomic_rmw") and not self._varies(op.operands[0]):
            return
        ip = ir.InsertionPoint(op)
        loc = op.location
        if name == "scf.for":
            for k, res in enumerate(op.results):
                if self._varies(res):
                    init = op.operands[3 + k]
                    if not self._varies(init):
                        op.operands[3 + k] = self._lift(init, loc, ip)
                    res.set_type(self._lifted_type(self.orig[res]))
                    arg = op.regions[0].blocks[0].arguments[k + 1]
                    arg.set_type(self._lifted_type(self.orig[arg]))
            return
        if name == "scf.if":
            for res in varying_results:
                res.set_type(self._lifted_type(self.orig[res]))
            return
        if name in _SHAPED:
            return self._shaped(op, name, ip, loc)
        main = _shape(self.orig[op.results[0]]) if op.results and self._varies(op.results[0]) else \
            self._orig_shape(op.operands[0])
        for i in range(len(op.operands)):
            self._match(op, i, main, ip)
        for r in varying_results:
            r.set_type(self._lifted_type(self.orig[r]))
        if name in ("xb.load", "xb.store", "xb.atomic_rmw"):
            self._mask(op, name, main, ip, loc)

    def _shaped(self, op, name: str, ip, loc) -> None:
        src_shape = self._orig_shape(op.operands[0])
        if name == "xb.splat":  # a per-row scalar spread along the block's axes
            out = self._spread(op.operands[0], _shape(op.result.type), loc, ip)
            self._replace(op.result, out)
            op.operation.erase()
            return
        for i in range(len(op.operands)):
            if not self._varies(op.operands[i]) and self._orig_shape(op.operands[i]) == src_shape:
                op.operands[i] = self._lift(op.operands[i], loc, ip)
        for r in op.results:
            r.set_type(self._lifted_type(self.orig[r]))
        if name in ("xb.expand_dims", "xb.reduce", "xb.scan"):
            op.attributes["axis"] = xb.i32_attr(ir.IntegerAttr(op.attributes["axis"]).value + 1)
        elif name == "xb.trans":
            order = list(ir.DenseI32ArrayAttr(op.attributes["order"]))
            op.attributes["order"] = ir.DenseI32ArrayAttr.get([0] + [o + 1 for o in order])

    def _mask(self, op, name: str, main: list, ip, loc) -> None:
        """A varying access masked with the rows that exist (a new op: the operand count may change)."""
        valid = self._valid(main, loc)
        seg = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        ops = list(op.operands)
        at = {"xb.load": 1, "xb.store": 2, "xb.atomic_rmw": 2}[name]
        if seg[at]:
            ops[at] = arith.AndIOp(ops[at], valid, loc=loc, ip=ip).result
            op.operands[at] = ops[at]
            return
        if name == "xb.load":
            other = ops[1] if seg[2] else None
            new = xb.load(ops[0], op.result.type, valid, other, cache=ir.StringAttr(op.attributes["cache"]).value,
                          evict=ir.StringAttr(op.attributes["evict"]).value,
                          volatile=ir.BoolAttr(op.attributes["volatile"]).value, loc=loc, ip=ip)
            self._replace(op.result, new)
        elif name == "xb.store":
            xb.store(ops[0], ops[1], valid, cache=ir.StringAttr(op.attributes["cache"]).value,
                     evict=ir.StringAttr(op.attributes["evict"]).value, loc=loc, ip=ip)
        else:
            attrs = {k: op.attributes[k] for k in op.attributes if k != "operandSegmentSizes"}
            attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([1, 1, 1])
            new = ir.Operation.create("xb.atomic_rmw", results=[op.result.type], operands=ops[:2] + [valid],
                                      attributes=attrs, loc=loc, ip=ip)
            self._replace(op.result, new.result)
        op.operation.erase()

    def _replace(self, old, new) -> None:
        """Uses of `old` (a varying value) take `new`, which the later rewrites see as `old` was seen:
        varying, with `old`'s type before the pass."""
        self.varying.add(new)
        self.orig[new] = self.orig.get(old, old.type)
        old.replace_all_uses_with(new)

    def _yield(self, op) -> None:
        parent = op.operation.parent
        if parent.name not in ("scf.for", "scf.if"):
            return
        ip = ir.InsertionPoint(op)
        for k, res in enumerate(parent.results):
            if self._varies(res) and not self._varies(op.operands[k]):
                op.operands[k] = self._lift(op.operands[k], op.location, ip)


def row_bytes(module: ir.Module) -> tuple:
    """(the bytes of the largest load or store of one program that depends on program_id(0), what one
    row of a coarsened program moves; whether such an access has a mask that depends on the program id
    lane by lane, as `offs = pid * BLOCK + arange(0, BLOCK)` with `mask = offs < n` does: coarsened,
    its rows are one flat range under one flat mask, not rows of columns). Raises Refused if the
    kernel cannot be coarsened. The module is not changed."""
    with module.context:
        c = _Coarsen(module, 1)
        c.analyse()
        most, flat = 0, False
        for op in _walk(c.entry):
            name = op.operation.name
            if name in ("xb.load", "xb.store", "xb.atomic_rmw") and c._varies(op.operands[0]):
                v = op.result if name == "xb.load" else op.operands[1]
                n = 1
                for d in _shape(v.type):
                    n *= d
                most = max(most, n * max(1, _bits(_elem(v.type)) // 8))
                seg = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
                at = 1 if name == "xb.load" else 2
                if seg[at]:
                    mask = op.operands[at]
                    flat = flat or (c._varies(mask) and bool(_shape(mask.type)) and not _per_row(mask))
        return most, flat


def _per_row(mask) -> bool:
    """A block mask that is a per-row scalar spread over the block (`splat`, `broadcast`)."""
    o = mask.owner
    while not isinstance(o, ir.Block) and o.name in ("xb.splat", "xb.broadcast", "xb.expand_dims"):
        if o.name == "xb.splat":
            return True
        o = o.operands[0].owner
    return False


def _bits(t: ir.Type) -> int:
    if isinstance(t, ir.IntegerType):
        return ir.IntegerType(t).width
    if isinstance(t, ir.FloatType):
        return ir.FloatType(t).width
    return 64  # pointers


def run(module: ir.Module, rows: int) -> None:
    """Coarsen the kernel of `module` in place: each program computes `rows` programs of axis 0."""
    with module.context, ir.Location.unknown():
        c = _Coarsen(module, rows)
        c.analyse()
        c.rewrite()
