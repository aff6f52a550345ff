"""Row argmax: one row per program, `xl.argmax(x, axis=0)` over a block padded with -inf.

Indices are int32 and ties go to the lowest index (Triton's tie_break_left, numpy's argmax);
fp16 and bf16 rows have many ties, which makes that rule visible.
"""

import numpy as np

import xblock
import xblock.language as xl
from xblock.testing import Case


@xblock.jit
def argmax_kernel(x_ptr, out_ptr, x_row_stride, n_cols, BLOCK: xl.constexpr):
    row = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=-float("inf"))
    xl.store(out_ptr + row, xl.argmax(x, axis=0))


SIZES = [(1, 1), (3, 127), (5, 128), (2, 129), (64, 1000), (823, 781)]  # (rows, cols)
DTYPES = [np.float32, np.float16, "bfloat16"]


def case(size, dtype=np.float32, seed=0) -> Case:
    dt = xblock.testing.bf16() if str(dtype) == "bfloat16" else np.dtype(dtype)
    n_rows, n_cols = size
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(size, dtype=np.float32).astype(dt)
    out = np.full(n_rows, -1, dtype=np.int32)
    expected = x.astype(np.float64).argmax(axis=1).astype(np.int32)
    block = 1 << (n_cols - 1).bit_length()  # next power of 2 >= n_cols
    return Case(
        argmax_kernel,
        (n_rows,),
        (x, out, n_cols, n_cols),
        dict(BLOCK=block),
        outputs={"out": 1},
        expected={"out": expected},
        atol=0,
        rtol=0,
    )
