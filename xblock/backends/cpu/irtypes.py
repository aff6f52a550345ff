"""xb types as the cpu lowering spells them: pointers are i64 addresses, blocks are (shape, element)."""

from __future__ import annotations

from mlir import ir

from ...dialects import xb


def scalar_type(t: ir.Type) -> str:
    return "i64" if xb.is_ptr(t) else str(t)


def tensor_parts(t: ir.Type):
    """(shape, element type, pointee or None) of a tensor type, or None for a scalar."""
    if not isinstance(t, ir.RankedTensorType):
        return None
    rt = ir.RankedTensorType(t)
    et = rt.element_type
    if xb.is_ptr(et):
        return tuple(rt.shape), "i64", str(xb.pointee(et))
    return tuple(rt.shape), str(et), None
