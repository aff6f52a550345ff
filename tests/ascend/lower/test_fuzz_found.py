"""Kernels the differential fuzzer (tools/fuzz.py, seed 11) found wrong or model-rejected on ascend,
as small conformance tests against numpy (docs/RELIABILITY.md, campaign 8)."""

from __future__ import annotations

import numpy as np
import pytest

import xblock
from xblock.errors import CompilationError

triton = pytest.importorskip("triton")
tl = triton.language


@triton.jit
def narrow_scalar_shift(a_ptr, s_ptr, o_ptr):
    pid = tl.program_id(0)
    a = tl.load(a_ptr + pid)
    s = tl.load(s_ptr + pid)
    tl.store(o_ptr + pid, (a << (s & 7)).to(tl.int32) + (a * a).to(tl.int32))


@pytest.mark.parametrize("dtype", [np.int8, np.int16])
def test_scalar_arithmetic_of_narrow_ints_wraps_in_its_type(dtype):
    """C++ computes int8/int16 scalars in int: the generated code casts each result back (36 << 6 is
    0 in int8, not 2304)."""
    a = np.array([36, -3, 127, 100, -128, 7], dtype)
    s = np.array([6, 7, 1, 9, 3, 0], dtype)
    o = np.zeros(6, np.int32)
    xblock.jit(narrow_scalar_shift)[(6,)](a, s, o, target="ascend")
    with np.errstate(over="ignore"):
        want = (a << (s & 7)).astype(np.int32) + (a * a).astype(np.int32)
    np.testing.assert_array_equal(o, want)


