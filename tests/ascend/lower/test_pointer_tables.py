"""Pointers made from integers (pointer tables) on ascend, against numpy.

`tl.load(table + g).to(tl.pointer_type(T))` is a GlobalTensor<T> whose buffer is set from that
runtime address (`SetGlobalBuffer((__gm__ T *)addr)`); loads, stores, atomics and the Cube's copies
through `ptr + offsets` take the same DataCopy paths as kernel arguments. The launcher runs the kernel
on copies of the caller's arrays, and the tables hold the caller's addresses (`arr.ctypes.data`): the
CPU model maps an address inside an argument's array to the same byte of its copy and checks every
access against that argument. The errors: an address outside every argument, an access running past
the end of the argument the address lies in (both at the access's line, the caller's arrays untouched),
a block of pointers made from integers (at the line), and the export (main.cpp cannot know device
addresses).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import xblock
from tests._pkg import mentions_package
from xblock.errors import CompilationError, ExecutionError, ExportError

triton = pytest.importorskip("triton")
tl = triton.language

FILE = "test_pointer_tables.py"


@triton.jit
def gather_rows(table, out_ptr, src_all, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    src = tl.load(table + row).to(tl.pointer_type(tl.float32))
    cols = tl.arange(0, BLOCK)
    x = tl.load(src + cols, mask=cols < n_cols, other=0.0)  # the load
    tl.store(out_ptr + row * n_cols + cols, x * 2.0, mask=cols < n_cols)


@triton.jit
def scatter_rows(x_ptr, table, dst_all, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    dst = tl.load(table + row).to(tl.pointer_type(tl.float16))
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)
    tl.store(dst + cols, x + 1.0, mask=cols < n_cols)  # the store
    tl.store(dst + n_cols, tl.load(dst + n_cols) + (row * 10).to(tl.float16))  # a scalar after the row


@triton.jit
def add_into_rows(x_ptr, table, dst_all, total_ptr, n_cols, BLOCK: tl.constexpr):
    """Programs add their rows into the rows the table names (several programs into one row), and
    their row sums into one scalar behind a table address."""
    pid = tl.program_id(0)
    dst = tl.load(table + pid).to(tl.pointer_type(tl.float32))
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + pid * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.atomic_add(dst + cols, x, mask=cols < n_cols)
    total = tl.load(table + tl.num_programs(0)).to(tl.pointer_type(tl.float32))
    tl.atomic_add(total, tl.sum(x, axis=0))


@triton.jit
def copy_from_address(addr, out_ptr, src_all, n, BLOCK: tl.constexpr):
    """An address passed as a scalar int64 argument."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    src = addr.to(tl.pointer_type(tl.int32))
    tl.store(out_ptr + offs, tl.load(src + offs, mask=offs < n, other=-1) + 1, mask=offs < n)


@triton.jit
def recast_from_table(table, out_ptr, src_all, BLOCK: tl.constexpr):
    """A table pointer cast to another element type, with an offset: the bytes from there on."""
    p = tl.load(table + tl.program_id(0)).to(tl.pointer_type(tl.float32))
    q = (p + 1).to(tl.pointer_type(tl.int8)).to(tl.pointer_type(tl.int16)) + 2  # byte 4, then element 2
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + tl.program_id(0) * BLOCK + offs, tl.load(q + offs))


