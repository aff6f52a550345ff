"""Misused block pointers and tensor descriptors: the errors Triton gives, as CompilationErrors at the
offending line (LaunchErrors at the `def` line for a bad host TensorDescriptor)."""

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.runtime.args import TensorDescriptor

from ._helpers import assert_clean, compile_error, def_line, source_file

SIG = {"x_ptr": "*fp32", "n": "i32"}
ISIG = {"x_ptr": "*i32", "n": "i32"}


@xblock.jit
def k_mask_with_block_ptr(x_ptr, n):
    bp = xl.make_block_ptr(x_ptr, (n,), (1,), (0,), (16,), (0,))
    x = xl.load(bp, mask=xl.arange(0, 16) < n)  # ERR
    xl.store(x_ptr + xl.arange(0, 16), x)


def test_mask_with_a_block_pointer():
    compile_error(k_mask_with_block_ptr, SIG, match="`mask` and `other` cannot be given when loading through a block")


@xblock.jit
def k_store_mask_with_block_ptr(x_ptr, n):
    bp = xl.make_block_ptr(x_ptr, (n,), (1,), (0,), (16,), (0,))
    xl.store(bp, xl.zeros((16,), xl.float32), mask=xl.arange(0, 16) < n)  # ERR


def test_store_mask_with_a_block_pointer():
    compile_error(k_store_mask_with_block_ptr, SIG, match="`mask` cannot be given when storing through a block")


@xblock.jit
def k_check_out_of_range(x_ptr, n):
    bp = xl.make_block_ptr(x_ptr, (n, n), (n, 1), (0, 0), (16, 16), (1, 0))
    x = xl.load(bp, boundary_check=(0, 2))  # ERR
    xl.store(bp, x)


def test_boundary_check_dimension_out_of_range():
    compile_error(k_check_out_of_range, SIG, match="boundary_check dimension 2 is out of range for a block of rank 2")


@xblock.jit
def k_check_duplicate(x_ptr, n):
    bp = xl.make_block_ptr(x_ptr, (n, n), (n, 1), (0, 0), (16, 16), (1, 0))
    xl.store(bp, xl.zeros((16, 16), xl.float32), boundary_check=(1, 1))  # ERR


def test_boundary_check_duplicate_dimension():
    compile_error(k_check_duplicate, SIG, match="duplicate dimension in boundary_check")


@xblock.jit
def k_check_on_plain_pointers(x_ptr, n):
    offs = xl.arange(0, 16)
    x = xl.load(x_ptr + offs, boundary_check=(0,))  # ERR
    xl.store(x_ptr + offs, x)


def test_boundary_check_on_plain_pointers():
    compile_error(k_check_on_plain_pointers, SIG, match="can only be given when loading through a block pointer")


@xblock.jit
def k_store_check_on_plain_pointers(x_ptr, n):
    offs = xl.arange(0, 16)
    xl.store(x_ptr + offs, offs.to(xl.float32), boundary_check=(0,))  # ERR


def test_store_boundary_check_on_plain_pointers():
    compile_error(k_store_check_on_plain_pointers, SIG, match="can only be given when storing through a block")


@xblock.jit
def k_padding_on_plain_pointers(x_ptr, n):
    offs = xl.arange(0, 16)
    x = xl.load(x_ptr + offs, mask=offs < n, padding_option="zero")  # ERR
    xl.store(x_ptr + offs, x, mask=offs < n)


def test_padding_on_plain_pointers():
    compile_error(k_padding_on_plain_pointers, SIG, match="can only be given when loading through a block pointer")


@xblock.jit
def k_nan_padding_of_ints(x_ptr, n):
    bp = xl.make_block_ptr(x_ptr, (n,), (1,), (0,), (16,), (0,))
    x = xl.load(bp, boundary_check=(0,), padding_option="nan")  # ERR
    xl.store(bp, x)


def test_nan_padding_of_an_integer_block_pointer():
    compile_error(k_nan_padding_of_ints, ISIG, match="padding option \"nan\" is not supported for integer")


@xblock.jit
def k_bad_padding(x_ptr, n):
    bp = xl.make_block_ptr(x_ptr, (n,), (1,), (0,), (16,), (0,))
    x = xl.load(bp, boundary_check=(0,), padding_option="inf")  # ERR
    xl.store(bp, x)


def test_unknown_padding_option():
    compile_error(k_bad_padding, SIG, match="padding option 'inf' is not supported")


