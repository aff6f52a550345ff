"""The xblock block language: dtypes, constexpr, block values and the builtins kernels call.

The surface mirrors ``triton.language`` (same names, argument names and semantics). Builtins
only run inside a kernel being compiled: the frontend passes ``_semantic``, the object that
builds IR; called from plain Python they raise.
"""

from __future__ import annotations

import functools
from typing import Any

from ..errors import DtypeError, KernelCallError, UnknownDtypeError


class dtype:
    """A scalar element type: int1, int8..int64, uint8..uint64, fp16, bf16, fp32, fp64, and the float8
    types fp8e4nv, fp8e5, fp8e4b15, fp8e4b8, fp8e5b16 (Triton's names)."""

    SINT = ("int8", "int16", "int32", "int64")
    UINT = ("int1", "uint8", "uint16", "uint32", "uint64")
    FP = ("fp16", "bf16", "fp32", "fp64")
    FP8 = ("fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16")
    # (mantissa bits, exponent bias) of every float type, as triton.language.dtype gives them
    _FP_LAYOUT = {"fp16": (10, 15), "bf16": (7, 127), "fp32": (23, 127), "fp64": (52, 1023),
                  "fp8e4nv": (3, 7), "fp8e5": (2, 15), "fp8e4b15": (3, 15), "fp8e4b8": (3, 8),
                  "fp8e5b16": (2, 16)}

    def __init__(self, name: str):
        known = self.SINT + self.UINT + self.FP + self.FP8
        if name not in known and name != "void":
            raise UnknownDtypeError(f"unknown dtype {name!r} (known: {', '.join(known)})")
        self.name = name

    # -- classification, as triton.language.dtype
    def is_floating(self) -> bool:
        return self.name in self.FP or self.name in self.FP8

    def is_int(self) -> bool:
        return self.name in self.SINT + self.UINT

    def is_int_signed(self) -> bool:
        return self.name in self.SINT

    def is_int_unsigned(self) -> bool:
        return self.name in self.UINT

    def is_bool(self) -> bool:
        return self.name == "int1"

    def is_fp16(self) -> bool:
        return self.name == "fp16"

    def is_bf16(self) -> bool:
        return self.name == "bf16"

    def is_fp32(self) -> bool:
        return self.name == "fp32"

    def is_fp64(self) -> bool:
        return self.name == "fp64"

    def is_ptr(self) -> bool:
        return False

    def is_block(self) -> bool:
        return False

    def is_standard_floating(self) -> bool:
        return self.name in self.FP

    def is_fp8(self) -> bool:
        return self.name in self.FP8

    def is_fp8e4nv(self) -> bool:
        return self.name == "fp8e4nv"

    def is_fp8e5(self) -> bool:
        return self.name == "fp8e5"

    def is_fp8e4b15(self) -> bool:
        return self.name == "fp8e4b15"

    def is_fp8e4b8(self) -> bool:
        return self.name == "fp8e4b8"

    def is_fp8e5b16(self) -> bool:
        return self.name == "fp8e5b16"

    def is_void(self) -> bool:
        return self.name == "void"

    def is_const(self) -> bool:
        return False

    @staticmethod
    def is_dtype(type_str) -> bool:
        return type_str in dtype.SINT + dtype.UINT + dtype.FP + dtype.FP8

    # `is_signed`/`is_unsigned`: the names some kernels use for is_int_signed/is_int_unsigned
    def is_signed(self) -> bool:
        return self.is_int_signed()

    def is_unsigned(self) -> bool:
        return self.is_int_unsigned()

    def __getattr__(self, name: str):
        """`is_int8()` ... `is_uint64()`, `is_int1()`: Triton's per-type predicates."""
        if name.startswith("is_") and name[3:] in dtype.SINT + dtype.UINT:
            return lambda: self.name == name[3:]
        raise AttributeError(f"'dtype' object has no attribute '{name}'")

    @property
    def fp_mantissa_width(self) -> int:
        if self.name not in self._FP_LAYOUT:
            raise DtypeError(f"{self} is not a floating-point type: it has no fp_mantissa_width")
        return self._FP_LAYOUT[self.name][0]

    @property
    def exponent_bias(self) -> int:
        if self.name not in self._FP_LAYOUT:
            raise DtypeError(f"{self} is not a floating-point type: it has no exponent_bias")
        return self._FP_LAYOUT[self.name][1]

    def get_int_max_value(self) -> int:
        bits = self.primitive_bitwidth
        return 2 ** (bits - 1) - 1 if self.is_int_signed() else 2**bits - 1

    def get_int_min_value(self) -> int:
        return -(2 ** (self.primitive_bitwidth - 1)) if self.is_int_signed() else 0

    def with_element_ty(self, element_ty) -> "dtype":
        return _unwrap(element_ty)

    @property
    def primitive_bitwidth(self) -> int:
        if self.name == "int1":
            return 1
        if self.name in self.FP8:
            return 8
        return int("".join(c for c in self.name if c.isdigit()))

    @property
    def int_bitwidth(self) -> int:
        return self.primitive_bitwidth

    @property
    def itemsize(self) -> int:
        return (self.primitive_bitwidth + 7) // 8  # bool: 1 byte (the language's `max` shadows Python's)

    def kind(self) -> int:
        """Promotion kind: bool < integer (signed or unsigned) < float, as Triton's dtype.KIND."""
        if self.is_bool():
            return 0
        if self.is_int():
            return 1
        return 2

    @property
    def scalar(self) -> "dtype":
        return self

    def to_ir(self, builder):
        return builder.ir_type(self)

    def __eq__(self, other) -> bool:
        other = _unwrap(other)
        return type(other) is type(self) and self.name == other.name

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))

    def __repr__(self) -> str:
        if self.name in self.FP8:
            return "float8" + self.name[3:]
        return {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64"}.get(
            self.name, self.name
        )

    __str__ = __repr__


