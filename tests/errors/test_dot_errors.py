"""`dot` and `dot_scaled` errors: each is a CompilationError at the dot's line, in Triton 3.6's terms
(the frontend's on every target; cuda's K limit and ascend's Cube limits at that target)."""

import pytest

import xblock
import xblock.language as xl

from ._helpers import assert_located, compile_error, line_of

SIG = {"x_ptr": "*fp32", "n": "i32"}


@xblock.jit
def k_both_precisions(x_ptr, n):
    a = xl.zeros((16, 16), xl.float32)
    c = xl.dot(a, a, input_precision="tf32", allow_tf32=True)  # ERR
    xl.store(x_ptr, xl.sum(c))


def test_input_precision_and_allow_tf32_together():
    compile_error(k_both_precisions, SIG, match="input_precision or the older allow_tf32, not both")


@xblock.jit
def k_unknown_precision(x_ptr, n):
    a = xl.zeros((16, 16), xl.float32)
    c = xl.dot(a, a, input_precision="hf32")  # ERR
    xl.store(x_ptr, xl.sum(c))


def test_input_precision_triton_does_not_have():
    compile_error(k_unknown_precision, SIG, match=r"must be one of tf32, tf32x3, ieee, bf16x3, bf16x6 .*'hf32'")


@xblock.jit
def k_rank_mismatch(x_ptr, n):
    a = xl.zeros((2, 16, 16), xl.float32)
    b = xl.zeros((16, 16), xl.float32)
    c = xl.dot(a, b)  # ERR
    xl.store(x_ptr, xl.sum(xl.sum(xl.sum(c, 2), 1), 0))


def test_2d_by_3d_dot():
    compile_error(k_rank_mismatch, SIG, match=r"two 3-D blocks \(a batch of matrices.*\[2, 16, 16\] and \[16, 16\]")


@xblock.jit
def k_batch_mismatch(x_ptr, n):
    a = xl.zeros((2, 16, 16), xl.float32)
    b = xl.zeros((4, 16, 16), xl.float32)
    c = xl.dot(a, b)  # ERR
    xl.store(x_ptr, xl.sum(xl.sum(xl.sum(c, 2), 1), 0))


def test_batch_dimensions_differ():
    compile_error(k_batch_mismatch, SIG, match="do not agree on the batch dimensions")


@xblock.jit
def k_uint8(x_ptr, n):
    a = xl.zeros((32, 32), xl.uint8)
    c = xl.dot(a, a)  # ERR
    xl.store(x_ptr, xl.sum(xl.sum(c, 1), 0).to(xl.float32))


def test_uint8_operands():
    compile_error(k_uint8, SIG, match="uint8 blocks is not supported: only int8")


@xblock.jit
def k_int16(x_ptr, n):
    a = xl.zeros((32, 32), xl.int16)
    c = xl.dot(a, a)  # ERR
    xl.store(x_ptr, xl.sum(xl.sum(c, 1), 0).to(xl.float32))


def test_int16_operands():
    compile_error(k_int16, SIG, match="dot of int16 blocks is not supported")


@xblock.jit
def k_mixed(x_ptr, n):
    a = xl.zeros((16, 16), xl.float16)
    b = xl.zeros((16, 16), xl.float32)
    c = xl.dot(a, b)  # ERR
    xl.store(x_ptr, xl.sum(xl.sum(c, 1), 0))


def test_operands_of_two_dtypes():
    compile_error(k_mixed, SIG, match=r"same dtype \(or both be float8\), got float16 and float32")


@xblock.jit
def k_out_bf16(x_ptr, n):
    a = xl.zeros((16, 16), xl.float16)
    c = xl.dot(a, a, out_dtype=xl.bfloat16)  # ERR
    xl.store(x_ptr, xl.sum(xl.sum(c, 1), 0))


def test_out_dtype_bfloat16():
    compile_error(k_out_bf16, SIG, match=r"out_dtype=bfloat16 is not supported.*\.to\(tl.bfloat16\)")


@xblock.jit
def k_out_fp64(x_ptr, n):
    a = xl.zeros((16, 16), xl.float16)
    c = xl.dot(a, a, out_dtype=xl.float64)  # ERR
    xl.store(x_ptr, xl.sum(xl.sum(c, 1), 0))


def test_out_dtype_float64_of_fp16_inputs():
    compile_error(k_out_fp64, SIG, match="gives float32 or float16 \\(out_dtype\\), not float64")


@xblock.jit
def k_int_acc_default_out(x_ptr, n):
    a = xl.zeros((32, 32), xl.int8)
    acc = xl.zeros((32, 32), xl.int32)
    acc = xl.dot(a, a, acc)  # ERR
    xl.store(x_ptr, xl.sum(xl.sum(acc, 1), 0).to(xl.float32))


def test_int32_accumulator_needs_out_dtype_int32():
    compile_error(k_int_acc_default_out, SIG, match="accumulator has dtype int32 but out_dtype is float32.*"
                  "out_dtype=tl.int32")


@xblock.jit
def k_acc_not_result(x_ptr, n):
    a = xl.zeros((16, 16), xl.float32)
    acc = xl.zeros((16, 16), xl.float16)
    acc = xl.dot(a, a, acc, out_dtype=xl.float16)  # ERR
    xl.store(x_ptr, xl.sum(xl.sum(acc, 1), 0).to(xl.float32))