@xblock.jit
def k_advance_rank(x_ptr, n):
    bp = xl.make_block_ptr(x_ptr, (n, n), (n, 1), (0, 0), (16, 16), (1, 0))
    bp = xl.advance(bp, (16,))  # ERR
    xl.store(bp, xl.zeros((16, 16), xl.float32))


def test_advance_with_the_wrong_number_of_offsets():
    compile_error(k_advance_rank, SIG, match="expected 2 offsets .one per dimension., got 1")


@xblock.jit
def k_lengths_differ(x_ptr, n):
    bp = xl.make_block_ptr(x_ptr, (n, n), (n, 1), (0,), (16, 16), (1, 0))  # ERR
    xl.store(bp, xl.zeros((16, 16), xl.float32))


def test_make_block_ptr_lengths_differ():
    compile_error(k_lengths_differ, SIG,
                  match="must have the same length .block_shape 2, shape 2, strides 2, offsets 1")


@xblock.jit
def k_bad_order(x_ptr, n):
    bp = xl.make_block_ptr(x_ptr, (n, n), (n, 1), (0, 0), (16, 16), (1, 1))  # ERR
    xl.store(bp, xl.zeros((16, 16), xl.float32))


def test_order_is_not_a_permutation():
    compile_error(k_bad_order, SIG, match="order must be a permutation")


@xblock.jit
def k_block_not_pow2(x_ptr, n):
    bp = xl.make_block_ptr(x_ptr, (n,), (1,), (0,), (12,), (0,))  # ERR
    xl.store(bp, xl.zeros((12,), xl.float32))


def test_block_shape_not_a_power_of_two():
    compile_error(k_block_not_pow2, SIG, match="block_shape element 0 must be a power of 2, got 12")


@xblock.jit
def k_int64_offsets(x_ptr, n):
    off = n.to(xl.int64)
    bp = xl.make_block_ptr(x_ptr, (n,), (1,), (off,), (16,), (0,))  # ERR
    xl.store(bp, xl.zeros((16,), xl.float32))


def test_64_bit_offsets():
    compile_error(k_int64_offsets, SIG, match="offsets must be 32-bit")


@xblock.jit
def k_block_base(x_ptr, n):
    bp = xl.make_block_ptr(x_ptr + xl.arange(0, 16), (n,), (1,), (0,), (16,), (0,))  # ERR
    xl.store(bp, xl.zeros((16,), xl.float32))


def test_base_is_a_block_of_pointers():
    compile_error(k_block_base, SIG, match="`base` must be a scalar pointer")


@xblock.jit
def k_store_dtype(x_ptr, n):
    bp = xl.make_block_ptr(x_ptr, (n,), (1,), (0,), (16,), (0,))
    xl.store(bp, xl.zeros((16,), xl.float16))  # ERR


def test_store_element_type_must_match():
    compile_error(k_store_dtype, SIG, match="element type float16 but the block pointer's is float32")


@xblock.jit
def k_store_shape(x_ptr, n):
    bp = xl.make_block_ptr(x_ptr, (n,), (1,), (0,), (16,), (0,))
    xl.store(bp, xl.zeros((8,), xl.float32), boundary_check=(0,))  # ERR


def test_store_shape_must_match():
    compile_error(k_store_shape, SIG, match=r"shape \[8\] but the block pointer's block shape is \[16\]")


@xblock.jit
def k_loop_changes_block_shape(x_ptr, n):
    bp = xl.make_block_ptr(x_ptr, (n,), (1,), (0,), (16,), (0,))
    for i in range(3):  # ERR
        bp = xl.make_block_ptr(x_ptr, (n,), (1,), (i,), (32,), (0,))
    xl.store(bp, xl.zeros((32,), xl.float32))


def test_loop_carried_block_pointer_changes_block_shape():
    compile_error(k_loop_changes_block_shape, SIG, match="loop-carried variable 'bp' is block_pointer<float32.16.> "
                  "before the loop but block_pointer<float32.32.> at the end of the body")


@xblock.jit
def k_if_branches_differ(x_ptr, n):
    if n > 4:  # ERR
        bp = xl.make_block_ptr(x_ptr, (n,), (1,), (0,), (16,), (0,))
    else:
        bp = xl.make_block_ptr(x_ptr, (n,), (1,), (0,), (8,), (0,))
    xl.store(bp, 0.0)


def test_if_branches_give_different_block_shapes():
    compile_error(k_if_branches_differ, SIG, match="variable 'bp' is block_pointer<float32.16.> after the `if` branch "
                  "but block_pointer<float32.8.> after `else`")


@xblock.jit
def k_advance_plain(x_ptr, n):
    p = xl.advance(x_ptr, (16,))  # ERR
    xl.store(p, 0.0)


