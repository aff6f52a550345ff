"""Kernels of the bad-input table (test_bad_input_table.py): each wrong line carries `# ERR`.

Written with `triton.language`, as users bring them; each is valid Python but a user mistake.
"""

import numpy as np
import triton
import triton.language as tl

GLOBAL_ARRAY = np.zeros(4, np.float32)  # not a constexpr: a kernel must not read it


@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def unmasked_copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))  # ERR


@triton.jit
def wrapping_offsets(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * 1073741824 + tl.arange(0, BLOCK)  # int32: wraps for pid >= 2
    tl.store(y_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + offs))  # ERR


@triton.jit
def row_sum(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr, tl.sum(x, 0))
    tl.store(y_ptr + 1, tl.max(tl.load(x_ptr + offs, mask=offs < n, other=-float("inf")), 0))


@triton.jit
def arange_not_pow2(x_ptr):
    offs = tl.arange(0, 100)  # ERR
    tl.store(x_ptr + offs, offs)


@triton.jit
def arange_runtime(x_ptr, n):
    offs = tl.arange(0, n)  # ERR
    tl.store(x_ptr + offs, offs)


@triton.jit
def zeros_runtime(x_ptr, n):
    z = tl.zeros([n], tl.float32)  # ERR
    tl.store(x_ptr, tl.sum(z, 0))


@triton.jit
def huge_block(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)  # ERR
    tl.store(x_ptr + offs, offs)


@triton.jit
def no_broadcast(x_ptr, BLOCK: tl.constexpr):
    a = tl.arange(0, BLOCK)
    b = tl.arange(0, 2 * BLOCK)
    tl.store(x_ptr + a, a + b)  # ERR


@triton.jit
def float_offset(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK).to(tl.float32)
    tl.store(x_ptr + offs, 1.0)  # ERR


@triton.jit
def dot_1d(x_ptr, BLOCK: tl.constexpr):
    a = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(x_ptr, tl.dot(a, a))  # ERR


@triton.jit
def bad_axis(x_ptr, BLOCK: tl.constexpr):
    a = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(x_ptr, tl.sum(a, 1))  # ERR


@triton.jit
def block_into_scalar_ptr(x_ptr, BLOCK: tl.constexpr):
    a = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(x_ptr, a)  # ERR


@triton.jit
def if_on_block(x_ptr, BLOCK: tl.constexpr):
    a = tl.load(x_ptr + tl.arange(0, BLOCK))
    if a > 0:  # ERR
        tl.store(x_ptr, 1.0)


@triton.jit
def carried_type_change(x_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(n):  # ERR
        acc = tl.zeros([2 * BLOCK], tl.float32)
    tl.store(x_ptr + tl.arange(0, BLOCK), acc)


@triton.jit
def float_range(x_ptr):
    for i in range(0, 2.5):  # ERR
        tl.store(x_ptr, 1.0)


@triton.jit
def bitwise_float(x_ptr, BLOCK: tl.constexpr):
    a = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(x_ptr + tl.arange(0, BLOCK), a & a)  # ERR


@triton.jit
def shift_float(x_ptr, BLOCK: tl.constexpr):
    a = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(x_ptr + tl.arange(0, BLOCK), a << 1)  # ERR


@triton.jit
def float_mask(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs.to(tl.float32))  # ERR


@triton.jit
def other_without_mask(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, other=0.0))  # ERR


@triton.jit
def unknown_cast(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, offs.to(tl.float128))  # ERR


@triton.jit
def failing_static_assert(x_ptr, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK >= 64, "BLOCK must be at least 64")  # ERR
    tl.store(x_ptr, 1.0)


@triton.jit
def with_statement(x_ptr):
    with open("f"):  # ERR
        tl.store(x_ptr, 1.0)


@triton.jit
def lambda_in_kernel(x_ptr):
    f = lambda v: v + 1  # noqa: E731  # ERR
    tl.store(x_ptr, f(1.0))


@triton.jit
def try_except(x_ptr):
    try:  # ERR
        tl.store(x_ptr, 1.0)
    except ValueError:
        pass


@triton.jit
def list_comprehension(x_ptr):
    vals = [i for i in range(4)]  # ERR
    tl.store(x_ptr, vals[0])


