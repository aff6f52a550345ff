"""Fused row softmax: one row per program in a single block (BLOCK = next power of 2 >= n_cols).

Masked-off lanes load -inf so they vanish from the max and contribute exp(-inf) = 0 to the sum.
The math is done in fp32 whatever the storage dtype; the store casts back to the output's dtype.
"""

import numpy as np

import xblock
import xblock.language as xl
from xblock.testing import Case, default_tolerance


@xblock.jit
def softmax_kernel(out_ptr, x_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: xl.constexpr):
    row = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    mask = cols < n_cols
    x = xl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(xl.float32)
    num = xl.exp(x - xl.max(x, axis=0))
    out = num / xl.sum(num, axis=0)
    xl.store(out_ptr + row * out_row_stride + cols, out, mask=mask)


SIZES = [(1, 1), (3, 127), (5, 128), (2, 129), (7, 1000), (823, 781)]  # (rows, cols)
DTYPES = [np.float32, np.float16, "bfloat16"]


def case(size, dtype=np.float32, seed=0) -> Case:
    dt = xblock.testing.bf16() if str(dtype) == "bfloat16" else np.dtype(dtype)
    n_rows, n_cols = size
    rng = np.random.default_rng(seed)
    # rows of x are padded to n_cols + 3 elements, so the kernel must honour x_row_stride
    x = (rng.standard_normal((n_rows, n_cols + 3), dtype=np.float32) * 3).astype(dt)
    out = np.empty(size, dtype=dt)
    x64 = x[:, :n_cols].astype(np.float64)
    num = np.exp(x64 - x64.max(axis=1, keepdims=True))
    expected = (num / num.sum(axis=1, keepdims=True)).astype(dt)
    block = 1 << (n_cols - 1).bit_length()  # next power of 2 >= n_cols
    atol, rtol = default_tolerance(dt)
    args = (out, x, n_cols + 3, n_cols, n_cols)
    return Case(
        softmax_kernel,
        (n_rows,),
        args,
        dict(BLOCK=block),
        outputs={"out": 0},
        expected={"out": expected},
        atol=atol,
        rtol=rtol,
    )
