"""Vector add: the smallest kernel, one masked 1-D block per program (fp32, fp16, bf16)."""

import numpy as np

import xblock
import xblock.language as xl
from xblock.testing import Case, default_tolerance


@xblock.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    mask = offs < n
    x = xl.load(x_ptr + offs, mask=mask)
    y = xl.load(y_ptr + offs, mask=mask)
    xl.store(out_ptr + offs, x + y, mask=mask)


BLOCK = 1024
SIZES = [1, 1023, 1024, 1025, 7919, 98432]  # 1, BLOCK-1, BLOCK, BLOCK+1, a prime, multi-block
DTYPES = [np.float32, np.float16, "bfloat16"]


def case(size, dtype=np.float32, seed=0) -> Case:
    dt = xblock.testing.bf16() if str(dtype) == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(size, dtype=np.float32).astype(dt)
    y = rng.standard_normal(size, dtype=np.float32).astype(dt)
    out = np.empty(size, dtype=dt)
    expected = (x.astype(np.float64) + y.astype(np.float64)).astype(dt)
    atol, rtol = default_tolerance(dt)
    return Case(
        add_kernel,
        (xblock.cdiv(size, BLOCK),),
        (x, y, out, size),
        dict(BLOCK=BLOCK),
        outputs={"out": 2},
        expected={"out": expected},
        atol=atol,
        rtol=rtol,
    )
