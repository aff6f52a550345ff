"""Full-block fast paths decided from scalar bounds (axis_info.mask_bounds): every form of bound the
analysis reads, at the sizes where a block turns partial, and lanes whose i32 offsets wrap, on the
cpu target against the sim."""

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.dialects import xb
from xblock.passes.axis_info import mask_bounds


@xblock.jit
def _bounds(x_ptr, out_ptr, lo, hi, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs, mask=offs < hi, other=-1.0)  # offs < hi
    y = xl.load(x_ptr + offs, mask=(hi > offs + 1) & (offs > lo - 9), other=-2.0)  # swapped; lanes + 1
    z = xl.load(x_ptr + offs, mask=(offs - 3 >= lo) & (offs <= hi - 1), other=-3.0)  # a lower bound, and &
    xl.store(out_ptr + 512 + offs, x, mask=offs < hi)  # y and z are read before it, with their own masks
    xl.store(out_ptr + offs, x + 10 * y + 100 * z)


@pytest.mark.parametrize("hi", [1, 63, 64, 65, 128, 389])
@pytest.mark.parametrize("lo", [-5, 0, 70])
def test_bound_forms(lo, hi):
    x = np.arange(512, dtype=np.float32)
    a, b = np.full(1024, 7.0, np.float32), np.full(1024, 7.0, np.float32)
    _bounds[(8,)](x, a, lo, hi, BLOCK=64, target="cpu")
    _bounds[(8,)](x, b, lo, hi, BLOCK=64, target="sim")
    np.testing.assert_array_equal(a, b)


@xblock.jit
def _rows_cols(x_ptr, out_ptr, M, N, BLOCK_M: xl.constexpr, BLOCK_N: xl.constexpr):
    r = xl.program_id(0) * BLOCK_M + xl.arange(0, BLOCK_M)[:, None]
    c = xl.program_id(1) * BLOCK_N + xl.arange(0, BLOCK_N)[None, :]
    mask = (r < M) & (c < N)
    x = xl.load(x_ptr + r * N + c, mask=mask, other=0.0)
    xl.store(out_ptr + r * N + c, x * 2 + 1, mask=mask)


@pytest.mark.parametrize("shape", [(16, 32), (17, 31), (1, 1), (40, 64)])
def test_broadcast_row_and_column_bounds(shape):
    M, N = shape
    x = np.random.default_rng(0).standard_normal((M, N)).astype(np.float32)
    out = np.zeros_like(x)
    _rows_cols[(xblock.cdiv(M, 8), xblock.cdiv(N, 32))](x, out, M, N, BLOCK_M=8, BLOCK_N=32, target="cpu")
    np.testing.assert_array_equal(out, x * 2 + 1)


@xblock.jit
def _wrapping(out_ptr, start, n, BLOCK: xl.constexpr):
    lanes = xl.arange(0, BLOCK)
    offs = start + lanes  # wraps past 2^31 - 1 for a start near it
    xl.store(out_ptr + lanes, lanes + 1, mask=offs < n)
    xl.store(out_ptr + BLOCK + lanes, lanes + 1, mask=offs >= 0)


@pytest.mark.parametrize("start", [2**31 - 40, 2**31 - 64, 0, -(2**31)])
def test_wrapping_lanes_are_not_a_full_block(start):
    a, b = np.zeros(128, np.int32), np.zeros(128, np.int32)
    _wrapping[(1,)](a, start, 2**31 - 1, BLOCK=64, target="cpu")
    _wrapping[(1,)](b, start, 2**31 - 1, BLOCK=64, target="sim")
    np.testing.assert_array_equal(a, b)


@xblock.jit
def _looped(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    acc = xl.zeros((BLOCK,), xl.float32)
    for start in range(0, n, BLOCK):
        offs = start + xl.arange(0, BLOCK)  # the loop variable is the scalar of the bound
        acc += xl.load(x_ptr + offs, mask=offs < n, other=0.0)
    xl.store(out_ptr + xl.arange(0, BLOCK), acc)


@pytest.mark.parametrize("n", [16, 100, 129])
def test_bound_on_a_loop_variable(n):
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(64, np.float32)
    _looped[(1,)](x, out, n, BLOCK=64, target="cpu")
    want = np.zeros(64 * xblock.cdiv(n, 64), np.float32)
    want[:n] = x
    np.testing.assert_array_equal(out, want.reshape(-1, 64).sum(0))


def test_mask_bounds_reads_the_structure():
    from mlir import ir

    ck = xblock.compile(_bounds, target="sim", signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "lo": "i32",
                                                          "hi": "i32"}, constexprs={"BLOCK": 64})
    module = ir.Module.parse(ck.asm["xb"], xb.context())
    ops = list(module.body.operations[0].regions[0].blocks[0].operations)
    masks = [list(op.operands)[1] for op in ops if op.operation.name == "xb.load"]
    found = [mask_bounds(m) for m in masks]
    assert [[(b.pred, b.lanes.start, b.lanes.count) for b in bs] for bs in found] == [
        [("slt", 0, 64)], [("slt", 1, 64), ("sgt", 0, 64)], [("sge", -3, 64), ("sle", 0, 64)]]
    assert [len(b.limit[0]) for bs in found for b in bs] == [1, 1, 1, 1, 1]  # hi, hi, lo - 9, lo, hi - 1
