"""Shape and dtype errors: each is a CompilationError at the line of the offending expression."""

import xblock
import xblock.language as xl

from ._helpers import compile_error

SIG = {"x_ptr": "*fp32", "n": "i32"}


@xblock.jit
def k_no_broadcast(x_ptr, n):
    a = xl.arange(0, 16)
    b = xl.arange(0, 8)
    c = a + b  # ERR
    xl.store(x_ptr + a, c)


def test_shapes_do_not_broadcast():
    compile_error(k_no_broadcast, SIG, match=r"\[16\] and \[8\] do not broadcast")


@xblock.jit
def k_no_broadcast_2d(x_ptr, n):
    a = xl.zeros((4, 8), xl.float32)
    b = xl.zeros((8, 4), xl.float32)
    xl.store(x_ptr + xl.arange(0, 4)[:, None] * 8 + xl.arange(0, 8)[None, :], a * b)  # ERR


def test_2d_shapes_do_not_broadcast():
    compile_error(k_no_broadcast_2d, SIG, match="do not broadcast")


@xblock.jit
def k_mask_shape(x_ptr, n):
    offs = xl.arange(0, 16)
    x = xl.load(x_ptr + offs, mask=xl.arange(0, 8) < n)  # ERR
    xl.store(x_ptr + offs, x)


def test_mask_shape_does_not_broadcast():
    compile_error(k_mask_shape, SIG, match="do not broadcast")


@xblock.jit
def k_bitwise_float(x_ptr, n):
    x = xl.load(x_ptr + xl.arange(0, 16))
    y = x & 1  # ERR
    xl.store(x_ptr + xl.arange(0, 16), y)


def test_bitwise_and_on_float():
    compile_error(k_bitwise_float, SIG, match="integer operands")


@xblock.jit
def k_shift_float(x_ptr, n):
    x = xl.load(x_ptr + xl.arange(0, 16))
    xl.store(x_ptr + xl.arange(0, 16), x << 2)  # ERR


def test_shift_on_float():
    compile_error(k_shift_float, SIG, match="integer operands")


@xblock.jit
def k_invert_float(x_ptr, n):
    x = xl.load(x_ptr + xl.arange(0, 16))
    xl.store(x_ptr + xl.arange(0, 16), ~x)  # ERR


def test_invert_on_float():
    compile_error(k_invert_float, SIG, match="integer operand")


@xblock.jit
def k_floordiv_float(x_ptr, n):
    x = xl.load(x_ptr + xl.arange(0, 16))
    y = x // 2.0  # ERR
    xl.store(x_ptr + xl.arange(0, 16), y)


def test_floordiv_on_float():
    compile_error(k_floordiv_float, SIG, match="//")


@xblock.jit
def k_ptr_plus_float(x_ptr, n):
    p = x_ptr + 1.5  # ERR
    xl.store(p, 1.0)


def test_pointer_plus_float():
    compile_error(k_ptr_plus_float, SIG, match="integer")


@xblock.jit
def k_ptr_plus_ptr(x_ptr, n):
    p = x_ptr + x_ptr  # ERR
    xl.store(p, 1.0)


def test_pointer_plus_pointer():
    compile_error(k_ptr_plus_ptr, SIG)


@xblock.jit
def k_unsigned_negative(x_ptr, n):
    offs = xl.arange(0, 16)
    u = xl.load(x_ptr + offs).to(xl.uint32)
    v = u + -1  # ERR
    xl.store(x_ptr + offs, v.to(xl.float32))


def test_unsigned_with_negative_scalar():
    compile_error(k_unsigned_negative, SIG, match="negative scalar")


@xblock.jit
def k_div_signedness(x_ptr, n):
    offs = xl.arange(0, 16)
    a = offs.to(xl.int32)
    b = offs.to(xl.uint32) + 1
    q = a / b  # ERR
    xl.store(x_ptr + offs, q)


def test_truediv_mixing_signedness():
    compile_error(k_div_signedness, SIG, match="signedness")


@xblock.jit
def k_mod_signedness(x_ptr, n):
    offs = xl.arange(0, 16)
    r = offs % (offs.to(xl.uint32) + 1)  # ERR
    xl.store(x_ptr + offs, r.to(xl.float32))


def test_mod_mixing_signedness():
    compile_error(k_mod_signedness, SIG, match="signedness")


@xblock.jit
def k_scalar_out_of_range(x_ptr, n):
    offs = xl.arange(0, 16)
    b = offs.to(xl.int8)
    c = b + 300  # ERR
    xl.store(x_ptr + offs, c.to(xl.float32))


