"""Scans on ascend (scan.py): cumsum, cumprod and associative_scan with a combine function (one block
and tuples), forward and reverse, along each axis of a 2-D block and of 1-D blocks, against numpy.

Each plan of scan.py is one specialization below: rows of the block (axis 0), transposed rows (axis 1,
16 rows and 8 padded to 16), blocked (two long rows), and the scalar fallback (rows of 4 int32). The
data size is a runtime argument, so one compile covers the boundary sizes (1, BLOCK - 1, BLOCK);
masked-off lanes load as 0 and take part like numpy's zero padding. Integer scans must be exact.
Float sums: rows and transposed rows add in numpy's sequential order (bit-exact); a blocked scan adds
within segments of 16, then the segments' running totals, so it is within float rounding of numpy
(tolerance 1e-5 relative to the running sum of |x|)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import xblock
import xblock.language as xl

from .._helpers import last_counters


@xblock.jit
def _max(a, b):
    return xl.maximum(a, b)


@xblock.jit
def _add(a, b):
    return a + b


@xblock.jit
def _affine(a1, b1, a2, b2):
    """(a1, b1) then (a2, b2) as maps x -> a x + b: associative, not commutative."""
    return a1 * a2, b1 * a2 + b2


@xblock.jit(do_not_specialize=["m", "n"])  # one compile serves every size
def scans2(x_ptr, y_ptr, o_ptr, m, n, R: xl.constexpr, C: xl.constexpr, AXIS: xl.constexpr):
    r = xl.arange(0, R)
    c = xl.arange(0, C)
    on = (r[:, None] < m) & (c[None, :] < n)
    offs = r[:, None] * C + c[None, :]
    x = xl.load(x_ptr + offs, mask=on, other=0)
    y = xl.load(y_ptr + offs, mask=on, other=0)
    xl.store(o_ptr + offs, xl.cumsum(x, AXIS), mask=on)
    xl.store(o_ptr + R * C + offs, xl.cumsum(x, AXIS, reverse=True), mask=on)
    xl.store(o_ptr + 2 * R * C + offs, xl.cumprod(x, AXIS), mask=on)
    xl.store(o_ptr + 3 * R * C + offs, xl.associative_scan(x, AXIS, _max, reverse=True), mask=on)
    a, b = xl.associative_scan((x, y), AXIS, _affine)
    xl.store(o_ptr + 4 * R * C + offs, a, mask=on)
    xl.store(o_ptr + 5 * R * C + offs, b, mask=on)
    a, b = xl.associative_scan((x, y), AXIS, _affine, reverse=True)
    xl.store(o_ptr + 6 * R * C + offs, a, mask=on)
    xl.store(o_ptr + 7 * R * C + offs, b, mask=on)


@xblock.jit(do_not_specialize=["n"])
def scans1(x_ptr, o_ptr, n, N: xl.constexpr):
    i = xl.arange(0, N)
    x = xl.load(x_ptr + i, mask=i < n, other=0.0)
    xl.store(o_ptr + i, xl.cumsum(x, 0), mask=i < n)
    xl.store(o_ptr + N + i, xl.associative_scan(x, 0, _add, reverse=True), mask=i < n)
    xl.store(o_ptr + 2 * N + i, xl.associative_scan(x, 0, _max), mask=i < n)


def _sequential(xs, axis, reverse, fn):
    """numpy: acc = fn(acc, x[i]) along `axis` in order (from the end when reversed), as the sim."""
    xs = [np.flip(x, axis) if reverse else x for x in xs]
    outs = [np.empty_like(x) for x in xs]
    acc = None
    with np.errstate(all="ignore"):
        for i in range(xs[0].shape[axis]):
            cur = [np.take(x, i, axis=axis) for x in xs]
            acc = cur if acc is None else fn(*acc, *cur)
            for o, a in zip(outs, acc):
                np.moveaxis(o, axis, 0)[i] = a
    return [np.flip(o, axis) if reverse else o for o in outs]


def _expected(x, y, axis):
    seq = _sequential
    return [seq([x], axis, False, lambda a, b: [a + b])[0], seq([x], axis, True, lambda a, b: [a + b])[0],
            seq([x], axis, False, lambda a, b: [a * b])[0], seq([x], axis, True, lambda a, b: [np.maximum(a, b)])[0],
            *seq([x, y], axis, False, lambda a1, b1, a2, b2: [a1 * a2, b1 * a2 + b2]),
            *seq([x, y], axis, True, lambda a1, b1, a2, b2: [a1 * a2, b1 * a2 + b2])]


def _launch(kernel, args, **meta) -> list[str]:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        kernel[(1,)](*args, target="ascend", **meta)
    return [str(x.message) for x in w]


# (R, C, axis): rows of the block; transposed (16 rows, and 8 rows padded to 16); blocked (2 rows of 128,
# padded to 256 lanes: after the row, or before it for the reverse scans)
@pytest.mark.parametrize("R,C,axis", [(16, 32, 0), (16, 32, 1), (8, 16, 1), (2, 128, 1)])
def test_int32_scans_are_exact_on_the_vector_unit(R, C, axis):
    rng = np.random.default_rng(R * C + axis)
    x = rng.integers(-3, 4, (R, C)).astype(np.int32)
    y = rng.integers(-3, 4, (R, C)).astype(np.int32)
    for m, n in ((R, C), (R - 1, C - 1), (1, 1)):
        out = np.zeros((8, R, C), np.int32)
        warns = _launch(scans2, (x, y, out, m, n), R=R, C=C, AXIS=axis)
        assert not [w for w in warns if "scan" in w], warns
        assert last_counters(scans2, (x, y, out, m, n), R=R, C=C, AXIS=axis)["scalar_ub_accesses"] == 0
        on = (np.arange(R)[:, None] < m) & (np.arange(C)[None, :] < n)
        want = _expected(np.where(on, x, 0), np.where(on, y, 0), axis)
        for k in range(8):
            assert np.array_equal(out[k][:m, :n], want[k][:m, :n]), (k, m, n)


def test_scan_of_rows_narrower_than_32_bytes_is_a_scalar_loop():
    """Rows of 4 int32 (16 bytes) cannot be cut into vector rows: a scalar loop, a warning, still exact."""
    rng = np.random.default_rng(7)
    x = rng.integers(-3, 4, (8, 4)).astype(np.int32)
    y = rng.integers(-3, 4, (8, 4)).astype(np.int32)
    out = np.zeros((8, 8, 4), np.int32)
    warns = _launch(scans2, (x, y, out, 8, 4), R=8, C=4, AXIS=0)
    assert any("an associative_scan of a (8, 4) i32 block runs as a scalar GetValue/SetValue loop" in w
               and "rows of 4 i32 lanes, not whole 32-byte blocks" in w for w in warns), warns
    for k, want in enumerate(_expected(x, y, 0)):
        assert np.array_equal(out[k], want), k


def test_float32_scans_of_a_1d_block():
    """N = 1024: a blocked scan. The max scan is exact; sums are within rounding of numpy's order."""
    N = 1024
    x = np.random.default_rng(3).standard_normal(N).astype(np.float32)
    for n in (N, N - 1, 1):
        out = np.zeros(3 * N, np.float32)
        assert not [w for w in _launch(scans1, (x, out, n), N=N) if "scan" in w]
        assert last_counters(scans1, (x, out, n), N=N)["scalar_ub_accesses"] == 0
        xs = x[:n].astype(np.float64)
        scale = np.cumsum(np.abs(xs))
        assert np.all(np.abs(out[:n] - np.cumsum(xs)) <= 1e-5 * scale + 1e-6)
        rscale = np.flip(np.cumsum(np.flip(np.abs(xs))))
        assert np.all(np.abs(out[N:N + n] - np.flip(np.cumsum(np.flip(xs)))) <= 1e-5 * rscale + 1e-6)
        assert np.array_equal(out[2 * N:2 * N + n], np.maximum.accumulate(x[:n]))