class pointer_type(dtype):
    """Pointer to global memory holding elements of `element_ty`."""

    def __init__(self, element_ty: dtype, address_space: int = 1, const: bool = False):
        self.element_ty = _unwrap(element_ty)
        self.name = "*" + self.element_ty.name
        self.address_space = address_space

    def is_ptr(self) -> bool:
        return True

    def is_floating(self) -> bool:
        return False

    def is_int(self) -> bool:
        return False

    def kind(self) -> int:
        return 4

    @property
    def primitive_bitwidth(self) -> int:
        return 64

    def __eq__(self, other) -> bool:
        other = _unwrap(other)
        return isinstance(other, pointer_type) and self.element_ty == other.element_ty

    def __hash__(self) -> int:
        return hash(("ptr", self.element_ty.name))

    def __repr__(self) -> str:
        return f"pointer<{self.element_ty!r}>"


int1 = dtype("int1")
int8, int16, int32, int64 = (dtype(n) for n in dtype.SINT)
uint8, uint16, uint32, uint64 = (dtype(n) for n in dtype.UINT[1:])
float16, bfloat16, float32, float64 = (dtype(n) for n in dtype.FP)
float8e4nv, float8e5, float8e4b15, float8e4b8, float8e5b16 = (dtype(n) for n in dtype.FP8)
void = dtype("void")
bool_ = int1  # Triton names its boolean dtype int1

NAME_TO_DTYPE = {
    d.name: d
    for d in (int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32, float64)
}
NAME_TO_DTYPE.update({"i1": int1, "i8": int8, "i16": int16, "i32": int32, "i64": int64, "u8": uint8})
NAME_TO_DTYPE.update({"u16": uint16, "u32": uint32, "u64": uint64, "float16": float16, "float32": float32})
NAME_TO_DTYPE.update({"bfloat16": bfloat16, "float64": float64, "f16": float16, "f32": float32, "f64": float64})
NAME_TO_DTYPE.update({"bf16": bfloat16, "B": int1})
NAME_TO_DTYPE.update({d.name: d for d in (float8e4nv, float8e5, float8e4b15, float8e4b8, float8e5b16)})
NAME_TO_DTYPE.update({repr(d): d for d in (float8e4nv, float8e5, float8e4b15, float8e4b8, float8e5b16)})