def test_scalar_out_of_range_for_int8():
    compile_error(k_scalar_out_of_range, SIG, match="out of range")


@xblock.jit
def k_store_block_scalar_ptr(x_ptr, n):
    x = xl.zeros((16,), xl.float32)
    xl.store(x_ptr, x)  # ERR


def test_store_block_through_scalar_pointer():
    compile_error(k_store_block_scalar_ptr, SIG, match="scalar pointer")


@xblock.jit
def k_load_non_pointer(x_ptr, n):
    x = xl.load(n + xl.arange(0, 16))  # ERR
    xl.store(x_ptr, xl.sum(x))


def test_load_through_non_pointer():
    compile_error(k_load_non_pointer, SIG, match="pointer")


@xblock.jit
def k_other_without_mask(x_ptr, n):
    offs = xl.arange(0, 16)
    x = xl.load(x_ptr + offs, other=0.0)  # ERR
    xl.store(x_ptr + offs, x)


def test_other_without_mask():
    compile_error(k_other_without_mask, SIG, match="mask")


@xblock.jit
def k_dot_shapes(x_ptr, n):
    a = xl.zeros((16, 32), xl.float32)
    b = xl.zeros((16, 16), xl.float32)
    c = xl.dot(a, b)  # ERR
    xl.store(x_ptr + xl.arange(0, 16)[:, None] * 16 + xl.arange(0, 16)[None, :], c)


def test_dot_shape_mismatch():
    compile_error(k_dot_shapes, SIG, match="do not agree on K")


@xblock.jit
def k_dot_rank(x_ptr, n):
    a = xl.zeros((16,), xl.float32)
    c = xl.dot(a, a)  # ERR
    xl.store(x_ptr, xl.sum(c))


def test_dot_of_1d_blocks():
    compile_error(k_dot_rank, SIG, match="2-D")


@xblock.jit
def k_dot_acc_shape(x_ptr, n):
    a = xl.zeros((16, 16), xl.float32)
    acc = xl.zeros((16, 32), xl.float32)
    c = xl.dot(a, a, acc)  # ERR
    xl.store(x_ptr, xl.sum(c))


def test_dot_accumulator_shape():
    compile_error(k_dot_acc_shape, SIG, match="accumulator")


@xblock.jit
def k_reshape(x_ptr, n):
    x = xl.load(x_ptr + xl.arange(0, 16))
    y = xl.reshape(x, (4, 5))  # ERR
    xl.store(x_ptr, xl.sum(y))


def test_reshape_size_mismatch():
    compile_error(k_reshape, SIG, match="reshape")


@xblock.jit
def k_permute(x_ptr, n):
    x = xl.zeros((4, 8), xl.float32)
    y = xl.permute(x, (0, 0))  # ERR
    xl.store(x_ptr, xl.sum(y))


def test_bad_permutation():
    compile_error(k_permute, SIG, match="permutation")


@xblock.jit
def k_permute_rank(x_ptr, n):
    x = xl.zeros((4, 8), xl.float32)
    y = xl.permute(x, (2, 0, 1))  # ERR
    xl.store(x_ptr, xl.sum(y))


def test_permutation_of_wrong_rank():
    compile_error(k_permute_rank, SIG, match="permutation")


@xblock.jit
def k_trans_3d(x_ptr, n):
    x = xl.zeros((2, 4, 8), xl.float32)
    y = xl.trans(x)  # ERR
    xl.store(x_ptr, xl.sum(y))


def test_trans_without_dims_of_3d_block():
    compile_error(k_trans_3d, SIG, match="2-D")


@xblock.jit
def k_expand_axis(x_ptr, n):
    x = xl.zeros((4,), xl.float32)
    y = xl.expand_dims(x, 3)  # ERR
    xl.store(x_ptr, xl.sum(y))


def test_expand_dims_axis_out_of_range():
    compile_error(k_expand_axis, SIG, match="out of range")


@xblock.jit
def k_sum_axis(x_ptr, n):
    x = xl.zeros((4, 8), xl.float32)
    xl.store(x_ptr, xl.sum(xl.sum(x, axis=2)))  # ERR


def test_reduction_axis_out_of_range():
    compile_error(k_sum_axis, SIG, match="out of range")


@xblock.jit
def k_xor_sum_float(x_ptr, n):
    x = xl.zeros((16,), xl.float32)
    xl.store(x_ptr, xl.xor_sum(x, 0))  # ERR


