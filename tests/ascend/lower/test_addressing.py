"""Addresses that divide by a runtime scalar, and kernels with many live input blocks, on ascend.

Offsets built with `//` and `%` by a kernel argument (`x[i // d]`, `row = offs // n_cols`,
`col = offs % n_cols`) are quasi-affine: ascend runs them as gathers and scatters that compute each
lane's address with C's truncating division (before the fix: "depend on data", an error). A
decomposition put back together, `row * n_cols + col`, is the plain offset again: one DataCopyPad.
More than three loaded 2-D blocks live at once single-buffer some VECIN queues (7 buffers per
TPosition: lower/context.py QUEUE_BUFFERS), and past seven they land in the VECCALC scratch with
explicit MTE2 syncs (before the fix:
"more than 4 VECIN blocks live at once"). Each is checked against numpy, exactly, at boundary sizes.
"""

from __future__ import annotations

import numpy as np
import pytest

import xblock
from tests.ascend._helpers import data, run_ascend
from xblock.errors import CompilationError

triton = pytest.importorskip("triton")
tl = triton.language

pytestmark = pytest.mark.filterwarnings("ignore::xblock.errors.XBlockWarning")  # gathers warn when compiled


@triton.jit
def repeat_kernel(x_ptr, out_ptr, n, d, BLOCK: tl.constexpr):
    """Nearest-neighbour upsampling of a vector: out[i] = x[i // d]."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs // d, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


@triton.jit
def centered_kernel(x_ptr, out_ptr, n, d, BLOCK: tl.constexpr):
    """Negative dividends and divisors: `//` and `%` truncate toward zero, as in C."""
    c = tl.arange(0, BLOCK) - n
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + n + c // d + c % d))


@triton.jit
def flat_copy_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    """A 2-D tensor as a flat index, split into row and column and put back together."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    row = offs // n_cols
    col = offs % n_cols
    mask = offs < n_rows * n_cols
    x = tl.load(x_ptr + row * n_cols + col, mask=mask, other=0.0)
    tl.store(out_ptr + row * n_cols + col, x * 2.0, mask=mask)


