"""RMSNorm in half precision with fp32 math: loads fp16/bf16, computes in fp32, stores back.

One row per program in a single block; shows `.to(xl.float32)`, `xl.rsqrt` and the Triton idiom
`y.to(out_ptr.dtype.element_ty)` for casting to the output pointer's element type.
"""

import numpy as np

import xblock
import xblock.language as xl
from xblock.testing import Case, default_tolerance


@xblock.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, eps, BLOCK: xl.constexpr):
    row = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    mask = cols < n_cols
    x = xl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(xl.float32)
    w = xl.load(w_ptr + cols, mask=mask, other=0.0).to(xl.float32)
    rstd = xl.rsqrt(xl.sum(x * x, axis=0) / n_cols + eps)
    y = x * rstd * w
    xl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


SIZES = [(1, 1), (3, 127), (5, 128), (2, 129), (64, 1000), (33, 4096)]  # (rows, cols)
DTYPES = [np.float16, "bfloat16"]
EPS = 1e-6


def case(size, dtype=np.float16, seed=0) -> Case:
    dt = xblock.testing.bf16() if str(dtype) == "bfloat16" else np.dtype(dtype)
    n_rows, n_cols = size
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(size, dtype=np.float32).astype(dt)
    w = rng.uniform(0.5, 1.5, n_cols).astype(dt)
    out = np.empty(size, dtype=dt)
    x64 = x.astype(np.float64)
    ref = x64 / np.sqrt((x64 * x64).mean(axis=1, keepdims=True) + EPS) * w.astype(np.float64)
    block = 1 << (n_cols - 1).bit_length()  # next power of 2 >= n_cols
    atol, rtol = default_tolerance(dt)
    return Case(
        rmsnorm_kernel,
        (n_rows,),
        (x, w, out, n_cols, n_cols, n_cols, EPS),
        dict(BLOCK=block),
        outputs={"out": 2},
        expected={"out": ref.astype(dt)},
        atol=atol,
        rtol=rtol,
    )
