"""The sim's own checks are precise (issue 28, item 9).

- programs storing the same values to the same elements (triton-ascend's histogram tests: every
  program computes the whole histogram and stores it) are no race;
- a store race of different values is an error whose message names the `races="warn"` option, and
  that option makes it a warning (the highest program's value is kept);
- an out-of-bounds message names the buffer the access belongs to and its element index: an access
  before a buffer's start is a negative element of that buffer, not a huge element of the buffer below.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.errors import LaunchArgumentError, XBlockWarning


@xblock.jit
def every_program_stores_the_histogram(x_ptr, out_ptr, N: xl.constexpr, BINS: xl.constexpr):
    x = xl.load(x_ptr + xl.arange(0, N))
    xl.store(out_ptr + xl.arange(0, BINS), xl.histogram(x, BINS))


@xblock.jit
def every_program_stores_its_id(out_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    xl.store(out_ptr + offs, xl.full((BLOCK,), 0, xl.int32) + xl.program_id(0))


@xblock.jit
def scatter_same_value(idx_ptr, out_ptr, BLOCK: xl.constexpr):
    """One store whose lanes (of several programs) hit one element with the same value."""
    i = xl.load(idx_ptr + xl.arange(0, BLOCK))
    xl.store(out_ptr + i, xl.full((BLOCK,), 7.0, xl.float32))


@xblock.jit
def read_before(x_ptr, y_ptr, out_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    xl.store(out_ptr + offs, xl.load(x_ptr + offs) + xl.load(y_ptr + offs - 1))


@xblock.jit
def read_past(x_ptr, y_ptr, out_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    xl.store(out_ptr + offs, xl.load(x_ptr + offs) + xl.load(y_ptr + offs + 2))


@xblock.jit
def read_from_table(table, out_ptr, BLOCK: xl.constexpr):
    src = xl.load(table).to(xl.pointer_type(xl.float32))
    offs = xl.arange(0, BLOCK)
    xl.store(out_ptr + offs, xl.load(src + offs + 1))


def test_programs_storing_the_same_histogram_are_no_race():
    x = np.random.default_rng(0).integers(0, 16, 64).astype(np.int32)
    out = np.zeros(16, np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        every_program_stores_the_histogram[(8,)](x, out, N=64, BINS=16, target="sim")
    np.testing.assert_array_equal(out, np.bincount(x, minlength=16))


def test_lanes_of_one_store_writing_the_same_value_are_no_race():
    idx = np.zeros(16, np.int32)  # every lane writes element 0
    out = np.zeros(4, np.float32)
    scatter_same_value[(3,)](idx, out, BLOCK=16, target="sim")
    np.testing.assert_array_equal(out, [7, 0, 0, 0])


def test_a_race_of_different_values_names_the_option():
    out = np.zeros(8, np.int32)
    with pytest.raises(xblock.ExecutionError) as info:
        every_program_stores_its_id[(3,)](out, BLOCK=8, target="sim")
    msg = str(info.value)
    assert "write-write race: programs 0 and 2" in msg and "'out_ptr'" in msg and "values differ" in msg, msg
    assert 'races="warn"' in msg, msg
    np.testing.assert_array_equal(out, 0)


def test_races_warn_makes_it_a_warning():
    out = np.zeros(8, np.int32)
    with pytest.warns(XBlockWarning, match="write-write race"):
        every_program_stores_its_id[(3,)](out, BLOCK=8, target="sim", races="warn")
    np.testing.assert_array_equal(out, 2)  # the highest program's value


def test_races_option_is_checked_and_refused_where_no_race_is_checked():
    out = np.zeros(8, np.int32)
    with pytest.raises(LaunchArgumentError, match="races must be 'error' or 'warn'"):
        every_program_stores_its_id[(3,)](out, BLOCK=8, target="sim", races="ignore")
    with pytest.raises(LaunchArgumentError, match=r"unknown option\(s\) for target 'cpu': races"):
        every_program_stores_its_id[(3,)](out, BLOCK=8, target="cpu", races="warn")


def test_an_access_before_a_buffer_names_that_buffer_and_element_minus_one():
    x, y, out = np.ones(8, np.float32), np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(xblock.ExecutionError) as info:
        read_before[(1,)](x, y, out, BLOCK=8, target="sim")
    msg = str(info.value)
    assert "element -1 of argument 'y_ptr' (8 elements of 4 bytes)" in msg, msg


def test_an_access_past_a_buffer_names_that_buffer_and_element():
    x, y, out = np.ones(8, np.float32), np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(xblock.ExecutionError) as info:
        read_past[(1,)](x, y, out, BLOCK=8, target="sim")
    assert "element 8 of argument 'y_ptr' (8 elements of 4 bytes)" in str(info.value), str(info.value)


@pytest.mark.parametrize("target", ["sim", "cpu"])
def test_an_access_past_a_buffers_array_names_it(target):
    src, out = np.ones(8, np.float32), np.zeros(8, np.float32)
    table = np.array([src.ctypes.data], np.int64)
    with pytest.raises(xblock.ExecutionError) as info:
        read_from_table[(1,)](table, out, BLOCK=8, target=target, buffers=[src])
    msg = str(info.value)
    if target == "sim":
        assert "element 8 of buffers[0] (an array of the launch's buffers= option)" in msg, msg
    else:  # the cpu knows only that the address is in no buffer: it names the address
        assert f"address {src.ctypes.data + 32:#x}" in msg, msg
