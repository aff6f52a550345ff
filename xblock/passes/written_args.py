"""xb-written-args: which kernel arguments the kernel stores to, and whether it makes pointers from
integers (analyses, recorded in metadata)."""

from __future__ import annotations

from mlir import ir

from ..dialects.locations import kernel_of, source_loc

NAME = "xb-written-args"
_WRITES = ("xb.store", "xb.atomic_rmw", "xb.atomic_cas", "xb.descriptor_store", "xb.descriptor_reduce")
# ops a pointer passes through unchanged in what it points into: operand positions to follow
_THROUGH = {"xb.addptr": (0,), "xb.splat": (0,), "xb.broadcast": (0,), "xb.expand_dims": (0,),
            "xb.reshape": (0,), "xb.trans": (0,), "xb.ptr_cast": (0,), "arith.select": (1, 2),
            "xb.make_tensor_descriptor": (0,)}
_MAX_DEPTH = 64


def _trace(value, entry, found: set, depth: int = 0, seen: set | None = None) -> bool:
    """Add the kernel arguments `value` points into to `found`; False when it cannot tell. A value an
    `scf.for` carries (`k_ptrs += BLOCK_N * stride` each step) points where its initial value and the value
    each iteration yields point (the yield leads back to the carried value itself: `seen`)."""
    seen = set() if seen is None else seen
    owner = value.owner
    if isinstance(owner, ir.Block):
        if owner == entry:
            found.add(ir.BlockArgument(value).arg_number)
            return True
        loop = owner.owner
        loop = loop.operation if loop is not None and hasattr(loop, "operation") else loop
        k = ir.BlockArgument(value).arg_number
        if loop is None or loop.name != "scf.for" or k == 0 or depth > _MAX_DEPTH:
            return False  # an induction variable or a value of another region: not followed
        key = (loop, k)
        if key in seen:
            return True
        seen.add(key)
        yielded = owner.operations[len(owner.operations) - 1]
        return _trace(loop.operands[3 + k - 1], entry, found, depth + 1, seen) and \
            _trace(yielded.operands[k - 1], entry, found, depth + 1, seen)
    op = owner.operation if hasattr(owner, "operation") else owner
    if op.name not in _THROUGH or depth > _MAX_DEPTH:
        return False
    return all(_trace(op.operands[i], entry, found, depth + 1, seen) for i in _THROUGH[op.name])


def roots(value, entry: ir.Block) -> frozenset | None:
    """The positions (among `entry`'s arguments) of the kernel arguments pointer `value` may point
    into, or None when it cannot tell."""
    found: set = set()
    return frozenset(found) if _trace(value, entry, found) else None


def analyze(module: ir.Module) -> list[int] | None:
    """Positions (among the kernel's runtime arguments) of the arguments a store or atomic writes.

    Returns None when some store's pointer cannot be traced to arguments (e.g. a pointer carried
    through a loop); callers then treat every array argument as possibly written.
    """
    kernel = kernel_of(module)
    entry = kernel.regions[0].blocks[0]
    found: set = set()
    ok = True

    def visit(op):
        nonlocal ok
        if op.name in _WRITES:
            ok = _trace(op.operands[0], entry, found) and ok
        return ir.WalkResult.ADVANCE

    kernel.operation.walk(visit)
    return sorted(found) if ok else None


def makes_pointers(module: ir.Module) -> bool:
    """Whether the kernel turns integers into pointers (`xb.int_to_ptr`: pointer tables)."""
    found = []

    def visit(op):
        if op.name == "xb.int_to_ptr":
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    kernel_of(module).operation.walk(visit)
    return bool(found)


def float_dots(module: ir.Module) -> list[dict]:
    """{file, line, precision} of every `tl.dot` of f32 operands (whose `input_precision` targets may
    compute otherwise: numdiff explains a difference there)."""
    found = []

    def visit(op):
        if op.name == "xb.dot" and "f32" == str(ir.RankedTensorType(op.operands[0].type).element_type):
            file, line, _ = source_loc(op.location)
            found.append({"file": file, "line": line,
                          "precision": ir.StringAttr(op.attributes["input_precision"]).value})
        return ir.WalkResult.ADVANCE

    kernel_of(module).operation.walk(visit)
    return found


def run(module: ir.Module, metadata: dict) -> None:
    """Record `metadata["written_args"]` (see `analyze`) and `metadata["int_pointers"]` (see
    `makes_pointers`: the runtime resolves such a kernel's tables on host targets, runtime/tables.py)
    and `metadata["float_dots"]` (see `float_dots`)."""
    metadata["written_args"] = analyze(module)
    metadata["int_pointers"] = makes_pointers(module)
    metadata["float_dots"] = float_dots(module)
