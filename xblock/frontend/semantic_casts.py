"""Casts that involve pointers or float8 types, and float downcasts rounded toward zero.

Triton's rules (its `semantic.cast`), with the limits of Triton's NVIDIA backend made errors here
instead of failures deep in its compiler:
- pointer -> int64/uint64 (`ptr_to_int`), pointer -> int1 (address != 0), int64/uint64 -> pointer
  (`int_to_ptr`);
- float <-> float8 and rounding toward zero (`xb.fp_to_fp`): rtz only from float32 to float16,
  bfloat16 and float8e5 (and ignored for fp8e4b15, whose conversion is Triton's own routine);
- conversions Triton's backend cannot do directly go through float32, exactly: float8 <-> float8,
  float64 <-> float8 (float64 -> float32 rounds first), float8 -> bfloat16, bfloat16 -> fp8e4b15;
- float8 <-> integer is an error, as in Triton.
"""

from __future__ import annotations

from .. import language as xl
from ..dialects import xb
from ..language.core import dtype, tensor
from .types import SemanticError, ir_type

# (source, destination) names a downcast may round toward zero: what Triton's NVIDIA backend lowers
RTZ_PAIRS = {("fp32", "fp16"), ("fp32", "bf16"), ("fp32", "fp8e5")}


def cast_pointer(sem, x: tensor, src: dtype, dt: dtype) -> tensor:
    """pointer -> pointer, pointer -> integer, integer -> pointer."""
    rt = ir_type(dt, x.shape)
    if src.is_ptr() and dt.is_ptr():
        return tensor(xb.ptr_cast(x.handle, rt), dt, x.shape)
    if src.is_ptr():
        if dt.is_bool():
            addr = cast_pointer(sem, x, src, xl.int64)
            return sem.compare("ne", addr, sem.constant(0, xl.int64))
        if dt.is_int() and dt.primitive_bitwidth == 64:
            return tensor(xb.ptr_to_int(x.handle, rt), dt, x.shape)
        raise SemanticError(f"cannot cast {src} to {dt}: a pointer converts to int64 (or uint64, or int1)")
    if src.is_int() and src.primitive_bitwidth == 64:
        return tensor(xb.int_to_ptr(x.handle, rt), dt, x.shape)
    if src.is_int():
        raise SemanticError(f"cannot cast {src} to {dt}: only a 64-bit integer holds an address; "
                            "cast it to tl.int64 first")
    raise SemanticError(f"cannot cast {src} to {dt}")


def needs_fp_to_fp(src: dtype, dt: dtype, rounding) -> bool:
    return src.is_fp8() or dt.is_fp8() or rounding == "rtz"


def cast_float(sem, x: tensor, src: dtype, dt: dtype, rounding) -> tensor:
    """A conversion involving a float8 type, or a downcast rounded toward zero."""
    f32 = xl.float32
    if src.is_fp8() and dt.is_int() or src.is_int() and dt.is_fp8():
        raise SemanticError(f"cannot cast {src} to {dt} (as in Triton): go through tl.float32")
    if not (src.is_floating() and dt.is_floating()):
        raise SemanticError(f"cannot cast {src} to {dt}")
    if rounding == "rtz" and not dt.is_fp8e4b15() and (src.name, dt.name) not in RTZ_PAIRS:
        raise SemanticError(
            f"fp_downcast_rounding='rtz' from {src} to {dt} is not supported: as in Triton's NVIDIA backend, "
            "a downcast rounds toward zero only from float32 to float16, bfloat16 or float8e5")
    # through float32 (exact) where Triton's backend has no direct conversion
    if src.is_fp8() and (dt.is_fp8() or dt.is_bf16() or dt.is_fp64()):
        return sem.cast(sem.cast(x, f32), dt)
    if dt.is_fp8() and (src.is_fp64() or src.is_bf16() and dt.is_fp8e4b15()):
        return sem.cast(sem.cast(x, f32), dt, rounding=rounding)
    downcast = dt.primitive_bitwidth < src.primitive_bitwidth
    mode = (rounding or "rtne") if downcast else ""
    return tensor(xb.fp_to_fp(x.handle, ir_type(dt, x.shape), mode), dt, x.shape)


def refuse_fp8_arithmetic(dt: dtype, what: str) -> None:
    if dt.is_fp8():
        raise SemanticError(f"{what} on {dt} values is not supported: convert them first (x.to(tl.float32))")
