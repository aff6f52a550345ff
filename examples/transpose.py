"""Tiled 2-D transpose: a 2-D grid of BLOCK_M x BLOCK_N tiles, masks on both dimensions.

Each program loads a tile of x (M, N), transposes it in registers with `xl.trans`, and stores
it into out (N, M). Non-square tiles catch any mix-up of the two axes.
"""

import numpy as np

import xblock
import xblock.language as xl
from xblock.testing import Case


@xblock.jit
def transpose_kernel(
    x_ptr, out_ptr, M, N, x_row_stride, out_row_stride, BLOCK_M: xl.constexpr, BLOCK_N: xl.constexpr
):
    offs_m = xl.program_id(0) * BLOCK_M + xl.arange(0, BLOCK_M)
    offs_n = xl.program_id(1) * BLOCK_N + xl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tile = xl.load(x_ptr + offs_m[:, None] * x_row_stride + offs_n[None, :], mask=mask, other=0)
    # out[n, m] = x[m, n]: the transposed tile is (BLOCK_N, BLOCK_M), and so is its mask
    out_ptrs = out_ptr + offs_n[:, None] * out_row_stride + offs_m[None, :]
    xl.store(out_ptrs, xl.trans(tile), mask=xl.trans(mask))


SIZES = [(1, 1), (63, 31), (64, 32), (65, 33), (300, 200), (131, 1000)]  # (M, N) of x
DTYPES = [np.float32, np.float16, "bfloat16", np.int32, np.int8]
META = dict(BLOCK_M=64, BLOCK_N=32)


def case(size, dtype=np.float32, seed=0) -> Case:
    dt = xblock.testing.bf16() if str(dtype) == "bfloat16" else np.dtype(dtype)
    M, N = size
    rng = np.random.default_rng(seed)
    if dt.kind == "i":
        x = rng.integers(-100, 100, size).astype(dt)
    else:
        x = rng.standard_normal(size, dtype=np.float32).astype(dt)
    out = np.empty((N, M), dtype=dt)
    grid = (xblock.cdiv(M, META["BLOCK_M"]), xblock.cdiv(N, META["BLOCK_N"]))
    return Case(
        transpose_kernel,
        grid,
        (x, out, M, N, N, M),
        META,
        outputs={"out": 1},
        expected={"out": x.T.copy()},
        atol=0,
        rtol=0,
    )
