"""The sim's fast paths (xblock/sim/lazy.py: factored pointer blocks, row x column loads and stores;
results written into dead operands) against the generic path: same results, same errors, and the
fallbacks taken where a fast path does not apply (non-separable masks, several buffers in one
pointer block, pointer blocks through `where`, faults in partly masked rows, races)."""

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.sim import executor, lazy


@pytest.fixture
def taken(monkeypatch):
    """Counts of fast loads/stores that completed ('load', 'store') or fell back ('load-', 'store-')."""
    counts = {"load": 0, "store": 0, "load-": 0, "store-": 0}
    real_load, real_store = lazy.load, lazy.store

    def load(*a, **k):
        out = real_load(*a, **k)
        counts["load" if out is not None else "load-"] += 1
        return out

    def store(*a, **k):
        ok = real_store(*a, **k)
        counts["store" if ok else "store-"] += 1
        return ok

    monkeypatch.setattr(lazy, "load", load)
    monkeypatch.setattr(lazy, "store", store)
    return counts


def _generic(monkeypatch):
    monkeypatch.setattr(lazy, "load", lambda *a, **k: None)
    monkeypatch.setattr(lazy, "store", lambda *a, **k: False)


def _both(monkeypatch, fn):
    """fn() with the fast paths, then with only the generic path; both results."""
    fast = fn()
    with monkeypatch.context() as m:
        _generic(m)
        slow = fn()
    return fast, slow


def _error(fn):
    with pytest.raises(xblock.ExecutionError) as info:
        fn()
    return str(info.value)


# ------------------------------------------------------------------------------ kernels
@xblock.jit
def rows_scale(x_ptr, out_ptr, n_cols, stride_x, stride_o, BLOCK: xl.constexpr):
    row = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    m = cols < n_cols
    x = xl.load(x_ptr + row * stride_x + cols, mask=m, other=-1.0)
    xl.store(out_ptr + row * stride_o + cols, x * 2, mask=m)


@xblock.jit
def tile_add(x_ptr, out_ptr, M, N, stride, BM: xl.constexpr, BN: xl.constexpr):
    rm = xl.program_id(0) * BM + xl.arange(0, BM)
    rn = xl.program_id(1) * BN + xl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = xl.load(x_ptr + rm[:, None] * stride + rn[None, :], mask=mask, other=0.0)
    xl.store(out_ptr + rm[:, None] * stride + rn[None, :], x + 1, mask=mask)


@xblock.jit
def tile_lower(x_ptr, out_ptr, N, BN: xl.constexpr):
    # a triangular mask: one column pattern per row, not an outer product
    r = xl.arange(0, BN)
    mask = (r[None, :] <= r[:, None]) & (r[:, None] < N)
    x = xl.load(x_ptr + r[:, None] * N + r[None, :], mask=mask, other=0.0)
    xl.store(out_ptr + r[:, None] * N + r[None, :], x + 1, mask=mask)


@xblock.jit
def tile_checker(x_ptr, out_ptr, N, BN: xl.constexpr):
    # two column patterns (even and odd columns), alternating by row
    r = xl.arange(0, BN)
    mask = ((r[:, None] + r[None, :]) % 2 == 0) & (r[:, None] < N) & (r[None, :] < N)
    x = xl.load(x_ptr + r[:, None] * N + r[None, :], mask=mask, other=-5.0)
    xl.store(out_ptr + r[:, None] * N + r[None, :], x, mask=mask)


@xblock.jit
def two_buffers(x_ptr, y_ptr, out_ptr, n, BLOCK: xl.constexpr):
    row = xl.program_id(0)
    base = xl.where(row % 2 == 0, x_ptr, y_ptr)  # rows of one pointer block in two buffers
    cols = xl.arange(0, BLOCK)
    v = xl.load(base + row * n + cols, mask=cols < n, other=0.0)
    xl.store(out_ptr + row * n + cols, v, mask=cols < n)