@triton.jit
def lanes_from_table(table, out_ptr, src_all, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    ptrs = tl.load(table + offs).to(tl.pointer_type(tl.float32))  # a block of pointers
    tl.store(out_ptr + offs, tl.load(ptrs))


@triton.jit
def grouped_matmul_tutorial(group_a_ptrs, group_b_ptrs, group_c_ptrs, group_gemm_sizes, g_lds, group_size,
                            a_all, b_all, c_all, NUM_SM: tl.constexpr, BLOCK_SIZE_M: tl.constexpr,
                            BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr):
    """Triton's grouped GEMM tutorial kernel (08-grouped-gemm.py), plus the buffers the tables point into."""
    tile_idx = tl.program_id(0)
    last_problem_end = 0
    for g in range(group_size):
        gm = tl.load(group_gemm_sizes + g * 3)
        gn = tl.load(group_gemm_sizes + g * 3 + 1)
        gk = tl.load(group_gemm_sizes + g * 3 + 2)
        num_m_tiles = tl.cdiv(gm, BLOCK_SIZE_M)
        num_n_tiles = tl.cdiv(gn, BLOCK_SIZE_N)
        num_tiles = num_m_tiles * num_n_tiles
        while tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles:
            k = gk
            lda = tl.load(g_lds + g * 3)
            ldb = tl.load(g_lds + g * 3 + 1)
            ldc = tl.load(g_lds + g * 3 + 2)
            a_ptr = tl.load(group_a_ptrs + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(group_b_ptrs + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(group_c_ptrs + g).to(tl.pointer_type(tl.float16))
            tile_idx_in_gemm = tile_idx - last_problem_end
            tile_m_idx = tile_idx_in_gemm // num_n_tiles
            tile_n_idx = tile_idx_in_gemm % num_n_tiles
            offs_am = tile_m_idx * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            offs_bn = tile_n_idx * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            offs_k = tl.arange(0, BLOCK_SIZE_K)
            a_ptrs = a_ptr + offs_am[:, None] * lda + offs_k[None, :]
            b_ptrs = b_ptr + offs_k[:, None] * ldb + offs_bn[None, :]
            accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(k, BLOCK_SIZE_K)):
                tl.multiple_of(a_ptrs, [16, 16])
                tl.multiple_of(b_ptrs, [16, 16])
                a = tl.load(a_ptrs)
                b = tl.load(b_ptrs)
                accumulator += tl.dot(a, b)
                a_ptrs += BLOCK_SIZE_K
                b_ptrs += BLOCK_SIZE_K * ldb
            c = accumulator.to(tl.float16)
            offs_cm = tile_m_idx * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            offs_cn = tile_n_idx * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            c_ptrs = c_ptr + ldc * offs_cm[:, None] + offs_cn[None, :]
            tl.store(c_ptrs, c)
            tile_idx += NUM_SM
        last_problem_end = last_problem_end + num_tiles


def _line(fn, text: str) -> int:
    """The file line of the first source line of kernel `fn` that holds `text`."""
    import inspect

    lines, start = inspect.getsourcelines(fn.fn if hasattr(fn, "fn") else fn)
    return start + next(i for i, s in enumerate(lines) if text in s)


def _addresses(buf: np.ndarray, offsets) -> np.ndarray:
    """An int64 table of the addresses of elements `offsets` of `buf` (as `buf.ctypes.data` gives them)."""
    return np.array([buf.ctypes.data + int(o) * buf.itemsize for o in offsets], np.int64)


# ------------------------------------------------------------------------------------ runs
@pytest.mark.parametrize("n_cols", [1, 31, 32, 33, 100])
def test_rows_copied_through_a_table_of_row_addresses(n_cols):
    rng = np.random.default_rng(n_cols)
    rows = 5
    src = rng.standard_normal((rows + 2, n_cols)).astype(np.float32)
    order = [3, 0, 6, 2, 2]  # any row, twice, in any order
    table = _addresses(src, [r * n_cols for r in order])
    out = np.zeros((rows, n_cols), np.float32)
    block = triton.next_power_of_2(n_cols)
    xblock.jit(gather_rows)[(rows,)](table, out, src, n_cols, BLOCK=block, target="ascend")
    np.testing.assert_array_equal(out, src[order] * 2)
    want = np.zeros_like(out)
    xblock.jit(gather_rows)[(rows,)](_addresses(src, [r * n_cols for r in order]), want, src, n_cols, BLOCK=block,
                                     target="sim")
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("n_cols", [1, 16, 17, 64])
def test_rows_stored_through_a_table(n_cols):
    rng = np.random.default_rng(n_cols)
    rows, stride = 4, n_cols + 1 + 7  # each destination row, its scalar, then a gap
    x = rng.standard_normal((rows, n_cols)).astype(np.float16)
    dst = np.full(rows * stride, -5.0, np.float16)
    starts = [2 * stride, 0, 3 * stride, stride]
    table = _addresses(dst, starts)
    xblock.jit(scatter_rows)[(rows,)](x, table, dst, n_cols, BLOCK=triton.next_power_of_2(n_cols), target="ascend")
    want = np.full(rows * stride, -5.0, np.float16)
    for r, s in enumerate(starts):
        want[s:s + n_cols] = x[r] + np.float16(1)
        want[s + n_cols] = -5 + r * 10
    np.testing.assert_array_equal(dst, want)


def test_atomic_add_through_table_pointers():
    rng = np.random.default_rng(3)
    programs, n_cols = 12, 40
    x = rng.integers(-8, 8, (programs, n_cols)).astype(np.float32)  # exact sums in any order
    dst = np.zeros(3 * 64 + 1, np.float32)
    which = rng.integers(0, 3, programs)
    table = np.concatenate([_addresses(dst, which * 64), _addresses(dst, [3 * 64])])
    xblock.jit(add_into_rows)[(programs,)](x, table, dst, np.zeros(1, np.float32), n_cols, BLOCK=64, target="ascend")
    want = np.zeros_like(dst)
    for p in range(programs):
        want[which[p] * 64:which[p] * 64 + n_cols] += x[p]
    want[-1] = x.sum()
    np.testing.assert_array_equal(dst, want)


@pytest.mark.parametrize("n", [1, 127, 128, 129])
def test_an_address_passed_as_a_scalar_argument(n):
    src = np.arange(n + 8, dtype=np.int32) * 3
    out = np.zeros(n, np.int32)
    xblock.jit(copy_from_address)[(triton.cdiv(n, 128),)](src.ctypes.data + 8 * 4, out, src, n, BLOCK=128,
                                                          target="ascend")
    np.testing.assert_array_equal(out, src[8:] + 1)


def test_a_table_pointer_cast_to_another_type():
    src = np.arange(64, dtype=np.int16)
    out = np.zeros((2, 16), np.int16)
    xblock.jit(recast_from_table)[(2,)](_addresses(src, [0, 20]), out, src, BLOCK=16, target="ascend")
    np.testing.assert_array_equal(out, np.stack([src[4:20], src[24:40]]))


def _groups(shapes, seed=0):
    """Packed fp16 A, B, C buffers, int64 tables of each group's matrices, the sizes and leading dims."""
    rng = np.random.default_rng(seed)
    a_all = rng.standard_normal(sum(m * k for m, n, k in shapes)).astype(np.float16)
    b_all = rng.standard_normal(sum(k * n for m, n, k in shapes)).astype(np.float16)
    c_all = np.zeros(sum(m * n for m, n, k in shapes), np.float16)
    at = np.cumsum([0] + [m * k for m, n, k in shapes])[:-1]
    bt = np.cumsum([0] + [k * n for m, n, k in shapes])[:-1]
    ct = np.cumsum([0] + [m * n for m, n, k in shapes])[:-1]
    tables = (_addresses(a_all, at), _addresses(b_all, bt), _addresses(c_all, ct))
    sizes = np.array(shapes, np.int32).ravel()
    lds = np.array([(k, n, n) for m, n, k in shapes], np.int32).ravel()
    views = [(a_all[a:a + m * k].reshape(m, k), b_all[b:b + k * n].reshape(k, n), c_all[c:c + m * n].reshape(m, n))
             for (m, n, k), a, b, c in zip(shapes, at, bt, ct)]
    return tables, sizes, lds, (a_all, b_all, c_all), views


def test_triton_grouped_gemm_tutorial_runs_on_the_cube_unit():
    """fp16 groups of different sizes (multiples of the blocks, as the tutorial assumes), fp16 out."""
    shapes = [(32, 16, 32), (64, 48, 16), (16, 32, 64), (48, 16, 48)]
    tables, sizes, lds, bufs, views = _groups(shapes)
    xblock.jit(grouped_matmul_tutorial)[(4,)](*tables, sizes, lds, len(shapes), *bufs, NUM_SM=4, BLOCK_SIZE_M=16,
                                              BLOCK_SIZE_N=16, BLOCK_SIZE_K=16, target="ascend")
    for a, b, c in views:
        want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
        np.testing.assert_allclose(c.astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-3)
    sig = {"group_a_ptrs": "*i64", "group_b_ptrs": "*i64", "group_c_ptrs": "*i64", "group_gemm_sizes": "*i32",
           "g_lds": "*i32", "group_size": "i32", "a_all": "*fp16", "b_all": "*fp16", "c_all": "*fp16"}
    cpp = xblock.compile(grouped_matmul_tutorial, target="ascend", signature=sig,
                         constexprs=dict(NUM_SM=4, BLOCK_SIZE_M=16, BLOCK_SIZE_N=16, BLOCK_SIZE_K=16)).asm["cpp"]
    assert "GlobalTensor<half> aGm;" in cpp and "aGm.SetGlobalBuffer((__gm__ half *)aAddr);" in cpp
    assert "Mmad(" in cpp and "Nd2NzParams" in cpp


# ------------------------------------------------------------------------------------ errors
def _untouched(fn, *arrays):
    """Run fn (which must raise); the caller's arrays are as they were."""
    before = [a.copy() for a in arrays]
    with pytest.raises(ExecutionError) as e:
        fn()
    for a, b in zip(arrays, before):
        np.testing.assert_array_equal(a, b)
    return str(e.value)


def test_an_address_outside_every_argument_is_an_error_at_the_access():
    rows = np.arange(24, dtype=np.float32).reshape(3, 8)
    held = SimpleNamespace(other=np.zeros(8, np.float32))  # not passed, not in a variable: not found
    out = np.full(24, 7.0, np.float32)
    table = np.concatenate([_addresses(rows, [0, 8]), _addresses(held.other, [0])])
    msg = _untouched(lambda: xblock.jit(gather_rows)[(3,)](table, out, rows, 8, BLOCK=8, target="ascend"), out, rows)
    line = _line(gather_rows, "# the load")
    assert msg.startswith(f"{__file__}:{line}: gather_rows: the AscendC model stopped the kernel: "), msg
    assert f"address {held.other.ctypes.data:#x} is outside every buffer passed to the kernel" in msg, msg
    assert f"[at {FILE}:{line}]" in msg, msg


def test_a_cube_operand_outside_every_argument_is_an_error_at_its_dot():
    """The Cube's copy of a dot operand (Nd2Nz, GM -> L1) from a table address no argument holds: the error names
    the dot's line (the copy is the dot's), and the caller's arrays are untouched."""
    shapes = [(32, 16, 32), (16, 32, 16)]
    tables, sizes, lds, bufs, _ = _groups(shapes)
    held = SimpleNamespace(other=np.zeros(16 * 16, np.float16))  # not passed, not in a variable: not found
    a_table = tables[0].copy()
    a_table[1] = held.other.ctypes.data
    msg = _untouched(lambda: xblock.jit(grouped_matmul_tutorial)[(4,)](
        a_table, *tables[1:], sizes, lds, len(shapes), *bufs, NUM_SM=4, BLOCK_SIZE_M=16, BLOCK_SIZE_N=16,
        BLOCK_SIZE_K=16, target="ascend"), *bufs)
    line = _line(grouped_matmul_tutorial, "tl.dot(a, b)")
    assert msg.startswith(f"{__file__}:{line}: grouped_matmul_tutorial: the AscendC model stopped the kernel: "), msg
    assert "DataCopy(GM->L1, Nd2NzParams)" in msg and f"[at {FILE}:{line}]" in msg, msg


def test_an_access_past_the_end_of_its_argument_is_an_error_at_the_access():
    rows = np.arange(24, dtype=np.float32).reshape(3, 8)
    out = np.full(24, 7.0, np.float32)
    table = _addresses(rows, [0, 8, 20])  # the third row starts 4 elements before the end of `rows`
    msg = _untouched(lambda: xblock.jit(gather_rows)[(3,)](table, out, rows, 8, BLOCK=8, target="ascend"), out, rows)
    line = _line(gather_rows, "# the load")
    assert msg.startswith(f"{__file__}:{line}: gather_rows: "), msg
    assert "reads 32 B of GM at byte offset 80 of 'src_all' (96 B)" in msg, msg
    # a store past the end: at the store's line, the destination untouched
    x = np.ones((2, 16), np.float16)
    dst = np.zeros(40, np.float16)
    table = _addresses(dst, [0, 30])
    msg = _untouched(lambda: xblock.jit(scatter_rows)[(2,)](x, table, dst, 16, BLOCK=16, target="ascend"), dst, x)
    assert msg.startswith(f"{__file__}:{_line(scatter_rows, '# the store')}: scatter_rows: "), msg
    assert "writes 32 B of GM at byte offset 60 of 'dst_all' (80 B)" in msg, msg


def test_a_block_of_pointers_made_from_integers_is_refused_at_the_line():
    src = np.arange(16, dtype=np.float32)
    table = _addresses(src, range(16))
    with pytest.raises(CompilationError) as e:
        xblock.jit(lanes_from_table)[(1,)](table, np.zeros(16, np.float32), src, BLOCK=16, target="ascend")
    msg = str(e.value)
    line = _line(lanes_from_table, "# a block of pointers")
    assert msg.startswith(f"{__file__}:{line}:"), msg
    assert "ascend: a block of pointers made from integers (each lane its own address) is not supported on " \
           "ascend: every GM access is a copy through one GlobalTensor" in msg, msg
    assert not mentions_package(msg)


def test_the_export_refuses_pointer_tables(tmp_path):
    ck = xblock.compile(gather_rows, target="ascend", constexprs=dict(BLOCK=8),
                        signature={"table": "*i64", "out_ptr": "*fp32", "src_all": "*fp32", "n_cols": "i32"})
    with pytest.raises(ExportError) as e:
        ck.export(tmp_path / "proj")
    msg = str(e.value)
    line = _line(gather_rows, "tl.pointer_type(tl.float32)")
    assert msg.startswith(f"{__file__}:{line}: gather_rows: this kernel makes pointers from integers"), msg
    assert "a table must hold device addresses (those aclrtMalloc returns at run time)" in msg, msg
    assert not (tmp_path / "proj").exists()
