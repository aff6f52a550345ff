"""Column sums with atomics: a 2-D grid of tiles, each adds its partial column sums into out.

Every program reduces a BLOCK_M x BLOCK_N tile over its rows (`xl.sum(axis=0)`) and
`xl.atomic_add`s the result into out[N] (zero-initialised, fp32), so all the programs of one
column of tiles contend on the same addresses. The order of the adds is unspecified, hence the
tolerance.
"""

import numpy as np

import xblock
import xblock.language as xl
from xblock.testing import Case


@xblock.jit
def colsum_kernel(x_ptr, out_ptr, M, N, x_row_stride, BLOCK_M: xl.constexpr, BLOCK_N: xl.constexpr):
    offs_m = xl.program_id(0) * BLOCK_M + xl.arange(0, BLOCK_M)
    offs_n = xl.program_id(1) * BLOCK_N + xl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tile = xl.load(x_ptr + offs_m[:, None] * x_row_stride + offs_n[None, :], mask=mask, other=0.0)
    partial = xl.sum(tile.to(xl.float32), axis=0)
    xl.atomic_add(out_ptr + offs_n, partial, mask=offs_n < N)


SIZES = [(1, 1), (63, 65), (64, 64), (65, 63), (1000, 97), (3001, 130)]  # (M, N)
DTYPES = [np.float32, np.float16, "bfloat16"]
META = dict(BLOCK_M=64, BLOCK_N=64)


def case(size, dtype=np.float32, seed=0) -> Case:
    dt = xblock.testing.bf16() if str(dtype) == "bfloat16" else np.dtype(dtype)
    M, N = size
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(size, dtype=np.float32).astype(dt)
    out = np.zeros(N, dtype=np.float32)
    expected = x.astype(np.float64).sum(axis=0).astype(np.float32)
    grid = (xblock.cdiv(M, META["BLOCK_M"]), xblock.cdiv(N, META["BLOCK_N"]))
    return Case(
        colsum_kernel,
        grid,
        (x, out, M, N, N),
        META,
        outputs={"out": 1},
        expected={"out": expected},
        atol=1e-4,
        rtol=1e-5,
    )
