"""prod, xor_sum and generic (`xl.reduce` with a combine function) reductions on ascend: scalar
GetValue loops over the lanes, over a whole block and along one axis of a 2-D block, against the sim.
The language has no `prod`; `_prod` below reaches the xb.reduce kind the sim and ascend implement."""

from __future__ import annotations

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.language.core import builtin


@builtin
def _prod(input, axis=None, keep_dims=False, _semantic=None):
    return _semantic.reduce_kind("prod", input, axis, keep_dims)


@xblock.jit
def _pick_max_abs(a, b):
    return xl.where(xl.abs(a) > xl.abs(b), a, b)


@xblock.jit
def _mul(a, b):
    return a * b


@xblock.jit
def _add_mul(a, b):
    return a + b * 2


@xblock.jit
def rows_kernel(x_ptr, i_ptr, p_ptr, x_out_ptr, g_ptr, f_ptr, n, COLS: xl.constexpr):
    """Per row: a product of floats, xor_sum of ints, and two other combine functions."""
    row = xl.program_id(0)
    cols = xl.arange(0, COLS)
    mask = cols < n
    x = xl.load(x_ptr + row * n + cols, mask=mask, other=1.0)
    i = xl.load(i_ptr + row * n + cols, mask=mask, other=0)
    xl.store(p_ptr + row, xl.reduce(x, 0, _mul))
    xl.store(x_out_ptr + row, xl.xor_sum(i, axis=0))
    xl.store(g_ptr + row, xl.reduce(i, 0, _add_mul))
    xl.store(f_ptr + row, xl.reduce(x, 0, _pick_max_abs))


@xblock.jit
def axis_kernel(x_ptr, out_ptr, R: xl.constexpr, C: xl.constexpr):
    """A 2-D block reduced along each axis: a product down the columns, xor_sum along the rows."""
    r = xl.arange(0, R)[:, None]
    c = xl.arange(0, C)[None, :]
    x = xl.load(x_ptr + r * C + c)
    xl.store(out_ptr + xl.arange(0, C), xl.reduce(x, 0, _mul))
    xl.store(out_ptr + C + xl.arange(0, R), xl.xor_sum(x, axis=1))
    xl.store(out_ptr + C + R + xl.arange(0, R), _prod(x, axis=1))
    xl.store(out_ptr + C + 2 * R, _prod(x))


def _run(kernel, grid, args, **kw):
    res = {}
    for target in ("sim", "ascend"):
        a = [v.copy() if isinstance(v, np.ndarray) else v for v in args]
        kernel[grid](*a, target=target, **kw)
        res[target] = a
    return res


def test_prod_xor_sum_and_generic_match_the_sim():
    rng = np.random.default_rng(1)
    rows = 3
    for n in (1, 31, 33):
        x = rng.uniform(0.8, 1.25, (rows, n)).astype(np.float32) * rng.choice([-1.0, 1.0], (rows, n)).astype(
            np.float32)
        i = rng.integers(-1000, 1000, (rows, n), dtype=np.int32)
        outs = [np.zeros(rows, np.float32), np.zeros(rows, np.int32), np.zeros(rows, np.int32),
                np.zeros(rows, np.float32)]
        res = _run(rows_kernel, (rows,), [x, i, *outs, n], COLS=32 if n < 32 else 64)
        got, want = res["ascend"], res["sim"]
        np.testing.assert_allclose(got[2], want[2], rtol=1e-5)
        np.testing.assert_allclose(got[2], np.prod(x, axis=1), rtol=1e-5)
        np.testing.assert_array_equal(got[3], np.bitwise_xor.reduce(i, axis=1))
        np.testing.assert_array_equal(got[5], want[5])
        np.testing.assert_array_equal(got[4], want[4])  # exact: int adds and multiplies wrap alike


def test_reductions_along_each_axis_of_a_2d_block():
    x = np.random.default_rng(2).integers(1, 4, (8, 16), dtype=np.int32)
    res = _run(axis_kernel, (1,), [x, np.zeros(33, np.int32)], R=8, C=16)
    np.testing.assert_array_equal(res["ascend"][1], res["sim"][1])
    np.testing.assert_array_equal(res["ascend"][1][:16], np.prod(x, axis=0))
    np.testing.assert_array_equal(res["ascend"][1][24:32], np.prod(x, axis=1))
    np.testing.assert_array_equal(res["ascend"][1][32], np.prod(x, dtype=np.int32))


@xblock.jit
def _scaled_max_combine(a, b):
    return xl.maximum(a, b) * 1.5 - b


@xblock.jit
def _bf16_generic_reduce(x_ptr, all_ptr, rows_ptr, R: xl.constexpr, C: xl.constexpr):
    r = xl.arange(0, R)
    c = xl.arange(0, C)
    x = xl.load(x_ptr + r[:, None] * C + c[None, :])
    xl.store(all_ptr, xl.reduce(xl.reshape(x, [R * C]), 0, _scaled_max_combine))
    xl.store(rows_ptr + r, xl.reduce(x, 1, _scaled_max_combine))


@pytest.mark.parametrize("rows,cols", [(1, 1), (2, 3), (4, 16)])
def test_a_bf16_reduce_with_a_combine_function(rows, cols):
    """The combine converts to float and rounds back to bf16 (explicit in the IR, as in Triton); the
    scalar unit runs it in the sim's order. It was refused (8 of 500 kernels of fuzz campaign 48)."""
    import ml_dtypes

    x = np.random.default_rng(rows * cols).standard_normal((rows, cols)).astype(ml_dtypes.bfloat16)
    got = {}
    for target in ("sim", "ascend"):
        a, r = np.zeros(1, ml_dtypes.bfloat16), np.zeros(rows, ml_dtypes.bfloat16)
        _bf16_generic_reduce[(1,)](x, a, r, R=rows, C=cols, target=target)
        got[target] = (a.astype(np.float32), r.astype(np.float32))
    for s, t in zip(got["sim"], got["ascend"]):
        np.testing.assert_array_equal(t, s)


@xblock.jit
def _along_unit_axes(x_ptr, i_ptr, s_ptr, m_ptr, a_ptr, si_ptr, N: xl.constexpr):
    n = xl.arange(0, N)
    row = xl.load(x_ptr + n[None, :])  # [1, N]
    col = xl.load(x_ptr + n[:, None])  # [N, 1]
    xl.store(s_ptr + n, xl.sum(row, 0))
    xl.store(m_ptr + n, xl.max(col, 1))
    xl.store(a_ptr + n, xl.argmax(row, 0))
    xl.store(si_ptr + n, xl.sum(xl.load(i_ptr + n[None, :]), 0))  # int8 sums to int32


@pytest.mark.parametrize("n", [1, 8, 16])
def test_reductions_along_an_axis_of_one_element(n):
    """Refused before ("only reductions of 1-D blocks, or of 2-D blocks along one axis"): a reduction
    along a unit axis keeps each element (in the result's type); argmax gives 0."""
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    i = (np.arange(n) * 37 % 256 - 128).astype(np.int8)
    for target in ("sim", "ascend"):
        s, m, a, si = np.zeros(n, np.float32), np.zeros(n, np.float32), np.ones(n, np.int32), np.zeros(n, np.int32)
        _along_unit_axes[(1,)](x, i, s, m, a, si, N=n, target=target)
        np.testing.assert_array_equal(s, x, err_msg=target)
        np.testing.assert_array_equal(m, x, err_msg=target)
        np.testing.assert_array_equal(a, np.zeros(n, np.int32), err_msg=target)
        np.testing.assert_array_equal(si, i.astype(np.int32), err_msg=target)
