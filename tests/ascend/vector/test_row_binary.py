"""Per-row values broadcast along 2-D rows and read only by binary ops (`x - m[:, None]`, `acc *
alpha[:, None]`, `v[:, None] / x`) stay one 32-byte block per row (vector/rowvec.py RowBlocks): each op is
one mask/repeat-form instruction per 256-byte column chunk with source block stride 0. Against numpy, with
a last program of fewer valid rows, rows of one chunk, several and a tail, half and float, each operand order,
and the users the fused form cannot serve (a splat, two broadcasts), which write the broadcast out."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xblock
import xblock.language as xl


@xblock.jit
def row_ops(x_ptr, v_ptr, out_ptr, n_rows, n_cols, R: xl.constexpr, BLOCK: xl.constexpr, MODE: xl.constexpr):
    rows = xl.program_id(0) * R + xl.arange(0, R)
    cols = xl.arange(0, BLOCK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = xl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=1.0)
    v = xl.load(v_ptr + rows, mask=rows < n_rows, other=1.0)
    if MODE == 0:
        y = (x - v[:, None]) * v[:, None]
    elif MODE == 1:
        y = v[:, None] / x + xl.maximum(v[:, None], x)
    elif MODE == 2:
        y = x * 2.0 + (v[:, None] - x)
    elif MODE == 3:  # a splat operand: the broadcast is written out
        y = (xl.broadcast_to(v[:, None], (R, BLOCK)) + 1.0) * x
    else:  # two broadcasts in one op: both written out
        y = xl.broadcast_to(v[:, None], (R, BLOCK)) * xl.broadcast_to((v * v)[:, None], (R, BLOCK)) + x
    xl.store(out_ptr + rows[:, None] * n_cols + cols[None, :], y, mask=mask)


def _ref(x, v, mode):
    v = v[:, None]
    if mode == 0:
        return (x - v) * v
    if mode == 1:
        return v / x + np.maximum(v, x)
    if mode == 2:
        return x * 2 + (v - x)
    if mode == 3:
        return (v + 1) * x
    return v * v * v + x


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("n, block", [(64, 64), (200, 256), (128, 128), (16, 16)])
@pytest.mark.parametrize("mode", [0, 1, 2, 3, 4])
def test_row_binary_matches_numpy(dtype, n, block, mode):
    r = 8
    m = 3 * r - 3
    rng = np.random.default_rng(n + mode)
    x = (rng.uniform(0.5, 2.0, (m, n)) * rng.choice([-1, 1], (m, n))).astype(dtype)
    v = rng.standard_normal(m).astype(dtype)
    out = np.zeros_like(x)
    row_ops[(-(-m // r),)](x, v, out, m, n, R=r, BLOCK=block, MODE=mode, target="ascend")
    ref = _ref(x.astype(np.float64), v.astype(np.float64), mode)
    tol = 1e-5 if dtype == np.float32 else 4e-3
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("mode, fused", [(0, True), (1, True), (2, True), (3, False), (4, False)])
def test_the_broadcast_is_not_written_out(mode, fused):
    src = xblock.compile(row_ops, target="ascend", signature={"x_ptr": "*fp32", "v_ptr": "*fp32", "out_ptr": "*fp32",
                                                              "n_rows": "i32", "n_cols": "i32"},
                         constexprs={"R": 8, "BLOCK": 128, "MODE": mode}).asm["cpp"]
    assert "Brcb(" in src
    # Copy (not DataCopy) writes a broadcast out; the fused ops read the blocks
    assert (re.search(r"(?<![A-Za-z])Copy\(", src) is None) == fused
    if fused:
        assert "BinaryRepeatParams(1, 1, 0, 16, 16, 1)" in src or "BinaryRepeatParams(1, 0, 1, 16, 1, 16)" in src
