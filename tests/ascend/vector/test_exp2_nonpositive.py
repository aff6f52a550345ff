"""`exp2` of an argument the IR proves <= 0 (online softmax's `qk - max[:, None]` and `m_i - maximum(m_i, m)`)
takes one exact power of two (vmath.VMath.scale_nonpositive, elementwise.not_above_zero): the same correctly
rounded results as the general form, denormals and zeros included, in fewer vector instructions."""

from __future__ import annotations

import numpy as np
import pytest

import xblock
import xblock.language as xl


@xblock.jit
def softmax_num(x_ptr, m_ptr, p_ptr, a_ptr, n_rows, n_cols, R: xl.constexpr, BLOCK: xl.constexpr):
    rows = xl.program_id(0) * R + xl.arange(0, R)
    cols = xl.arange(0, BLOCK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = xl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=-float("inf"))
    m_i = xl.load(m_ptr + rows, mask=rows < n_rows, other=0.0)
    m_new = xl.maximum(m_i, xl.max(x, 1))
    p = xl.exp2(x - m_new[:, None])
    alpha = xl.exp2(m_i - m_new)
    xl.store(p_ptr + rows[:, None] * n_cols + cols[None, :], p, mask=mask)
    xl.store(a_ptr + rows, alpha, mask=rows < n_rows)


@xblock.jit
def shifted(x_ptr, y_ptr, out_ptr, n, BLOCK: xl.constexpr):
    """exp2 of x - y: no proof, the general form."""
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs, mask=offs < n)
    xl.store(out_ptr + offs, xl.exp2(x - xl.load(y_ptr + offs, mask=offs < n)), mask=offs < n)


SIG = {"x_ptr": "*fp32", "m_ptr": "*fp32", "p_ptr": "*fp32", "a_ptr": "*fp32", "n_rows": "i32", "n_cols": "i32"}


def _inputs(m, n, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((m, n)) * 40).astype(np.float32)
    x[0] = -np.abs(x[0])  # row 0's max is 0: the specials below give denormals and zeros
    x[0, : min(n, 8)] = [0.0, -0.0, -126.0, -126.5, -149.0, -149.7, -150.2, -300.0][: min(n, 8)]
    x[1 % m, :] = -np.inf  # a row masked off entirely
    x[2 % m, 0] = np.nan
    m_i = (rng.standard_normal(m) * 60).astype(np.float32)
    m_i[0] = -5.0
    m_i[3 % m] = -np.inf
    return x, m_i


@pytest.mark.parametrize("m, n, R", [(13, 64, 8), (5, 200, 4), (9, 8, 8)])
def test_softmax_exp2_matches_numpy(m, n, R):
    x, m_i = _inputs(m, n, m + n)
    p, a = np.zeros_like(x), np.zeros_like(m_i)
    with np.errstate(invalid="ignore"):
        softmax_num[(-(-m // R),)](x, m_i, p, a, m, n, R=R, BLOCK=max(8, 1 << (n - 1).bit_length()), target="ascend")
        mx = np.where(np.isnan(x), -np.inf, x).max(1)  # the row max skips NaN (as tl.max on ascend and numpy's fmax)
        m_new = np.fmax(m_i, mx)
        # the differences in float32, as the kernel computes them; their exp2 in float64, rounded once
        ref_p = np.exp2((x - m_new[:, None]).astype(np.float64)).astype(np.float32)
        ref_a = np.exp2((m_i - m_new).astype(np.float64)).astype(np.float32)
    # correctly rounded float32 results (the float64 reference rounded once): within 1 ulp, denormals included
    for got, ref in ((p, ref_p), (a, ref_a)):
        assert np.array_equal(np.isnan(got), np.isnan(ref))
        ok = ~np.isnan(ref)
        ulp = np.abs(got[ok].view(np.int32).astype(np.int64) - ref[ok].view(np.int32).astype(np.int64))
        assert ulp.max() <= 1, (got[ok][ulp > 1], ref[ok][ulp > 1])


def test_the_proof_drops_the_general_scale():
    src = xblock.compile(softmax_num, target="ascend", signature=SIG, constexprs={"R": 8, "BLOCK": 64}).asm["cpp"]
    assert "Mins(" not in src  # no clamp at 129: the arguments are <= 0
    assert src.count("5.421010862427522e-20f") == 2  # 2^-64: one exact power of two per exp2
    general = xblock.compile(shifted, target="ascend", signature={"x_ptr": "*fp32", "y_ptr": "*fp32",
                                                                  "out_ptr": "*fp32", "n": "i32"},
                             constexprs={"BLOCK": 64}).asm["cpp"]
    assert "Mins(" in general and "5.421010862427522e-20f" not in general


def test_general_exp2_still_matches_numpy():
    n = 300
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(n) * 80).astype(np.float32)
    y = (rng.standard_normal(n) * 80).astype(np.float32)
    out = np.zeros_like(x)
    shifted[(-(-n // 64),)](x, y, out, n, BLOCK=64, target="ascend")
    with np.errstate(over="ignore"):
        ref = np.exp2((x - y).astype(np.float64)).astype(np.float32)
    ulp = np.abs(out.view(np.int32).astype(np.int64) - ref.view(np.int32).astype(np.int64))
    assert ulp.max() <= 1
