"""LayerNorm forward as an unmodified Triton kernel (tutorial 05): three passes over column chunks.

Shows scalar pointer arguments advanced in place (`X += row * stride`) and stores of scalars.
"""

import functools

import numpy as np
import triton
import triton.language as tl

import xblock
from xblock.testing import Case, default_tolerance


@triton.jit
def _layer_norm_fwd_fused(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    mean = 0
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


@functools.cache
def kernel():
    return xblock.jit(_layer_norm_fwd_fused)


BLOCK_SIZE = 1024
SIZES = [(1, 1), (4, 1023), (3, 1024), (2, 1025), (5, 4096), (97, 3001)]  # (rows, cols)
DTYPES = [np.float32, np.float16, "bfloat16"]
EPS = 1e-5


def case(size, dtype=np.float32, seed=0) -> Case:
    dt = xblock.testing.bf16() if str(dtype) == "bfloat16" else np.dtype(dtype)
    M, N = size
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(size, dtype=np.float32) * 2 + 0.5).astype(dt)
    w = rng.uniform(0.5, 1.5, N).astype(dt)
    b = rng.standard_normal(N, dtype=np.float32).astype(dt)
    y = np.empty(size, dtype=dt)
    mean = np.empty(M, dtype=np.float32)
    rstd = np.empty(M, dtype=np.float32)
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=1)
    rs = 1 / np.sqrt(((x64 - mu[:, None]) ** 2).mean(axis=1) + EPS)
    ref = (x64 - mu[:, None]) * rs[:, None] * w.astype(np.float64) + b.astype(np.float64)
    atol, rtol = default_tolerance(dt)
    return Case(
        kernel(),
        (M,),
        (x, y, w, b, mean, rstd, N, N, EPS),
        dict(BLOCK_SIZE=BLOCK_SIZE),
        outputs={"y": 1, "mean": 4, "rstd": 5},
        expected={"y": ref.astype(dt), "mean": mu.astype(np.float32), "rstd": rs.astype(np.float32)},
        atol=atol,
        rtol=rtol,
    )
