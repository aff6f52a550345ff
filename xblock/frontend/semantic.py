"""Semantics of the block language: type promotion, broadcasting, and the IR each builtin builds.

Follows triton.language's rules: Python scalars are weakly typed (they take the block's dtype
when of the same or lower kind), `/` on integers or 16-bit floats computes in fp32, integer
`//` and `%` truncate toward zero as in C, max/min ignore NaN unless asked to propagate it.
"""

from __future__ import annotations

import numbers

from mlir import ir
from mlir.dialects import arith, math

from .. import language as xl
from ..dialects import xb
from ..language.core import _unwrap, dtype, pointer_type, tensor
from .semantic_blocks import BlockOps
from .semantic_casts import cast_float, cast_pointer, needs_fp_to_fp, refuse_fp8_arithmetic
from .semantic_math import MathOps
from .semantic_ptrs import PointerBlockOps, accesses_block_pointer
from .semantic_shapes import ShapeOps
from .type_rules import (
    check_fdiv_operands,
    check_full_value,
    check_mask,
    check_math_operand,
    check_not_pointer,
    check_scalar_pointer_load,
    check_umulhi_operand,
)
from .types import SemanticError, _is_py, ir_type, python_scalar_dtype

__all__ = ["Semantic", "SemanticError"]


MAX_NUMEL = 1 << 20  # Triton's TRITON_MAX_TENSOR_NUMEL


def check_numel(shape) -> None:
    n = 1
    for d in shape:
        n *= int(d)
    if n > MAX_NUMEL:
        raise SemanticError(f"a block of {n} elements ({list(shape)}) exceeds the largest block Triton allows, "
                            f"{MAX_NUMEL} elements: split the work over more programs or a loop")


def _static_shape(shape) -> tuple:
    """A block shape of constexpr integers (a runtime value here is a user error)."""
    out = []
    for s in shape:
        s = _unwrap(s)
        if isinstance(s, tensor) or not isinstance(s, numbers.Integral):
            raise SemanticError(f"block shapes must be constexpr integers, got {s!r} (declare the parameter that "
                                "sets it `NAME: tl.constexpr`)")
        out.append(int(s))
    return tuple(out)


