"""Messages of pointer tables into unnamed memory, of sim races and of sim bounds (issue 28, items 6
and 9): each names the kernel's file and line; one test per message."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.errors import LaunchArgumentError

from ._helpers import assert_clean, def_line, line_of, source_file


@xblock.jit
def row_through_table(table, out_ptr, BLOCK: xl.constexpr):
    src = xl.load(table + xl.program_id(0)).to(xl.pointer_type(xl.float32))
    offs = xl.arange(0, BLOCK)
    xl.store(out_ptr + xl.program_id(0) * BLOCK + offs, xl.load(src + offs))  # ERR


@xblock.jit
def same_slot_for_all(out_ptr):
    xl.store(out_ptr, xl.program_id(0).to(xl.float32))  # ERR


@xblock.jit
def one_before(x_ptr, y_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    xl.store(x_ptr + offs, xl.load(y_ptr + offs - 4))  # ERR


def _located(info, kernel, marker="# ERR"):
    text = str(info.value)
    assert text.startswith(f"{source_file(kernel)}:{line_of(kernel, marker)}: "), text
    assert_clean(text)
    return text


@pytest.mark.parametrize("target", ["sim", "cpu"])
def test_an_address_in_no_buffer_names_line_address_and_option(target):
    # held in an object's attribute, not in a variable: the launch does not find them (runtime/tables.py)
    held = SimpleNamespace(rows=[np.arange(8, dtype=np.float32) + 10 * i for i in range(2)])
    table = np.array([r.ctypes.data for r in held.rows], np.int64)
    out = np.zeros(16, np.float32)
    with pytest.raises(xblock.ExecutionError) as info:
        row_through_table[(2,)](table, out, BLOCK=8, target=target)
    text = _located(info, row_through_table)
    assert f"address {held.rows[0].ctypes.data:#x}" in text and "buffers=[" in text, text
    rows = held.rows
    assert not out.any()
    row_through_table[(2,)](table, out, BLOCK=8, target=target, buffers=rows)  # the way forward works
    np.testing.assert_array_equal(out, np.concatenate(rows))


def test_a_race_of_different_values_names_the_races_option():
    out = np.zeros(1, np.float32)
    with pytest.raises(xblock.ExecutionError) as info:
        same_slot_for_all[(3,)](out, target="sim")
    text = _located(info, same_slot_for_all)
    assert "write-write race" in text and 'races="warn"' in text, text


def test_an_access_before_a_buffer_names_it_with_a_negative_element():
    x, y = np.zeros(8, np.float32), np.ones(8, np.float32)
    with pytest.raises(xblock.ExecutionError) as info:
        one_before[(1,)](x, y, BLOCK=8, target="sim")
    text = _located(info, one_before)
    assert "element -4 of argument 'y_ptr' (8 elements of 4 bytes)" in text, text


def test_buffers_must_be_a_list_of_host_arrays():
    out = np.zeros(16, np.float32)
    table = np.zeros(2, np.int64)
    for bad, says in ((out, "buffers= takes a list of arrays"), ([3], "buffers[0] has type int")):
        with pytest.raises(LaunchArgumentError) as info:
            row_through_table[(2,)](table, out, BLOCK=8, target="sim", buffers=bad)
        text = str(info.value)
        assert text.startswith(f"{source_file(row_through_table)}:{def_line(row_through_table)}: "), text
        assert says in text, text


def test_a_buffer_partly_overlapping_an_argument_is_refused():
    pool = np.zeros(32, np.float32)
    out = pool[:16]
    table = np.zeros(2, np.int64)
    with pytest.raises(LaunchArgumentError) as info:
        row_through_table[(2,)](table, out, BLOCK=8, target="sim", buffers=[pool[8:24]])
    text = str(info.value)
    assert text.startswith(f"{source_file(row_through_table)}:{def_line(row_through_table)}: "), text
    assert "buffers[0] partly overlaps argument 'out_ptr'" in text, text


def test_cuda_refuses_buffers():
    pytest.importorskip("triton")
    out = np.zeros(16, np.float32)
    table = np.zeros(2, np.int64)
    with pytest.raises(LaunchArgumentError) as info:
        row_through_table[(2,)](table, out, BLOCK=8, target="cuda", buffers=[out])
    text = str(info.value)
    assert text.startswith(f"{source_file(row_through_table)}:{def_line(row_through_table)}: "), text
    assert "buffers= is not taken by target 'cuda'" in text, text