@triton.jit
def recursive(x_ptr, n):
    recursive(x_ptr, n - 1)  # ERR


@triton.jit
def numpy_on_blocks(x_ptr, BLOCK: tl.constexpr):
    a = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(x_ptr, np.sum(a))  # ERR


@triton.jit
def reads_global_array(x_ptr):
    tl.store(x_ptr, GLOBAL_ARRAY[0])  # ERR


@triton.jit
def subscript_assignment(x_ptr, BLOCK: tl.constexpr):
    a = tl.load(x_ptr + tl.arange(0, BLOCK))
    a[0] = 1.0  # ERR
    tl.store(x_ptr, a)


@triton.jit
def program_id_3(x_ptr):
    tl.store(x_ptr, tl.program_id(3))  # ERR


@triton.jit
def undefined_name(x_ptr):
    tl.store(x_ptr, not_defined_anywhere)  # noqa: F821  # ERR


@triton.jit
def missing_attribute(x_ptr, BLOCK: tl.constexpr):
    a = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(x_ptr, a.no_such_method())  # ERR


@triton.jit
def returns_value(x_ptr):
    return tl.load(x_ptr)  # ERR


@triton.jit
def while_on_python_value(x_ptr):
    i = 0
    while i < 3:  # ERR
        i += 1
    tl.store(x_ptr, 1.0)


@triton.jit
def mod_on_pointer(x_ptr):
    tl.store(x_ptr % 4, 1.0)  # ERR


@triton.jit
def exp_of_pointer(x_ptr):
    tl.store(x_ptr, tl.exp(x_ptr))  # ERR


@triton.jit
def join_dtypes(x_ptr, BLOCK: tl.constexpr):
    a = tl.arange(0, BLOCK)
    tl.store(x_ptr + tl.arange(0, 2 * BLOCK), tl.reshape(tl.join(a, a.to(tl.float32)), [2 * BLOCK]))  # ERR


@triton.jit
def split_not_two(x_ptr, BLOCK: tl.constexpr):
    a, b = tl.split(tl.arange(0, BLOCK))  # ERR
    tl.store(x_ptr, a)


@triton.jit
def sort_not_last(x_ptr, BLOCK: tl.constexpr):
    a = tl.load(x_ptr + tl.arange(0, BLOCK)[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :])
    tl.store(x_ptr + tl.arange(0, BLOCK)[:, None], tl.sort(a, dim=0))  # ERR


@triton.jit
def gather_rank(x_ptr, BLOCK: tl.constexpr):
    a = tl.load(x_ptr + tl.arange(0, BLOCK))
    idx = tl.arange(0, BLOCK)[:, None]
    tl.store(x_ptr + tl.arange(0, BLOCK), tl.gather(a, idx, 0))  # ERR


@triton.jit
def histogram_float(x_ptr, BLOCK: tl.constexpr):
    a = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(x_ptr + tl.arange(0, 8), tl.histogram(a, 8))  # ERR


@triton.jit
def cat_without_reorder(x_ptr, BLOCK: tl.constexpr):
    a = tl.arange(0, BLOCK)
    tl.store(x_ptr + tl.arange(0, 2 * BLOCK), tl.cat(a, a))  # ERR


@triton.jit
def block_ptr_with_mask(x_ptr, n, BLOCK: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
    tl.store(x_ptr, tl.sum(tl.load(p, mask=n > 0), 0))  # ERR


@triton.jit
def block_ptr_bad_check(x_ptr, n, BLOCK: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
    tl.store(x_ptr, tl.sum(tl.load(p, boundary_check=(1,)), 0))  # ERR


@triton.jit
def atomic_on_float_and(x_ptr):
    tl.atomic_and(x_ptr, 1.0)  # ERR


@triton.jit
def constexpr_block_param(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


@triton.jit
def in_place_add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def _selu_scalar(x, alpha):
    if x > 0:
        return x
    return alpha * (tl.exp(x) - 1)


@triton.jit
def mapped_selu(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(x_ptr + tl.arange(0, BLOCK), tl.map_elementwise(_selu_scalar, x, 1.5))  # ERR


@triton.jit
def inline_ptx(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)  # ERR
    tl.store(x_ptr + tl.arange(0, BLOCK), y)