def test_float16_cumsum_accumulates_in_float_as_the_sim():
    """cumsum of half runs in float and rounds once: equal to numpy's float32 cumsum rounded to half."""
    x = np.random.default_rng(4).standard_normal((16, 32)).astype(np.float16)
    y = np.zeros_like(x)
    out = np.zeros((8, 16, 32), np.float16)
    sig = {"x_ptr": "*fp16", "y_ptr": "*fp16", "o_ptr": "*fp16"}
    k = xblock.compile(scans2, target="ascend", signature=dict(sig, m="i32", n="i32"),
                       constexprs={"R": 16, "C": 32, "AXIS": 1})
    assert "GetValue" not in k.asm["cpp"] and "TransDataTo5HD" in k.asm["cpp"]
    _launch(scans2, (x, y, out, 16, 32), R=16, C=32, AXIS=1)
    assert np.array_equal(out[0], np.cumsum(x, axis=1, dtype=np.float32).astype(np.float16))
    assert np.array_equal(out[3], np.flip(np.maximum.accumulate(np.flip(x, 1), axis=1), 1))


@xblock.jit
def _scaled_max(a, b):
    return xl.maximum(a, b) * 1.5 - b


@xblock.jit
def _bf16_generic_scan(x_ptr, s_ptr, R: xl.constexpr, C: xl.constexpr):
    r = xl.arange(0, R)
    c = xl.arange(0, C)
    x = xl.load(x_ptr + r[:, None] * C + c[None, :])
    xl.store(s_ptr + r[:, None] * C + c[None, :], xl.associative_scan(x, 0, _scaled_max))


def test_a_bf16_associative_scan_on_scalar_lanes():
    """Rows of 3 bf16 lanes are no whole 32-byte block, so the scan runs on the scalar unit; its combine
    works in float and rounds to bf16 after each step (explicit in the IR, as in Triton), as the sim
    does. It was refused ("an associative_scan on bf16 blocks ... is not supported")."""
    import ml_dtypes

    x = np.random.default_rng(3).standard_normal((4, 3)).astype(ml_dtypes.bfloat16)
    got = {}
    for target in ("sim", "ascend"):
        s = np.zeros((4, 3), ml_dtypes.bfloat16)
        _bf16_generic_scan[(1,)](x, s, R=4, C=3, target=target)
        got[target] = s.astype(np.float32)
    np.testing.assert_array_equal(got["ascend"], got["sim"])
    want = x.astype(np.float32).copy()
    for i in range(1, 4):  # the same steps in float, rounded to bf16 after each
        want[i] = (np.maximum(want[i - 1], want[i]) * np.float32(1.5) - want[i]).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(got["sim"], want)
