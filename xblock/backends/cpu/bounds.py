"""Bounds checks of global memory accesses: every active lane must lie inside an array argument.

The launcher passes the byte extent `[start, end)` of every pointer argument in a runtime slot
(`launch.BOUNDS`). A contiguous chunk is checked with two scalar compares per argument (its first
byte and its end); only a chunk that fails them, and gathers and scatters, are checked lane by
lane. A lane outside every argument is not accessed (a load reads 0 there) and the program's
failure is recorded as a failing `device_assert` is (`debug.record_failure`), so the launcher
raises the sim's out-of-bounds error at the access's line. The `bounds_check=False` launch
option drops the checks (their cost is in docs/BENCHMARKS.md).

An access whose pointer is made from an integer (a pointer table's entry) may also lie in one of the
arrays of the launch's `buffers=[...]` option, which the launcher passes in runtime slot
`launch.EXTRA`: a table of u64 `[count, lowest bad address, start0, end0, start1, end1, ...]`. Only
such accesses loop over it; a failing one records its lowest bad address there (atomic min) for the
message.
"""

from __future__ import annotations

from mlir import ir

from ...dialects.locations import op_loc
from .debug import record_failure, runtime_slot
from .emit import V, vec
from .launch import BOUNDS, EXTRA

_THROUGH = {"xb.addptr", "xb.splat", "xb.broadcast", "xb.expand_dims", "xb.reshape", "xb.trans", "xb.ptr_cast",
            "xb.split", "xb.join", "xb.cat", "xb.gather", "arith.select"}


def root_argument(value, args: list, seen=None):
    """The kernel argument (index into `args`) every pointer of `value` derives from, or None when it
    is not one argument (pointers made from integers, or several bases)."""
    seen = set() if seen is None else seen
    key = value.get_name() if hasattr(value, "get_name") else id(value)
    if key in seen:
        return "cycle"  # a loop-carried pointer: decided by its initial value and its update
    seen.add(key)
    owner = value.owner
    if isinstance(owner, ir.Block):
        if owner == args[0].owner if args else False:
            return next((k for k, a in enumerate(args) if a == value), None)
        parent = owner.owner
        if parent.name == "scf.for":  # iter_arg k <- init operand 3 + k and the k-th yielded value
            k = list(owner.arguments).index(value) - 1
            if k < 0:
                return None
            yielded = owner.operations[len(owner.operations) - 1].operands[k]
            return _agree(root_argument(parent.operands[3 + k], args, seen), root_argument(yielded, args, seen))
        return None
    op = owner.operation if hasattr(owner, "operation") else owner
    if op.name == "scf.for":
        k = list(op.results).index(value)
        return root_argument(op.operands[3 + k], args, seen)
    if op.name not in _THROUGH:
        return None
    operands = list(op.operands)
    if op.name == "arith.select":
        return _agree(root_argument(operands[1], args, seen), root_argument(operands[2], args, seen))
    if op.name in ("xb.join", "xb.cat"):
        return _agree(root_argument(operands[0], args, seen), root_argument(operands[1], args, seen))
    return root_argument(operands[0], args, seen)


def _agree(a, b):
    if a == "cycle":
        return b
    if b == "cycle":
        return a
    return a if a == b else None


