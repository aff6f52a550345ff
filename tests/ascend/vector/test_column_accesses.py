"""Column-major loads and stores on ascend (passes/column_accesses.py): the tile copied as rows and
transposed in the unified buffer, never lane by lane; the rewrite itself on the xb IR."""

import warnings

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.passes import column_accesses

from .._helpers import last_counters


@xblock.jit
def store_down_columns(x_ptr, y_ptr, M, N, BM: xl.constexpr, BN: xl.constexpr):
    rm = xl.program_id(0) * BM + xl.arange(0, BM)
    rn = xl.program_id(1) * BN + xl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = xl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask)
    xl.store(y_ptr + rn[None, :] * M + rm[:, None], tile * 2, mask=mask)


@xblock.jit
def load_down_columns(x_ptr, y_ptr, M, N, BM: xl.constexpr, BN: xl.constexpr):
    rn = xl.program_id(0) * BN + xl.arange(0, BN)
    rm = xl.program_id(1) * BM + xl.arange(0, BM)
    mask = (rn[:, None] < N) & (rm[None, :] < M)
    tile = xl.load(x_ptr + rm[None, :] * N + rn[:, None], mask=mask, other=-1)
    xl.store(y_ptr + rn[:, None] * M + rm[None, :], tile + 1, mask=mask)


def _launch(kernel, m, n, dtype, bm=64, bn=64):
    x = (np.random.default_rng(m + n).standard_normal((m, n)) * 20).astype(dtype)
    y = np.zeros((n, m), dtype)
    grid = (-(-m // bm), -(-n // bn)) if kernel is store_down_columns else (-(-n // bn), -(-m // bm))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "scalar loop" warning: the 8-, 16- and 32-bit forms are all vector work
        kernel[grid](x, y, m, n, BM=bm, BN=bn, target="ascend")
    want = x.T * 2 if kernel is store_down_columns else x.T + 1
    np.testing.assert_array_equal(y, want.astype(dtype))
    return last_counters(kernel, (x, y, m, n), BM=bm, BN=bn)


@pytest.mark.parametrize("kernel", [store_down_columns, load_down_columns], ids=["store", "load"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int8])
@pytest.mark.parametrize("m, n", [(64, 64), (100, 70)])
def test_no_lane_by_lane_access(kernel, dtype, m, n):
    c = _launch(kernel, m, n, dtype)
    assert c["scalar_ub_accesses"] == c["scalar_gm_accesses"] == 0
    tiles = -(-m // 64) * -(-n // 64)
    assert c["datacopy_out_calls"] == tiles  # one row copy per tile, not one copy per element


@pytest.mark.parametrize("dtype", [np.float16, np.int8])
def test_1024_square_either_way_has_no_scalar_access(dtype):
    for kernel in (store_down_columns, load_down_columns):
        c = _launch(kernel, 1024, 1024, dtype, bm=128, bn=128)
        assert c["scalar_ub_accesses"] == c["scalar_gm_accesses"] == 0


def _module(kernel, **meta):
    x = np.zeros((64, 64), np.float32)
    return kernel.warmup(x, x, 64, 64, target="sim", **meta).asm["xb"]


def test_the_rewrite_on_the_ir():
    from mlir import ir

    from xblock.dialects import xb

    for kernel, loads, stores in ((store_down_columns, 0, 1), (load_down_columns, 1, 0)):
        with xb.context():
            m = ir.Module.parse(_module(kernel, BM=32, BN=16))
            assert column_accesses.run(m) == loads + stores
            text = str(m)
            assert text.count("xb.trans") == 3 + loads  # the pointers, the mask, the value (and `other`)
            assert column_accesses.run(m) == 0  # the rewritten accesses are row-major
