"""Tiles whose offsets start before the tensor, on ascend against numpy.

A mask `0 <= i < n` (a block pointer's or descriptor's bounds check is one unsigned compare, or
`(offs >= 0) & (offs < n)` written out) gives a lower limit as well as an upper one; the copy
must start at the first in-bounds element (before the fix, ascend fetched from before the buffer
and the CPU model stopped the kernel). Rows shift the DataCopyPad; columns copy an aligned run
plus a head of fewer than 32 bytes a row. Offsets the analysis proves >= 0 (program ids, loop
counters) cost nothing; a plain Cube K loop refuses an operand that may start before its tensor
(any other dot takes it through the vector core). Also: pointer casts of arguments (`ptr.to(...)`,
and the one the frontend inserts for a block pointer over `*i1`).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import xblock
from tests._pkg import mentions_package
from xblock.errors import CompilationError

triton = pytest.importorskip("triton")
tl = triton.language


@triton.jit
def shifted(x_ptr, out_ptr, n, shift, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    src = offs - shift
    x = tl.load(x_ptr + src, mask=(src >= 0) & (src < n), other=-1.0)
    tl.store(out_ptr + offs, x, mask=offs < n)


@triton.jit
def shifted_store(x_ptr, out_ptr, n, shift, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    dst = offs - shift
    tl.store(out_ptr + dst, x, mask=(dst >= 0) & (dst < n))


@triton.jit
def strided_gather(x_ptr, out_ptr, n, shift, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    src = offs - shift
    x = tl.load(x_ptr + 2 * src, mask=(src >= 0) & (src < (n + 1) // 2), other=-1.0)
    tl.store(out_ptr + offs, x)


@triton.jit
def block_from(x_ptr, out_ptr, n, start, BLOCK: tl.constexpr):
    """A 1-D block pointer at a runtime offset (of unknown sign to the compiler)."""
    src = tl.make_block_ptr(x_ptr, (n,), (1,), (start,), (BLOCK,), (0,))
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.load(src, boundary_check=(0,), padding_option="zero") + 1)


@triton.jit
def tile_load(x_ptr, out_ptr, M, N, dm, dn, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    src = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (pid_m * BM - dm, pid_n * BN - dn), (BM, BN), (1, 0))
    t = tl.load(src, boundary_check=(0, 1), padding_option="zero")
    width = tl.num_programs(1) * BN
    dst = tl.make_block_ptr(out_ptr, (tl.num_programs(0) * BM, width), (width, 1), (pid_m * BM, pid_n * BN),
                            (BM, BN), (1, 0))
    tl.store(dst, t + 1)


@triton.jit
def tile_store(x_ptr, out_ptr, M, N, dm, dn, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    width = tl.num_programs(1) * BN
    src = tl.make_block_ptr(x_ptr, (tl.num_programs(0) * BM, width), (width, 1), (pid_m * BM, pid_n * BN),
                            (BM, BN), (1, 0))
    dst = tl.make_block_ptr(out_ptr, (M, N), (N, 1), (pid_m * BM - dm, pid_n * BN - dn), (BM, BN), (1, 0))
    tl.store(dst, tl.load(src), boundary_check=(0, 1))


@triton.jit
def shifted_dot(a_ptr, b_ptr, c_ptr, M, N, K, dm, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a = tl.load(tl.make_block_ptr(a_ptr, (M, K), (K, 1), (-dm, 0), (BM, BK), (1, 0)), boundary_check=(0, 1))
    b = tl.load(tl.make_block_ptr(b_ptr, (K, N), (N, 1), (0, 0), (BK, BN), (1, 0)), boundary_check=(0, 1))
    tl.store(tl.make_block_ptr(c_ptr, (M, N), (N, 1), (-dm, 0), (BM, BN), (1, 0)), tl.dot(a, b),
             boundary_check=(0, 1))


@triton.jit
def shifted_k_loop(a_ptr, b_ptr, c_ptr, M, N, K, dm, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_bp = tl.make_block_ptr(a_ptr, (M, K), (K, 1), (-dm, 0), (BM, BK), (1, 0))
    b_bp = tl.make_block_ptr(b_ptr, (K, N), (N, 1), (0, 0), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(tl.load(a_bp, boundary_check=(0, 1)), tl.load(b_bp, boundary_check=(0, 1)), acc)
        a_bp = tl.advance(a_bp, (0, BK))
        b_bp = tl.advance(b_bp, (BK, 0))
    tl.store(tl.make_block_ptr(c_ptr, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0)), acc, boundary_check=(0, 1))


def _shift(x, shift, fill):
    out = np.full_like(x, fill)
    n = len(x)
    for i in range(n):
        if 0 <= i - shift < n:
            out[i] = x[i - shift]
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("n,shift", [(100, 3), (64, 1), (70, 17), (5, 2), (40, 0), (40, -3), (33, 40)])
def test_load_before_the_start(dtype, n, shift):
    x = (np.arange(n) + 1).astype(dtype)
    out = np.zeros(n, dtype)
    xblock.jit(shifted)[(triton.cdiv(n, 32),)](x, out, n, shift, BLOCK=32, target="ascend")
    np.testing.assert_array_equal(out, _shift(x, shift, -1))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("n,shift", [(100, 3), (64, 9), (5, 2), (40, -3)])
def test_store_before_the_start(dtype, n, shift):
    x = (np.arange(n) + 1).astype(dtype)
    out = np.full(n, 7, dtype)
    grid = triton.cdiv(n, 32)
    xblock.jit(shifted_store)[(grid,)](x, out, n, shift, BLOCK=32, target="ascend")
    loaded = np.r_[x, np.zeros(grid * 32 - n, dtype)]  # out[i] = loaded[i + shift] where 0 <= i + shift < grid * 32
    want = np.array([loaded[i + shift] if 0 <= i + shift < grid * 32 else 7 for i in range(n)], dtype)
    np.testing.assert_array_equal(out, want)


def test_gather_before_the_start():
    n = 20
    x = np.arange(n, dtype=np.float32) + 1
    out = np.zeros(16, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a gather: a scalar loop (when compiled, not on a cache hit)
        xblock.jit(strided_gather)[(1,)](x, out, n, 3, BLOCK=16, target="ascend")
    src = np.arange(16) - 3
    np.testing.assert_array_equal(out, np.where((src >= 0) & (2 * src < n), x[np.clip(2 * src, 0, n - 1)], -1))


@pytest.mark.parametrize("start", [-5, -16, 0, 3, 30])
def test_block_pointer_at_a_runtime_offset(start):
    n, B = 20, 16
    x = np.arange(n, dtype=np.float32) + 1
    out = np.zeros(B, np.float32)
    xblock.jit(block_from)[(1,)](x, out, n, start, BLOCK=B, target="ascend")
    idx = np.arange(B) + start
    np.testing.assert_array_equal(out, np.where((idx >= 0) & (idx < n), x[np.clip(idx, 0, n - 1)], 0) + 1)


TILES = [(20, 33, 3, 5), (16, 16, 0, 7), (37, 5, 16, 1), (17, 40, 1, 0), (5, 5, 20, 3)]  # M, N, dm, dn


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("m,n,dm,dn", TILES)
def test_block_pointer_tile_load(dtype, m, n, dm, dn):
    B = 16
    x = np.random.default_rng(m * n).standard_normal((m, n)).astype(dtype)
    gm, gn = triton.cdiv(m, B), triton.cdiv(n, B)
    out = np.full((gm * B, gn * B), 5, dtype)
    xblock.jit(tile_load)[(gm, gn)](x, out, m, n, dm, dn, BM=B, BN=B, target="ascend")
    want = np.zeros((gm * B + dm, gn * B + dn), dtype)
    want[dm:dm + m, dn:dn + n] = x
    np.testing.assert_array_equal(out, want[:gm * B, :gn * B] + dtype(1))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("m,n,dm,dn", TILES)
def test_block_pointer_tile_store(dtype, m, n, dm, dn):
    B = 16
    gm, gn = triton.cdiv(m, B), triton.cdiv(n, B)
    x = np.random.default_rng(m + n).standard_normal((gm * B, gn * B)).astype(dtype)
    out = np.full((m, n), 5, dtype)
    xblock.jit(tile_store)[(gm, gn)](x, out, m, n, dm, dn, BM=B, BN=B, target="ascend")
    want = np.full((m, n), 5, dtype)
    rows, cols = max(0, min(m, gm * B - dm)), max(0, min(n, gn * B - dn))
    want[:rows, :cols] = x[dm:dm + rows, dn:dn + cols]
    np.testing.assert_array_equal(out, want)


@triton.jit
def row_sums(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """Offsets from a program id and an `advance` in a loop: the analysis proves them >= 0."""
    pid = tl.program_id(0)
    xb = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (pid * BM, 0), (BM, BN), (1, 0))
    acc = tl.zeros((BM,), dtype=tl.float32)
    for _ in range(0, tl.cdiv(N, BN)):
        acc += tl.sum(tl.load(xb, boundary_check=(0, 1)), axis=1)
        xb = tl.advance(xb, (0, BN))
    tl.store(tl.make_block_ptr(out_ptr, (M,), (1,), (pid * BM,), (BM,), (0,)), acc, boundary_check=(0,))


def test_offsets_proved_non_negative_cost_nothing():
    """No row/column start to compute where the offsets are proved >= 0; one for an offset of unknown sign."""
    x = np.random.default_rng(0).integers(-8, 8, (37, 50)).astype(np.float32)
    out = np.zeros(37, np.float32)
    run = xblock.jit(row_sums)
    run[(3,)](x, out, 37, 50, BM=16, BN=16, target="ascend")
    np.testing.assert_array_equal(out, x.sum(1))
    cpp = run.warmup(x, out, 37, 50, BM=16, BN=16, target="ascend").asm["cpp"]
    assert "rowStart" not in cpp and "colStart" not in cpp and "headCols" not in cpp
    y = np.zeros(16, np.float32)
    assert "colStart" in xblock.jit(block_from).warmup(y, y, 16, 5, BLOCK=16, target="ascend").asm["cpp"]


@pytest.mark.parametrize("dm", [0, 3, 40])
def test_dot_operand_before_the_start(dm):
    """The Cube cannot start its copy inside the tile: the vector core loads the operand and hands it over."""
    rng = np.random.default_rng(dm)
    a, b = (rng.integers(-3, 4, s).astype(np.float16) for s in ((20, 16), (16, 16)))
    c = np.full((20, 16), 7, np.float32)
    xblock.jit(shifted_dot)[(1,)](a, b, c, 20, 16, 16, dm, BM=32, BN=16, BK=16, target="ascend")
    want = np.full((20, 16), 7, np.float32)
    prod = np.zeros((32, 16), np.float32)
    rows = np.arange(32) - dm
    ok = (rows >= 0) & (rows < 20)
    prod[ok] = a[rows[ok]].astype(np.float32) @ b.astype(np.float32)
    want[rows[ok]] = prod[ok]
    np.testing.assert_array_equal(c, want)


def test_plain_k_loop_operand_before_the_start_is_refused():
    a, b, c = np.zeros((20, 16), np.float16), np.zeros((16, 16), np.float16), np.zeros((20, 16), np.float32)
    with pytest.raises(CompilationError, match=r"test_offsets.py:\d+:\d+: ascend: the rows of this dot operand A may "
                                               r"start before the tensor") as e:
        xblock.jit(shifted_k_loop)[(1,)](a, b, c, 20, 16, 16, 3, BM=32, BN=16, BK=16, target="ascend")
    assert not mentions_package(str(e.value))


@triton.jit
def bytes_of(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """`ptr.to(tl.pointer_type(tl.int8))` of an argument, plus an offset in bytes."""
    p = x_ptr.to(tl.pointer_type(tl.int8))
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(p + 4 + offs, mask=offs < n, other=0).to(tl.float16), mask=offs < n)


@triton.jit
def bool_block(flags_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """A block pointer over `*i1` reads int8 (as in Triton): a pointer cast the frontend inserts."""
    f = tl.load(tl.make_block_ptr(flags_ptr, (n,), (1,), (0,), (BLOCK,), (0,)), boundary_check=(0,))
    tl.store(out_ptr + tl.arange(0, BLOCK), f.to(tl.float16) + 10)


def test_pointer_cast_of_an_argument():
    x = np.arange(-3, 29, dtype=np.int16)
    out = np.zeros(32, np.float16)
    xblock.jit(bytes_of)[(1,)](x, out, 20, BLOCK=32, target="ascend")
    want = np.zeros(32, np.float16)
    want[:20] = x.view(np.int8)[4:24]
    np.testing.assert_array_equal(out, want)


def test_block_pointer_over_bools():
    flags = np.array([True, False, True, True, False], np.bool_)
    out = np.zeros(16, np.float16)
    xblock.jit(bool_block)[(1,)](flags, out, 5, BLOCK=16, target="ascend")
    np.testing.assert_array_equal(out, np.r_[flags.astype(np.float16), np.zeros(11, np.float16)] + 10)
