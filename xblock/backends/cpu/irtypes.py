"""xb types as the cpu lowering spells them: pointers are i64 addresses, blocks are (shape, element).

float8 values are their bits: an i8 everywhere (loads, stores, selects); only `xb.fp_to_fp` (see
`floats.py`) reads what they mean, from the op's own types (`float_elem`).
"""

from __future__ import annotations

from mlir import ir

from ...dialects import xb

FP8 = frozenset(("f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3B11FNUZ"))


def _lowered(s: str) -> str:
    return "i8" if s in FP8 else s


def scalar_type(t: ir.Type) -> str:
    return "i64" if xb.is_ptr(t) else _lowered(str(t))


def tensor_parts(t: ir.Type):
    """(shape, element type, pointee or None) of a tensor type, or None for a scalar."""
    if not isinstance(t, ir.RankedTensorType):
        return None
    rt = ir.RankedTensorType(t)
    et = rt.element_type
    if xb.is_ptr(et):
        return tuple(rt.shape), "i64", _lowered(str(xb.pointee(et)))
    return tuple(rt.shape), _lowered(str(et)), None


def float_elem(t: ir.Type) -> str:
    """The element type of `t` as xb spells it (float8 types by name)."""
    return str(ir.RankedTensorType(t).element_type) if isinstance(t, ir.RankedTensorType) else str(t)
