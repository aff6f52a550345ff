"""xb-record-values: store chosen intermediate values of every program into an extra f32 buffer.

Appends a kernel argument `rec: !xb.ptr<f32>`; after each recorded op, its value (cast to f32)
is stored at `rec[pid * T + offset + i]` where T is the per-program record size. Recorded ops:
the last non-constant op producing a numeric value on each source line (per="line") or every such
op (per="op"), outside reduce/scan combine regions. The layout goes into metadata["records"].
Because this is an xb -> xb transformation, every target records the same values the same way.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from ..dialects import xb
from ..dialects.locations import kernel_of, source_loc

NAME = "xb-record-values"
_SKIP = {"arith.constant", "xb.arange", "xb.program_id", "xb.num_programs", "xb.splat", "xb.broadcast",
         "xb.expand_dims", "xb.reshape", "xb.trans"}


def _loc_key(loc: ir.Location):
    file, line, _ = source_loc(loc)  # through names and inlined helpers' call sites
    return (file, line) if line else None


def _candidates(kernel, per: str) -> list:
    ops = []

    def visit(block):
        for op in block.operations:
            op = op.operation
            if op.name in ("xb.reduce", "xb.scan"):
                pass  # record the reduction's result, not its combine region
            else:
                for region in op.regions:
                    for b in region.blocks:
                        visit(b)
            if op.name in _SKIP or len(op.results) != 1:
                continue
            t = op.results[0].type
            if xb.is_ptr(_elem(t)) or _loc_key(op.location) is None:
                continue
            ops.append(op)

    visit(kernel.regions[0].blocks[0])
    if per == "op":
        return ops
    last = {}
    for op in ops:
        last[_loc_key(op.location)] = op
    keep = set(id(o) for o in last.values())
    return [o for o in ops if id(o) in keep]


def _elem(t):
    return ir.RankedTensorType(t).element_type if isinstance(t, ir.RankedTensorType) else t


def _shape(t):
    return tuple(ir.RankedTensorType(t).shape) if isinstance(t, ir.RankedTensorType) else ()


def _to_f32(v):
    f32 = ir.F32Type.get()
    t = v.type
    shape = _shape(t)
    et = _elem(t)
    rt = ir.RankedTensorType.get(list(shape), f32) if shape else f32
    s = str(et)
    if s == "f32":
        return v
    if s in ("f16", "bf16"):
        return arith.extf(rt, v)
    if s.startswith("f8E"):  # float8: as a cast would widen it
        return xb.fp_to_fp(v, rt, "")
    if s == "f64":
        return arith.truncf(rt, v)
    if s == "i1":
        return arith.uitofp(rt, v)
    return arith.sitofp(rt, v)


def _i32(v: int):
    return arith.constant(ir.IntegerType.get_signless(32), v)


def _flat_index(shape):
    """A tensor<shape x i32> of row-major flat indices."""
    i32 = ir.IntegerType.get_signless(32)
    tt = ir.RankedTensorType.get(list(shape), i32)
    acc, stride = None, 1
    for d in reversed(range(len(shape))):
        cur = xb.arange(0, shape[d])
        if len(shape) > 1:
            ones = [1] * len(shape)
            ones[d] = shape[d]
            cur = xb.reshape(cur, ir.RankedTensorType.get(ones, i32))
            if ones != list(shape):
                cur = xb.broadcast(cur, tt)
        if stride != 1:
            cur = arith.muli(cur, arith.constant(tt, ir.DenseElementsAttr.get_splat(
                tt, ir.IntegerAttr.get(i32, stride))))
        acc = cur if acc is None else arith.addi(acc, cur)
        stride *= shape[d]
    return acc


def _after(op):
    """An insertion point right after `op` (a value-producing op is never a block's last)."""
    ops = list(op.block.operations)
    idx = next(i for i, o in enumerate(ops) if o.operation == op)
    return ir.InsertionPoint(ops[idx + 1])


def run(module: ir.Module, metadata: dict, per: str = "line") -> None:
    """Instrument the kernel of `module`; describe the records in `metadata`."""
    kernel = kernel_of(module)
    entry = kernel.regions[0].blocks[0]
    ops = _candidates(kernel, per)
    f32 = ir.F32Type.get()
    ptr = xb.ptr_type(f32)
    rec = entry.add_argument(ptr, kernel.location)
    ftype = ir.FunctionType(ir.TypeAttr(kernel.attributes["function_type"]).value)
    kernel.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(list(ftype.inputs) + [ptr], []))
    names = [ir.StringAttr(a).value for a in ir.ArrayAttr(kernel.attributes["xb.arg_names"])] + ["__rec"]
    kernel.attributes["xb.arg_names"] = ir.ArrayAttr.get([ir.StringAttr.get(n) for n in names])
    if "arg_attrs" in kernel.attributes:
        attrs = list(ir.ArrayAttr(kernel.attributes["arg_attrs"])) + [ir.DictAttr.get({})]
        kernel.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
    records, total = [], 0
    for op in ops:
        shape = _shape(op.results[0].type)
        n = 1
        for s in shape:
            n *= s
        key = _loc_key(op.location)
        records.append({"op": op.name, "file": key[0], "line": key[1], "shape": list(shape),
                        "offset": total, "dtype": str(_elem(op.results[0].type))})
        total += n
    with kernel.location, ir.InsertionPoint.at_block_begin(entry):
        p0, p1, p2 = (xb.program_id(a) for a in range(3))
        n0, n1 = xb.num_programs(0), xb.num_programs(1)
        flat = arith.addi(p0, arith.muli(n0, arith.addi(p1, arith.muli(n1, p2))))
        base = xb.addptr(rec, arith.muli(flat, _i32(max(total, 1))))
    for op, r in zip(ops, records):
        with op.location, _after(op):
            _store_record(base, op.results[0], r["offset"], tuple(r["shape"]))
    metadata["arg_names"] = metadata["arg_names"] + ["__rec"]
    metadata["arg_types"] = metadata["arg_types"] + ["*fp32"]
    metadata["records"] = records
    metadata["record_size"] = total


def _store_record(base, value, offset, shape):
    v = _to_f32(value)
    p = xb.addptr(base, _i32(offset)) if offset else base
    if not shape:
        xb.store(p, v)
        return
    f32 = ir.F32Type.get()
    pt = ir.RankedTensorType.get(list(shape), xb.ptr_type(f32))
    xb.store(xb.addptr(xb.splat(p, pt), _flat_index(shape)), v)