@triton.jit
def dot_stored_transposed(a_ptr, b_ptr, c_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    r, c, k = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.dot(tl.load(a_ptr + r[:, None] * BK + k[None, :]), tl.load(b_ptr + k[:, None] * BN + c[None, :]))
    tl.store(c_ptr + r[:, None] + c[None, :] * M, acc, mask=(r < M)[:, None] & (c < N)[None, :])


def test_a_dot_result_of_one_row_whose_rows_are_closer_than_its_columns():
    """M = 1 is specialized, so the rows of the store are 1 element apart, under its 16 columns:
    Fixpipe wants dstStride >= nSize, and with one valid row the stride is not used (the model
    stopped the kernel before)."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((16, 16)).astype(np.float16), rng.standard_normal((16, 16)).astype(np.float16)
    c = np.zeros(16, np.float32)
    xblock.jit(dot_stored_transposed)[(1,)](a, b, c, 1, 13, BM=16, BN=16, BK=16, target="ascend")
    want = (a.astype(np.float32) @ b.astype(np.float32))[0, :13]
    np.testing.assert_allclose(c[:13], want, rtol=2e-3, atol=2e-3)
    assert not c[13:].any()


@triton.jit
def int_sums(x_ptr, o0, o1, o2, o3, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + r * C + c)
    tl.store(o0 + tl.arange(0, C), tl.sum(x, axis=0))
    tl.store(o1 + tl.arange(0, R), tl.max(x, axis=1))
    tl.store(o2, tl.sum(tl.reshape(x, (R * C,)), axis=0))
    tl.store(o3, tl.min(tl.reshape(x, (R * C,)), axis=0))


@pytest.mark.parametrize("rows,cols", [(4, 8), (2, 2), (8, 16), (3, 5)])
def test_int32_reductions_are_exact_past_2_24(rows, cols):
    """ReduceSum & co. take half or float only: int32 sums went through float and lost the low bits
    of values past 2**24; now the integer Add/Max/Min fold halves, then scalars finish."""
    x = (np.arange(rows * cols, dtype=np.int64) * 977 + 2**24 + 1).astype(np.int32).reshape(rows, cols)
    x[0, 0] = -2**31 + 5
    outs = [np.zeros(cols, np.int32), np.zeros(rows, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int32)]
    xblock.jit(int_sums)[(1,)](x, *outs, R=rows, C=cols, target="ascend")
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(outs[0], x.sum(0, dtype=np.int32))
        np.testing.assert_array_equal(outs[1], x.max(1))
        np.testing.assert_array_equal(outs[2], [x.sum(dtype=np.int32)])
        np.testing.assert_array_equal(outs[3], [x.min()])


@triton.jit
def column_min_plus(x_ptr, y_ptr, o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.arange(0, BM)
    c = tl.arange(0, BN)
    m = (r < M)[:, None] & (c < N)[None, :]
    x = tl.load(x_ptr + r[:, None] * N + c[None, :], mask=m, other=0.0)
    y = tl.load(y_ptr + r[:, None] * N + c[None, :], mask=m, other=-0.5)
    tl.store(o_ptr + r[:, None] * N + c[None, :], y + tl.min(x, 0, keep_dims=True), mask=m)


@pytest.mark.parametrize("m,n", [(1, 1), (2, 2), (2, 1)])
def test_a_column_reduction_of_rows_shorter_than_32_bytes(m, n):
    """Rows of 2 floats (8 bytes): the vector unit cannot start an instruction at row 1 (the model
    stopped the kernel: UB address not 32-byte aligned); scalar loops reduce them."""
    rng = np.random.default_rng(m * 10 + n)
    x, y = rng.standard_normal((m, n)).astype(np.float32), rng.standard_normal((m, n)).astype(np.float32)
    o = np.zeros((m, n), np.float32)
    xblock.jit(column_min_plus)[(1,)](x, y, o, m, n, BM=2, BN=2, target="ascend")
    xp = np.zeros((2, 2), np.float32)
    xp[:m, :n] = x
    np.testing.assert_allclose(o, y + xp.min(0, keepdims=True)[:, :n], rtol=1e-6)


@triton.jit
def row_max(x_ptr, o_ptr, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.arange(0, BM)
    c = tl.arange(0, BN)
    tl.store(o_ptr + r, tl.max(tl.load(x_ptr + r[:, None] * BN + c[None, :]), axis=1))


def test_a_row_reduction_of_rows_shorter_than_32_bytes():
    x = np.random.default_rng(3).standard_normal((4, 2)).astype(np.float32)
    o = np.zeros(4, np.float32)
    xblock.jit(row_max)[(1,)](x, o, BM=4, BN=2, target="ascend")
    np.testing.assert_array_equal(o, x.max(1))


@triton.jit
def dot_of_constants(o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    r = tl.arange(0, BM)
    c = tl.arange(0, BN)
    v = tl.dot(tl.full((BM, BK), 2.0, tl.float16), tl.full((BK, BN), 1.0, tl.float16))
    tl.store(o_ptr + r[:, None] * N + c[None, :], v, mask=(r < M)[:, None] & (c < N)[None, :])


@pytest.mark.parametrize("bm,bk", [(1, 1), (16, 16)])
def test_a_dot_of_constant_blocks(bm, bk):
    """The vector core fills the operands, then copies them to the Cube's input slot: the copy waits
    for the fill (V -> MTE3), and the result comes back in whole 32-byte blocks."""
    o = np.zeros((bm, bm), np.float32)
    xblock.jit(dot_of_constants)[(1,)](o, bm, bm, BM=bm, BN=bm, BK=bk, target="ascend")
    np.testing.assert_array_equal(o, np.full((bm, bm), 2.0 * bk, np.float32))


@triton.jit
def bool_permute_and_broadcast(x_ptr, o_ptr, b_ptr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    m = tl.load(x_ptr + r * C + c) > 0.5
    tl.store(o_ptr + tl.arange(0, C)[:, None] * R + tl.arange(0, R)[None, :], tl.trans(m))
    col = tl.load(x_ptr + tl.arange(0, R) * C) > 0.5
    tl.store(b_ptr + r * C + c, tl.broadcast_to(col[:, None], (R, C)))


@pytest.mark.parametrize("rows,cols", [(16, 16), (4, 8), (32, 16)])
def test_bool_blocks_permute_and_broadcast(rows, cols):
    """Bit masks move as half lanes of 1.0/0.0 and are compared back (a permute of a bool block was
    refused; a broadcast one stored directly freed its queue buffer before use)."""
    x = np.random.default_rng(rows + cols).random((rows, cols)).astype(np.float32)
    o, b = np.zeros((cols, rows), bool), np.zeros((rows, cols), bool)
    xblock.jit(bool_permute_and_broadcast)[(1,)](x, o, b, R=rows, C=cols, target="ascend")
    np.testing.assert_array_equal(o, (x > 0.5).T)
    np.testing.assert_array_equal(b, np.broadcast_to((x[:, 0] > 0.5)[:, None], (rows, cols)))


@triton.jit
def bool_orders(x_ptr, y_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs) > 0
    b = tl.load(y_ptr + offs) > 0
    tl.store(o_ptr + offs, (a < b).to(tl.int32) + 2 * (a <= b).to(tl.int32) + 4 * (a > b).to(tl.int32) +
             8 * (a >= b).to(tl.int32) + 16 * (a == b).to(tl.int32) + 32 * (a != b).to(tl.int32))


@pytest.mark.parametrize("target", ["sim", "ascend"])
def test_orders_of_bool_blocks(target):
    """Fuzz seed 12, kernels 33 and 104: `mask1 >= mask2` went to a Cast of the bit mask ("no Cast from
    ui8 to f32"); orders of bool blocks are and/or of the bits with one side inverted."""
    x = np.tile(np.array([1, 1, -1, -1], np.float32), 16)
    y = np.tile(np.array([1, -1, 1, -1], np.float32), 16)
    o = np.zeros(64, np.int32)
    xblock.jit(bool_orders)[(1,)](x, y, o, BLOCK=64, target=target)
    a, b = x > 0, y > 0
    want = (a < b) + 2 * (a <= b) + 4 * (a > b) + 8 * (a >= b) + 16 * (a == b) + 32 * (a != b)
    np.testing.assert_array_equal(o, want)


@triton.jit
def narrow_block_reversed(in_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(in_ptr + offs, mask=mask, other=0).to(tl.int16)
    tl.store(out_ptr + (n - 1 - offs), v, mask=mask)


@pytest.mark.parametrize("n", [33, 40, 48])
def test_masked_load_of_a_block_that_is_not_whole_32_byte_blocks(n):
    """Fuzz seed 41, kernel 9 (model-rejected): 48 int8 lanes (a block xblock allows, Triton would not)
    whose padded copy reached the block's end still filled `other` past it, with a Duplicate at an
    address that is not 32-byte aligned."""
    x = np.arange(-20, n - 20).astype(np.int8)
    for target in ("sim", "ascend"):
        out = np.zeros(n, np.int16)
        xblock.jit(narrow_block_reversed)[(1,)](x, out, n, BLOCK=48, target=target)
        np.testing.assert_array_equal(out, x[::-1].astype(np.int16), err_msg=target)


@triton.jit
def same_condition_twice(out_ptr, M, BM: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BM + tl.arange(0, BM)
    a = pid > 0
    b = pid > 0
    tl.store(out_ptr + rows, tl.full((BM,), True, tl.int1) & (a < b) | (a >= b) & (rows == 0), mask=rows < M)


def test_a_value_compared_with_itself():
    """Fuzz seed 41, kernel 123 (model-rejected): CSE made `a < b` of two equal conditions `v < v`,
    which g++ -Werror refuses as a self-comparison; it is decided in the emitted C++ instead."""
    for target in ("sim", "ascend"):
        out = np.zeros(4, np.bool_)
        xblock.jit(same_condition_twice)[(1,)](out, 4, BM=4, target=target)
        np.testing.assert_array_equal(out, [True, False, False, False], err_msg=target)


@triton.jit
def where_of_a_bool_load_in_a_loop(c_ptr, x_ptr, y_ptr, out_ptr, M, N, R, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for _ in tl.range(0, R):
        c = tl.load(c_ptr + cols[None, :], mask=(cols < N)[None, :], other=False)
        x = tl.load(x_ptr + rows[:, None], mask=(rows < M)[:, None], other=0.0)
        y = tl.load(y_ptr + rows[:, None] * BN + cols[None, :])
        acc += tl.where(c, x, y)
    tl.store(out_ptr + rows[:, None] * BN + cols[None, :], acc)


def test_a_bool_load_with_a_block_other_frees_its_buffer_in_a_loop():
    """Fuzz seed 41, kernel 204 (model-rejected): a load with a block `other` replaced its queue buffer
    by the selected block without freeing it; the third iteration found both buffers in use."""
    rng = np.random.default_rng(4)
    c = rng.random(16) < 0.5
    x = rng.standard_normal(8).astype(np.float32)
    y = rng.standard_normal((8, 16)).astype(np.float32)
    c_in = np.pad(c[:13], (0, 3))  # lanes past N = 13 load `other` (False), rows past M = 6 load 0.0
    x_in = np.pad(x[:6], (0, 2))
    want = 5 * np.where(c_in[None, :], x_in[:, None], y)
    for target in ("sim", "ascend"):
        out = np.zeros((8, 16), np.float32)
        xblock.jit(where_of_a_bool_load_in_a_loop)[(1,)](c, x, y, out, 6, 13, 5, BM=8, BN=16, target=target)
        np.testing.assert_allclose(out, want, rtol=1e-6, err_msg=target)


@triton.jit
def reversed_bool_copy(in_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(in_ptr + (n - 1 - offs), mask=mask, other=False), mask=mask)


@pytest.mark.parametrize("n", [1, 2, 7])
def test_a_gathered_bool_load_with_other_feeding_a_store(n):
    """Fuzz seed 42, kernel 317 (model-rejected): the loaded block was a VECOUT buffer (it fed a
    store), and freeing it after the select skipped the EnQue/DeQue the queue protocol needs."""
    x = np.arange(n) % 3 == 0
    for target in ("sim", "ascend"):
        out = np.zeros(n, np.bool_)
        xblock.jit(reversed_bool_copy)[(4,)](x, out, n, BLOCK=2, target=target)
        np.testing.assert_array_equal(out, x[::-1], err_msg=target)


@triton.jit
def rank3_reductions_and_int64_abs(x_ptr, i_ptr, o_ptr, oi_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    a = tl.arange(0, A)
    b = tl.arange(0, B)
    c = tl.arange(0, C)
    x = tl.load(x_ptr + a[:, None, None] * B * C + b[None, :, None] * C + c[None, None, :])
    tl.store(o_ptr + a[:, None] * C + c[None, :], tl.sum(x, 1))
    tl.store(o_ptr + A * C + b[:, None] * C + c[None, :], tl.max(x, 0))
    tl.store(oi_ptr + c, tl.abs(tl.load(i_ptr + c)))


def test_reductions_of_rank_3_blocks_and_abs_of_int64():
    """Refused in fuzz campaigns 11 and 12 ("only reductions of 1-D blocks, or of 2-D blocks along one
    axis", "abs of i64 blocks"): exact scalar loops now."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 8)).astype(np.float32)
    i = np.array([-2**40, 3, -5, 0, 7, -1, 2**33, -9], np.int64)
    for target in ("sim", "ascend"):
        o, oi = np.zeros(48, np.float32), np.zeros(8, np.int64)
        xblock.jit(rank3_reductions_and_int64_abs)[(1,)](x, i, o, oi, A=2, B=4, C=8, target=target)
        np.testing.assert_allclose(o[:16], x.sum(1).ravel(), rtol=1e-6, err_msg=target)
        np.testing.assert_array_equal(o[16:], x.max(0).ravel(), err_msg=target)
        np.testing.assert_array_equal(oi, np.abs(i), err_msg=target)


@triton.jit
def _larger(a, b):
    return tl.maximum(a, b)


@triton.jit
def generic_reduce_then_bits(x_ptr, c_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    top = tl.reduce(tl.load(x_ptr + offs, mask=mask, other=0), None, _larger)
    c = tl.load(c_ptr + offs, mask=mask, other=True)
    low = tl.argmin(tl.where(c, tl.full((BLOCK,), 0, tl.int8), -7), 0)
    tl.store(out_ptr + tl.program_id(0), top - low)


def test_scratch_a_generic_reduce_wrote_is_synced_before_vector_reuse():
    """Fuzz seed 44, kernel 20 (model-rejected): a combine function's reduction works on a UB copy
    with the scalar unit; the next vector op reusing that scratch (a bit-mask Not) had no S->V sync."""
    x = np.array([3, -6, 9, 1, 4], np.int32)
    c = np.array([True, False, True, True, False])
    for target in ("sim", "ascend"):
        out = np.zeros(1, np.int32)
        xblock.jit(generic_reduce_then_bits)[(1,)](x, c, out, 5, BLOCK=32, target=target)
        np.testing.assert_array_equal(out, [9 - 1], err_msg=target)


@triton.jit
def accumulate_the_induction_variable(out_ptr, n, BLOCK: tl.constexpr, STEPS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.int32)
    for k in range(0, STEPS):
        acc += tl.full((BLOCK,), 7, tl.int32) + k
    tl.store(out_ptr + (n - 1 - offs), acc, mask=offs < n)


@pytest.mark.parametrize("block,n", [(1, 1), (4, 7)])
def test_a_block_advanced_by_the_induction_variable_is_not_a_uniform_step(block, n):
    """Fuzz seed 46, kernel 55 (internal error): `acc += full(7) + k` was taken for `acc += step` with a
    loop-invariant step, and the closed form used `k` after the loop."""
    for target in ("sim", "ascend"):
        out = np.zeros(n, np.int32)
        xblock.jit(accumulate_the_induction_variable)[(triton.cdiv(n, block),)](out, n, BLOCK=block, STEPS=4,
                                                                                 target=target)
        np.testing.assert_array_equal(out, np.full(n, 4 * 7 + 6), err_msg=target)


@triton.jit
def int8_dot_over_k_steps(a_ptr, b_ptr, out_ptr, K, BK: tl.constexpr):
    ks = tl.arange(0, BK)
    acc = tl.zeros((1, 1), tl.int32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptr + (k * BK + ks)[None, :], mask=(k * BK + ks < K)[None, :], other=0)
        b = tl.load(b_ptr + (k * BK + ks)[:, None], mask=(k * BK + ks < K)[:, None], other=0)
        acc += tl.dot(a, b, out_dtype=tl.int32)
    tl.store(out_ptr + tl.zeros((1, 1), tl.int32), acc)


def test_a_loop_step_defined_at_the_top_level_does_not_abort():
    """Fuzz seed 47, kernel 14 (the process died, SIGABRT): checking whether a carried block's step is
    defined outside its loop asked MLIR for the block of the module op, an assertion in MLIR."""
    a, b = np.array([-5, -2], np.int8), np.array([4, -6], np.int8)
    for target in ("sim", "ascend"):
        out = np.zeros((1, 1), np.int32)
        xblock.jit(int8_dot_over_k_steps)[(1,)](a, b, out, 2, BK=1, target=target)
        np.testing.assert_array_equal(out, [[-20 + 12]], err_msg=target)


@triton.jit
def shift_a_constant_int64(c_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    c = tl.load(c_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + offs, tl.full((BLOCK,), 7, tl.int64) >> (c & 63), mask=offs < n)


def test_an_int64_constant_shifted_by_32_or_more():
    """Fuzz seed 47, kernel 29 (wrong answer): the scalar loop printed the int64 constant as the C++
    literal `7`, an int, and `7 >> 32` shifted an int by its width (x86 gives 7)."""
    c = np.array([16, 32, 33, 63, 0, 5], np.int64)
    for target in ("sim", "ascend"):
        out = np.zeros(6, np.int64)
        xblock.jit(shift_a_constant_int64)[(1,)](c, out, 6, BLOCK=8, target=target)
        np.testing.assert_array_equal(out, np.int64(7) >> c, err_msg=target)


@triton.jit
def minimum_of_a_value_and_itself(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    a = tl.where(pid > 0, pid.to(tl.int64), pid.to(tl.int64))
    b = tl.where(pid > 0, pid.to(tl.int64), pid.to(tl.int64))
    v = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + offs, tl.minimum(a, b) + v, mask=offs < n)


def test_the_minimum_of_a_value_and_itself():
    """Fuzz seed 49, kernel 208 (model-rejected): CSE made both operands of a scalar minimum one
    value, and `(v < v ? v : v)` is an error under -Werror=tautological-compare."""
    x = np.array([-107, 5, 9], np.int64)
    for target in ("sim", "ascend"):
        out = np.zeros(3, np.int8)
        xblock.jit(minimum_of_a_value_and_itself)[(3,)](x, out, 3, BLOCK=1, target=target)
        np.testing.assert_array_equal(out, (x + np.arange(3)).astype(np.int8), err_msg=target)


@triton.jit
def dot_of_one_column(a_ptr, c_ptr, M, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.arange(0, BM)
    ks = tl.arange(0, BK)
    a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows < M)[:, None] & (ks < K)[None, :], other=0.0)
    acc = tl.dot(a, tl.full((BK, BN), 1.0, a.dtype), out_dtype=tl.float32)
    tl.store(c_ptr + rows[:, None] * BN + tl.arange(0, BN)[None, :], acc, mask=(rows < M)[:, None])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("M", [2, 17])
def test_a_dot_operand_of_one_column_is_not_taken_for_one_row(dtype, M):
    """AP (campaign 22, seed 70): an [M, 1] operand (K = 1, specialized) is M contiguous elements, which
    the pointer analysis describes as one row of M; the Cube took it for M = 1 and left rows 1.. zero.
    The Cube now copies an operand only when the access has the block's own rows and columns; this
    one goes through the vector core."""
    a = np.arange(1, M + 1, dtype=np.float32).astype(dtype).reshape(M, 1) - 5
    c = np.zeros((M, 1), np.float32)
    meta = dict(BM=M if M == 2 else 32, BN=1, BK=1)
    xblock.jit(dot_of_one_column)[(1,)](a, c, M, 1, target="ascend", **meta)
    np.testing.assert_array_equal(c, a.astype(np.float32))


@triton.jit
def two_projections(x_ptr, wq_ptr, wk_ptr, qt_ptr, k_ptr, M, N, K, stride_qm, stride_qn,
                    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Two projections of one input tile (`q = x @ wq`, `k = x @ wk`, as a fused QK projection does), the
    first stored through its strides (here transposed: stride_qm = 1), the second as rows."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    q = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, tl.cdiv(K, BK)):
        kk = k0 * BK + rk
        x = tl.load(x_ptr + rm[:, None] * K + kk[None, :], mask=(rm < M)[:, None] & (kk < K)[None, :], other=0.0)
        w = tl.load(wq_ptr + kk[:, None] * N + rn[None, :], mask=(kk < K)[:, None] & (rn < N)[None, :], other=0.0)
        q = tl.dot(x, w, q)
    mask = (rm < M)[:, None] & (rn < N)[None, :]
    tl.store(qt_ptr + rm[:, None] * stride_qm + rn[None, :] * stride_qn, q, mask=mask)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, tl.cdiv(K, BK)):
        kk = k0 * BK + rk
        x = tl.load(x_ptr + rm[:, None] * K + kk[None, :], mask=(rm < M)[:, None] & (kk < K)[None, :], other=0.0)
        w = tl.load(wk_ptr + kk[:, None] * N + rn[None, :], mask=(kk < K)[:, None] & (rn < N)[None, :], other=0.0)
        acc = tl.dot(x, w, acc)
    tl.store(k_ptr + rm[:, None] * N + rn[None, :], acc, mask=mask)


@pytest.mark.parametrize("M,N,K", [(32, 32, 32), (20, 24, 40)])
def test_a_dot_after_a_dot_whose_store_goes_through_the_vector_core(M, N, K):
    """Fuzz seed 6, kernel 14 (model-rejected): the first dot's transposed store runs on the vector core
    (a mixed kernel, whose AIV section took the rest of the program), and the second dot's Cube copies
    landed in that section ("cube API called in an ASCEND_IS_AIV section"). Every dot is now handed to
    the vector core instead."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((M, K)).astype(np.float16)
    wq, wk = (rng.standard_normal((K, N)).astype(np.float16) for _ in range(2))
    qt, k = np.zeros((N, M), np.float32), np.zeros((M, N), np.float32)
    xblock.jit(two_projections)[(triton.cdiv(M, 16), triton.cdiv(N, 16))](
        x, wq, wk, qt, k, M, N, K, 1, M, BM=16, BN=16, BK=16, target="ascend")
    x32 = x.astype(np.float32)
    np.testing.assert_allclose(qt, (x32 @ wq.astype(np.float32)).T, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(k, x32 @ wk.astype(np.float32), rtol=2e-3, atol=2e-3)


@triton.jit
def matmul_plus_transposed_residual(a_ptr, b_ptr, r_ptr, c_ptr, M, N, K,
                                    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """`c = a @ b + r.T` with the residual kept column-major ([N, M]) and read as a [BN, BM] tile
    whose masked lanes load -1 (a transposed load with a constant `other`)."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, tl.cdiv(K, BK)):
        kk = k0 * BK + rk
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :], mask=(rm < M)[:, None] & (kk < K)[None, :], other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + rn[None, :], mask=(kk < K)[:, None] & (rn < N)[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
    c_ptrs = c_ptr + rm[:, None] * N + rn[None, :]
    r = tl.load(r_ptr + rn[:, None] * M + rm[None, :], mask=(rn < N)[:, None] & (rm < M)[None, :], other=-1.0)
    c = acc + tl.trans(r).to(tl.float32)
    tl.store(c_ptrs, c, mask=(rm < M)[:, None] & (rn < N)[None, :])


@pytest.mark.parametrize("M,N,K", [(32, 32, 32), (20, 12, 24)])
def test_an_epilogue_in_row_chunks_with_a_transposed_load_of_a_constant_other(M, N, K):
    """Fuzz seed 6, kernel 17 (internal error): the dot's vector epilogue is computed in row chunks shared
    by both vector cores (xb-strip-mine, the K loop kept whole). The load's `other` (a splat constant,
    which ties no axis there) counted as an axis of its own as long as the rows, was split along its
    dimension 0 while the [BN, BM] load it fills is split along dimension 1: the IR did not verify."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    r = rng.standard_normal((N, M)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    kernel = xblock.jit(matmul_plus_transposed_residual)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
    kernel[grid](a, b, r, c, M, N, K, BM=16, BN=16, BK=16, target="ascend")
    want = a.astype(np.float32) @ b.astype(np.float32) + r.T.astype(np.float32)
    np.testing.assert_allclose(c, want, rtol=2e-3, atol=2e-3)
    md = kernel.warmup(a, b, r, c, M, N, K, BM=16, BN=16, BK=16, target="ascend").metadata
    assert md["split"]["rows"] and md["split"]["factor"] > 1  # the epilogue did run in row chunks


@triton.jit
def matmul_minus_a_sum(a_ptr, b_ptr, w_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """`c = a @ b - sum(w[cols])`: a scalar the vector core reduces before the dot, used after it."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    shift = tl.sum(tl.load(w_ptr + rn, mask=rn < N, other=0.0), 0)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm < M)[:, None] & (rk < K)[None, :], other=0.0)
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk < K)[:, None] & (rn < N)[None, :], other=0.0)
    c = tl.dot(a, b) - shift
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c, mask=(rm < M)[:, None] & (rn < N)[None, :])


@pytest.mark.parametrize("M,N,K", [(16, 16, 16), (30, 20, 12)])
def test_a_scalar_the_vector_core_reduces_before_a_dot_is_used_after_it(M, N, K):
    """Fuzz seed 72, kernel 10 (refused: "a value of one core section is used in another"): the sum
    is computed in the vector core's section before the dot and read in its section after the dot; the
    first section now yields it to the next one of the same core."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    w = rng.standard_normal(N).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    xblock.jit(matmul_minus_a_sum)[(triton.cdiv(M, 16), triton.cdiv(N, 16))](
        a, b, w, c, M, N, K, BM=16, BN=16, BK=16, target="ascend")
    want = a.astype(np.float32) @ b.astype(np.float32)
    for j in range(0, N, 16):
        want[:, j:j + 16] -= w[j:j + 16].sum()
    np.testing.assert_allclose(c, want, rtol=2e-3, atol=2e-3)


@triton.jit
def addmm_variants(a_ptr, b_ptr, c_in_ptr, c_ptr, d_ptr, M, N, K, MODE: tl.constexpr,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """One-step matmuls the Cube cannot take from memory alone. MODE 0: B's masked-off rows load -3 (they
    multiply A's zero columns); 1: `c = c_in + a @ b` (an addmm whose accumulator starts at a loaded
    tile); 2: `d = a @ b` through Fixpipe, then `c = a @ b` stored transposed (a vector epilogue)."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mask = (rm < M)[:, None] & (rn < N)[None, :]
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm < M)[:, None] & (rk < K)[None, :], other=0.0)
    if MODE == 0:
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk < K)[:, None] & (rn < N)[None, :], other=-3.0)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b), mask=mask)
    elif MODE == 1:
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk < K)[:, None] & (rn < N)[None, :], other=0.0)
        c = tl.dot(a, b, tl.load(c_in_ptr + rm[:, None] * N + rn[None, :], mask=mask, other=0.0))
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], c, mask=mask)
    else:
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk < K)[:, None] & (rn < N)[None, :], other=0.0)
        tl.store(d_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b), mask=mask)
        a2 = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm < M)[:, None] & (rk < K)[None, :], other=0.0)
        b2 = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk < K)[:, None] & (rn < N)[None, :], other=0.0)
        tl.store(c_ptr + rm[:, None] + rn[None, :] * M, tl.dot(a2, b2), mask=mask)


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("M,N,K", [(16, 16, 16), (20, 12, 10)])
def test_dots_the_cube_cannot_take_from_memory_alone_are_handed_to_the_vector_core(mode, M, N, K):
    """Fuzz seed 72, kernels 23, 18 and 79 (refused): an operand whose masked-off lanes load -3, an
    accumulator that does not start at zeros, a kernel mixing a Fixpipe-only dot with one whose epilogue
    runs on the vector core. Each now asks the planner to hand every dot to the vector core, which loads
    any operand and adds the accumulator after the Cube's product."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c_in = rng.standard_normal((M, N)).astype(np.float32)
    c, d = np.zeros((M, N), np.float32), np.zeros((M, N), np.float32)
    kernel = xblock.jit(addmm_variants)
    args = (a, b, c_in, c, d, M, N, K)
    kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16))](*args, MODE=mode, BM=16, BN=16, BK=16, target="ascend")
    ab = a.astype(np.float32) @ b.astype(np.float32)
    if mode == 2:
        np.testing.assert_allclose(d, ab, rtol=2e-3, atol=2e-3)
        np.testing.assert_allclose(c.reshape(N, M), ab.T, rtol=2e-3, atol=2e-3)
    else:
        np.testing.assert_allclose(c, ab + (c_in if mode == 1 else 0), rtol=2e-3, atol=2e-3)
    md = kernel.warmup(*args, MODE=mode, BM=16, BN=16, BK=16, target="ascend").metadata
    assert md["plan"]["dots"] == "hand_off"


@triton.jit
def shifted_rows_then_scaled_matmul(x_ptr, y_ptr, s_ptr, a_ptr, b_ptr, c_ptr, z_ptr,
                                    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Vector work, then `acc += tl.dot(a, b) * 0.5` in a loop (a dot handed to the vector core): `x` is
    loaded, a row is stored, a scalar `s` is read from memory after that store, and `x - s` is stored."""
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    tl.store(y_ptr + rn, tl.load(x_ptr + rn) * 2.0)
    s = tl.load(s_ptr)
    tl.store(z_ptr + rm[:, None] * BN + rn[None, :], x - s)
    acc = tl.zeros((BM, BN), tl.float32)
    for i in range(2):
        a = tl.load(a_ptr + rm[:, None] * (2 * BK) + (i * BK + rk)[None, :])
        b = tl.load(b_ptr + (i * BK + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b) * 0.5
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


def test_a_scalar_read_after_a_store_stays_in_the_vector_cores_section():
    """Fuzz seed 73, kernel 95 (`ext:ubsplit:dotloop`, refused): the scalar read of `s` could not move
    ahead of the vector core's section (the store before it may write `s`), so it ended the section,
    and `x`, a block in a queue buffer, was needed on both sides of it. Only the vector core reads
    `s`: the read now stays in its section."""
    rng = np.random.default_rng(5)
    BM, BN, BK = 16, 32, 16
    x = rng.standard_normal((BM, BN)).astype(np.float32)
    s = np.array([1.5], np.float32)
    a = rng.integers(-3, 4, (BM, 2 * BK)).astype(np.float16)
    b = rng.integers(-3, 4, (2 * BK, BN)).astype(np.float16)
    y, c, z = np.zeros(BN, np.float32), np.zeros((BM, BN), np.float32), np.zeros((BM, BN), np.float32)
    xblock.jit(shifted_rows_then_scaled_matmul)[(1,)](x, y, s, a, b, c, z, BM=BM, BN=BN, BK=BK, target="ascend")
    np.testing.assert_array_equal(y, x[0] * 2)
    np.testing.assert_array_equal(z, x - s[0])
    np.testing.assert_array_equal(c, (a.astype(np.float32) @ b.astype(np.float32)) * 0.5)


# ----- a dot the Cube cannot take and the hand-off to the vector core cannot either ----------------
def _line_of(marker: str) -> int:
    return next(i for i, s in enumerate(open(__file__), 1) if s.rstrip().endswith(f"# {marker}"))


@triton.jit
def batched_dot_plus_bias(a_ptr, b_ptr, c_ptr, o_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr,
                          K: tl.constexpr):
    bb, m, n, k = tl.arange(0, B), tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + bb[:, None, None] * (M * K) + m[None, :, None] * K + k[None, None, :])
    b = tl.load(b_ptr + bb[:, None, None] * (K * N) + k[None, :, None] * N + n[None, None, :])
    c = tl.load(c_ptr + bb[:, None, None] * (M * N) + m[None, :, None] * N + n[None, None, :])
    out = tl.dot(a, b, c)  # BATCHED_DOT
    tl.store(o_ptr + bb[:, None, None] * (M * N) + m[None, :, None] * N + n[None, None, :], out)


def test_a_batched_dot_the_hand_off_cannot_multiply_names_both_reasons():
    """Fuzz seed 73, kernel 46 (`dot3`): a batched dot whose accumulator is loaded cannot go through the
    Cube's K loop (its accumulator starts at zeros), and the planner's answer, the dot handed to the
    vector core, multiplies 2-D tiles. The error said only the first; it now names the hand-off's reason
    first, then the Cube's, at the dot's line."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((2, 16, 16)).astype(np.float16) for _ in range(2))
    c = rng.standard_normal((2, 16, 16)).astype(np.float32)
    with pytest.raises(CompilationError) as e:
        xblock.jit(batched_dot_plus_bias)[(1,)](a, b, c, np.zeros_like(c), B=2, M=16, N=16, K=16, target="ascend")
    text = str(e.value)
    assert f"test_fuzz_found.py:{_line_of('BATCHED_DOT')}:" in text
    hand_off = text.index("a batched (3-D) dot cannot be handed to the vector core (it multiplies 2-D tiles)")
    cube = text.index("and the Cube cannot take it: the accumulator of a dot on the Cube unit must start at zeros")
    assert hand_off < cube and "put the batch on a grid axis" in text


@triton.jit
def batched_dot_beside_a_scaled_dot(a_ptr, b_ptr, o_ptr, p_ptr, B: tl.constexpr, M: tl.constexpr):
    bb, m = tl.arange(0, B), tl.arange(0, M)
    a = tl.load(a_ptr + bb[:, None, None] * (M * M) + m[None, :, None] * M + m[None, None, :])
    b = tl.load(b_ptr + bb[:, None, None] * (M * M) + m[None, :, None] * M + m[None, None, :])
    out = tl.dot(a, b)  # BATCHED_ALONE
    tl.store(o_ptr + bb[:, None, None] * (M * M) + m[None, :, None] * M + m[None, None, :], out)
    x = tl.load(a_ptr + m[:, None] * M + m[None, :])
    p = tl.dot(x * 2.0, tl.load(b_ptr + m[:, None] * M + m[None, :]))  # the vector core computes an operand
    tl.store(p_ptr + m[:, None] * M + m[None, :], p)


def test_a_batched_dot_in_a_kernel_whose_dots_are_all_handed_over():
    """No Cube attempt comes first here (a dot of a computed operand hands every dot of the kernel to the
    vector core): the error names the hand-off's reason alone, at the batched dot."""
    a, b = (np.ones((2, 16, 16), np.float16) for _ in range(2))
    with pytest.raises(CompilationError) as e:
        xblock.jit(batched_dot_beside_a_scaled_dot)[(1,)](a, b, np.zeros((2, 16, 16), np.float32),
                                                         np.zeros((16, 16), np.float32), B=2, M=16, target="ascend")
    text = str(e.value)
    assert f"test_fuzz_found.py:{_line_of('BATCHED_ALONE')}:" in text
    assert "a batched (3-D) dot cannot be handed to the vector core (it multiplies 2-D tiles), as every dot of " \
           "this kernel must be" in text
    assert "the Cube cannot take it" not in text


@triton.jit
def dot_at_a_row_found_by_a_reduction(a_ptr, b_ptr, c_ptr, r_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr,
                                      K: tl.constexpr):
    m, n, k = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    row = tl.max(tl.load(r_ptr + m))  # a scalar only the vector core computes
    a = tl.load(a_ptr + (row + m)[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    c = tl.load(c_ptr + m[:, None] * N + n[None, :])
    tl.store(o_ptr + m[:, None] * N + n[None, :], tl.dot(a, b, c))  # ROW_DOT


def test_a_hand_off_refused_for_another_reason_names_the_cubes_too():
    """The hand-off fails for a reason of its own (the Cube's copy of `a` needs a scalar that only the
    vector core computes): that reason comes first, then why the dot was handed over at all."""
    a = np.ones((32, 16), np.float16)
    b = np.ones((16, 16), np.float16)
    c = np.zeros((16, 16), np.float32)
    with pytest.raises(CompilationError) as e:
        xblock.jit(dot_at_a_row_found_by_a_reduction)[(1,)](a, b, c, np.zeros(16, np.int32), np.zeros_like(c),
                                                            M=16, N=16, K=16, target="ascend")
    text = str(e.value)
    assert f"test_fuzz_found.py:{_line_of('ROW_DOT')}:" in text
    blocker = text.index("the Cube uses a value only the other core computes")
    why = text.index("xblock hands the dots to the vector core here because the Cube cannot take the dot: the "
                     "accumulator of a dot on the Cube unit must start at zeros")
    assert blocker < why


@triton.jit
def int64_index_arithmetic_stored(o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = offs % 3 - tl.full((BLOCK,), 1, tl.int64)  # an index value (a structured block) widened to int64
    tl.store(o_ptr + offs, v, mask=offs < n)


@pytest.mark.parametrize("block,n", [(1, 1), (8, 5), (32, 32)])
def test_a_structured_value_materialized_for_its_store_goes_through_the_queue(block, n):
    """Seed 76, kernel 279: the store allocated its output buffer, then materialized the int64 value,
    which went into a VECOUT buffer of its own (it feeds a store), copied from there and freed without a
    DeQue: the model refused it. The value computed into the queue is now the stored buffer."""
    o = np.full(block, 99, np.int64)
    xblock.jit(int64_index_arithmetic_stored)[(1,)](o, n, BLOCK=block, target="ascend")
    want = np.arange(block, dtype=np.int64) % 3 - 1
    np.testing.assert_array_equal(o[:n], want[:n])
    np.testing.assert_array_equal(o[n:], 99)
