"""Rules for xb.print and xb.assert: the native code reports to the launcher through two slots.

After the kernel's own arguments, the argument array holds two runtime slots:
- `status`: a pointer to one u64, all ones before the launch. A failing `device_assert` stores
  `(linear program id << 16) | assert id` there with an atomic unsigned min, so the launcher
  reports the lowest failing program whatever the threads did, and `xb_launch` skips the
  programs after it. A top-level assert also skips the rest of its own program.
- `print`: a host callback `(print id, pid0, pid1, pid2, values)`, `values` being the addresses
  of the printed values' buffers. The launcher formats them as the sim does, one program at a time.
What each id means (prefix and value types, message and source line) goes to the metadata.
"""

from __future__ import annotations

from mlir import ir

from ...dialects.locations import op_loc
from .emit import V, vec
from .irtypes import scalar_type, tensor_parts
from .launch import PRINT, STATUS
from .rules import rule
from .values import storage


def runtime_slot(ctx, k: int) -> V:
    """The pointer in runtime slot `k`, loaded once at function entry."""
    e = ctx.e
    key = ("runtime", k)
    if key not in e.consts:
        slot, name = e.fresh("slot"), e.fresh("rt")
        e.prologue.append(f"    {slot} = llvm.getelementptr %args[{ctx.nargs + k}] : (!llvm.ptr) -> !llvm.ptr, i64")
        e.prologue.append(f"    {name} = llvm.load {slot} {{alignment = 8 : i64}} : !llvm.ptr -> !llvm.ptr")
        e.consts[key] = V(name, "!llvm.ptr")
    return e.consts[key]


def _address(e, mem: V) -> V:
    idx = e.op(f"memref.extract_aligned_pointer_as_index {mem} : {mem.type} -> index", "index")
    return e.op(f"arith.index_cast {idx} : index to i64", "i64")


@rule("xb.print")
def _lower_print(ctx, op):
    e = ctx.e
    values = list(op.operands)
    table = e.alloca(max(1, len(values)), "i64")
    specs = []
    for k, v in enumerate(values):
        parts = tensor_parts(v.type)
        if parts is not None:
            shape, ety = parts[0], parts[1]
            mem = ctx.get(v).buffer(e).mem
        else:
            shape, ety = (), scalar_type(v.type)
            mem = e.alloca(1, storage(ety))
            s = ctx.get(v)
            if ety == "i1":
                s = e.op(f"arith.extui {s} : i1 to i8", "i8")
            e.line(f"memref.store {s}, {mem}[{e.idx(0)}] : {mem.type}")
        e.line(f"memref.store {_address(e, mem)}, {table}[{e.idx(k)}] : {table.type}")
        specs.append([list(shape), ety])
    pid = len(ctx.prints)
    ctx.prints.append({"prefix": ir.StringAttr(op.attributes["prefix"]).value, "values": specs})
    ptr = e.op(f"llvm.inttoptr {_address(e, table)} : i64 to !llvm.ptr", "!llvm.ptr")
    e.line(f"llvm.call {runtime_slot(ctx, PRINT)}({e.const(pid, 'i32')}, %pid0, %pid1, %pid2, {ptr}) : "
           "!llvm.ptr, (i32, i32, i32, i32, !llvm.ptr) -> ()")


@rule("xb.assert")
def _lower_assert(ctx, op):
    if "xb.assume" in op.attributes:  # tl.assume: a hint, not checked here (the sim checks it)
        ctx.assert_ok = None
        return
    e = ctx.e
    cond = ctx.get(op.operands[0])
    if isinstance(cond, V):
        ok = cond
    else:
        w = cond.w
        ones = e.const(1, vec(w, "i1"))
        acc = e.range_(cond.n, w, lambda i, it: [e.op(f"arith.andi {it[0]}, {cond.chunk(e, i, w)} : "
                                                      f"{ones.type}", ones.type)], [ones])[0]
        ok = e.op(f"vector.reduction <and>, {acc} : {ones.type} into i1", "i1")
    aid = len(ctx.asserts)
    file, line, _ = op_loc(op)
    ctx.asserts.append({"message": ir.StringAttr(op.attributes["message"]).value, "file": file, "line": line})
    fail = e.op(f"arith.xori {ok}, {e.const(1, 'i1')} : i1", "i1")
    e.if_(fail, lambda: record_failure(ctx, aid))
    ctx.assert_ok = ok


def record_failure(ctx, aid: int) -> None:
    """Record that this program failed check `aid` (an assert, or a bounds check of `bounds.py`)."""
    e = ctx.e
    key = e.op(f"arith.shli {_linear_pid(ctx)}, {e.const(16, 'i64')} : i64", "i64")
    key = e.op(f"arith.ori {key}, {e.const(aid, 'i64')} : i64", "i64")
    e.op(f"llvm.atomicrmw umin {runtime_slot(ctx, STATUS)}, {key} monotonic : !llvm.ptr, i64", "i64")


def _linear_pid(ctx) -> V:
    """pid0 + np0 * (pid1 + np1 * pid2), as i64 (the launcher's program order)."""
    e = ctx.e
    w = [e.op(f"arith.extui {x} : i32 to i64", "i64") for x in ("%pid0", "%pid1", "%pid2", "%np0", "%np1")]
    inner = e.op(f"arith.addi {w[1]}, {e.op(f'arith.muli {w[4]}, {w[2]} : i64', 'i64')} : i64", "i64")
    return e.op(f"arith.addi {w[0]}, {e.op(f'arith.muli {w[3]}, {inner} : i64', 'i64')} : i64", "i64")