class constexpr:
    """A compile-time constant; as an annotation, marks a kernel parameter as constexpr."""

    def __init__(self, value: Any):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self) -> str:
        return f"constexpr[{self.value!r}]"

    def __index__(self) -> int:
        return int(self.value)

    def __bool__(self) -> bool:
        return bool(self.value)

    def __eq__(self, other) -> bool:
        return self.value == _unwrap(other)

    def __hash__(self) -> int:
        return hash(self.value)

    def __call__(self, *args, **kwargs):
        return self.value(*args, **kwargs)


def _unwrap(v):
    return v.value if isinstance(v, constexpr) else v


def _constexpr_fn(fn):
    """A plain Python function of the language that kernels call on constexprs: run at compile time."""
    fn.__xblock_constexpr__ = True
    return fn


@_constexpr_fn
def get_int_dtype(bitwidth: int, signed: bool) -> "dtype":
    """The integer dtype of `bitwidth` bits (1, 8, 16, 32, 64), signed or not, as triton.language.core's
    (TorchInductor's helpers bitcast through it)."""
    bitwidth, signed = _unwrap(bitwidth), _unwrap(signed)
    if bitwidth == 1:
        return int1
    names = {(8, True): "int8", (16, True): "int16", (32, True): "int32", (64, True): "int64",
             (8, False): "uint8", (16, False): "uint16", (32, False): "uint32", (64, False): "uint64"}
    name = names.get((bitwidth, bool(signed)))
    if name is None:
        raise DtypeError(f"Unsupported bitwidth {bitwidth} and signedness {signed}")
    return NAME_TO_DTYPE[name]


@_constexpr_fn
def _unwrap_if_constexpr(o):
    """`o` without its constexpr wrapper (triton.language.core's helper)."""
    return _unwrap(o)


class tensor:
    """A block (or scalar) value inside a kernel: an IR handle, an element dtype and a shape.

    Shape ``()`` is a scalar. Operators are dispatched by the frontend to its semantic layer.
    """

    def __init__(self, handle, dtype_: dtype, shape: tuple = ()):
        self.handle = handle
        self.dtype = dtype_
        self.shape = tuple(int(s) for s in shape)

    @property
    def type(self):
        return self.dtype if not self.shape else block_type(self.dtype, self.shape)

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def is_block(self) -> bool:
        return bool(self.shape)

    def __repr__(self) -> str:
        return f"tensor<{list(self.shape)}, {self.dtype!r}>"

    def __bool__(self):
        raise TypeError("a block value has no truth value at compile time; use it in `if` to branch")


class block_type:
    """The type of a block value: element dtype and shape."""

    def __init__(self, element_ty: dtype, shape):
        self.element_ty = element_ty
        self.shape = tuple(shape)

    def is_block(self) -> bool:
        return True

    def is_ptr(self) -> bool:
        return False

    @property
    def scalar(self):
        return self.element_ty

    @property
    def name(self) -> str:
        return f"<{list(self.shape)}, {self.element_ty.name}>"

    @property
    def primitive_bitwidth(self) -> int:
        return self.element_ty.primitive_bitwidth

    def __eq__(self, other) -> bool:
        other = _unwrap(other)
        return isinstance(other, block_type) and (self.element_ty, self.shape) == (other.element_ty, other.shape)

    def __hash__(self) -> int:
        return hash(("block", self.element_ty, self.shape))

    def __repr__(self) -> str:
        return f"<{list(self.shape)}, {self.element_ty!r}>"


class PropagateNan:
    NONE = 0
    ALL = 0xFFFF


# ---------------------------------------------------------------------------------------------
# Builtins


class _Builtin:
    """Marks a function as a language builtin executed by the frontend's semantic layer."""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self.fn = fn

    def __call__(self, *args, _semantic=None, **kwargs):
        if _semantic is None:
            raise KernelCallError(
                f"xblock.language.{self.fn.__name__}() can only be called inside a kernel being compiled"
            )
        return self.fn(*args, _semantic=_semantic, **kwargs)