class Semantic(BlockOps, MathOps, ShapeOps, PointerBlockOps):
    """Builds xb/arith/math IR for the language's operations at the current insertion point."""

    def __init__(self, codegen=None):
        self.codegen = codegen

    # ----------------------------------------------------------------------------- helpers
    def ir_type(self, dt, shape=()):
        return ir_type(dt, shape)

    def constant(self, value, dt: dtype, shape=()) -> tensor:
        """A constant of dtype `dt` (splat to `shape` when given)."""
        if isinstance(dt, pointer_type):
            raise SemanticError("cannot make a pointer constant")
        if dt.is_fp8():  # a float32 constant converted as a cast would convert it (saturating)
            return self.cast(self.constant(value, xl.float32, shape), dt)
        et = ir_type(dt)
        if dt.is_floating():
            attr = ir.FloatAttr.get(et, float(value))
        else:
            v = int(value)
            if dt.is_int_unsigned() and v < 0:
                raise SemanticError(f"cannot represent negative value {v} as {dt}")
            bits = dt.primitive_bitwidth
            if dt.is_bool():
                v = int(bool(v))
            else:
                v = ((v + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1))  # two's complement
            attr = ir.IntegerAttr.get(et, v)
        if shape:
            tt = ir.RankedTensorType.get(list(shape), et)
            return tensor(arith.constant(tt, ir.DenseElementsAttr.get_splat(tt, attr)), dt, shape)
        return tensor(arith.constant(et, attr), dt, ())

    def to_tensor(self, v, dt: dtype | None = None) -> tensor:
        v = _unwrap(v)
        if isinstance(v, tensor):
            return v
        if _is_py(v):
            return self.constant(v, dt or python_scalar_dtype(v))
        raise SemanticError(f"expected a block or scalar value, got {type(v).__name__} {v!r}")

    # ----------------------------------------------------------------------------- shapes
    def splat(self, x: tensor, shape) -> tensor:
        shape = tuple(shape)
        if x.shape == shape:
            return x
        if x.shape:
            return self.broadcast_to(x, shape)
        return tensor(xb.splat(x.handle, ir_type(x.dtype, shape)), x.dtype, shape)

    def broadcast_to(self, x: tensor, shape) -> tensor:
        shape = _static_shape(shape)
        x = self.to_tensor(x)
        if x.shape == shape:
            return x
        if not x.shape:
            return self.splat(x, shape)
        while len(x.shape) < len(shape):
            x = self.expand_dims(x, 0)
        if len(x.shape) != len(shape):
            raise SemanticError(f"cannot broadcast shape {list(x.shape)} to {list(shape)}")
        for a, b in zip(x.shape, shape):
            if a != b and a != 1:
                raise SemanticError(f"cannot broadcast shape {list(x.shape)} to {list(shape)}")
        return tensor(xb.broadcast(x.handle, ir_type(x.dtype, shape)), x.dtype, shape)

    def broadcast_shapes(self, *shapes) -> tuple:
        rank = max(len(s) for s in shapes)
        out = []
        for i in range(rank):
            dims = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0} - {1}
            if len(dims) > 1:
                raise SemanticError(
                    "shapes " + " and ".join(str(list(s)) for s in shapes) + " do not broadcast"
                )
            out.append(dims.pop() if dims else 1)
        return tuple(out)

    def broadcast_pair(self, a: tensor, b: tensor):
        if a.shape == b.shape:
            return a, b
        shape = self.broadcast_shapes(a.shape, b.shape)
        return self.broadcast_to(a, shape), self.broadcast_to(b, shape)

    def expand_dims(self, x, axis) -> tensor:
        x = self.to_tensor(x)
        axes = _unwrap(axis)
        axes = list(axes) if isinstance(axes, (tuple, list)) else [axes]
        for ax in axes:
            ax = int(_unwrap(ax))
            rank = len(x.shape) + 1
            if not -rank <= ax < rank:
                raise SemanticError(f"expand_dims axis {ax} out of range for a block of rank {rank - 1}")
            ax %= rank
            shape = x.shape[:ax] + (1,) + x.shape[ax:]
            if not x.shape:
                x = tensor(xb.splat(x.handle, ir_type(x.dtype, shape)), x.dtype, shape)
            else:
                x = tensor(xb.expand_dims(x.handle, ax, ir_type(x.dtype, shape)), x.dtype, shape)
        return x

    def reshape(self, x, shape) -> tensor:
        x = self.to_tensor(x)
        shape = _static_shape(shape)
        n = 1
        for s in shape:
            n *= s
        if n != x.numel:
            raise SemanticError(f"cannot reshape a block of shape {list(x.shape)} to {list(shape)}")
        if shape == x.shape:
            return x
        if not x.shape:
            return self.splat(x, shape)
        return tensor(xb.reshape(x.handle, ir_type(x.dtype, shape)), x.dtype, shape)

    def permute(self, x, order) -> tensor:
        x = self.to_tensor(x)
        rank = len(x.shape)
        if order is None:
            if rank != 2:
                raise SemanticError(f"trans() without dims needs a 2-D block, got shape {list(x.shape)}")
            order = (1, 0)
        order = tuple(int(_unwrap(o)) for o in order)
        if sorted(order) != list(range(rank)):
            raise SemanticError(f"permutation {list(order)} is not valid for a block of rank {rank}")
        shape = tuple(x.shape[o] for o in order)
        return tensor(xb.trans(x.handle, order, ir_type(x.dtype, shape)), x.dtype, shape)

    # ----------------------------------------------------------------------------- types
    def computation_type(self, a_ty: dtype, a_py: bool, b_ty: dtype, b_py: bool, div_or_mod: bool) -> dtype:
        """Triton's computation_type_impl: the dtype a binary arithmetic op computes in."""
        if a_py != b_py:
            s_ty, t_ty = (a_ty, b_ty) if a_py else (b_ty, a_ty)
            if s_ty.kind() <= t_ty.kind():
                if div_or_mod and t_ty in (xl.float16, xl.bfloat16):
                    return xl.float32
                return t_ty
        if a_ty.is_fp64() or b_ty.is_fp64():
            return xl.float64
        if a_ty.is_fp32() or b_ty.is_fp32():
            return xl.float32
        if a_ty.is_fp16() or b_ty.is_fp16():  # fp16 wins over bf16 too, as in Triton
            return xl.float32 if div_or_mod else xl.float16
        if a_ty.is_bf16() and b_ty.is_bf16():
            return xl.float32 if div_or_mod else xl.bfloat16
        if a_ty.is_bf16() or b_ty.is_bf16():  # bf16 with an integer computes in fp32
            return xl.float32
        if a_ty.is_fp8() and b_ty.is_fp8():  # two different float8 types compute in fp16
            return a_ty if a_ty == b_ty else xl.float16
        if not (a_ty.is_int() and b_ty.is_int()):
            raise SemanticError(f"unexpected operand types {a_ty} and {b_ty}")
        if div_or_mod and a_ty.is_int_signed() != b_ty.is_int_signed():
            raise SemanticError(
                f"cannot use /, // or % with {a_ty} and {b_ty} because they have different signedness; "
                "cast one of them first"
            )
        return self.integer_promote(a_ty, b_ty)

    def integer_promote(self, a: dtype, b: dtype) -> dtype:
        if a.is_bool() and b.is_bool():
            return a
        if a.is_bool():
            return b
        if b.is_bool():
            return a
        if a.is_int_signed() == b.is_int_signed():
            return a if a.primitive_bitwidth >= b.primitive_bitwidth else b
        s, u = (a, b) if a.is_int_signed() else (b, a)
        return u if u.primitive_bitwidth >= s.primitive_bitwidth else s

    def _operands(self, a, b, div_or_mod=False, arithmetic=True):
        """Promote and broadcast two operands, honouring weak Python scalars."""
        a, b = _unwrap(a), _unwrap(b)
        a_py, b_py = _is_py(a), _is_py(b)
        ta = a.dtype if isinstance(a, tensor) else python_scalar_dtype(a)
        tb = b.dtype if isinstance(b, tensor) else python_scalar_dtype(b)
        if ta.is_ptr() or tb.is_ptr():
            raise SemanticError(f"unsupported operand types {ta} and {tb}")
        ct = self.computation_type(ta, a_py, tb, b_py, div_or_mod) if arithmetic else None
        if ct is not None:
            for v, py in ((a, a_py), (b, b_py)):
                if py and ct.is_int_unsigned() and not isinstance(v, bool) and v < 0:
                    raise SemanticError(
                        "cannot combine an unsigned block with a negative scalar; cast one of them explicitly"
                    )
                if py and ct.is_int() and not ct.is_bool() and not isinstance(v, bool):
                    bits = ct.primitive_bitwidth
                    lo = -(1 << (bits - 1)) if ct.is_int_signed() else 0
                    hi = (1 << (bits - 1)) - 1 if ct.is_int_signed() else (1 << bits) - 1
                    if not lo <= v <= hi:
                        raise SemanticError(f"scalar {v} is out of range for {ct}")
            a = self.constant(a, ct) if a_py else self.cast(a, ct)
            b = self.constant(b, ct) if b_py else self.cast(b, ct)
        a, b = self.broadcast_pair(self.to_tensor(a), self.to_tensor(b))
        return a, b

    # ----------------------------------------------------------------------------- arithmetic
    _FLOAT_OPS = {"add": arith.addf, "sub": arith.subf, "mul": arith.mulf, "truediv": arith.divf,
                  "mod": arith.remf}
    _INT_OPS = {"add": arith.addi, "sub": arith.subi, "mul": arith.muli, "and": arith.andi,
                "or": arith.ori, "xor": arith.xori, "lshift": arith.shli}
    _SIGNED_OPS = {"floordiv": (arith.divsi, arith.divui), "mod": (arith.remsi, arith.remui),
                   "rshift": (arith.shrsi, arith.shrui)}

    def binary(self, op: str, a, b) -> tensor:
        """Arithmetic and bitwise binary operators (`add`, `sub`, ..., `rshift`)."""
        a, b = _unwrap(a), _unwrap(b)
        if op in ("add", "sub"):
            for p, o, first in ((a, b, True), (b, a, False)):
                if isinstance(p, tensor) and p.dtype.is_ptr():
                    if op == "sub" and not first:
                        raise SemanticError("cannot subtract a pointer from a value")
                    return self.addptr(p, o, negate=(op == "sub"))
        if op in ("and", "or", "xor", "lshift", "rshift"):
            ta, tb = (v.dtype if isinstance(v, tensor) else python_scalar_dtype(v) for v in (a, b))
            if not (ta.is_int() and tb.is_int()):
                raise SemanticError(f"bitwise operator needs integer operands, got {ta} and {tb}")
            a, b = self._operands(a, b)  # Python scalars stay weak, as in Triton
        elif op == "truediv":
            a, b = self._operands(a, b, div_or_mod=True)
            if a.dtype.is_int():
                a, b = self.cast(a, xl.float32), self.cast(b, xl.float32)
        elif op == "floordiv":
            a, b = self._operands(a, b, div_or_mod=True)
            if a.dtype.is_floating():
                raise SemanticError("`//` needs integer operands (use `/` and xl.floor for floats)")
        else:
            a, b = self._operands(a, b, div_or_mod=(op == "mod"))
        dt = a.dtype
        refuse_fp8_arithmetic(dt, "arithmetic")
        if dt.is_floating():
            if op not in self._FLOAT_OPS:
                raise SemanticError(f"operator {op} is not defined for {dt}")
            return tensor(self._FLOAT_OPS[op](a.handle, b.handle), dt, a.shape)
        if op in self._SIGNED_OPS:
            signed, unsigned = self._SIGNED_OPS[op]
            fn = signed if dt.is_int_signed() else unsigned
            return tensor(fn(a.handle, b.handle), dt, a.shape)
        if op == "truediv":
            raise SemanticError("internal: integer truediv")
        return tensor(self._INT_OPS[op](a.handle, b.handle), dt, a.shape)

    def addptr(self, p: tensor, off, negate=False) -> tensor:
        off = self.to_tensor(off)
        if not off.dtype.is_int():
            raise SemanticError(f"pointer offsets must be integers, got {off.dtype}")
        if negate:
            off = self.binary("sub", 0, off)
        p, off = self.broadcast_pair(p, off)
        return tensor(xb.addptr(p.handle, off.handle), p.dtype, p.shape)

    _CMP_F = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}
    _CMP_S = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}
    _CMP_U = {"lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge", "eq": "eq", "ne": "ne"}

    def compare(self, op: str, a, b) -> tensor:
        # as triton.language's comparison operators: a Python scalar becomes a tensor first (not weak)
        a, b = self._operands(self.to_tensor(a), self.to_tensor(b))
        refuse_fp8_arithmetic(a.dtype, "comparison")
        if a.dtype.is_floating():
            h = arith.cmpf(getattr(arith.CmpFPredicate, self._CMP_F[op].upper()), a.handle, b.handle)
        else:
            table = self._CMP_S if a.dtype.is_int_signed() else self._CMP_U
            h = arith.cmpi(getattr(arith.CmpIPredicate, table[op]), a.handle, b.handle)
        return tensor(h, xl.int1, a.shape)

    def neg(self, x) -> tensor:
        x = self.to_tensor(x)
        check_not_pointer(x, "unary minus")
        if x.dtype.is_floating():
            return tensor(arith.negf(x.handle), x.dtype, x.shape)
        return self.binary("sub", self.constant(0, x.dtype), x)

    def invert(self, x) -> tensor:
        x = self.to_tensor(x)
        if not x.dtype.is_int():
            raise SemanticError(f"`~` needs an integer operand, got {x.dtype}")
        ones = -1 if x.dtype.is_int_signed() else (1 << x.dtype.primitive_bitwidth) - 1
        return self.binary("xor", x, self.constant(ones, x.dtype))

    def logical_not(self, x) -> tensor:
        x = self.to_tensor(x)
        return self.compare("eq", x, self.constant(0, x.dtype))

    def logical(self, op: str, a, b) -> tensor:
        a, b = self.to_bool(a), self.to_bool(b)
        return self.binary(op, a, b)

    def to_bool(self, x) -> tensor:
        x = self.to_tensor(x)
        if x.dtype.is_ptr():  # the address != 0, as Triton's cast to int1
            return self.cast(x, xl.int1)
        return x if x.dtype.is_bool() else self.compare("ne", x, self.constant(0, x.dtype))

    # ----------------------------------------------------------------------------- casts
    def cast(self, x, dt, bitcast=False, rounding=None) -> tensor:
        """`x` as dtype `dt` (Triton's `cast`); `rounding` ("rtne"/"rtz") only for a float downcast."""
        x = self.to_tensor(x)
        dt = _unwrap(dt)
        if isinstance(dt, xl.block_type):  # as Triton: the element type (`x.to(p.dtype.element_ty)`)
            dt = dt.element_ty
        if not isinstance(dt, dtype):
            raise SemanticError(f"expected a dtype, got {dt!r}")
        src = x.dtype
        if src == dt:
            return x
        rt = ir_type(dt, x.shape)
        if src.is_ptr() or dt.is_ptr():  # bitcast=True too, as in Triton
            return cast_pointer(self, x, src, dt)
        if bitcast:
            if src.primitive_bitwidth != dt.primitive_bitwidth:
                raise SemanticError(f"cannot bitcast {src} to {dt}: bit widths differ")
            return tensor(arith.bitcast(rt, x.handle), dt, x.shape)
        if rounding == "rtz" and not (src.is_floating() and dt.is_floating()
                                      and dt.primitive_bitwidth < src.primitive_bitwidth):
            # (Triton refuses an explicit "rtne" here too; xblock lets the default pass)
            raise SemanticError(f"fp_downcast_rounding should be set only for truncating fp conversions "
                                f"(a cast from {src} to {dt} is not one)")
        if needs_fp_to_fp(src, dt, rounding):
            return cast_float(self, x, src, dt, rounding)
        if dt.is_bool():
            return self.compare("ne", x, self.constant(0, src))
        if src.is_floating() and dt.is_floating():
            if {src.name, dt.name} == {"fp16", "bf16"}:
                return self.cast(self.cast(x, xl.float32), dt)
            fn = arith.extf if dt.primitive_bitwidth > src.primitive_bitwidth else arith.truncf
            return tensor(fn(rt, x.handle), dt, x.shape)
        if src.is_int() and dt.is_int():
            sb, db = src.primitive_bitwidth, dt.primitive_bitwidth
            if sb == db:
                return tensor(x.handle, dt, x.shape)
            if db < sb:
                return tensor(arith.trunci(rt, x.handle), dt, x.shape)
            fn = arith.extsi if src.is_int_signed() else arith.extui
            return tensor(fn(rt, x.handle), dt, x.shape)
        if src.is_int() and dt.is_floating():
            fn = arith.sitofp if src.is_int_signed() else arith.uitofp
            return tensor(fn(rt, x.handle), dt, x.shape)
        if src.is_floating() and dt.is_int():
            fn = arith.fptosi if dt.is_int_signed() else arith.fptoui
            return tensor(fn(rt, x.handle), dt, x.shape)
        raise SemanticError(f"cannot cast {src} to {dt}")

    # ----------------------------------------------------------------------------- creation
    def program_id(self, axis) -> tensor:
        axis = self._axis_const(axis, "program_id")
        return tensor(xb.program_id(axis), xl.int32, ())

    def num_programs(self, axis) -> tensor:
        axis = self._axis_const(axis, "num_programs")
        return tensor(xb.num_programs(axis), xl.int32, ())

    def _axis_const(self, axis, what) -> int:
        axis = _unwrap(axis)
        if not isinstance(axis, int) or axis not in (0, 1, 2):
            raise SemanticError(f"{what} axis must be a constexpr 0, 1 or 2, got {axis!r}")
        return axis

    def arange(self, start, end) -> tensor:
        start, end = _unwrap(start), _unwrap(end)
        if not isinstance(start, int) or not isinstance(end, int):
            raise SemanticError("arange's start and end must be constexpr integers (a block's size is known when "
                                "the kernel compiles: declare the parameter `NAME: tl.constexpr`)")
        if end <= start:
            raise SemanticError(f"arange({start}, {end}): end must be greater than start")
        if not (-(1 << 31) <= start and end <= 1 << 31):
            raise SemanticError(f"arange({start}, {end}) must fit in int32")
        n = end - start
        check_numel((n,))  # a power of two is what cuda needs (Triton's layouts); that target checks it
        return tensor(xb.arange(start, end), xl.int32, (n,))

    def full(self, shape, value, dt) -> tensor:
        shape = _unwrap(shape)
        shape = _static_shape(shape if isinstance(shape, (tuple, list)) else [shape])
        dt = _unwrap(dt)
        value = _unwrap(value)
        check_numel(shape)
        check_full_value(value, dt)
        if isinstance(value, tensor):
            return self.splat(self.cast(value, dt), shape)
        return self.constant(value, dt, shape)

    # ----------------------------------------------------------------------------- memory
    def _ptr(self, ptr) -> tensor:
        ptr = _unwrap(ptr)
        if not isinstance(ptr, tensor) or not ptr.dtype.is_ptr():
            raise SemanticError(f"expected a pointer, got {ptr!r}")
        return ptr

    def _mask(self, mask, shape, what=None):
        """The mask as an int1 value; `what` ("a load", ...) names an access whose mask must be bool."""
        mask = _unwrap(mask)
        if mask is None:
            return None
        if what is not None:
            check_mask(mask, what)
        return self.to_bool(mask)

    def load(self, ptr, mask, other, cache, evict, volatile, boundary_check=(), padding_option="") -> tensor:
        if accesses_block_pointer(ptr, boundary_check, padding_option):
            return self.load_block_pointer(ptr, mask, other, cache, evict, volatile, boundary_check, padding_option)
        ptr = self._ptr(ptr)
        check_scalar_pointer_load(ptr, _unwrap(mask), _unwrap(other))
        mask = self._mask(mask, ptr.shape, "a load")
        if mask is not None and mask.shape != ptr.shape:
            shape = self.broadcast_shapes(ptr.shape, mask.shape)
            ptr, mask = self.broadcast_to(ptr, shape), self.broadcast_to(mask, shape)
        et = ptr.dtype.element_ty
        other = _unwrap(other)
        if other is not None:
            if mask is None:
                raise SemanticError("`other` cannot be provided without `mask`")
            other = self.broadcast_to(self.cast(self.to_tensor(other, et if _is_py(other) else None), et),
                                      ptr.shape)
        h = xb.load(ptr.handle, ir_type(et, ptr.shape), mask.handle if mask is not None else None,
                    other.handle if other is not None else None, cache=str(_unwrap(cache) or ""),
                    evict=str(_unwrap(evict) or ""), volatile=bool(_unwrap(volatile)))
        return tensor(h, et, ptr.shape)

    def store(self, ptr, value, mask, cache, evict, boundary_check=()) -> None:
        if accesses_block_pointer(ptr, boundary_check, ""):
            return self.store_block_pointer(ptr, value, mask, cache, evict, boundary_check)
        ptr = self._ptr(ptr)
        et = ptr.dtype.element_ty
        value = _unwrap(value)
        value = self.to_tensor(value, et if _is_py(value) else None)
        raw = _unwrap(mask)
        if isinstance(raw, tensor) and not raw.dtype.is_bool():  # Triton checks store masks (not loads')
            raise SemanticError(f"a store's mask must be a bool block (a comparison), got {raw.dtype}")
        mask = self._mask(mask, ptr.shape)
        shape = self.broadcast_shapes(ptr.shape, value.shape, *([mask.shape] if mask is not None else []))
        if shape != ptr.shape:
            if not ptr.shape:
                raise SemanticError(
                    f"cannot store a block of shape {list(value.shape)} through a scalar pointer")
            ptr = self.broadcast_to(ptr, shape)
        value = self.broadcast_to(self.cast(value, et), shape)
        if mask is not None:
            mask = self.broadcast_to(mask, shape)
        xb.store(ptr.handle, value.handle, mask.handle if mask is not None else None,
                 cache=str(_unwrap(cache) or ""), evict=str(_unwrap(evict) or ""))

    def where(self, cond, x, y) -> tensor:
        cond = self.to_bool(cond)
        x, y = _unwrap(x), _unwrap(y)
        if isinstance(x, tensor) and x.dtype.is_ptr() or isinstance(y, tensor) and y.dtype.is_ptr():
            x, y = self.to_tensor(x), self.to_tensor(y)
            if x.dtype != y.dtype:
                raise SemanticError(f"where() of pointers needs the same type, got {x.dtype} and {y.dtype}")
        else:
            x, y = self._operands(x, y)
        shape = self.broadcast_shapes(cond.shape, x.shape, y.shape)
        cond, x, y = (self.broadcast_to(v, shape) for v in (cond, x, y))
        return tensor(arith.select(cond.handle, x.handle, y.handle), x.dtype, shape)

    # ----------------------------------------------------------------------------- math
    _UNARY = {"exp": math.exp, "exp2": math.exp2, "log": math.log, "log2": math.log2, "sqrt": math.sqrt,
              "rsqrt": math.rsqrt, "sin": math.sin, "cos": math.cos, "erf": math.erf,
              "floor": math.floor, "ceil": math.ceil, "tanh": math.tanh}

    def _float(self, x, fn: str) -> tensor:
        """The operand of math function `fn`: a float block, or a Python number as a float32 constant."""
        x = _unwrap(x)
        if _is_py(x):
            return self.to_tensor(float(x))
        x = self.to_tensor(x)
        check_math_operand(x.dtype, fn)
        refuse_fp8_arithmetic(x.dtype, "math")
        return x

    def math_unary(self, name, x, fn=None) -> tensor:
        x = self._float(x, fn or name)
        return tensor(self._UNARY[name](x.handle), x.dtype, x.shape)

    def abs(self, x) -> tensor:
        x = self.to_tensor(x)
        check_not_pointer(x, "abs")
        if x.dtype.is_floating():
            return tensor(math.absf(x.handle), x.dtype, x.shape)
        if x.dtype.is_int_unsigned():
            return x
        return tensor(math.absi(x.handle), x.dtype, x.shape)

    def sigmoid(self, x) -> tensor:
        x = self._float(x, "sigmoid")
        return self.binary("truediv", 1.0, self.binary("add", 1.0, self.math_unary("exp", self.neg(x))))

    def _promote_bf16(self, x) -> tensor:
        """Triton's _promote_bfloat16_to_float32: max/min/clamp/scans do not run in bf16."""
        x = self.to_tensor(x)
        return self.cast(x, xl.float32) if x.dtype.is_bf16() else x

    def minmax(self, kind, x, y, propagate_nan) -> tensor:
        # as triton.language.maximum: Python scalars become tensors first (they are not weak here)
        x, y = self._operands(self._promote_bf16(x), self._promote_bf16(y))
        refuse_fp8_arithmetic(x.dtype, f"{kind}imum")
        if x.dtype.is_floating():
            fn = {("max", False): arith.maxnumf, ("max", True): arith.maximumf,
                  ("min", False): arith.minnumf, ("min", True): arith.minimumf}[(kind, propagate_nan)]
        elif x.dtype.is_int_signed():
            fn = arith.maxsi if kind == "max" else arith.minsi
        else:
            fn = arith.maxui if kind == "max" else arith.minui
        return tensor(fn(x.handle, y.handle), x.dtype, x.shape)

    def clamp(self, x, lo, hi) -> tensor:
        x, lo, hi = (self._promote_bf16(v) for v in (x, lo, hi))
        lo, hi = self._operands(lo, hi)
        x, lo = self._operands(x, lo)
        x, hi = self._operands(x, hi)
        if not x.dtype.is_floating():
            raise SemanticError(f"clamp needs a floating-point operand, got {x.dtype}")
        return self.minmax("min", self.minmax("max", x, lo, False), hi, False)

    def fma(self, x, y, z) -> tensor:
        x, y = self._operands(x, y)
        x, z = self._operands(x, z)
        y, z = self._operands(y, z)
        if not x.dtype.is_floating():
            raise SemanticError(f"fma needs floating-point operands, got {x.dtype}")
        return tensor(math.fma(x.handle, y.handle, z.handle), x.dtype, x.shape)

    def umulhi(self, x, y) -> tensor:
        for v in (_unwrap(x), _unwrap(y)):
            if isinstance(v, tensor):
                check_umulhi_operand(v.dtype)
        x, y = self._operands(x, y)
        if not x.dtype.is_int():
            raise SemanticError("umulhi needs integer operands")
        return tensor(arith.mului_extended(x.handle, y.handle)[1], x.dtype, x.shape)

    def fdiv(self, x, y) -> tensor:
        """Triton's `fdiv`: float operands only; the quotient keeps their type (fp16 / fp16 is fp16)."""
        x, y = _unwrap(x), _unwrap(y)
        check_fdiv_operands(*(v.dtype if isinstance(v, tensor) else python_scalar_dtype(v) for v in (x, y)))
        x, y = self._operands(x, y)
        refuse_fp8_arithmetic(x.dtype, "fdiv")
        return tensor(arith.divf(x.handle, y.handle), x.dtype, x.shape)

    def cdiv(self, x, div):
        x, div = _unwrap(x), _unwrap(div)
        if _is_py(x) and _is_py(div):
            return (x + div - 1) // div
        return self.binary("floordiv", self.binary("sub", self.binary("add", x, div), 1), div)