@triton.jit
def strided_bias_kernel(x_ptr, b_ptr, out_ptr, n_rows, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    """out[r, c] = x[r, c] + b[c] over a flat index, for row-strided x and out."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    row = offs // n_cols
    col = offs % n_cols
    mask = row < n_rows
    x = tl.load(x_ptr + row * stride_x + col, mask=mask, other=0.0)
    b = tl.load(b_ptr + col, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride_out + col, x + b, mask=mask)


@triton.jit
def upsample2d_kernel(x_ptr, out_ptr, H, W, d, BH: tl.constexpr, BW: tl.constexpr):
    """out[r, c] = x[r // d, c // d] for an (H * d, W * d) output."""
    rows = tl.program_id(0) * BH + tl.arange(0, BH)[:, None]
    cols = tl.program_id(1) * BW + tl.arange(0, BW)[None, :]
    mask = (rows < H * d) & (cols < W * d)
    x = tl.load(x_ptr + (rows // d) * W + cols // d, mask=mask)
    tl.store(out_ptr + rows * (W * d) + cols, x, mask=mask)


@triton.jit
def lane_divisor_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs % (offs + 1)))


@triton.jit
def unsigned_div_kernel(x_ptr, out_ptr, d, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs.to(tl.uint32) // d))


@triton.jit
def rotary_kernel(q_ptr, k_ptr, cos_ptr, sin_ptr, qo_ptr, ko_ptr, seq, stride, HALF: tl.constexpr,
                  BLOCK_S: tl.constexpr):
    """Rotary embedding of q and k: six 2-D input tiles live at once."""
    rows = tl.program_id(0) * BLOCK_S + tl.arange(0, BLOCK_S)[:, None]
    cols = tl.arange(0, HALF)[None, :]
    mask = rows < seq
    q1 = tl.load(q_ptr + rows * stride + cols, mask=mask, other=0.0)
    q2 = tl.load(q_ptr + rows * stride + cols + HALF, mask=mask, other=0.0)
    k1 = tl.load(k_ptr + rows * stride + cols, mask=mask, other=0.0)
    k2 = tl.load(k_ptr + rows * stride + cols + HALF, mask=mask, other=0.0)
    # (not `cos`/`sin`: C++ names of those are poisoned in the CPU model, which emit.py does not avoid yet)
    cos_r = tl.load(cos_ptr + rows * HALF + cols, mask=mask, other=0.0)
    sin_r = tl.load(sin_ptr + rows * HALF + cols, mask=mask, other=0.0)
    tl.store(qo_ptr + rows * stride + cols, q1 * cos_r - q2 * sin_r, mask=mask)
    tl.store(qo_ptr + rows * stride + cols + HALF, q2 * cos_r + q1 * sin_r, mask=mask)
    tl.store(ko_ptr + rows * stride + cols, k1 * cos_r - k2 * sin_r, mask=mask)
    tl.store(ko_ptr + rows * stride + cols + HALF, k2 * cos_r + k1 * sin_r, mask=mask)


@triton.jit
def sum8_kernel(a_ptr, b_ptr, c_ptr, d_ptr, e_ptr, f_ptr, g_ptr, h_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Eight inputs loaded before any is used."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    c = tl.load(c_ptr + offs, mask=mask)
    d = tl.load(d_ptr + offs, mask=mask)
    e = tl.load(e_ptr + offs, mask=mask)
    f = tl.load(f_ptr + offs, mask=mask)
    g = tl.load(g_ptr + offs, mask=mask)
    h = tl.load(h_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, ((h * g + f) * e + d) * c + b * a, mask=mask)


@triton.jit
def sum10_kernel(a_ptr, b_ptr, c_ptr, d_ptr, e_ptr, f_ptr, g_ptr, h_ptr, i_ptr, j_ptr, out_ptr, n, M,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Ten 2-D inputs live at once: two more than a TPosition has queue buffers."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    offs = rows * BLOCK_N + cols
    mask = (rows < M) & (cols < n)
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    c = tl.load(c_ptr + offs, mask=mask, other=0.0)
    d = tl.load(d_ptr + offs, mask=mask, other=0.0)
    e = tl.load(e_ptr + offs, mask=mask, other=0.0)
    f = tl.load(f_ptr + offs, mask=mask, other=0.0)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0)
    h = tl.load(h_ptr + offs, mask=mask, other=0.0)
    i = tl.load(i_ptr + offs, mask=mask, other=0.0)
    j = tl.load(j_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, (((j * i + h) * g + f) * e + d) * c + b * a, mask=mask)


def _gathers(warned: list[str]) -> list[str]:
    return [w for w in warned if "gather" in w or "scatter" in w]


# ----- addresses with `//` and `%` by a kernel argument ------------------------------------------

@pytest.mark.parametrize("n,d,dtype", [(300, 3, np.float32), (1, 1, np.float16), (128, 7, np.int32),
                                       (130, 200, np.float32)])
def test_repeat_by_a_runtime_factor(n, d, dtype):
    rng = np.random.default_rng(n + d)
    x = data(rng, -(-n // d), dtype)
    out = np.zeros(n, dtype)
    xblock.jit(repeat_kernel)[(triton.cdiv(n, 128),)](x, out, n, d, BLOCK=128, target="ascend")
    np.testing.assert_array_equal(out, x[np.arange(n) // d])


@pytest.mark.parametrize("d", [3, -2])
def test_negative_offsets_divide_like_c(d):
    n, block = 40, 64
    x = np.arange(n + block, dtype=np.float32)
    out = np.zeros(block, np.float32)
    xblock.jit(centered_kernel)[(1,)](x, out, n, d, BLOCK=block, target="ascend")
    c = np.arange(block) - n
    np.testing.assert_array_equal(out, x[n + np.trunc(c / d).astype(int) + np.fmod(c, d)])


@pytest.mark.parametrize("rows,cols", [(7, 45), (1, 1), (4, 64)])
def test_row_col_decomposition_put_back_together_is_one_copy(rows, cols):
    rng = np.random.default_rng(rows * cols)
    x = data(rng, (rows, cols), np.float32)
    out = np.zeros_like(x)
    warned = run_ascend(xblock.jit(flat_copy_kernel), (x, out, rows, cols), BLOCK=512)
    np.testing.assert_array_equal(out, x * 2)
    assert not _gathers(warned)  # `row * n_cols + col` is `offs`: a DataCopyPad, no scalar loop
    _, cpp = _plan(flat_copy_kernel, BLOCK=512)
    assert "GetValue" not in cpp and "DataCopyPad" in cpp


@pytest.mark.parametrize("rows,cols,block", [(5, 37, 64), (1, 3, 64), (3, 64, 64)])
def test_strided_rows_from_a_flat_index(rows, cols, block):
    rng = np.random.default_rng(rows + cols)
    x = data(rng, (rows, cols + 5), np.float32)
    b = data(rng, cols, np.float32)
    out = np.full((rows, cols + 9), 7.0, np.float32)
    xblock.jit(strided_bias_kernel)[(triton.cdiv(rows * cols, block),)](
        x, b, out, rows, cols, cols + 5, cols + 9, BLOCK=block, target="ascend")
    want = np.full_like(out, 7.0)
    want[:, :cols] = x[:, :cols] + b
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("H,W,d", [(5, 9, 3), (1, 1, 1), (4, 8, 2)])
def test_upsample_2d(H, W, d):
    rng = np.random.default_rng(H * W * d)
    x = data(rng, (H, W), np.float16)
    out = np.zeros((H * d, W * d), np.float16)
    grid = (triton.cdiv(H * d, 8), triton.cdiv(W * d, 16))
    xblock.jit(upsample2d_kernel)[grid](x, out, H, W, d, BH=8, BW=16, target="ascend")
    np.testing.assert_array_equal(out, np.repeat(np.repeat(x, d, 0), d, 1))


def test_divisions_ascend_cannot_follow_are_offsets_computed_as_data():
    """`offs % (offs + 1)` (a divisor that differs across lanes) and an unsigned `//` are not quasi-affine:
    the offsets are computed as data and the load runs lane by lane (tests/ascend/vector/test_data_gathers.py;
    before: a CompilationError naming the division)."""
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    run_ascend(xblock.jit(lane_divisor_kernel), (x, out), BLOCK=64)
    np.testing.assert_array_equal(out, x)
    res = xblock.compile(unsigned_div_kernel, target="ascend", constexprs=dict(BLOCK=64),
                         signature=dict(x_ptr="*fp32", out_ptr="*fp32", d="u32"))
    assert "xGm.GetValue(" in res.asm["cpp"]


# ----- many live input blocks ---------------------------------------------------------------------

@pytest.mark.parametrize("seq", [37, 1, 16])
def test_rotary_with_six_live_tiles(seq):
    half = 32
    rng = np.random.default_rng(seq)
    q, k = (data(rng, (seq, 2 * half), np.float32) for _ in range(2))
    cos, sin = (data(rng, (seq, half), np.float32) for _ in range(2))
    qo, ko = np.zeros_like(q), np.zeros_like(k)
    xblock.jit(rotary_kernel)[(triton.cdiv(seq, 8),)](q, k, cos, sin, qo, ko, seq, 2 * half, HALF=half, BLOCK_S=8,
                                                      target="ascend")
    for x, got in ((q, qo), (k, ko)):
        x1, x2 = x[:, :half], x[:, half:]
        np.testing.assert_array_equal(got, np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], 1))


def _plan(kernel, **meta):
    """The UB plan and C++ of `kernel` with fp32 pointers and i32 scalars."""
    sig = {a: "*fp32" if a.endswith("_ptr") else "i32" for a in kernel.arg_names if a not in meta}
    ck = xblock.compile(kernel, target="ascend", signature=sig, constexprs=meta)
    return ck.metadata["ub_plan"], ck.asm["cpp"]


@pytest.mark.parametrize("n", [300, 1, 128])
def test_eight_live_inputs_share_the_queue_buffers(n):
    """Seven in single-buffered VECIN queues, the eighth in scratch: a queue buffer holds an event id, and
    one id of V_MTE2 / MTE2_V stays free for the scratch block's explicit syncs."""
    rng = np.random.default_rng(n)
    xs = [data(rng, n, np.float32) for _ in range(8)]
    out = np.zeros(n, np.float32)
    xblock.jit(sum8_kernel)[(triton.cdiv(n, 128),)](*xs, out, n, BLOCK=128, target="ascend")
    a, b, c, d, e, f, g, h = xs
    np.testing.assert_array_equal(out, ((h * g + f) * e + d) * c + b * a)
    plan, _ = _plan(sum8_kernel, BLOCK=128)
    vecin = [q["buffers"] for q in plan["queues"].values() if q["position"] == "VECIN"]
    assert len(vecin) == 7 and sum(vecin) == 7  # single-buffered: 7 buffers per TPosition


@pytest.mark.parametrize("M,n", [(5, 30), (1, 1), (8, 32)])
def test_ten_live_inputs_spill_to_scratch(M, n):
    rng = np.random.default_rng(M * n)
    xs = [data(rng, (M, 32), np.float32) for _ in range(10)]
    out = np.zeros((M, 32), np.float32)
    xblock.jit(sum10_kernel)[(triton.cdiv(M, 4),)](*xs, out, n, M, BLOCK_M=4, BLOCK_N=32, target="ascend")
    a, b, c, d, e, f, g, h, i, j = (x[:, :n] for x in xs)
    np.testing.assert_array_equal(out[:, :n], (((j * i + h) * g + f) * e + d) * c + b * a)
    np.testing.assert_array_equal(out[:, n:], 0)
    _, cpp = _plan(sum10_kernel, BLOCK_M=4, BLOCK_N=32)
    assert "WaitFlag<HardEvent::V_MTE2>" in cpp and "WaitFlag<HardEvent::MTE2_V>" in cpp


def test_live_inputs_past_the_unified_buffer_say_so():
    # rows of 16384 fp32 exceed the unified buffer even one row at a time
    with pytest.raises(CompilationError) as e:
        _plan(sum10_kernel, BLOCK_M=64, BLOCK_N=16384)
    msg = str(e.value)
    assert "test_addressing.py:" in msg and "B of unified buffer" in msg and "use smaller BLOCK sizes" in msg
    assert "in 64 chunks of 1 row they still need" in msg
