"""Row prefix sum: one row per program, `xl.cumsum(x, axis=0)` in fp32 over a masked block."""

import numpy as np

import xblock
import xblock.language as xl
from xblock.testing import Case, default_tolerance


@xblock.jit
def cumsum_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: xl.constexpr):
    row = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    mask = cols < n_cols
    x = xl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(xl.float32)
    xl.store(out_ptr + row * out_row_stride + cols, xl.cumsum(x, axis=0), mask=mask)


SIZES = [(1, 1), (3, 127), (5, 128), (2, 129), (64, 1000), (823, 781)]  # (rows, cols)
DTYPES = [np.float32, np.float16, "bfloat16"]


def case(size, dtype=np.float32, seed=0) -> Case:
    dt = xblock.testing.bf16() if str(dtype) == "bfloat16" else np.dtype(dtype)
    n_rows, n_cols = size
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(size, dtype=np.float32).astype(dt)
    out = np.empty(size, dtype=dt)
    expected = np.cumsum(x.astype(np.float64), axis=1).astype(dt)
    block = 1 << (n_cols - 1).bit_length()  # next power of 2 >= n_cols
    atol, rtol = default_tolerance(dt)
    if dt == np.float32:
        atol, rtol = 1e-4, 1e-4  # partial sums grow like sqrt(n), and the scan order moves the last bits
    return Case(
        cumsum_kernel,
        (n_rows,),
        (x, out, n_cols, n_cols, n_cols),
        dict(BLOCK=block),
        outputs={"out": 1},
        expected={"out": expected},
        atol=atol,
        rtol=rtol,
    )
