"""Kernels of test_type_rules.py: each refused line carries `# ERR`; `accepted` and `pointer_condition`
hold what Triton accepts (and what xblock deliberately accepts beyond it), which must keep compiling.

Written with `triton.language`, as users bring them (`xl_exp_of_int` shows xl.* follows the same rules).
"""

import triton
import triton.language as tl
from triton.language.extra import libdevice

import xblock
import xblock.language as xl


# --------------------------------------------------------------------------- math functions take floats
@triton.jit
def exp_of_int(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, tl.exp(x))  # ERR


@xblock.jit
def xl_exp_of_int(x_ptr, y_ptr, n):
    offs = xl.arange(0, 16)
    x = xl.load(x_ptr + offs)
    xl.store(y_ptr + offs, xl.exp(x))  # ERR


@triton.jit
def sqrt_method_of_int(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x.sqrt())  # ERR


@triton.jit
def floor_of_int(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    tl.store(y_ptr + offs, tl.math.floor(tl.load(x_ptr + offs)))  # ERR


@triton.jit
def log_of_int_scalar(x_ptr, y_ptr, n):
    tl.store(y_ptr, tl.log(n))  # ERR


@triton.jit
def sigmoid_of_int(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    tl.store(y_ptr + offs, tl.sigmoid(tl.load(x_ptr + offs)))  # ERR


@triton.jit
def softmax_of_int(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    tl.store(y_ptr + offs, tl.softmax(tl.load(x_ptr + offs)))  # ERR


@triton.jit
def libdevice_of_int(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    tl.store(y_ptr + offs, libdevice.tanh(tl.load(x_ptr + offs)))  # ERR


@triton.jit
def pow_of_int_base(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    tl.store(y_ptr + offs, libdevice.pow(tl.load(x_ptr + offs), 2.0))  # ERR


@triton.jit
def div_rn_of_ints(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, tl.math.div_rn(x, x + 1))  # ERR


@triton.jit
def sqrt_rn_of_int(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    tl.store(y_ptr + offs, tl.sqrt_rn(tl.load(x_ptr + offs)))  # ERR


# --------------------------------------------------------------------------- fdiv, umulhi
@triton.jit
def fdiv_by_python_int(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    tl.store(y_ptr + offs, tl.fdiv(tl.load(x_ptr + offs), 2))  # ERR


@triton.jit
def fdiv_of_ints(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, tl.fdiv(x, x))  # ERR


@triton.jit
def umulhi_of_int16(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs).to(tl.int16)
    tl.store(y_ptr + offs, tl.umulhi(x, x))  # ERR


# --------------------------------------------------------------------------- atomics
@triton.jit
def atomic_add_int16(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    tl.atomic_add(x_ptr.to(tl.pointer_type(tl.int16)) + offs, 1)  # ERR


@triton.jit
def atomic_max_fp16(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    tl.atomic_max(x_ptr.to(tl.pointer_type(tl.float16)) + offs, 1.0)  # ERR


@triton.jit
def atomic_xchg_bf16(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    tl.atomic_xchg(x_ptr.to(tl.pointer_type(tl.bfloat16)) + offs, 1.0)  # ERR


@triton.jit
def atomic_cas_uint8(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    tl.atomic_cas(x_ptr.to(tl.pointer_type(tl.uint8)) + offs, 0, 1)  # ERR


@triton.jit
def atomic_int_mask(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    tl.atomic_add(x_ptr + offs, 1.0, mask=offs)  # ERR


# --------------------------------------------------------------------------- loads
@triton.jit
def load_int_mask(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs, mask=offs % 2)  # ERR
    tl.store(y_ptr + offs, x)


@triton.jit
def load_scalar_pointer_block_mask(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr, mask=offs < n)  # ERR
    tl.store(y_ptr + offs, x)


# --------------------------------------------------------------------------- `not`, `and`, `or` take bools
@triton.jit
def not_of_int(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, not x)  # ERR


@triton.jit
def and_of_ints(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x and offs)  # ERR


@triton.jit
def or_of_int_scalars(x_ptr, y_ptr, n):
    if n or tl.program_id(0):  # ERR
        tl.store(y_ptr, 1)


# --------------------------------------------------------------------------- no arithmetic on pointers
@triton.jit
def sum_of_pointers(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    tl.store(y_ptr, tl.sum(x_ptr + offs, 0).to(tl.int64))  # ERR


@triton.jit
def argmax_of_pointers(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    tl.store(y_ptr, tl.argmax(x_ptr + offs, 0))  # ERR


@triton.jit
def cumsum_of_pointers(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    tl.store(y_ptr + offs, tl.load(tl.cumsum(x_ptr + offs, 0)))  # ERR


@triton.jit
def abs_of_pointers(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    tl.store(y_ptr + offs, tl.load(tl.abs(x_ptr + offs)))  # ERR


@triton.jit
def negated_pointer(x_ptr, y_ptr, n):
    tl.store(y_ptr, tl.load(-x_ptr))  # ERR


# --------------------------------------------------------------------------- constants
@triton.jit
def full_int_with_float(x_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    tl.store(y_ptr + offs, tl.full((16,), 1.5, tl.int32))  # ERR


# --------------------------------------------------------------------------- what stays accepted
@triton.jit
def accepted(x_ptr, h_ptr, i_ptr, y_ptr, n):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    h = tl.load(h_ptr + offs)
    i = tl.load(i_ptr + offs)
    tl.static_assert(tl.exp(h).dtype == tl.float16)  # fp16 math computes in fp32 (xblock; Triton refuses)
    tl.static_assert(tl.fdiv(h, h).dtype == tl.float16)  # fdiv keeps the type (as Triton)
    tl.static_assert(libdevice.pow(x, i).dtype == tl.float32)  # pow's exponent may be an integer (powi)
    tl.static_assert(tl.umulhi(i, 3).dtype == tl.int32)
    tl.static_assert(tl.abs(i).dtype == tl.int32)
    both = (x > 0) and (i > 0)  # bools combine
    tl.static_assert(both.dtype == tl.int1)
    tl.static_assert((True and i).dtype == tl.int32)  # a Python value that decides nothing drops out
    tl.static_assert((not (x > 0)).dtype == tl.int1)
    tl.atomic_add(h_ptr + offs, h)  # fp16 atomic_add is allowed
    tl.atomic_cas(h_ptr + offs, h, h)  # a 16-bit atomic_cas is allowed
    tl.atomic_max(i_ptr + offs, i, mask=i > 0)
    tl.store(y_ptr + offs, tl.where(x_ptr + offs, tl.exp(x) + tl.sigmoid(x), 0.0))  # a pointer condition


@triton.jit
def pointer_condition(x_ptr, y_ptr):
    offs = tl.arange(0, 8)
    tl.store(y_ptr + offs, tl.where(x_ptr + offs, 1.0, 0.0))  # as Triton: a pointer condition is its address != 0
