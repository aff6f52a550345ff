"""The helpers of triton.language.standard and the operator functions (tl.add, tl.softmax,
tl.swizzle2d, tl.reduce_or, tl.ravel) in unmodified @triton.jit kernels, against numpy."""

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile

triton = pytest.importorskip("triton")
tl = triton.language

RUN_TARGETS = ["sim", "cpu", "ascend"]


@triton.jit
def row_softmax(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    tl.store(out_ptr + row * n_cols + cols, tl.softmax(x), mask=cols < n_cols)


@triton.jit
def grouped_order(out_ptr, GRID_M: tl.constexpr, GRID_N: tl.constexpr, GROUP: tl.constexpr):
    pid = tl.program_id(0)
    pid_m, pid_n = tl.swizzle2d(pid // GRID_N, pid % GRID_N, GRID_M, GRID_N, GROUP)
    tl.store(out_ptr + pid * 2, pid_m)
    tl.store(out_ptr + pid * 2 + 1, pid_n)


@triton.jit
def operators(x_ptr, y_ptr, out_ptr, bits_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tl.sub(tl.mul(tl.add(x, y), x), y))
    flags = tl.load(bits_ptr + offs)
    tl.store(bits_ptr + offs, flags * 0 + tl.reduce_or(flags, 0))


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("cols", [1, 100, 128])
def test_softmax(target, cols):
    x = np.random.default_rng(cols).standard_normal((7, cols)).astype(np.float32)
    out = np.zeros_like(x)
    xblock.jit(row_softmax)[(7,)](x, out, cols, BLOCK=128, target=target)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)


def _swizzle_numpy(grid_m, grid_n, group):
    out = []
    for pid in range(grid_m * grid_n):
        group_rows = group * grid_n
        first = pid // group_rows * group
        rows = min(grid_m - first, group)
        within = pid % group_rows
        out.append((first + within % rows, within // rows))
    return np.array(out, np.int32).ravel()


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("grid", [(4, 4, 2), (5, 3, 2), (7, 2, 3)])
def test_swizzle2d_visits_every_tile_once(target, grid):
    m, n, g = grid
    out = np.zeros(2 * m * n, np.int32)
    xblock.jit(grouped_order)[(m * n,)](out, GRID_M=m, GRID_N=n, GROUP=g, target=target)
    np.testing.assert_array_equal(out, _swizzle_numpy(m, n, g))
    assert len({(a, b) for a, b in out.reshape(-1, 2)}) == m * n


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_operator_functions_and_reduce_or(target):
    rng = np.random.default_rng(8)
    x, y = rng.standard_normal(32).astype(np.float32), rng.standard_normal(32).astype(np.float32)
    bits = (1 << rng.integers(0, 20, 32)).astype(np.int32)
    out = np.zeros(32, np.float32)
    want_bits = np.bitwise_or.reduce(bits)
    xblock.jit(operators)[(1,)](x, y, out, bits, BLOCK=32, target=target)
    np.testing.assert_allclose(out, (x + y) * x - y, rtol=1e-6)
    assert (bits == want_bits).all()


def test_compiles_for_cuda():
    x = np.zeros((7, 128), np.float32)
    assert "cubin" in precompile(row_softmax, (x, x, 128), {"BLOCK": 128}).asm
    assert "cubin" in precompile(grouped_order, (np.zeros(32, np.int32),), {"GRID_M": 4, "GRID_N": 4,
                                                                             "GROUP": 2}).asm


@triton.jit
def store_twice(x_ptr, a_ptr, b_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y = tl.exp(tl.load(x_ptr + offs))
    tl.store(a_ptr + offs, y)
    tl.store(b_ptr + offs, y * 2)
    tl.store(b_ptr + BLOCK + offs, y)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_a_value_stored_then_used_again(target):
    """A store consumes a computed block's output buffer only at its last use (ascend: no use after free)."""
    x = np.linspace(0, 1, 64, dtype=np.float32)
    a, b = np.zeros(64, np.float32), np.zeros(128, np.float32)
    xblock.jit(store_twice)[(1,)](x, a, b, BLOCK=64, target=target)
    np.testing.assert_allclose(a, np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(b, np.concatenate([2 * np.exp(x), np.exp(x)]), rtol=1e-6)