def test_xor_sum_of_floats():
    compile_error(k_xor_sum_float, SIG, match="integer")


@xblock.jit
def k_atomic_and_float(x_ptr, n):
    xl.atomic_and(x_ptr + xl.arange(0, 16), 1.0)  # ERR


def test_atomic_and_on_float_pointer():
    compile_error(k_atomic_and_float, SIG, match="integer")


@xblock.jit
def k_cast_to_non_dtype(x_ptr, n):
    x = xl.load(x_ptr + xl.arange(0, 16))
    xl.store(x_ptr + xl.arange(0, 16), x.to(3))  # ERR


def test_cast_to_a_non_dtype():
    compile_error(k_cast_to_non_dtype, SIG, match="dtype")


@xblock.jit
def k_bitcast_width(x_ptr, n):
    x = xl.load(x_ptr + xl.arange(0, 16))
    y = x.to(xl.int16, bitcast=True)  # ERR
    xl.store(x_ptr + xl.arange(0, 16), y.to(xl.float32))


def test_bitcast_between_widths():
    compile_error(k_bitcast_width, SIG, match="bit widths")


@xblock.jit
def k_cast_float_to_ptr(x_ptr, n):
    x = xl.load(x_ptr)
    p = x.to(xl.pointer_type(xl.float32))  # ERR
    xl.store(p, 1.0)


def test_cast_float_to_pointer():
    compile_error(k_cast_float_to_ptr, SIG, match="cannot cast")


@xblock.jit
def k_loop_carried(x_ptr, n):
    acc = xl.zeros((16,), xl.float32)
    for i in range(n):  # ERR
        acc = xl.zeros((8,), xl.float32)
    xl.store(x_ptr + xl.arange(0, 8), acc)


def test_loop_carried_shape_change():
    compile_error(k_loop_carried, SIG, match="loop-carried variable 'acc'")


@xblock.jit
def k_loop_carried_dtype(x_ptr, n):
    acc = xl.zeros((16,), xl.int32)
    for i in range(n):  # ERR
        acc = acc + 0.5
    xl.store(x_ptr + xl.arange(0, 16), acc)


def test_loop_carried_dtype_change():
    compile_error(k_loop_carried_dtype, SIG, match="loop-carried variable 'acc'")


@xblock.jit
def k_while_carried(x_ptr, n):
    i = 0
    acc = xl.zeros((16,), xl.int32)
    while i < n:  # ERR
        acc = acc.to(xl.float32)
        i += 1
    xl.store(x_ptr + xl.arange(0, 16), acc)


def test_while_carried_dtype_change():
    compile_error(k_while_carried, SIG, match="loop-carried variable 'acc'")


@xblock.jit
def k_if_mismatch(x_ptr, n):
    if n > 0:  # ERR
        v = xl.zeros((16,), xl.float32)
    else:
        v = xl.zeros((16,), xl.int32)
    xl.store(x_ptr + xl.arange(0, 16), v)


def test_if_else_type_mismatch():
    compile_error(k_if_mismatch, SIG, match="variable 'v'")


@xblock.jit
def k_if_shape_mismatch(x_ptr, n):
    v = xl.zeros((16,), xl.float32)
    if n > 0:  # ERR
        v = xl.zeros((8,), xl.float32)
    xl.store(x_ptr + xl.arange(0, 16), v)


def test_if_without_else_shape_change():
    compile_error(k_if_shape_mismatch, SIG, match="variable 'v'")


@xblock.jit
def k_where_ptr_mix(x_ptr, n):
    offs = xl.arange(0, 16)
    p = xl.where(offs < n, x_ptr + offs, 1.0)  # ERR
    xl.store(p, 1.0)


def test_where_mixing_pointer_and_float():
    compile_error(k_where_ptr_mix, SIG)


@xblock.jit
def k_fp64_scale_in_loop(x_ptr, scale, n):
    offs = xl.arange(0, 16)
    acc = xl.zeros((16,), xl.float32)
    for i in range(n):  # ERR
        acc = acc + xl.load(x_ptr + i * 16 + offs) * scale


def test_an_fp64_scalar_reaching_a_loop_carried_block_says_to_cast_it():
    compile_error(k_fp64_scale_in_loop, {"x_ptr": "*fp32", "scale": "fp64", "n": "i32"},
                  match=r"has type .*float32.* before the loop but .*float64.*fp64 scalar argument.*to\(tl.float32\)")
