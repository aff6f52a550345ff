"""Pointer tables into memory the launch does not name (issue 28, item 6).

Triton's grouped-GEMM style: int64 tables of `data_ptr()` / `arr.ctypes.data` addresses of arrays that
are not kernel arguments; the kernel turns them into pointers and reads and writes through them. On a
host target the launch names those arrays with the launch option `buffers=[...]`: accesses through
integer-made pointers are checked against them as against arguments, and what the kernel writes there
reaches the caller's arrays. Without the option (the tutorial's launch, unmodified), the launch finds
the arrays the table values point into among those the caller holds (runtime/tables.py), with a
one-time warning; an address in none of them is an error at the access's line that names the address
and both ways.
"""

from __future__ import annotations

import numpy as np
import pytest

import xblock
from xblock.errors import XBlockWarning

triton = pytest.importorskip("triton")
tl = triton.language

TARGETS = ["sim", "cpu", "ascend"]
FILE = "test_pointer_tables_unnamed.py"


@triton.jit
def batched_gemm_from_tables(lhs_addrs, rhs_addrs, out_addrs, shapes, count,
                             TM: tl.constexpr, TN: tl.constexpr, TK: tl.constexpr):
    """out_i = lhs_i @ rhs_i for each problem i; every address comes from a table, shapes from `shapes`
    (m, n, k per problem). Program p takes the p-th tile over all problems' tiles, in order."""
    pid = tl.program_id(0)
    start = 0
    for i in range(count):
        m = tl.load(shapes + 3 * i)
        n = tl.load(shapes + 3 * i + 1)
        k = tl.load(shapes + 3 * i + 2)
        n_tiles_n = tl.cdiv(n, TN)
        n_tiles = tl.cdiv(m, TM) * n_tiles_n
        if pid >= start and pid < start + n_tiles:
            lhs = tl.load(lhs_addrs + i).to(tl.pointer_type(tl.float16))
            rhs = tl.load(rhs_addrs + i).to(tl.pointer_type(tl.float16))
            out = tl.load(out_addrs + i).to(tl.pointer_type(tl.float32))
            t = pid - start
            r = (t // n_tiles_n) * TM + tl.arange(0, TM)
            c = (t % n_tiles_n) * TN + tl.arange(0, TN)
            acc = tl.zeros((TM, TN), dtype=tl.float32)
            for k0 in range(0, k, TK):
                kk = k0 + tl.arange(0, TK)
                x = tl.load(lhs + r[:, None] * k + kk[None, :], mask=(r[:, None] < m) & (kk[None, :] < k), other=0.0)
                y = tl.load(rhs + kk[:, None] * n + c[None, :], mask=(kk[:, None] < k) & (c[None, :] < n), other=0.0)
                acc += tl.dot(x, y)
            tl.store(out + r[:, None] * n + c[None, :], acc, mask=(r[:, None] < m) & (c[None, :] < n))  # the store
        start += n_tiles


@triton.jit
def scale_rows_from_table(table, n_cols, BLOCK: tl.constexpr):
    """Row p of the array behind table[p], times 2, in place."""
    row = tl.load(table + tl.program_id(0)).to(tl.pointer_type(tl.float32))
    cols = tl.arange(0, BLOCK)
    x = tl.load(row + cols, mask=cols < n_cols)  # the load
    tl.store(row + cols, x * 2.0, mask=cols < n_cols)


def _problems(shapes, torch_tensors=False):
    rng = np.random.default_rng(7)
    lhs = [rng.standard_normal((m, k)).astype(np.float16) for m, n, k in shapes]
    rhs = [rng.standard_normal((k, n)).astype(np.float16) for m, n, k in shapes]
    out = [np.zeros((m, n), np.float32) for m, n, k in shapes]
    if torch_tensors:
        torch = pytest.importorskip("torch")
        lhs, rhs, out = ([torch.from_numpy(a) for a in group] for group in (lhs, rhs, out))
        addr = lambda a: a.data_ptr()  # noqa: E731
    else:
        addr = lambda a: a.ctypes.data  # noqa: E731
    tables = [np.array([addr(a) for a in group], np.int64) for group in (lhs, rhs, out)]
    dims = np.array([d for m, n, k in shapes for d in (m, n, k)], np.int32)
    tiles = sum(-(-m // 16) * -(-n // 16) for m, n, k in shapes)
    return lhs, rhs, out, tables, dims, tiles


SHAPES = [(16, 16, 16), (32, 16, 48), (20, 24, 16)]


@pytest.mark.parametrize("target", TARGETS)
def test_grouped_gemm_through_tables_of_unnamed_arrays(target):
    lhs, rhs, out, tables, dims, tiles = _problems(SHAPES)
    kernel = xblock.jit(batched_gemm_from_tables)
    kernel[(tiles,)](*tables, dims, len(SHAPES), TM=16, TN=16, TK=16, target=target, buffers=[*lhs, *rhs, *out])
    for a, b, c in zip(lhs, rhs, out):
        np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("target", ["sim", "cpu"])
def test_grouped_gemm_through_tables_of_torch_tensors(target):
    lhs, rhs, out, tables, dims, tiles = _problems(SHAPES[:2], torch_tensors=True)
    xblock.jit(batched_gemm_from_tables)[(tiles,)](*tables, dims, 2, TM=16, TN=16, TK=16, target=target,
                                                   buffers=[*lhs, *rhs, *out])
    for a, b, c in zip(lhs, rhs, out):
        np.testing.assert_allclose(c.numpy(), a.float().numpy() @ b.float().numpy(), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("target", TARGETS)
def test_rows_of_one_unnamed_array_written_in_place(target):
    """Table entries inside one array passed through buffers= (and a sub-array of it, covered by it)."""
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    want = x * 2.0
    table = np.array([x[i].ctypes.data for i in range(4)], np.int64)
    xblock.jit(scale_rows_from_table)[(4,)](table, 6, BLOCK=8, target=target, buffers=[x, x[1]])
    np.testing.assert_array_equal(x, want)


@pytest.mark.parametrize("target", TARGETS)
def test_the_unmodified_launch_finds_the_arrays_the_caller_holds(target):
    """The tutorial's launch, without buffers=: the tables' addresses lie in arrays held in the caller's
    lists, which the launch finds and checks as if named (one warning per kernel says so)."""
    lhs, rhs, out, tables, dims, tiles = _problems(SHAPES)
    kernel = xblock.jit(batched_gemm_from_tables)
    with pytest.warns(XBlockWarning, match=r"9 array\(s\) the caller holds .*buffers=\[") as seen:
        kernel[(tiles,)](*tables, dims, len(SHAPES), TM=16, TN=16, TK=16, target=target)
    assert FILE in str(seen[0].message)
    for a, b, c in zip(lhs, rhs, out):
        np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)
    # a second launch, new arrays at new addresses: found again (such launches never take the memo)
    lhs, rhs, out, tables, dims, tiles = _problems(SHAPES[:2])
    kernel[(tiles,)](*tables, dims, 2, TM=16, TN=16, TK=16, target=target)
    for a, b, c in zip(lhs, rhs, out):
        np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("target", ["sim", "cpu"])
def test_the_unmodified_launch_finds_torch_tensors(target):
    lhs, rhs, out, tables, dims, tiles = _problems(SHAPES[:2], torch_tensors=True)
    # (the warning came at this kernel's first such launch on the target, in the test above)
    xblock.jit(batched_gemm_from_tables)[(tiles,)](*tables, dims, 2, TM=16, TN=16, TK=16, target=target)
    for a, b, c in zip(lhs, rhs, out):
        np.testing.assert_allclose(c.numpy(), a.float().numpy() @ b.float().numpy(), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("target", TARGETS)
def test_rows_found_in_place_without_the_option(target):
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    want = x * 2.0
    table = np.array([x[i].ctypes.data for i in range(4)], np.int64)
    with pytest.warns(XBlockWarning, match=r"1 array\(s\)"):
        xblock.jit(scale_rows_from_table)[(4,)](table, 6, BLOCK=8, target=target)
    np.testing.assert_array_equal(x, want)


class _Hidden:
    """Arrays the launching code does not hold in a variable (an attribute of an object): not found."""

    def __init__(self, arrays):
        self.arrays = arrays


def _hidden_problem():
    lhs, rhs, out, tables, dims, tiles = _problems(SHAPES[:1])
    return _Hidden((lhs, rhs, out)), tables, dims, tiles


@pytest.mark.parametrize("target", TARGETS)
def test_an_address_in_no_array_the_caller_holds_names_line_address_and_both_ways(target):
    hidden, tables, dims, tiles = _hidden_problem()
    with pytest.raises(xblock.ExecutionError) as info:
        xblock.jit(batched_gemm_from_tables)[(tiles,)](*tables, dims, 1, TM=16, TN=16, TK=16, target=target)
    msg = str(info.value)
    assert FILE in msg and "buffers=[" in msg and "variable of the launching code" in msg, msg
    assert "0x" in msg, msg
    assert not hidden.arrays[2][0].any()  # nothing written


@pytest.mark.parametrize("target", TARGETS)
def test_buffers_is_the_checked_mode_nothing_else_is_found(target):
    """With buffers= the launch reaches exactly the arrays named: `rhs` is held but not named."""
    lhs, rhs, out, tables, dims, tiles = _problems(SHAPES[:1])
    with pytest.raises(xblock.ExecutionError, match=r"address 0x[0-9a-f]+ .*outside every .*buffers="):
        xblock.jit(batched_gemm_from_tables)[(tiles,)](*tables, dims, 1, TM=16, TN=16, TK=16, target=target,
                                                       buffers=[*lhs, *out])
    assert not out[0].any()