def test_float16_accumulator_of_fp32_inputs():
    compile_error(k_acc_not_result, SIG, match="float32 blocks gives float32, so its accumulator must be float32")


@xblock.jit
def k_imprecise_past_k(x_ptr, n):
    a = xl.zeros((32, 32), xl.float32).to(xl.float8e5)
    c = xl.dot(a, a, max_num_imprecise_acc=64)  # ERR
    xl.store(x_ptr, xl.sum(xl.sum(c, 1), 0))


def test_max_num_imprecise_acc_past_k():
    compile_error(k_imprecise_past_k, SIG, match=r"max_num_imprecise_acc \(64\) must be at most K \(32\)")


@xblock.jit
def k_imprecise_not_int(x_ptr, n):
    a = xl.zeros((32, 32), xl.float32)
    c = xl.dot(a, a, max_num_imprecise_acc=1.5)  # ERR
    xl.store(x_ptr, xl.sum(xl.sum(c, 1), 0))


def test_max_num_imprecise_acc_not_an_integer():
    compile_error(k_imprecise_not_int, SIG, match="non-negative constexpr integer, got 1.5")


@xblock.jit
def k_dot_scaled(x_ptr, n):
    a = xl.zeros((32, 32), xl.uint8)
    s = xl.full((32, 1), 127, xl.uint8)
    c = xl.dot_scaled(a, s, "e4m3", a, s, "e4m3")  # ERR
    xl.store(x_ptr, xl.sum(xl.sum(c, 1), 0))


@pytest.mark.parametrize("target", ["sim", "cpu", "cuda", "ascend"])
def test_dot_scaled_on_every_target(target):
    with pytest.raises(xblock.CompilationError) as info:
        xblock.compile(k_dot_scaled, target=target, signature=SIG)
    assert_located(info.value, k_dot_scaled, line_of(k_dot_scaled),
                   r"dot_scaled \(e4m3 x e4m3 microscaled operands\) is not supported on any xblock target: "
                   r"convert the operands to bfloat16 or float16, apply the e8m0 scales .* and use tl.dot")


# ------------------------------------------------------------------------------------ targets
@xblock.jit
def k_small_k(x_ptr, y_ptr, K: xl.constexpr):
    r = xl.arange(0, 16)
    k = xl.arange(0, K)
    a = xl.load(x_ptr + r[:, None] * K + k[None, :])
    b = xl.load(x_ptr + k[:, None] * 16 + r[None, :])
    c = xl.dot(a, b)  # ERR
    xl.store(y_ptr + r[:, None] * 16 + r[None, :], c)


def test_cuda_needs_k_of_16():
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32"}
    with pytest.raises(xblock.CompilationError) as info:
        xblock.compile(k_small_k, target="cuda", signature=sig, constexprs={"K": 8})
    assert_located(info.value, k_small_k, line_of(k_small_k),
                   r"cuda: a dot of f32 blocks needs K >= 16 on cuda .*got K = 8")


@xblock.jit
def k_small_k_int8(x_ptr, y_ptr):
    r = xl.arange(0, 16)
    a = xl.load(x_ptr + r[:, None] * 16 + r[None, :])
    c = xl.dot(a, a)  # ERR
    xl.store(y_ptr + r[:, None] * 16 + r[None, :], c)


def test_cuda_needs_k_of_32_for_int8():
    with pytest.raises(xblock.CompilationError) as info:
        xblock.compile(k_small_k_int8, target="cuda", signature={"x_ptr": "*i8", "y_ptr": "*i32"})
    assert_located(info.value, k_small_k_int8, line_of(k_small_k_int8),
                   r"cuda: a dot of i8 blocks needs K >= 32 on cuda .*got K = 16")


@xblock.jit
def k_batched(x_ptr, y_ptr):
    i = xl.arange(0, 2)[:, None, None] * 256 + xl.arange(0, 16)[None, :, None] * 16 + xl.arange(0, 16)[None, None, :]
    c = xl.dot(xl.load(x_ptr + i), xl.load(x_ptr + i))  # ERR
    xl.store(y_ptr + i, c * 2.0)


def test_ascend_batched_dot_needs_a_store():
    """A batched dot runs matrix by matrix on the Cube, each stored by Fixpipe: a vector epilogue is refused."""
    with pytest.raises(xblock.CompilationError) as info:
        xblock.compile(k_batched, target="ascend", signature={"x_ptr": "*fp16", "y_ptr": "*fp32"})
    assert_located(info.value, k_batched, line_of(k_batched),
                   r"ascend: the result of a batched \(3-D\) dot on ascend must go straight to a store")


@xblock.jit
def k_fp32_cube(x_ptr, y_ptr):
    i = xl.arange(0, 16)[:, None] * 16 + xl.arange(0, 16)[None, :]
    c = xl.dot(xl.load(x_ptr + i), xl.load(x_ptr + i), input_precision="tf32")  # ERR
    xl.store(y_ptr + i, c)


def test_ascend_fp64_dot_has_no_cube_type():
    with pytest.raises(xblock.CompilationError) as info:
        xblock.compile(k_fp32_cube, target="ascend", signature={"x_ptr": "*fp64", "y_ptr": "*fp64"})
    assert_located(info.value, k_fp32_cube, line_of(k_fp32_cube),
                   r"ascend: dot of f64 blocks has no Cube unit type .*\.to\(tl.float32\)")
