"""Triton 3.6's type rules that xblock enforces, each where Triton enforces it (a `SemanticError` here).

Each check names the place in `triton/language/` (3.6) that holds the rule. Triton states some of them
only by failing later (an MLIR verifier error, an unmatched libdevice overload); xblock says what is
wrong at the user's line instead. Where xblock is deliberately more permissive, docs/LANGUAGE.md
("Where xblock differs from Triton") lists it.
"""

from __future__ import annotations

import numbers

from ..language.core import dtype, tensor
from .types import SemanticError

# what tl.umulhi takes (math.py, `umulhi`: `_check_dtype(["int32", "int64", "uint32", "uint64"])`)
UMULHI_DTYPES = ("int32", "int64", "uint32", "uint64")


def check_math_operand(dt: dtype, fn: str) -> None:
    """Math functions take floats: math.py's `_check_dtype(["fp32", "fp64"])` on exp, log, sqrt, ...,
    libdevice's fp32/fp64 overloads (`extern_elementwise`), standard.py's sigmoid/softmax through exp.
    (fp16 and bf16, which Triton also refuses, compute in fp32 here: docs/LANGUAGE.md.)"""
    if dt.is_floating():
        return
    msg = f"{fn}: expected a floating-point operand, got {dt}"
    if dt.is_int():
        msg += " (as in Triton, math functions do not take integers): convert it first, e.g. x.to(tl.float32)"
    raise SemanticError(msg)


def check_fdiv_operands(ta: dtype, tb: dtype) -> None:
    """semantic.py `fdiv`: "both operands of fdiv must have floating scalar type" (a Python int too)."""
    if not (ta.is_floating() and tb.is_floating()):
        raise SemanticError(f"fdiv needs floating-point operands, got {ta} and {tb} (as in Triton; "
                            "a Python int is an int32): use `/`, or convert them first")


def check_umulhi_operand(dt: dtype) -> None:
    """math.py `umulhi`: `_check_dtype(["int32", "int64", "uint32", "uint64"])`."""
    if dt.name not in UMULHI_DTYPES:
        raise SemanticError(f"umulhi needs int32, int64, uint32 or uint64 operands (as in Triton), got {dt}")


def check_atomic_rmw_dtype(kind: str, et: dtype) -> None:
    """semantic.py `atom_red_typechecking_impl`: fp16/bf16 only for atomic_add; no 8- or 16-bit integers
    (nor int1, nor float8)."""
    if et.name in ("fp16", "bf16") and kind != "add":
        raise SemanticError(f"atomic_{kind} does not support {et} (as in Triton, only atomic_add takes float16 "
                            "and bfloat16)")
    if et.name in ("int16", "uint16") or et.primitive_bitwidth < 16:
        raise SemanticError(f"atomic_{kind} does not support {et} (as in Triton): atomics need 32- or "
                            "64-bit integers or floats")


def check_atomic_cas_dtype(et: dtype) -> None:
    """semantic.py `atomic_cas`: "atomic_cas only supports elements with width {16, 32, 64}"."""
    if et.primitive_bitwidth not in (16, 32, 64):
        raise SemanticError(f"atomic_cas does not support {et} (as in Triton): its elements must be 16, 32 or "
                            "64 bits wide")


def check_bool_operand(x, op: str) -> None:
    """semantic.py `logical_and`/`logical_or`/`not_` bitcast a non-int1 operand to int1, which fails
    ("Cannot bitcast data-type of size 32 to data-type of size 1"): `and`, `or`, `not` take bools."""
    if isinstance(x, tensor) and not x.dtype.is_bool():
        raise SemanticError(f"`{op}` needs bool (int1) operands, got {x.dtype} (as in Triton): compare it "
                            "first (x != 0), or use `&`, `|`, `~` on integers")


def check_mask(mask, what: str) -> None:
    """A mask is an int1 value: semantic.py `_store_legacy` ("Mask must have boolean scalar type");
    loads and atomics pass the mask on as is, where Triton's IR verifier refuses anything but i1."""
    if isinstance(mask, tensor) and not mask.dtype.is_bool():
        raise SemanticError(f"{what}'s mask must be a bool block (a comparison), got {mask.dtype}")


def check_scalar_pointer_load(ptr: tensor, mask, other) -> None:
    """semantic.py `_load_legacy`: through a scalar pointer, a block mask or `other` is an error."""
    if ptr.shape:
        return
    if isinstance(mask, tensor) and mask.shape:
        raise SemanticError("a load through a scalar pointer cannot take a block mask (as in Triton): "
                            "broadcast the pointer first (ptr + zeros_like(mask))")
    if isinstance(other, tensor) and other.shape:
        raise SemanticError("a load through a scalar pointer cannot take a block `other` (as in Triton)")


def check_not_pointer(x: tensor, what: str) -> None:
    """Pointers have no arithmetic: semantic.py `minus` ("wrong type argument to unary minus"), math.py
    `abs` ("Unexpected dtype"), and the combine functions of standard.py's sum/max/min/argmax/argmin/
    cumsum/cumprod (which add or compare pointers)."""
    if x.dtype.is_ptr():
        raise SemanticError(f"{what} is not defined for pointers ({x.dtype}), as in Triton: "
                            "convert the addresses with .to(tl.int64) first")


def check_full_value(value, dt: dtype) -> None:
    """semantic.py `full`/`scalar_constant`: a Python float cannot fill an integer block (Triton's
    builder refuses it)."""
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral) and dt.is_int():
        raise SemanticError(f"cannot fill a block of {dt} with the float {value!r} (as in Triton): pass an integer")
