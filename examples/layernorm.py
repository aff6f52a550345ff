"""LayerNorm forward (Triton tutorial 05): one row per program, three loops over column chunks.

Pass 1 accumulates the mean, pass 2 the variance, pass 3 normalizes and applies weight and bias.
Rows longer than BLOCK exercise scf loops with a masked tail chunk; mean and rstd are also stored.
"""

import numpy as np

import xblock
import xblock.language as xl
from xblock.testing import Case, default_tolerance


@xblock.jit
def layernorm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, N, eps, BLOCK: xl.constexpr):
    row = xl.program_id(0)
    x_ptr += row * stride
    y_ptr += row * stride
    acc = xl.zeros([BLOCK], dtype=xl.float32)
    for off in range(0, N, BLOCK):
        cols = off + xl.arange(0, BLOCK)
        acc += xl.load(x_ptr + cols, mask=cols < N, other=0.0).to(xl.float32)
    mean = xl.sum(acc, axis=0) / N
    acc = xl.zeros([BLOCK], dtype=xl.float32)
    for off in range(0, N, BLOCK):
        cols = off + xl.arange(0, BLOCK)
        x = xl.load(x_ptr + cols, mask=cols < N, other=0.0).to(xl.float32)
        x = xl.where(cols < N, x - mean, 0.0)
        acc += x * x
    rstd = 1 / xl.sqrt(xl.sum(acc, axis=0) / N + eps)
    xl.store(mean_ptr + row, mean)
    xl.store(rstd_ptr + row, rstd)
    for off in range(0, N, BLOCK):
        cols = off + xl.arange(0, BLOCK)
        mask = cols < N
        w = xl.load(w_ptr + cols, mask=mask)
        b = xl.load(b_ptr + cols, mask=mask)
        x = xl.load(x_ptr + cols, mask=mask, other=0.0).to(xl.float32)
        xl.store(y_ptr + cols, (x - mean) * rstd * w + b, mask=mask)


BLOCK = 1024
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
        layernorm_kernel,
        (M,),
        (x, y, w, b, mean, rstd, N, N, EPS),
        dict(BLOCK=BLOCK),
        outputs={"y": 1, "mean": 4, "rstd": 5},
        expected={"y": ref.astype(dt), "mean": mu.astype(np.float32), "rstd": rs.astype(np.float32)},
        atol=atol,
        rtol=rtol,
    )