class Check:
    """The bounds check of one access op: `ok(addr, nbytes)` and `fail()` emit its code."""

    def __init__(self, ctx, op, what: str, ptr=None):
        self.ctx, self.what = ctx, what
        root = root_argument(ptr, ctx.pointer_values) if ptr is not None else None
        self.arg = root if isinstance(root, int) else None  # only this argument's extent is allowed
        file, line, _ = op_loc(op)
        self.id = len(ctx.asserts)
        arg = ctx.pointer_positions[self.arg] if self.arg is not None else None
        ctx.asserts.append({"kind": "bounds", "what": what, "message": f"out-of-bounds {what}", "file": file,
                            "line": line, "arg": arg})

    def ok(self, addr: V, nbytes: int) -> V:
        """i1 (or a vector of i1, for a vector of addresses): `[addr, addr + nbytes)` lies in an argument."""
        e = self.ctx.e
        ty = addr.type
        bt = ty.replace("i64", "i1")
        end = e.op(f"arith.addi {addr}, {e.const(nbytes, ty)} : {ty}", ty)
        ok = None
        bounds = extents(self.ctx)
        for lo, hi in bounds if self.arg is None else [bounds[self.arg]]:
            if ty != "i64":
                lo = e.op(f"vector.broadcast {lo} : i64 to {ty}", ty)
                hi = e.op(f"vector.broadcast {hi} : i64 to {ty}", ty)
            a = e.op(f"arith.cmpi uge, {addr}, {lo} : {ty}", bt)
            b = e.op(f"arith.cmpi ule, {end}, {hi} : {ty}", bt)
            both = e.op(f"arith.andi {a}, {b} : {bt}", bt)
            ok = both if ok is None else e.op(f"arith.ori {ok}, {both} : {bt}", bt)
        ok = ok if ok is not None else e.const(0, bt)
        if self.arg is None:  # a pointer made from an integer: the buffers= arrays too
            ok = self._in_extra(addr, end, ok)
        return ok

    def _in_extra(self, addr: V, end: V, ok: V) -> V:
        e = self.ctx.e
        ty, bt = addr.type, ok.type
        table, count = extra_table(self.ctx)

        def body(k, iters):
            two = e.const(2, "i64")
            j = e.op(f"arith.muli {k}, {two} : i64", "i64")
            j = e.op(f"arith.addi {j}, {two} : i64", "i64")
            ends = []
            for d in (0, 1):
                at = j if d == 0 else e.op(f"arith.addi {j}, {e.const(1, 'i64')} : i64", "i64")
                slot = e.op(f"llvm.getelementptr {table}[{at}] : (!llvm.ptr, i64) -> !llvm.ptr, i64", "!llvm.ptr")
                x = e.op(f"llvm.load {slot} {{alignment = 8 : i64}} : !llvm.ptr -> i64", "i64")
                if ty != "i64":
                    x = e.op(f"vector.broadcast {x} : i64 to {ty}", ty)
                ends.append(x)
            a = e.op(f"arith.cmpi uge, {addr}, {ends[0]} : {ty}", bt)
            b = e.op(f"arith.cmpi ule, {end}, {ends[1]} : {ty}", bt)
            both = e.op(f"arith.andi {a}, {b} : {bt}", bt)
            return [e.op(f"arith.ori {iters[0]}, {both} : {bt}", bt)]

        return e.for_(e.const(0, "i64"), count, e.const(1, "i64"), body, inits=(ok,))[0]

    def fail(self, bad_address: V | None = None) -> None:
        record_failure(self.ctx, self.id)
        if bad_address is not None and self.arg is None:  # for the message: the address no buffer holds
            table, _ = extra_table(self.ctx)
            slot = self.ctx.e.op(f"llvm.getelementptr {table}[1] : (!llvm.ptr) -> !llvm.ptr, i64", "!llvm.ptr")
            self.ctx.e.op(f"llvm.atomicrmw umin {slot}, {bad_address} monotonic : !llvm.ptr, i64", "i64")

    def lanes(self, addrs: V, mask: V | None, size: int, w: int) -> V:
        """The mask of the lanes to access: active (`mask`, or all) and in bounds; records a failure
        when an active lane is not."""
        e = self.ctx.e
        mt = vec(w, "i1")
        inb = self.ok(addrs, size)
        act = mask if mask is not None else e.const(1, mt)
        out = e.op(f"arith.xori {inb}, {e.const(1, mt)} : {mt}", mt)
        bad = e.op(f"arith.andi {act}, {out} : {mt}", mt)
        if self.arg is None:
            def fail():
                vt = vec(w, "i64")
                far = e.op(f"arith.select {bad}, {addrs}, {e.const(-1, vt)} : {mt}, {vt}", vt)
                self.fail(e.op(f"vector.reduction <minui>, {far} : {vt} into i64", "i64"))
        else:
            fail = self.fail
        e.if_(e.op(f"vector.reduction <or>, {bad} : {mt} into i1", "i1"), fail)
        return e.op(f"arith.andi {act}, {inb} : {mt}", mt)

    def scalar(self, addr: V, size: int, active: V | None) -> V:
        """Whether to access the scalar `addr` (active and in bounds); records a failure if active only."""
        e = self.ctx.e
        inb = self.ok(addr, size)
        bad = e.op(f"arith.xori {inb}, {e.const(1, 'i1')} : i1", "i1")
        if active is not None:
            bad = e.op(f"arith.andi {bad}, {active} : i1", "i1")
            inb = e.op(f"arith.andi {inb}, {active} : i1", "i1")
        e.if_(bad, lambda: self.fail(addr))
        return inb


def lane_addresses(e, first: V, w: int, size: int) -> V:
    """The byte addresses of a contiguous chunk of `w` lanes starting at `first` (i64)."""
    vt = vec(w, "i64")
    steps = e.const_attr(f"dense<[{', '.join(str(k * size) for k in range(w))}]> : {vt}", vt)
    return e.op(f"arith.addi {e.op(f'vector.broadcast {first} : i64 to {vt}', vt)}, {steps} : {vt}", vt)


def checks_on(ctx) -> bool:
    return getattr(ctx, "bounds_check", False)


def extents(ctx) -> list:
    """(start, end) of every pointer argument, as i64 values loaded once at function entry."""
    e = ctx.e
    key = ("extents",)
    if key not in e.consts:
        table = runtime_slot(ctx, BOUNDS)
        pairs = []
        for j in range(ctx.pointer_args):
            ends = []
            for k in (0, 1):
                slot, name = e.fresh("slot"), e.fresh("ext")
                e.prologue.append(f"    {slot} = llvm.getelementptr {table}[{2 * j + k}] : "
                                  "(!llvm.ptr) -> !llvm.ptr, i64")
                e.prologue.append(f"    {name} = llvm.load {slot} {{alignment = 8 : i64}} : !llvm.ptr -> i64")
                ends.append(V(name, "i64"))
            pairs.append(tuple(ends))
        e.consts[key] = pairs
    return e.consts[key]


def extra_table(ctx) -> tuple:
    """(the `buffers=` table pointer, its count as i64), loaded once at function entry."""
    e = ctx.e
    key = ("extra-buffers",)
    if key not in e.consts:
        table = runtime_slot(ctx, EXTRA)
        name = e.fresh("nextra")
        e.prologue.append(f"    {name} = llvm.load {table} {{alignment = 8 : i64}} : !llvm.ptr -> i64")
        e.consts[key] = (table, V(name, "i64"))
    return e.consts[key]
