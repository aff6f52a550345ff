"""tl.sort and tl.topk in unmodified @triton.jit kernels on every target: sim, cpu and ascend against
numpy (ascend sorts float16/float32 rows of 32 or more on its vector unit, shorter rows and integer keys
with the bitonic network), cuda compiled to a cubin."""

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile

triton = pytest.importorskip("triton")
tl = triton.language

TARGETS = ["sim", "cpu", "ascend"]


@triton.jit
def sort_topk(x_ptr, asc_ptr, desc_ptr, top_ptr, R: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rows = tl.arange(0, R)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    tl.store(asc_ptr + rows * N + cols, tl.sort(x))
    tl.store(desc_ptr + rows * N + cols, tl.sort(x, dim=1, descending=True))
    tl.store(top_ptr + rows * K + tl.arange(0, K)[None, :], tl.topk(x, K))


@triton.jit
def row_topk(x_ptr, out_ptr, n, BLOCK: tl.constexpr, K: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=float("-inf"))
    tl.store(out_ptr + row * K + tl.arange(0, K), tl.topk(x, K))


CASES = [(np.float32, 32, 8), (np.float32, 128, 32), (np.float16, 64, 16), (np.float16, 16, 4),
         (np.int32, 32, 8)]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype,n,k", CASES)
def test_sort_topk(target, dtype, n, k):
    R = 4
    x = (np.random.default_rng(n + k).standard_normal((R, n)) * 30).astype(dtype)
    x[1, : n // 4] = x[1, 0]  # ties
    asc, desc, top = np.zeros_like(x), np.zeros_like(x), np.zeros((R, k), dtype)
    xblock.jit(sort_topk)[(1,)](x, asc, desc, top, R=R, N=n, K=k, target=target)
    ref = np.sort(x, 1)
    np.testing.assert_array_equal(asc, ref)
    np.testing.assert_array_equal(desc, ref[:, ::-1])
    np.testing.assert_array_equal(top, ref[:, ::-1][:, :k])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [1, 100, 256])
def test_masked_row_topk(target, n):
    rows, K = 5, 8
    x = np.random.default_rng(n).standard_normal((rows, n)).astype(np.float32)
    out = np.zeros((rows, K), np.float32)
    xblock.jit(row_topk)[(rows,)](x, out, n, BLOCK=256, K=K, target=target)
    ref = np.full((rows, 256), -np.inf, np.float32)
    ref[:, :n] = x
    np.testing.assert_array_equal(out, np.sort(ref, 1)[:, ::-1][:, :K])


def test_cuda_compiles_sort_topk():
    f = np.zeros(512, np.float32)
    assert "cubin" in precompile(sort_topk, (f, f, f, f), {"R": 4, "N": 128, "K": 32}).asm
    assert "cubin" in precompile(row_topk, (f, f, 100), {"BLOCK": 256, "K": 8}).asm
