"""Blocks sized for a GPU on ascend (issue #18): blocks that overflow the unified buffer are computed in
chunks (xb-strip-mine), in loops over the chunks, against numpy and the sim at the block boundaries:
1-D blocks of 8192 and 65536 elements, 2-D tiles of 128x256 fp32 and 256x256 fp16, row and column
reductions, full reductions with argmax, cumsum, and softmax and layer norm written as public Triton
kernels write them (one row per program, BLOCK_SIZE = next_power_of_2(n_cols), masked). A kernel that
cannot be split keeps the unified-buffer error, with the reason."""

from __future__ import annotations

import numpy as np
import pytest

import xblock
import xblock.language as tl
from examples.triton.softmax import softmax_kernel as _tutorial_softmax
from tests._pkg import mentions_package


@xblock.jit(do_not_specialize=["n"])
def scale_shift(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * 2.0 + 1.0, mask=mask)


@xblock.jit(do_not_specialize=["m", "n"])
def tile_fma(x_ptr, y_ptr, out_ptr, m, n, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    offs = rows[:, None] * n + cols[None, :]
    mask = (rows[:, None] < m) & (cols[None, :] < n)
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * y + x, mask=mask)


@xblock.jit(do_not_specialize=["m", "n"])
def tile_reductions(x_ptr, rsum_ptr, rmax_ptr, csum_ptr, cmax_ptr, m, n, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    mask = (rows[:, None] < m) & (cols[None, :] < n)
    x = tl.load(x_ptr + rows[:, None] * n + cols[None, :], mask=mask, other=0.0)
    tl.store(rsum_ptr + rows, tl.sum(x, axis=1), mask=rows < m)
    tl.store(rmax_ptr + rows, tl.max(tl.where(mask, x, -float("inf")), axis=1), mask=rows < m)
    tl.store(csum_ptr + cols, tl.sum(x, axis=0), mask=cols < n)
    tl.store(cmax_ptr + cols, tl.max(tl.where(mask, x, -float("inf")), axis=0), mask=cols < n)


@xblock.jit(do_not_specialize=["n"])
def sums_and_scan(x_ptr, out_ptr, idx_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr, tl.sum(x))
    tl.store(out_ptr + 1, tl.max(tl.where(mask, x, -float("inf"))))
    tl.store(idx_ptr, tl.argmax(tl.where(mask, x, -float("inf")), axis=0))
    tl.store(y_ptr + offs, tl.cumsum(x, axis=0), mask=mask)


# Triton's fused-softmax tutorial kernel, unmodified (examples/triton/softmax.py)
softmax_kernel = xblock.jit(_tutorial_softmax, do_not_specialize=["n_rows", "n_cols"])


@xblock.jit(do_not_specialize=["n_cols"])
def layer_norm_kernel(Y_ptr, X_ptr, W_ptr, B_ptr, Mean_ptr, RSTD_ptr, stride, n_cols, eps,
                      BLOCK_SIZE: tl.constexpr):
    """A layer-norm forward as fused-kernel libraries write it: a whole row per program."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    X_row = tl.load(X_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    W_row = tl.load(W_ptr + cols, mask=mask, other=0.0)
    B_row = tl.load(B_ptr + cols, mask=mask, other=0.0)
    mean = tl.sum(X_row, axis=0) / n_cols
    Xm = tl.where(mask, X_row - mean, 0.0)
    var = tl.sum(Xm * Xm, axis=0) / n_cols
    rstd = tl.rsqrt(var + eps)
    tl.store(Mean_ptr + row, mean)
    tl.store(RSTD_ptr + row, rstd)
    Y_row = Xm * rstd * W_row + B_row
    tl.store(Y_ptr + row * stride + cols, Y_row.to(Y_ptr.dtype.element_ty), mask=mask)


@xblock.jit
def pair_sums(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    pairs = tl.reshape(x, [BLOCK // 2, 2])
    tl.store(out_ptr + tl.arange(0, BLOCK // 2), tl.sum(pairs, axis=1))


@xblock.jit
def two_long_rows(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, 2)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 1.0)


rng = np.random.default_rng(18)


def _launch(kernel, grid, args, **meta) -> dict:
    """The outputs of one launch per target on copies of `args`, and the split the ascend build chose."""
    out = {}
    for target in ("sim", "ascend"):
        a = [v.copy() if isinstance(v, np.ndarray) else v for v in args]
        kernel[grid](*a, target=target, **meta)
        out[target] = a
    out["split"] = kernel.warmup(*args, target="ascend", **meta).metadata.get("split")
    return out


def _check(out, index, want, rtol, atol=0.0) -> None:
    np.testing.assert_allclose(out["ascend"][index].astype(np.float32), want, rtol=rtol, atol=atol)
    np.testing.assert_allclose(out["ascend"][index].astype(np.float32), out["sim"][index].astype(np.float32),
                               rtol=rtol, atol=atol)


def _pow2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def test_elementwise_1d_blocks_of_65536():
    block = 65536  # 256 KB of input alone (8192 fits whole: layer norm below splits 8192-wide rows)
    for n in (block - 1, block, block + 1):
        x = rng.standard_normal(n).astype(np.float32)
        out = _launch(scale_shift, (-(-n // block),), [x, np.zeros(n, np.float32), n], BLOCK=block)
        _check(out, 1, x * 2 + 1, rtol=1e-6)
    assert out["split"]["factor"] >= 8 and out["split"]["chunk"] * out["split"]["factor"] == block


@pytest.mark.parametrize("dtype, bm, bn", [(np.float32, 128, 256), (np.float16, 256, 256)])
def test_elementwise_2d_tiles_split_by_rows(dtype, bm, bn):
    for m, n in ((bm - 1, bn + 1), (bm, bn), (bm + 1, bn - 1)):
        x, y = (rng.standard_normal((m, n)).astype(dtype) for _ in range(2))
        grid = (-(-m // bm), -(-n // bn))
        out = _launch(tile_fma, grid, [x, y, np.zeros_like(x), m, n], BM=bm, BN=bn)
        want = (x * y + x).astype(np.float32)
        _check(out, 2, want, rtol=2e-3 if dtype == np.float16 else 1e-6, atol=2e-3 if dtype == np.float16 else 0)
    assert out["split"]["extent"] == bm and out["split"]["loops"] == 1


def test_row_reductions_stay_in_a_chunk_and_column_reductions_are_carried():
    bm, bn = 128, 256
    for m, n in ((bm, bn), (bm - 1, bn - 3)):
        x = rng.standard_normal((m, n)).astype(np.float32)
        outs = [np.zeros(bm, np.float32), np.zeros(bm, np.float32), np.zeros(bn, np.float32), np.zeros(bn, np.float32)]
        out = _launch(tile_reductions, (1,), [x, *outs, m, n], BM=bm, BN=bn)
        a = out["ascend"]
        np.testing.assert_allclose(a[1][:m], x.sum(1), rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(a[2][:m], x.max(1))
        np.testing.assert_allclose(a[3][:n], x.sum(0), rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(a[4][:n], x.max(0))
    assert out["split"]["loops"] == 1


def test_full_reductions_and_cumsum_of_65536_elements():
    block = 65536
    for n in (block - 1, block):
        x = rng.standard_normal(n).astype(np.float32)
        x[n // 3] = x[n - 2] = 7.5  # ties in different chunks: the first index wins
        args = [x, np.zeros(2, np.float32), np.zeros(1, np.int32), np.zeros(n, np.float32), n]
        out = _launch(sums_and_scan, (1,), args, BLOCK=block)
        a = out["ascend"]
        np.testing.assert_allclose(a[1], [x.sum(dtype=np.float64), x.max()], rtol=1e-4)
        assert a[2][0] == n // 3 == out["sim"][2][0]
        _check(out, 3, np.cumsum(x, dtype=np.float64), rtol=1e-4, atol=1e-2)  # carries the running total


@pytest.mark.parametrize("block", [32768])
def test_softmax_tutorial_kernel_on_long_rows(block):
    for n in (block - 1, block, block + 1):  # the last one takes BLOCK_SIZE = 2 * block
        x = rng.standard_normal((3, n)).astype(np.float32)
        out = _launch(softmax_kernel, (2,), [np.zeros_like(x), x, n, n, 3, n], BLOCK_SIZE=_pow2(n))
        e = np.exp(x - x.max(1, keepdims=True))
        _check(out, 0, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-9)
        assert out["split"]["loops"] == 3  # max, sum of exp, then the normalised store


@pytest.mark.parametrize("block", [8192])
def test_layer_norm_on_long_rows(block):
    for n in (block - 1, block, block + 1):
        x = rng.standard_normal((3, n)).astype(np.float32)
        w, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
        args = [np.zeros_like(x), x, w, b, np.zeros(3, np.float32), np.zeros(3, np.float32), n, n, 1e-5]
        out = _launch(layer_norm_kernel, (3,), args, BLOCK_SIZE=_pow2(n))
        mu = x.mean(1, keepdims=True, dtype=np.float64)
        rstd = 1 / np.sqrt(((x - mu) ** 2).mean(1, keepdims=True) + 1e-5)
        _check(out, 0, (x - mu) * rstd * w + b, rtol=1e-4, atol=1e-4)
        _check(out, 4, mu[:, 0], rtol=1e-4, atol=1e-6)
        _check(out, 5, rstd[:, 0], rtol=1e-4)
        assert out["split"]["loops"] == 3  # the mean, the variance, then the scalar stores and the row


def test_a_kernel_that_cannot_be_split_keeps_the_unified_buffer_error_with_the_reason():
    x = np.zeros(65536, np.float32)
    with pytest.raises(xblock.CompilationError) as e:
        pair_sums[(1,)](x, np.zeros(32768, np.float32), BLOCK=65536, target="ascend")
    msg = str(e.value)
    line = pair_sums.fn.__code__.co_firstlineno + 2  # x = tl.load(...): the first 256 KB block
    assert f"test_big_blocks.py:{line}:" in msg and "use smaller BLOCK sizes" in msg
    assert ("(xblock computes blocks that do not fit in chunks, but cannot split this kernel's: tl.reshape "
            f"(view, ravel) regroups the elements of the split axis (line {line + 1}))") in msg
    assert "x = tl.load" in msg and "^" in msg  # the source line and its caret
    assert not mentions_package(msg) and "Traceback" not in msg
    with pytest.raises(xblock.CompilationError, match=r"in 2 chunks of 1 row they still need \d+ B"):
        two_long_rows[(1,)](np.zeros(2 * 65536, np.float32), np.zeros(2 * 65536, np.float32), N=65536,
                            target="ascend")


@xblock.jit
def scaled_dot_loop(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, 2):
        a = tl.load(a_ptr + rows[:, None] * (2 * BK) + (k * BK + ks)[None, :])
        b = tl.load(b_ptr + (k * BK + ks)[:, None] * BN + cols[None, :])
        acc += tl.dot(a, b) * 0.5  # not a plain K loop: the dot goes to the vector core, the tile to UB
    tl.store(c_ptr + rows[:, None] * BN + cols[None, :], acc)


def test_a_dot_loop_too_big_for_the_unified_buffer_runs_in_row_chunks():
    """A K loop whose dot is handed to the vector core keeps its 128 x 256 fp32 accumulator in UB: the
    loop runs whole for each chunk of rows, each dot on the chunk's rows of `a` (issue #30; it was
    refused, and the refusal was once raised inside an MLIR walk and surfaced as an internal
    RuntimeError, "Exception raised in callback")."""
    a = rng.integers(-4, 5, (128, 128)).astype(np.float16)
    b = rng.integers(-4, 5, (128, 256)).astype(np.float16)
    out = _launch(scaled_dot_loop, (1,), [a, b, np.zeros((128, 256), np.float32)], BM=128, BN=256, BK=64)
    want = (a.astype(np.float32) @ b.astype(np.float32)) * 0.5  # small integers: exact
    np.testing.assert_array_equal(out["ascend"][2], want)
    np.testing.assert_array_equal(out["sim"][2], want)
    assert out["split"]["rows"] and out["split"]["loops"] == 1


def test_a_plain_k_loop_with_a_vector_epilogue_runs_its_epilogue_in_chunks():
    """The matmul example at 128 x 256 x 64: the Cube's K loop stays whole, the leaky-ReLU runs in row
    chunks read from the workspace (tests/ascend/cube/test_both_vector_cores.py checks the numbers)."""
    from examples.matmul import matmul_kernel

    a = np.zeros((64, 64), np.float16)
    ck = matmul_kernel.warmup(a, a, np.zeros((64, 64), np.float16), 64, 64, 64, 64, 1, 64, 1, 64, 1,
                              BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, target="ascend", grid=(1,))
    assert ck.metadata["split"]["rows"] and ck.metadata["kernel_type"] == "KERNEL_TYPE_MIX_AIC_1_2"
