"""Permutes of rank 3 and 4 on ascend against numpy, at boundary shapes (1 and 2 along each dim) and
in f32, f16 and i32: one that keeps the row-major order (size-1 dims moved) is a view, a batch of
2-D transposes in whole blocks TransDataTo5HD, any other one Gather (vector/permute.py), none a scalar
loop; reshapes of rank-3 blocks are views."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import xblock
import xblock.language as xl

from .._helpers import data, run_ascend

DTYPES = [np.float32, np.float16, np.int32]
ORDERS = list(itertools.permutations(range(3)))


def _data(shape, dtype):
    return data(np.random.default_rng(sum(shape)), shape, dtype)


@xblock.jit
def permute3(x_ptr, y_ptr, A: xl.constexpr, B: xl.constexpr, C: xl.constexpr, P0: xl.constexpr,
             P1: xl.constexpr, P2: xl.constexpr):
    n: xl.constexpr = A * B * C
    x = xl.reshape(xl.load(x_ptr + xl.arange(0, n)), [A, B, C])  # rows in, a rank-3 view
    y = xl.permute(x * 2, (P0, P1, P2))  # of a computed tile, not the loaded one
    xl.store(y_ptr + xl.arange(0, n), xl.reshape(y, [n]))


def _check3(shape, order, dtype):
    x = _data(shape, dtype)
    ref = np.transpose(x * 2, order)
    y = np.zeros(ref.shape, dtype)
    warns = run_ascend(permute3, (x.ravel(), y.ravel()), A=shape[0], B=shape[1], C=shape[2], P0=order[0],
                 P1=order[1], P2=order[2])
    np.testing.assert_array_equal(y, ref)
    assert not any("scalar GetValue/SetValue" in w for w in warns)
    kept = [d for d in order if shape[d] != 1]
    cpp = permute3.warmup(x.ravel(), y.ravel(), target="ascend", A=shape[0], B=shape[1], C=shape[2], P0=order[0],
                          P1=order[1], P2=order[2]).asm["cpp"]
    assert (kept != sorted(kept)) == ("Gather(" in cpp or "TransDataTo5HD(" in cpp)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("shape", [(1, 2, 2), (2, 1, 2), (2, 2, 1), (2, 2, 2), (1, 1, 2), (2, 4, 8)])
def test_permute3_f32(shape, order):
    _check3(shape, order, np.float32)


@pytest.mark.parametrize("dtype", [np.float16, np.int32])
@pytest.mark.parametrize("shape,order", [((2, 2, 2), (0, 2, 1)), ((2, 1, 2), (2, 1, 0)), ((1, 2, 2), (1, 0, 2)),
                                         ((4, 2, 8), (2, 0, 1)), ((2, 2, 16), (0, 2, 1))])
def test_permute3_other_dtypes(shape, order, dtype):
    _check3(shape, order, dtype)


@xblock.jit
def permute4_reshape(x_ptr, y_ptr, r_ptr, A: xl.constexpr, B: xl.constexpr, C: xl.constexpr, D: xl.constexpr):
    n: xl.constexpr = A * B * C * D
    x = xl.reshape(xl.load(x_ptr + xl.arange(0, n)), [A, B, C, D])
    y = xl.permute(x, (0, 1, 3, 2))  # a batch of 2-D transposes, as tl.flip's
    xl.store(y_ptr + xl.arange(0, n), xl.reshape(y, [n]))
    z = xl.reshape(x + 1, [A * B, C, D])  # a rank-3 view of a rank-4 block
    xl.store(r_ptr + xl.arange(0, n), xl.reshape(xl.permute(z, (0, 1, 2)), [n]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 2, 4, 2), (2, 1, 2, 2), (2, 2, 8, 1), (1, 4, 8, 2)])
def test_permute4_and_reshape(shape, dtype):
    x = _data(shape, dtype)
    y, r = np.zeros(x.size, dtype), np.zeros(x.size, dtype)
    run_ascend(permute4_reshape, (x.ravel(), y, r), A=shape[0], B=shape[1], C=shape[2], D=shape[3])
    np.testing.assert_array_equal(y, np.transpose(x, (0, 1, 3, 2)).ravel())
    np.testing.assert_array_equal(r, (x + 1).ravel())


@xblock.jit
def broadcast3(x_ptr, y_ptr, m_ptr, A: xl.constexpr, B: xl.constexpr, C: xl.constexpr):
    n: xl.constexpr = A * B * C
    x = xl.load(x_ptr + xl.arange(0, B)) * 2  # a computed tile
    y = xl.broadcast_to(xl.reshape(x, [1, B, 1]), [A, B, C])  # rows of 1..2 elements: a Gather at stride 0
    xl.store(y_ptr + xl.arange(0, n), xl.reshape(y, [n]))
    m = xl.broadcast_to(xl.reshape(x > 0, [1, B, 1]), [A, B, C])  # a bit mask through float lanes
    xl.store(m_ptr + xl.arange(0, n), xl.reshape(xl.where(m, y, -y), [n]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 2, 1), (2, 2, 2), (1, 8, 2)])
def test_broadcast3(shape, dtype):
    A, B, C = shape
    x = _data((B,), dtype)
    y, m = np.zeros(A * B * C, dtype), np.zeros(A * B * C, dtype)
    warns = run_ascend(broadcast3, (x, y, m), A=A, B=B, C=C)
    ref = np.broadcast_to((x * 2)[None, :, None], shape)
    np.testing.assert_array_equal(y, ref.ravel())
    np.testing.assert_array_equal(m, np.where(ref > 0, ref, -ref).ravel())
    assert not any("scalar GetValue/SetValue" in w for w in warns)  # none of these is whole 32-byte rows
