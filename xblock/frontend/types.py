"""Mapping between language dtypes, MLIR types and signature strings (Triton's conventions)."""

from __future__ import annotations

import numbers

from mlir import ir

from .. import language as xl
from ..dialects import xb
from ..errors import ArgumentError
from ..language.core import NAME_TO_DTYPE, dtype, pointer_type, tensor


class SemanticError(Exception):
    """A user error found while building IR; the frontend adds the source location."""


def _is_py(v) -> bool:
    return isinstance(v, (numbers.Number, bool)) and not isinstance(v, tensor)

_IR_NAMES = {
    "int1": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "i8", "uint16": "i16", "uint32": "i32", "uint64": "i64",
    "fp16": "f16", "bf16": "bf16", "fp32": "f32", "fp64": "f64",
    # Triton's MLIR types for its float8 dtypes (fp8e4b15 is held in f8E4M3B11FNUZ: the bits only)
    "fp8e4nv": "f8E4M3FN", "fp8e5": "f8E5M2", "fp8e4b8": "f8E4M3FNUZ", "fp8e5b16": "f8E5M2FNUZ",
    "fp8e4b15": "f8E4M3B11FNUZ",
}
FP8_IR_TYPES = frozenset(_IR_NAMES[n] for n in dtype.FP8)


def ir_type(dt: dtype, shape=()) -> ir.Type:
    """The MLIR type of a value of dtype `dt` and block shape `shape` (() for a scalar)."""
    if isinstance(dt, pointer_type):
        t = xb.ptr_type(ir_type(dt.element_ty))
    else:
        t = ir.Type.parse(_IR_NAMES[dt.name])
    if shape:
        return ir.RankedTensorType.get(list(shape), t)
    return t


def parse_signature_type(s: str) -> dtype:
    """A Triton signature string ("*fp16", "i32", "fp32", "u8") to a dtype."""
    if not isinstance(s, str):
        raise ArgumentError(f"signature types are strings such as '*fp32' or 'i32', got {s!r}")
    s = s.strip()
    if s.startswith("*"):
        return pointer_type(parse_signature_type(s[1:].lstrip("k")))
    if s not in NAME_TO_DTYPE:
        raise ArgumentError(f"unknown type '{s}' in signature (expected e.g. '*fp32', 'i32', 'fp16', 'constexpr')")
    return NAME_TO_DTYPE[s]


_SIG_NAMES = {
    "int1": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "fp16": "fp16", "bf16": "bf16", "fp32": "fp32", "fp64": "fp64",
    **{n: n for n in dtype.FP8},
}


def signature_string(dt: dtype) -> str:
    if isinstance(dt, pointer_type):
        return "*" + signature_string(dt.element_ty)
    return _SIG_NAMES[dt.name]


def python_scalar_dtype(v) -> dtype:
    """The dtype Triton gives a Python literal: bool -> int1, int -> int32/uint32/int64/uint64, float -> fp32."""
    if isinstance(v, bool):
        return xl.int1
    if isinstance(v, int):
        if -(2**31) <= v < 2**31:
            return xl.int32
        if 2**31 <= v < 2**32:
            return xl.uint32
        if -(2**63) <= v < 2**63:
            return xl.int64
        if 2**63 <= v < 2**64:
            return xl.uint64
        raise ValueError(f"integer constant {v} does not fit in 64 bits")
    if isinstance(v, float):
        return xl.float32
    raise TypeError(f"cannot use a value of type {type(v).__name__} ({v!r}) in a kernel expression")