def builtin(fn) -> _Builtin:
    return _Builtin(fn)


def is_builtin(obj) -> bool:
    return isinstance(obj, _Builtin)


@builtin
def program_id(axis, _semantic=None):
    return _semantic.program_id(axis)


@builtin
def num_programs(axis, _semantic=None):
    return _semantic.num_programs(axis)


@builtin
def arange(start, end, _semantic=None):
    return _semantic.arange(start, end)


@builtin
def zeros(shape, dtype, _semantic=None):
    return _semantic.full(shape, 0, dtype)


@builtin
def zeros_like(input, _semantic=None):
    return _semantic.full(input.shape, 0, input.dtype)


@builtin
def full(shape, value, dtype, _semantic=None):
    return _semantic.full(shape, value, dtype)


@builtin
def load(pointer, mask=None, other=None, boundary_check=(), padding_option="", cache_modifier="",
         eviction_policy="", volatile=False, _semantic=None):
    """Load through a block of pointers (`mask`, `other`) or a block pointer (`boundary_check`: the
    dimensions kept inside the tensor; `padding_option` "zero", "nan", or "", which reads zero here)."""
    return _semantic.load(pointer, mask, other, cache_modifier, eviction_policy, volatile, boundary_check,
                          padding_option)


@builtin
def store(pointer, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy="", _semantic=None):
    return _semantic.store(pointer, value, mask, cache_modifier, eviction_policy, boundary_check)


@builtin
def where(condition, x, y, _semantic=None):
    return _semantic.where(condition, x, y)


@builtin
def reshape(input, *shape, can_reorder=False, _semantic=None):
    return _semantic.reshape(input, _shape_arg(shape))


@builtin
def view(input, *shape, _semantic=None):
    return _semantic.reshape(input, _shape_arg(shape))


@builtin
def trans(input, *dims, _semantic=None):
    return _semantic.permute(input, _shape_arg(dims) or None)


@builtin
def permute(input, *dims, _semantic=None):
    return _semantic.permute(input, _shape_arg(dims))


@builtin
def join(a, b, _semantic=None):
    return _semantic.join(a, b)


@builtin
def split(a, _semantic=None):
    return _semantic.split(a)


@builtin
def cat(input, other, can_reorder=False, _semantic=None):
    return _semantic.cat(input, other, can_reorder)


@builtin
def gather(src, index, axis, _semantic=None):
    return _semantic.gather(src, index, axis)


@builtin
def histogram(input, num_bins, mask=None, _semantic=None):
    return _semantic.histogram(input, num_bins, mask)


@builtin
def item(input, _semantic=None):
    return _semantic.item(input)


@builtin
def map_elementwise(scalar_fn, *args, pack=1, _semantic=None):
    return _semantic.map_elementwise(scalar_fn)


@builtin
def inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack, _semantic=None):
    return _semantic.inline_asm_elementwise()


@builtin
def expand_dims(input, axis, _semantic=None):
    return _semantic.expand_dims(input, axis)


@builtin
def broadcast_to(input, *shape, _semantic=None):
    return _semantic.broadcast_to(input, _shape_arg(shape))


@builtin
def broadcast(input, other, _semantic=None):
    return _semantic.broadcast_pair(input, other)


@builtin
def cast(input, dtype, fp_downcast_rounding=None, bitcast=False, _semantic=None):
    """`input` converted to `dtype` (`bitcast`: its bits reinterpreted). `fp_downcast_rounding` ("rtne",
    the default, or "rtz") is the rounding of a float conversion to a narrower float type."""
    rounding = _unwrap(fp_downcast_rounding)
    if rounding not in (None, "rtne", "rtz"):
        raise ValueError(f"Invalid rounding mode: {rounding}. Supported rounding modes are 'rtne' and 'rtz'.")
    return _semantic.cast(input, dtype, _unwrap(bitcast), rounding)