@xblock.jit
def where_ptrs(x_ptr, y_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    p = xl.where(offs % 3 == 0, x_ptr + offs, y_ptr + offs)  # a pointer block through a select
    m = offs < n
    xl.store(out_ptr + offs, xl.load(p, mask=m, other=0.0), mask=m)


@xblock.jit
def flat_reverse(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    xl.store(out_ptr + offs, xl.load(x_ptr + (n - 1 - offs), mask=m), mask=m)


@xblock.jit
def shared_rows(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    row = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    xl.store(out_ptr + (row // 2) * n + cols, xl.load(x_ptr + row * n + cols, mask=cols < n),
             mask=cols < n)  # ERR


@xblock.jit
def overlapping_rows(x_ptr, out_ptr, n, step, BLOCK: xl.constexpr):
    row = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    xl.store(out_ptr + row * step + cols, xl.load(x_ptr + row * n + cols, mask=cols < n),
             mask=cols < n)  # ERR


@xblock.jit
def two_stores(out_ptr, n, shift, BLOCK: xl.constexpr):
    row = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    m = cols < n
    xl.store(out_ptr + row * n + cols, cols.to(xl.float32), mask=m)
    xl.store(out_ptr + (row + shift) * n + cols, cols.to(xl.float32) + 100, mask=m)  # ERR


@xblock.jit
def misaligned_rows(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    row = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    p = (x_ptr + 2).to(xl.pointer_type(xl.int32))  # two bytes past the start of an int8 buffer
    v = xl.load(p + row * n + cols, mask=cols < n, other=0)  # ERR
    xl.store(out_ptr + row * n + cols, v, mask=cols < n)


@xblock.jit
def views_and_dead_values(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    row = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    m = cols < n
    x = xl.load(x_ptr + row * n + cols, mask=m, other=0.0)
    t = x + 1.0
    v = t[None, :]  # a view of t that outlives t
    w = t * 3.0  # t dies here; its memory must not take w while v still reads it
    u = xl.exp(w - 100.0)
    xl.store(out_ptr + row * 3 * n + cols, xl.reshape(v, (BLOCK,)), mask=m)
    xl.store(out_ptr + row * 3 * n + n + cols, w, mask=m)
    xl.store(out_ptr + row * 3 * n + 2 * n + cols, u, mask=m)


# ------------------------------------------------------------------------------ results
def test_rows_fast_path_matches_generic(monkeypatch, taken):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((37, 53), dtype=np.float32)

    def run():
        out = np.full((37, 50), 7.0, np.float32)
        rows_scale[(37,)](x, out, 45, 53, 50, BLOCK=64, target="sim")
        return out

    fast, slow = _both(monkeypatch, run)
    expected = np.full((37, 50), 7.0, np.float32)
    expected[:, :45] = x[:, :45] * 2
    np.testing.assert_array_equal(fast, expected)
    np.testing.assert_array_equal(slow, expected)
    assert taken["load"] == 1 and taken["store"] == 1


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int8, np.bool_, "bfloat16"])
def test_rows_fast_path_element_types(taken, dt):
    dt = xblock.testing.bf16() if dt == "bfloat16" else np.dtype(dt)
    x = (np.arange(6 * 21) % 7 == 1).reshape(6, 21) if dt == np.bool_ else (
        np.arange(6 * 21).reshape(6, 21) % 50).astype(dt)
    out = np.zeros((6, 21), dt)

    @xblock.jit
    def copy_rows(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
        row = xl.program_id(0)
        cols = xl.arange(0, BLOCK)
        xl.store(out_ptr + row * n + cols, xl.load(x_ptr + row * n + cols, mask=cols < n), mask=cols < n)

    copy_rows[(6,)](x, out, 21, BLOCK=32, target="sim")
    np.testing.assert_array_equal(out, x)
    assert taken["load"] == 1 and taken["store"] == 1


@pytest.mark.parametrize("M,N", [(40, 23), (32, 32), (1, 1), (5, 70)])
def test_tiles_with_per_program_column_tails(monkeypatch, taken, M, N):
    x = np.arange(M * N, dtype=np.float32).reshape(M, N)

    def run():
        out = np.zeros((M, N), np.float32)
        tile_add[(xblock.cdiv(M, 16), xblock.cdiv(N, 16))](x, out, M, N, N, BM=16, BN=16, target="sim")
        return out

    fast, slow = _both(monkeypatch, run)
    np.testing.assert_array_equal(fast, x + 1)
    np.testing.assert_array_equal(slow, x + 1)
    assert taken["load"] == 1 and taken["store"] == 1  # tails are groups of column patterns


def test_non_separable_mask_falls_back(monkeypatch, taken):
    x = np.arange(100, dtype=np.float32).reshape(10, 10)

    def run():
        out = np.zeros((10, 10), np.float32)
        tile_lower[(1,)](x, out, 10, BN=16, target="sim")
        return out

    fast, slow = _both(monkeypatch, run)
    expected = np.tril(x + 1)
    np.testing.assert_array_equal(fast, expected)
    np.testing.assert_array_equal(slow, expected)
    assert taken["load-"] == 1 and taken["store-"] == 1  # more column patterns than MAX_GROUPS


def test_few_column_patterns_load_fast_store_generic(monkeypatch, taken):
    x = np.arange(81, dtype=np.float32).reshape(9, 9)

    def run():
        out = np.full((9, 9), 3.0, np.float32)
        tile_checker[(1,)](x, out, 9, BN=16, target="sim")
        return out

    fast, slow = _both(monkeypatch, run)
    i, j = np.indices((9, 9))
    expected = np.where((i + j) % 2 == 0, x, 3.0)
    np.testing.assert_array_equal(fast, expected)
    np.testing.assert_array_equal(slow, expected)
    # two groups of strided columns: the load gathers them, the store takes the generic path
    assert taken["load"] == 1 and taken["store-"] == 1


def test_several_buffers_in_one_pointer_block(monkeypatch, taken):
    x = np.arange(40, dtype=np.float32)
    y = -np.arange(40, dtype=np.float32)

    def run():
        out = np.zeros(40, np.float32)
        two_buffers[(4,)](x, y, out, 10, BLOCK=16, target="sim")
        return out

    fast, slow = _both(monkeypatch, run)
    expected = np.concatenate([x[0:10], y[10:20], x[20:30], y[30:40]])
    np.testing.assert_array_equal(fast, expected)
    np.testing.assert_array_equal(slow, expected)
    assert taken["load-"] == 1 and taken["store"] == 1


def test_pointer_block_through_where(monkeypatch, taken):
    x = np.arange(50, dtype=np.float32)
    y = 1000 + np.arange(50, dtype=np.float32)

    def run():
        out = np.zeros(50, np.float32)
        where_ptrs[(4,)](x, y, out, 50, BLOCK=16, target="sim")
        return out

    fast, slow = _both(monkeypatch, run)
    expected = np.where(np.arange(50) % 3 == 0, x, y)
    np.testing.assert_array_equal(fast, expected)
    np.testing.assert_array_equal(slow, expected)
    assert taken["load"] == 0 and taken["load-"] == 0  # materialized before the load
    assert taken["store"] == 1


def test_flat_offsets_are_factored(monkeypatch, taken):
    x = np.arange(37, dtype=np.float32)

    def run():
        out = np.zeros(37, np.float32)
        flat_reverse[(3,)](x, out, 37, BLOCK=16, target="sim")
        return out

    fast, slow = _both(monkeypatch, run)
    np.testing.assert_array_equal(fast, x[::-1])
    np.testing.assert_array_equal(slow, x[::-1])
    assert taken["load"] == 1 and taken["store"] == 1


def test_masked_rows_may_point_anywhere(taken):
    # rows past M point past the end of x; they are masked off, so nothing is reported
    x = np.arange(20 * 7, dtype=np.float32).reshape(20, 7)
    out = np.zeros((20, 7), np.float32)
    tile_add[(4, 1)](x, out, 20, 7, 7, BM=16, BN=16, target="sim")
    np.testing.assert_array_equal(out, x + 1)
    assert taken["load"] == 1


def test_dead_operands_take_results_only_when_nothing_else_reads_them(monkeypatch):
    x = np.linspace(-1, 1, 4 * 30, dtype=np.float32).reshape(4, 30)

    def run():
        out = np.zeros((4, 3, 30), np.float32)
        views_and_dead_values[(4,)](x, out, 30, BLOCK=32, target="sim")
        return out

    fast, slow = _both(monkeypatch, run)
    t = x + 1
    w = t * 3
    expected = np.stack([t, w, np.exp(w - 100)], axis=1)
    np.testing.assert_allclose(fast, expected, rtol=1e-6)
    np.testing.assert_array_equal(fast, slow)


# ------------------------------------------------------------------------------ errors
def test_out_of_bounds_in_a_partly_masked_row(monkeypatch, taken):
    # the last row's active lanes run one element past the end of x
    x = np.zeros(5 * 40 - 1, np.float32)

    def run():
        out = np.zeros((5, 40), np.float32)
        return _error(lambda: rows_scale[(5,)](x, out, 40, 40, 40, BLOCK=64, target="sim"))

    fast, slow = _both(monkeypatch, run)
    assert fast == slow
    assert "out-of-bounds load in program (4, 0, 0)" in fast and "element 199 of argument 'x_ptr'" in fast
    assert taken["load-"] == 1


def test_out_of_bounds_store_in_a_partly_masked_row(monkeypatch):
    x = np.zeros((5, 40), np.float32)

    def run():
        out = np.zeros(5 * 40 - 3, np.float32)
        return _error(lambda: rows_scale[(5,)](x, out, 40, 40, 40, BLOCK=64, target="sim"))

    fast, slow = _both(monkeypatch, run)
    assert fast == slow and "out-of-bounds store in program (4, 0, 0)" in fast


def test_race_between_programs_in_one_store(monkeypatch, taken):
    x = np.arange(32, dtype=np.float32).reshape(4, 8)  # different values: storing the same one is no race

    def run():
        out = np.zeros((2, 8), np.float32)
        return _error(lambda: shared_rows[(4,)](x, out, 8, BLOCK=8, target="sim"))

    fast, slow = _both(monkeypatch, run)
    assert fast == slow and "write-write race: programs 0 and 1" in fast
    assert taken["store-"] == 1


def test_race_between_overlapping_rows(monkeypatch):
    x = np.arange(32, dtype=np.float32).reshape(4, 8)

    def run():
        out = np.zeros(40, np.float32)
        return _error(lambda: overlapping_rows[(4,)](x, out, 8, 6, BLOCK=8, target="sim"))

    fast, slow = _both(monkeypatch, run)
    assert fast == slow and "write-write race" in fast


def test_race_with_an_earlier_store(monkeypatch, taken):
    def run():
        out = np.zeros((6, 8), np.float32)
        return _error(lambda: two_stores[(4,)](out, 8, 1, BLOCK=8, target="sim"))

    fast, slow = _both(monkeypatch, run)
    assert fast == slow and "write-write race: programs 0 and 1" in fast
    assert taken["store"] == 1 and taken["store-"] == 1


def test_one_program_may_store_an_element_twice(monkeypatch, taken):
    def run():
        out = np.zeros((6, 8), np.float32)
        two_stores[(1,)](out, 8, 0, BLOCK=8, target="sim")
        return out

    fast, slow = _both(monkeypatch, run)
    np.testing.assert_array_equal(fast, slow)
    np.testing.assert_array_equal(fast[0], np.arange(8) + 100)
    assert taken["store"] == 2


def test_race_across_chunks_of_programs(monkeypatch):
    monkeypatch.setattr(executor, "CHUNK_ELEMENTS", 16)  # one program per chunk

    def run():
        x = np.arange(32, dtype=np.float32).reshape(4, 8)
        out = np.zeros((2, 8), np.float32)
        return _error(lambda: shared_rows[(4,)](x, out, 8, BLOCK=8, target="sim"))

    fast, slow = _both(monkeypatch, run)
    assert fast == slow and "write-write race: programs 0 and 1" in fast


def test_misaligned_rows(monkeypatch, taken):
    def run():
        x = np.zeros(256, np.int8)
        out = np.zeros(64, np.int32)
        return _error(lambda: misaligned_rows[(2,)](x, out, 8, BLOCK=8, target="sim"))

    fast, slow = _both(monkeypatch, run)
    assert fast == slow and "misaligned load" in fast
    assert taken["load-"] == 1


def test_failed_launch_leaves_inputs_untouched():
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    out = np.full((2, 8), 5.0, np.float32)
    _error(lambda: shared_rows[(4,)](x, out, 8, BLOCK=8, target="sim"))
    np.testing.assert_array_equal(out, 5.0)
    np.testing.assert_array_equal(x, np.arange(32, dtype=np.float32).reshape(4, 8))


# ------------------------------------------------------------------------------ helpers
def test_ptrsum_value_is_the_sum_of_its_terms():
    base = np.array([[1 << 40], [2 << 40]], np.int64)
    cols = np.arange(4, dtype=np.int64)[None] * 4
    p = lazy.PtrSum.of(np.broadcast_to(base, (2, 4))).add(cols, (2, 4))
    assert [t.shape for t in p.terms] == [(2, 1), (1, 4)]
    np.testing.assert_array_equal(p.value(), base + cols)


def test_column_groups_split_full_masks_by_pattern():
    m = np.array([[1, 1, 0], [0, 0, 0], [1, 1, 0], [0, 1, 1]], bool)
    groups = lazy._column_groups(m)
    assert [(list(r), list(c)) for r, c in groups] == [
        ([True, False, True, False], [True, True, False]), ([False, False, False, True], [False, True, True])]
    wide = np.zeros((3, 130), bool)
    wide[0, 5:9] = wide[2, 5:9] = True
    assert [list(r) for r, _ in lazy._column_groups(wide)] == [[True, False, True]]
    tri = np.tri(12, dtype=bool)
    assert lazy._column_groups(tri) is None