def test_advance_of_a_plain_pointer():
    compile_error(k_advance_plain, SIG, match="advance.. needs a block pointer")


# ----------------------------------------------------------------------------- descriptors
@xblock.jit
def k_desc_last_stride(x_ptr, n):
    d = xl.make_tensor_descriptor(x_ptr, [n, n], [1, n], [16, 16])  # ERR
    d.store([0, 0], xl.zeros((16, 16), xl.float32))


def test_descriptor_last_stride_must_be_one():
    compile_error(k_desc_last_stride, SIG, match="last stride must be the constant 1")


@xblock.jit
def k_desc_narrow(x_ptr, n):
    d = xl.make_tensor_descriptor(x_ptr, [n, n], [n, 1], [16, 2])  # ERR
    d.store([0, 0], xl.zeros((16, 2), xl.float32))


def test_descriptor_block_narrower_than_16_bytes():
    compile_error(k_desc_narrow, SIG, match="at least 16 bytes in the last dimension, got 2 . 4 = 8 bytes")


@xblock.jit
def k_desc_nan_ints(x_ptr, n):
    d = xl.make_tensor_descriptor(x_ptr, [n], [1], [16], padding_option="nan")  # ERR
    d.store([0], d.load([0]))


def test_descriptor_nan_padding_of_ints():
    compile_error(k_desc_nan_ints, ISIG, match="padding option \"nan\" is not supported for integer")


@xblock.jit
def k_desc_offsets(x_ptr, n):
    d = xl.make_tensor_descriptor(x_ptr, [n, n], [n, 1], [16, 16])
    x = d.load([0])  # ERR
    xl.store(x_ptr + xl.arange(0, 16), x)


def test_descriptor_wrong_number_of_offsets():
    compile_error(k_desc_offsets, SIG, match="expected 2 offsets .one per dimension., got 1")


@xblock.jit
def k_desc_store_shape(x_ptr, n):
    d = xl.make_tensor_descriptor(x_ptr, [n, n], [n, 1], [16, 16])
    d.store([0, 0], xl.zeros((16, 8), xl.float32))  # ERR


def test_descriptor_store_shape():
    compile_error(k_desc_store_shape, SIG, match=r"block shape \[16, 16\], got \[16, 8\]")


@xblock.jit
def k_desc_atomic_dtype(x_ptr, n):
    d = xl.make_tensor_descriptor(x_ptr, [n], [1], [16])
    d.atomic_add([0], xl.zeros((16,), xl.int64))  # ERR


def test_descriptor_atomic_add_of_int64():
    compile_error(k_desc_atomic_dtype, {"x_ptr": "*i64", "n": "i32"}, match="atomic_add does not support int64")


@xblock.jit
def k_desc_atomic_fp16_max(x_ptr, n):
    d = xl.make_tensor_descriptor(x_ptr, [n], [1], [16])
    d.atomic_max([0], xl.zeros((16,), xl.float16))  # ERR


def test_descriptor_atomic_max_of_fp16():
    compile_error(k_desc_atomic_fp16_max, {"x_ptr": "*fp16", "n": "i32"}, match="needs native TMA")


@xblock.jit
def k_load_desc(x_ptr, n):
    d = xl.make_tensor_descriptor(x_ptr, [n], [1], [16])
    x = xl.load(d)  # ERR
    d.store([0], x)


def test_tl_load_of_a_descriptor():
    compile_error(k_load_desc, SIG, match="tl.load does not take a tensor descriptor: use desc.load")


# ----------------------------------------------------------------------------- host descriptors
@xblock.jit
def k_host(x_desc, BLOCK: xl.constexpr):
    x_desc.store([0], x_desc.load([0]) + 1)


@pytest.mark.parametrize("shape,strides,block,match", [
    ([4, 4], [1, 4], [4, 4], "last stride must be 1, got 4"),
    ([16], [1], [12], "block_shape [12] must be powers of 2"),
    ([16], [1, 1], [16], "needs 1 to 5 dimensions and as many strides"),
])
def test_bad_host_descriptor(shape, strides, block, match):
    x = np.zeros(16, np.float32)
    with pytest.raises(xblock.LaunchError) as info:
        k_host[(1,)](TensorDescriptor(x, shape, strides, block), BLOCK=16, target="sim")
    text = str(info.value)
    assert text.startswith(f"{source_file(k_host)}:{def_line(k_host)}: k_host: argument 'x_desc': "), text
    assert match in text, text
    assert_clean(text)