def _shape_arg(shape):
    shape = tuple(_unwrap(s) for s in shape)
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(_unwrap(s) for s in shape[0])
    return shape


def _unary_math(name):
    def impl(x, _semantic=None):
        return _semantic.math_unary(name, x)

    impl.__name__ = name
    impl.__qualname__ = name
    impl.__doc__ = f"Elementwise {name} of a float block (fp16 and bf16 compute in fp32; integers are an error)."
    return builtin(impl)


exp = _unary_math("exp")
exp2 = _unary_math("exp2")
log = _unary_math("log")
log2 = _unary_math("log2")
sqrt = _unary_math("sqrt")
rsqrt = _unary_math("rsqrt")
sin = _unary_math("sin")
cos = _unary_math("cos")
erf = _unary_math("erf")
floor = _unary_math("floor")
ceil = _unary_math("ceil")
tanh = _unary_math("tanh")


@builtin
def abs(x, _semantic=None):
    return _semantic.abs(x)


@builtin
def sigmoid(x, _semantic=None):
    return _semantic.sigmoid(x)


@builtin
def maximum(x, y, propagate_nan=PropagateNan.NONE, _semantic=None):
    return _semantic.minmax("max", x, y, _unwrap(propagate_nan) == PropagateNan.ALL)


@builtin
def minimum(x, y, propagate_nan=PropagateNan.NONE, _semantic=None):
    return _semantic.minmax("min", x, y, _unwrap(propagate_nan) == PropagateNan.ALL)


@builtin
def clamp(x, min, max, propagate_nan=PropagateNan.NONE, _semantic=None):
    return _semantic.clamp(x, min, max)


@builtin
def fma(x, y, z, _semantic=None):
    return _semantic.fma(x, y, z)


@builtin
def fdiv(x, y, ieee_rounding=False, _semantic=None):
    """x / y of float operands, in their type (Triton's `fdiv`, which ignores ieee_rounding)."""
    return _semantic.fdiv(x, y)


@builtin
def div_rn(x, y, _semantic=None):
    """x / y rounded to nearest (IEEE), also where `/` is approximate (cuda)."""
    return _semantic.math_fn("div_rn", x, y)


@builtin
def sqrt_rn(x, _semantic=None):
    """sqrt(x) rounded to nearest (IEEE), also where `sqrt` is approximate (cuda)."""
    return _semantic.math_fn("sqrt_rn", x)


@builtin
def umulhi(x, y, _semantic=None):
    return _semantic.umulhi(x, y)


@builtin
def sum(input, axis=None, keep_dims=False, dtype=None, _semantic=None):
    return _semantic.reduce_kind("sum", input, axis, keep_dims, dtype)


@builtin
def xor_sum(input, axis=None, keep_dims=False, _semantic=None):
    return _semantic.reduce_kind("xor_sum", input, axis, keep_dims)


@builtin
def max(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False,
        _semantic=None):
    if _unwrap(return_indices):
        return (_semantic.reduce_kind("max", input, axis, keep_dims, widen=False),
                _semantic.reduce_kind("argmax", input, axis, keep_dims))
    return _semantic.reduce_kind("max", input, axis, keep_dims)


@builtin
def min(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False,
        _semantic=None):
    if _unwrap(return_indices):
        return (_semantic.reduce_kind("min", input, axis, keep_dims, widen=False),
                _semantic.reduce_kind("argmin", input, axis, keep_dims))
    return _semantic.reduce_kind("min", input, axis, keep_dims)


@builtin
def argmax(input, axis, tie_break_left=True, keep_dims=False, _semantic=None):
    return _semantic.reduce_kind("argmax", input, axis, keep_dims)


@builtin
def argmin(input, axis, tie_break_left=True, keep_dims=False, _semantic=None):
    return _semantic.reduce_kind("argmin", input, axis, keep_dims)


@builtin
def reduce(input, axis, combine_fn, keep_dims=False, _semantic=None):
    return _semantic.reduce_generic(input, axis, combine_fn, keep_dims)


