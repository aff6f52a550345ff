"""Run-time checks of the sim: out-of-bounds lanes, write-write races and device_assert name the
kernel line, and a failed launch leaves every array as it was (the sim runs on copies)."""

import numpy as np
import pytest

import xblock
import xblock.language as xl

from ._helpers import assert_clean, line_of, source_file


def _run_error(kernel, grid, args, meta, match, marker="# ERR"):
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    before = [a.copy() for a in arrays]
    with pytest.raises(xblock.ExecutionError) as info:
        kernel[grid](*args, target="sim", **meta)
    text = str(info.value)
    line = line_of(kernel, marker)
    assert text.startswith(f"{source_file(kernel)}:{line}: "), text
    assert match in text, text
    assert_clean(text)
    for a, b in zip(arrays, before):
        np.testing.assert_array_equal(a, b)
    return info.value


@xblock.jit
def oob_load(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    xl.store(out_ptr + offs, offs.to(xl.float32), mask=offs < n)
    x = xl.load(x_ptr + offs)  # ERR
    xl.store(out_ptr + offs, x, mask=offs < n)


def test_unmasked_out_of_bounds_load():
    x = np.ones(20, np.float32)
    out = np.zeros(20, np.float32)
    err = _run_error(oob_load, (2,), (x, out, 20), {"BLOCK": 16}, "out-of-bounds load")
    assert "program (1, 0, 0)" in str(err) and "'x_ptr'" in str(err)


@xblock.jit
def oob_negative(x_ptr, out_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs - 1)  # ERR
    xl.store(out_ptr + offs, x)


def test_out_of_bounds_below_the_buffer():
    x = np.ones(16, np.float32)
    out = np.zeros(16, np.float32)
    _run_error(oob_negative, (1,), (x, out), {"BLOCK": 16}, "out-of-bounds load")


@xblock.jit
def oob_store(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs, mask=offs < n, other=0.0)
    xl.store(out_ptr + offs, x + 1)  # ERR


def test_unmasked_out_of_bounds_store():
    x = np.ones(20, np.float32)
    out = np.zeros(20, np.float32)
    _run_error(oob_store, (2,), (x, out, 20), {"BLOCK": 16}, "out-of-bounds store")


@xblock.jit
def oob_scalar(x_ptr, out_ptr, i):
    xl.store(out_ptr, xl.load(x_ptr + i))  # ERR


def test_scalar_out_of_bounds_load():
    x = np.ones(4, np.float32)
    out = np.zeros(1, np.float32)
    _run_error(oob_scalar, (1,), (x, out, 4), {}, "out-of-bounds load")


@xblock.jit
def oob_atomic(out_ptr, BLOCK: xl.constexpr):
    xl.atomic_add(out_ptr + xl.arange(0, BLOCK), 1.0)  # ERR


def test_out_of_bounds_atomic():
    out = np.zeros(8, np.float32)
    _run_error(oob_atomic, (1,), (out,), {"BLOCK": 16}, "out-of-bounds atomic")


@xblock.jit
def masked_ok(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    xl.store(out_ptr + offs, xl.load(x_ptr + offs, mask=m, other=5.0) + 1, mask=m)


def test_masked_lanes_out_of_bounds_are_fine():
    x = np.arange(20, dtype=np.float32)
    out = np.zeros(20, np.float32)
    masked_ok[(2,)](x, out, 20, BLOCK=16, target="sim")
    np.testing.assert_array_equal(out, x + 1)


@xblock.jit
def racy(x_ptr, out_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + xl.program_id(0) * BLOCK + offs)
    xl.store(out_ptr + offs, x)  # ERR


def test_write_write_race_between_programs():
    x = np.arange(32, dtype=np.float32)
    out = np.zeros(16, np.float32)
    err = _run_error(racy, (2,), (x, out), {"BLOCK": 16}, "write-write race")
    assert "programs 0 and 1" in str(err) and "'out_ptr'" in str(err)


@xblock.jit
def racy_scalar(out_ptr):
    xl.store(out_ptr, xl.program_id(0).to(xl.float32))  # ERR


def test_race_on_one_scalar():
    out = np.zeros(1, np.float32)
    _run_error(racy_scalar, (4,), (out,), {}, "write-write race")


@xblock.jit
def racy_two_stores(out_ptr, BLOCK: xl.constexpr):
    pid = xl.program_id(0)
    offs = xl.arange(0, BLOCK)
    xl.store(out_ptr + pid * BLOCK + offs, 1.0)
    xl.store(out_ptr + (1 - pid) * BLOCK + offs, 2.0)  # ERR


def test_race_across_two_store_ops():
    out = np.zeros(32, np.float32)
    _run_error(racy_two_stores, (2,), (out,), {"BLOCK": 16}, "write-write race")


@xblock.jit
def same_program_rewrites(out_ptr, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    xl.store(out_ptr + offs, 1.0)
    xl.store(out_ptr + offs, 2.0)


def test_one_program_storing_twice_is_not_a_race():
    out = np.zeros(32, np.float32)
    same_program_rewrites[(2,)](out, BLOCK=16, target="sim")
    np.testing.assert_array_equal(out, 2.0)


@xblock.jit
def checked(x_ptr, out_ptr, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs)
    xl.store(out_ptr + offs, x * 2)
    xl.device_assert(x >= 0, "x must be non-negative")  # ERR


def test_device_assert_failure():
    x = np.arange(32, dtype=np.float32)
    x[20] = -1
    out = np.zeros(32, np.float32)
    err = _run_error(checked, (2,), (x, out), {"BLOCK": 16}, "device_assert failed")
    assert "x must be non-negative" in str(err) and "program (1, 0, 0)" in str(err)


@xblock.jit
def checked_assert_stmt(x_ptr, BLOCK: xl.constexpr):
    x = xl.load(x_ptr + xl.arange(0, BLOCK))
    assert xl.sum(x) < 100, "sum too large"  # ERR


def test_python_assert_on_block_is_a_device_assert():
    x = np.full(16, 10, np.float32)
    _run_error(checked_assert_stmt, (1,), (x,), {"BLOCK": 16}, "sum too large")


def test_device_assert_passing():
    x = np.arange(32, dtype=np.float32)
    out = np.zeros(32, np.float32)
    checked[(2,)](x, out, BLOCK=16, target="sim")
    np.testing.assert_array_equal(out, x * 2)
