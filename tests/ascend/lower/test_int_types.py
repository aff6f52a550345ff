"""Narrow and wide integer blocks on ascend, exactly against the sim and numpy: int8/uint8 `+ - *`,
max/min (unsigned ones too), `where`, abs, `//` and `%`, computed in int16 (int32) lanes and wrapped
back to 8 bits as C does (not saturated), and a load with a block `other`; uint32 max/min; int64
blocks filled with a runtime value or built from offsets; bools loaded, computed, converted and
stored. At the boundary values of each type and at boundary sizes."""

from __future__ import annotations

import numpy as np
import pytest

import xblock
import xblock.language as xl

BLOCK = 64
SIZES = (1, BLOCK - 1, BLOCK + 1)
ROWS = 12


@xblock.jit
def int_ops(a_ptr, b_ptr, out_ptr, s, n, BLOCK: xl.constexpr, DIV: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    a = xl.load(a_ptr + offs, mask=m)
    b = xl.load(b_ptr + offs, mask=m)
    s = s.to(a.dtype)
    xl.store(out_ptr + 0 * n + offs, a + b, mask=m)
    xl.store(out_ptr + 1 * n + offs, a - b, mask=m)
    xl.store(out_ptr + 2 * n + offs, a * b, mask=m)
    xl.store(out_ptr + 3 * n + offs, xl.maximum(a, b), mask=m)
    xl.store(out_ptr + 4 * n + offs, xl.minimum(a, b), mask=m)
    xl.store(out_ptr + 5 * n + offs, xl.where(a > b, a, b), mask=m)
    xl.store(out_ptr + 6 * n + offs, xl.abs(a), mask=m)
    xl.store(out_ptr + 7 * n + offs, a * s + 3, mask=m)  # a runtime scalar and a constant
    xl.store(out_ptr + 8 * n + offs, xl.where(a < s, s, a - 1), mask=m)
    xl.store(out_ptr + 9 * n + offs, xl.load(a_ptr + offs, mask=offs < n - 5, other=b), mask=m)
    if DIV:  # exact through float below 2**24: the 8- and 16-bit types
        d = (b & 63) | 1
        xl.store(out_ptr + 10 * n + offs, a // d, mask=m)
        xl.store(out_ptr + 11 * n + offs, a % d, mask=m)


def _operands(dt, n):
    info = np.iinfo(dt)
    rng = np.random.default_rng(info.bits)
    a = rng.integers(info.min, info.max, n, endpoint=True).astype(dt)
    b = rng.integers(info.min, info.max, n, endpoint=True).astype(dt)
    edge_a = np.array([info.min, info.max, 0, 1, info.min, info.max, -1 if info.min else 2, 100], np.int64)
    edge_b = np.array([info.max, info.min, 1, 0, -1 if info.min else 3, 1, info.min, 100], np.int64)
    k = min(n, edge_a.size)
    a[:k], b[:k] = edge_a[:k].astype(dt), edge_b[:k].astype(dt)
    return a, b


def _numpy(a, b, s, div):
    s = np.array(s).astype(np.int64).astype(a.dtype)
    d = (b & a.dtype.type(63)) | a.dtype.type(1)
    q = np.trunc(a.astype(np.float64) / d).astype(a.dtype)  # C's truncating division
    with np.errstate(over="ignore"):
        rows = [a + b, a - b, a * b, np.maximum(a, b), np.minimum(a, b), np.where(a > b, a, b),
                np.abs(a) if np.issubdtype(a.dtype, np.signedinteger) else a, a * s + a.dtype.type(3),
                np.where(a < s, s, a - a.dtype.type(1))]
        rows.append(np.where(np.arange(a.size) < a.size - 5, a, b))  # a load with a block `other`
        return rows + ([q, a - q * d] if div else [np.zeros_like(a)] * 2)


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.uint32], ids=lambda d: np.dtype(d).name)
def test_narrow_and_unsigned_arithmetic(dt):
    """(n = 1 specializes the kernel anew: every size for int8, the two-program size for the others)"""
    s = -3
    for n in SIZES if dt == np.int8 else (BLOCK + 1,):
        a, b = _operands(dt, n)
        outs, div = {}, np.dtype(dt).itemsize < 4
        for target in ("sim", "ascend"):
            out = np.zeros(ROWS * n, dt)
            int_ops[(-(-n // BLOCK),)](a, b, out, s, n, BLOCK=BLOCK, DIV=div, target=target)
            outs[target] = out.reshape(ROWS, n)
        np.testing.assert_array_equal(outs["ascend"], outs["sim"], err_msg=f"n = {n}")
        np.testing.assert_array_equal(outs["sim"], np.stack(_numpy(a, b, s, div)), err_msg=f"numpy, n = {n}")


@xblock.jit
def int64_blocks(out_ptr, v, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    xl.store(out_ptr + offs, xl.full((BLOCK,), v, xl.int64), mask=m)
    xl.store(out_ptr + n + offs, xl.zeros((BLOCK,), xl.int64) + v, mask=m)
    xl.store(out_ptr + 2 * n + offs, offs.to(xl.int64) * 3 - 7, mask=m)
    xl.store(out_ptr + 3 * n + offs, (offs - 40).to(xl.int64).to(xl.int32).to(xl.int64), mask=m)


@pytest.mark.parametrize("vs", [(-(2**40) - 3, 2**62 + 1, -(2**63)), (5,), (2**31,)], ids=("int64", "int32", "uint32"))
def test_int64_blocks_from_runtime_values(vs):
    """tl.full/tl.zeros of int64 with a runtime value (an int64 argument, or an int32/uint32 one
    extended): Duplicate has no 64-bit lanes, so the low word fills every 32-bit lane and a Select
    puts the high word into the odd ones."""
    for v, n in ((v, n) for v in vs for n in (SIZES if len(vs) > 1 else (BLOCK + 1,))):
        outs = {}
        for target in ("sim", "ascend"):
            out = np.zeros(4 * n, np.int64)
            int64_blocks[(-(-n // BLOCK),)](out, v, n, BLOCK=BLOCK, target=target)
            outs[target] = out.reshape(4, n)
        np.testing.assert_array_equal(outs["ascend"], outs["sim"], err_msg=f"v = {v}, n = {n}")
        offs = np.arange(n, dtype=np.int64)
        np.testing.assert_array_equal(outs["sim"], np.stack([np.full(n, v), np.full(n, v), offs * 3 - 7, offs - 40]))


@xblock.jit
def bools(x_ptr, flag_ptr, gt_ptr, i_ptr, f_ptr, w_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    x = xl.load(x_ptr + offs, mask=m)
    flag = xl.load(flag_ptr + offs, mask=m)  # bools in memory: a byte each
    xl.store(gt_ptr + offs, x > 0, mask=m)  # computed bools to memory
    xl.store(gt_ptr + n + offs, flag ^ (x < -5), mask=m)
    xl.store(gt_ptr + 2 * n + offs, x.to(xl.int1), mask=m)
    xl.store(i_ptr + offs, flag.to(xl.int8) + (x > 3).to(xl.int8), mask=m)
    xl.store(f_ptr + offs, flag.to(xl.float16) - (x == 0).to(xl.float16), mask=m)
    xl.store(w_ptr + offs, xl.where(flag, x, -x), mask=m)


def test_bools_to_and_from_ints():
    for n in SIZES:
        rng = np.random.default_rng(n)
        x = rng.integers(-10, 10, n).astype(np.int8)
        x[:2] = [-128, 127][:n] if n >= 2 else [-128]
        flag = rng.integers(0, 2, n).astype(bool)
        outs = {}
        for target in ("sim", "ascend"):
            o = [np.zeros(3 * n, bool), np.zeros(n, np.int8), np.zeros(n, np.float16), np.zeros(n, np.int8)]
            bools[(-(-n // BLOCK),)](x, flag, *o, n, BLOCK=BLOCK, target=target)
            outs[target] = o
        for k, (g, w) in enumerate(zip(outs["ascend"], outs["sim"])):
            np.testing.assert_array_equal(g, w, err_msg=f"output {k}, n = {n}")
        with np.errstate(over="ignore"):
            want = [np.concatenate([x > 0, flag ^ (x < -5), x != 0]), flag.astype(np.int8) + (x > 3).astype(np.int8),
                    flag.astype(np.float16) - (x == 0).astype(np.float16), np.where(flag, x, -x)]
        for k, (g, w) in enumerate(zip(outs["ascend"], want)):
            np.testing.assert_array_equal(g, w, err_msg=f"numpy output {k}, n = {n}")


@xblock.jit
def int64_bit_ops(x_ptr, y_ptr, o1, o2, o3, o4, s, B: xl.constexpr):
    i = xl.arange(0, B)
    a = xl.load(x_ptr + i)
    b = xl.load(y_ptr + i)
    xl.store(o1 + i, a & b)
    xl.store(o2 + i, a | s)
    xl.store(o3 + i, a ^ b)
    xl.store(o4 + i, a ^ -1)


def test_int64_and_or_xor_run_bit_by_bit():
    """No 64-bit lanes, but and/or/xor act on each bit alone: int64 tiles go through 16-bit lanes."""
    rng = np.random.default_rng(0)
    a, b = (rng.integers(-2**63, 2**63 - 1, 32, dtype=np.int64) for _ in range(2))
    outs = [np.zeros(32, np.int64) for _ in range(4)]
    s = -(2**40) + 12345
    xblock.jit(int64_bit_ops)[(1,)](a, b, *outs, s, B=32, target="ascend")
    for got, want in zip(outs, [a & b, a | s, a ^ b, ~a]):
        np.testing.assert_array_equal(got, want)