@builtin
def cumsum(input, axis=0, reverse=False, dtype=None, _semantic=None):
    return _semantic.scan_kind("cumsum", input, axis, reverse, dtype)


@builtin
def cumprod(input, axis=0, reverse=False, _semantic=None):
    return _semantic.scan_kind("cumprod", input, axis, reverse)


@builtin
def associative_scan(input, axis, combine_fn, reverse=False, _semantic=None):
    return _semantic.scan_generic(input, axis, combine_fn, reverse)


@builtin
def dot(input, other, acc=None, input_precision=None, allow_tf32=None, max_num_imprecise_acc=None,
        out_dtype=float32, _semantic=None):
    """Matrix product of two 2-D blocks, or of two batches of them (3-D), plus `acc`."""
    return _semantic.dot(input, other, acc, input_precision, allow_tf32, max_num_imprecise_acc, out_dtype)


@builtin
def dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc=None, fast_math=False, lhs_k_pack=True,
               rhs_k_pack=True, out_dtype=float32, _semantic=None):
    """Triton's microscaled matrix product: not supported by any xblock target (an error at the line)."""
    return _semantic.dot_scaled(lhs_format, rhs_format)


def _atomic(kind):
    def impl(pointer, val, mask=None, sem=None, scope=None, _semantic=None):
        return _semantic.atomic_rmw(kind, pointer, val, mask, sem, scope)

    impl.__name__ = impl.__qualname__ = "atomic_" + kind
    impl.__doc__ = f"Atomic {kind} at each lane's address; returns the old values."
    return builtin(impl)


atomic_add = _atomic("add")
atomic_max = _atomic("max")
atomic_min = _atomic("min")
atomic_xchg = _atomic("xchg")
atomic_and = _atomic("and")
atomic_or = _atomic("or")
atomic_xor = _atomic("xor")


@builtin
def atomic_cas(pointer, cmp, val, sem=None, scope=None, _semantic=None):
    return _semantic.atomic_cas(pointer, cmp, val, sem, scope)


@builtin
def cdiv(x, div, _semantic=None):
    return _semantic.cdiv(x, div)


@builtin
def to_tensor(x, _semantic=None):
    """A Python number or a block as a block (a scalar block for a number)."""
    return _semantic.to_tensor(_unwrap(x))


@builtin
def static_assert(cond, msg="", _semantic=None):
    return _semantic.static_assert(cond, msg)


@builtin
def static_print(*values, sep=" ", end="\n", file=None, flush=False, _semantic=None):
    return _semantic.static_print(values)


@builtin
def device_print(prefix, *args, hex=False, _semantic=None):
    return _semantic.device_print(prefix, args, hex)


@builtin
def device_assert(cond, msg="", mask=None, _semantic=None):
    return _semantic.device_assert(cond, msg, mask)


@builtin
def multiple_of(input, values, _semantic=None):
    return _semantic.hint(input, "multiple_of", values)


@builtin
def assume(cond, _semantic=None):
    """Let the compiler assume `cond` holds: cuda passes it to LLVM, the sim checks it, other
    targets may use it as a hint."""
    return _semantic.assume(cond)


@builtin
def max_contiguous(input, values, _semantic=None):
    return _semantic.hint(input, "max_contiguous", values)


@builtin
def max_constancy(input, values, _semantic=None):
    return _semantic.hint(input, "max_constancy", values)


@builtin
def debug_barrier(_semantic=None):
    return None


class static_range:
    """A `for` range unrolled at compile time; bounds must be constexpr."""

    def __init__(self, arg1, arg2=None, step=None):
        self.args = (arg1, arg2, step)


class range:  # noqa: A001 - same name as triton.language.range
    """A `for` range lowered to a loop; `num_stages` and friends are hints."""

    def __init__(self, arg1, arg2=None, step=None, num_stages=None, loop_unroll_factor=None,
                 disallow_acc_multi_buffer=False, flatten=False, warp_specialize=False, disable_licm=False):
        self.args = (arg1, arg2, step)
