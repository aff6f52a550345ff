"""Loads, stores and atomics whose addresses depend on loaded data, on ascend, against numpy and the sim.

TorchInductor indexes with loaded data: an embedding lookup `tl.load(table + (x0 + 32 * tmp0))` with
`tmp0 = tl.load(idx + x1)`, cross-entropy's target logit `tl.load(logits + (label + V * x0))` on a
[XBLOCK, 1] block, the embedding backward's `tl.atomic_add(dw + (x0 + 32 * tmp0), grad, xmask)`, and a
plain scatter `tl.store(out + idx, v, mask)`. Ascend computes the offset block as data (int32 lanes;
int64 ones lane by lane) and then goes lane by lane: each active lane a GetValue from GM, or a
one-element DataCopyPad to GM (under SetAtomicAdd/Max/Min for atomics); masked-off lanes touch no
memory and take `other`. An index out of its argument is an ExecutionError at the kernel line, with
the caller's arrays untouched (before: "depend on data; gathers of that kind are not supported yet").
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import xblock
from xblock.errors import ExecutionError

triton = pytest.importorskip("triton")
tl = triton.language

pytestmark = pytest.mark.filterwarnings("ignore::xblock.errors.XBlockWarning")


@triton.jit
def embedding_kernel(idx_ptr, table_ptr, out_ptr, xnumel, C: tl.constexpr, XBLOCK: tl.constexpr):
    """out[i, :] = table[idx[i], :], flattened as Inductor does (x0 = column, x1 = row)."""
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    x0 = xindex % C
    x1 = xindex // C
    tmp0 = tl.load(idx_ptr + x1, xmask, eviction_policy='evict_last')
    tmp1 = tl.load(table_ptr + (x0 + C * tmp0), xmask, other=-7.0)  # the gather
    tl.store(out_ptr + xindex, tmp1, xmask)


@triton.jit
def target_logit_kernel(logits_ptr, labels_ptr, out_ptr, xnumel, V: tl.constexpr, XBLOCK: tl.constexpr):
    """out[r] = logits[r, labels[r]] (0 where the label is -100), on a [XBLOCK, 1] block."""
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    x0 = xindex
    tmp13 = tl.load(labels_ptr + x0, xmask)
    tmp15 = tmp13 != -100
    tmp17 = tl.where(tmp15, tmp13, 0)
    tmp22 = tl.load(logits_ptr + (tmp17 + V * x0), xmask & tmp15, other=0.0)  # the gather
    tl.store(out_ptr + x0, tmp22, xmask)


@triton.jit
def rows_kernel(idx_ptr, table_ptr, out_ptr, n, C: tl.constexpr, BLOCK: tl.constexpr):
    """A 2-D gather of whole rows: out[r, :] = table[idx[r], :]."""
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, C)
    rmask = rows < n
    idx = tl.load(idx_ptr + rows, rmask, other=0)
    v = tl.load(table_ptr + idx[:, None] * C + cols[None, :], rmask[:, None])  # the gather
    tl.store(out_ptr + rows[:, None] * C + cols[None, :], v, rmask[:, None])


@triton.jit
def embedding_backward_kernel(idx_ptr, grad_ptr, out_ptr, xnumel, C: tl.constexpr, XBLOCK: tl.constexpr):
    """dw[idx[i], :] += grad[i, :]: a scatter-add at gathered rows (repeated rows accumulate)."""
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    x1 = xindex // C
    x0 = xindex % C
    tmp0 = tl.load(idx_ptr + x1, xmask, eviction_policy='evict_last')
    tmp7 = tl.load(grad_ptr + xindex, xmask)
    tl.atomic_add(out_ptr + (x0 + C * tmp0), tmp7, xmask, sem='relaxed')  # the scatter


@triton.jit
def scatter_max_min_kernel(idx_ptr, x_ptr, mx_ptr, mn_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask)
    x = tl.load(x_ptr + offs, mask)
    tl.atomic_max(mx_ptr + idx, x, mask)
    tl.atomic_min(mn_ptr + idx, x, mask)


@triton.jit
def scatter_store_kernel(idx_ptr, x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out[idx[i]] = x[i] * 2 for a permutation idx."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask)
    x = tl.load(x_ptr + offs, mask)
    tl.store(out_ptr + idx, x * 2, mask)  # the scatter


@triton.jit
def scalar_index_kernel(idx_ptr, table_ptr, out_ptr, BLOCK: tl.constexpr):
    """A scalar index into a table: one row per program."""
    r = tl.program_id(0)
    i = tl.load(idx_ptr + r)
    cols = tl.arange(0, BLOCK)
    first = tl.load(table_ptr + i * BLOCK)  # a scalar load at a loaded address
    row = tl.load(table_ptr + i * BLOCK + cols)
    tl.store(out_ptr + r * BLOCK + cols, row + first)


def _line(fn, marker: str) -> int:
    src, first = inspect.getsourcelines(fn.fn)
    return first + next(i for i, s in enumerate(src) if marker in s)


def _both(kernel, grid, arrays, *scalars, **meta):
    """Run on the sim and on ascend with copies of the arrays; the two lists of arrays and ascend's warnings."""
    sim = [a.copy() for a in arrays]
    asc = [a.copy() for a in arrays]
    xblock.jit(kernel)[grid](*sim, *scalars, target="sim", **meta)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        xblock.jit(kernel)[grid](*asc, *scalars, target="ascend", **meta)
    return sim, asc, [str(x.message) for x in w]


# ----- gathers -----------------------------------------------------------------------------------

@pytest.mark.parametrize("itype", [np.int32, np.int64])
@pytest.mark.parametrize("dtype,rows", [(np.float32, 5), (np.float16, 3), (np.float32, 1)])
def test_embedding_lookup(itype, dtype, rows):
    rng = np.random.default_rng(rows)
    C, V = 32, 11
    idx = rng.integers(0, V, rows).astype(itype)
    idx[0] = V - 1
    table = rng.standard_normal((V, C)).astype(dtype)
    n = rows * C
    out = np.zeros(n, dtype)
    sim, asc, _ = _both(embedding_kernel, (triton.cdiv(n, 64),), [idx, table, out], n, C=C, XBLOCK=64)
    np.testing.assert_array_equal(asc[2], table[idx].ravel())
    np.testing.assert_array_equal(asc[2], sim[2])


@pytest.mark.parametrize("itype", [np.int32, np.int64])
def test_target_logit_on_a_2d_block_with_a_data_mask(itype):
    rng = np.random.default_rng(1)
    N, V = 13, 61
    logits = rng.standard_normal((N, V)).astype(np.float32)
    labels = rng.integers(0, V, N).astype(itype)
    labels[[0, 5]] = -100
    labels[1] = V - 1
    out = np.full(N, 9.0, np.float32)
    sim, asc, _ = _both(target_logit_kernel, (triton.cdiv(N, 8),), [logits, labels, out], N, V=V, XBLOCK=8)
    want = np.where(labels != -100, logits[np.arange(N), np.where(labels == -100, 0, labels)], 0).astype(np.float32)
    np.testing.assert_array_equal(asc[2], want)
    np.testing.assert_array_equal(asc[2], sim[2])


@pytest.mark.parametrize("n", [5, 8, 1])
def test_rows_gathered_on_a_2d_block(n):
    rng = np.random.default_rng(n)
    C, V = 16, 9
    idx = rng.integers(0, V, n).astype(np.int32)
    table = rng.standard_normal((V, C)).astype(np.float16)
    out = np.zeros((n, C), np.float16)
    sim, asc, _ = _both(rows_kernel, (triton.cdiv(n, 4),), [idx, table, out], n, C=C, BLOCK=4)
    np.testing.assert_array_equal(asc[2], table[idx])
    np.testing.assert_array_equal(asc[2], sim[2])


def test_a_scalar_load_at_a_loaded_index():
    idx = np.array([2, 0, 2], np.int64)
    table = np.arange(3 * 8, dtype=np.float32).reshape(3, 8)
    out = np.zeros((3, 8), np.float32)
    xblock.jit(scalar_index_kernel)[(3,)](idx, table, out, BLOCK=8, target="ascend")
    np.testing.assert_array_equal(out, table[idx] + table[idx, :1])


# ----- scatters ----------------------------------------------------------------------------------

@pytest.mark.parametrize("itype", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_embedding_backward_scatter_add_accumulates_repeated_rows(itype, dtype):
    rng = np.random.default_rng(3)
    C, V, rows = 32, 7, 9
    idx = rng.integers(0, V, rows).astype(itype)
    idx[[1, 4, 6]] = 2  # repeated rows accumulate
    grad = rng.integers(-8, 8, (rows, C)).astype(dtype)  # small integers: exact in any order
    dw = np.zeros((V, C), dtype)
    n = rows * C
    sim, asc, _ = _both(embedding_backward_kernel, (triton.cdiv(n, 64),), [idx, grad, dw], n, C=C, XBLOCK=64)
    want = np.zeros((V, C), np.float64)
    np.add.at(want, idx, grad.astype(np.float64))
    np.testing.assert_array_equal(asc[2], want.astype(dtype))
    np.testing.assert_array_equal(asc[2], sim[2])


@pytest.mark.parametrize("n", [40, 7])
def test_scatter_max_and_min(n):
    rng = np.random.default_rng(n)
    idx = rng.integers(0, 5, n).astype(np.int32)
    x = rng.standard_normal(n).astype(np.float32)
    mx, mn = np.full(5, -np.inf, np.float32), np.full(5, np.inf, np.float32)
    sim, asc, _ = _both(scatter_max_min_kernel, (triton.cdiv(n, 16),), [idx, x, mx, mn], n, BLOCK=16)
    want_mx, want_mn = mx.copy(), mn.copy()
    np.maximum.at(want_mx, idx, x)
    np.minimum.at(want_mn, idx, x)
    np.testing.assert_array_equal(asc[2], want_mx)
    np.testing.assert_array_equal(asc[3], want_mn)
    np.testing.assert_array_equal(asc[2], sim[2])


@pytest.mark.parametrize("n,itype", [(100, np.int64), (33, np.int32), (1, np.int32)])
def test_scatter_store_of_a_permutation(n, itype):
    rng = np.random.default_rng(n)
    idx = rng.permutation(n).astype(itype)
    x = rng.standard_normal(n).astype(np.float32)
    out = np.full(n + 3, 5.0, np.float32)  # the tail is never written
    sim, asc, _ = _both(scatter_store_kernel, (triton.cdiv(n, 32),), [idx, x, out], n, BLOCK=32)
    want = out.copy()
    want[idx] = x * 2
    np.testing.assert_array_equal(asc[2], want)
    np.testing.assert_array_equal(asc[2], sim[2])


@pytest.mark.parametrize("kernel,sig,consts,access", [
    (embedding_kernel, {"idx_ptr": "*i64", "table_ptr": "*fp32", "out_ptr": "*fp32", "xnumel": "i32"},
     {"C": 32, "XBLOCK": 64}, "load's addresses or mask depend on data; it runs lane by lane (each active lane "
     "reads GM with a GetValue)"),
    (embedding_backward_kernel, {"idx_ptr": "*i32", "grad_ptr": "*fp32", "out_ptr": "*fp32", "xnumel": "i32"},
     {"C": 32, "XBLOCK": 64}, "atomic's addresses or mask depend on data; it runs lane by lane (each active lane "
     "writes GM with a one-element DataCopyPad under the atomic)"),
    (scatter_store_kernel, {"idx_ptr": "*i32", "x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
     {"BLOCK": 32}, "store's addresses or mask depend on data; it runs lane by lane"),
])
def test_lane_by_lane_accesses_warn_at_the_line_and_read_as_intended(kernel, sig, consts, access):
    res = xblock.compile(kernel, target="ascend", signature=sig, constexprs=consts)
    line = _line(kernel, "# the ")
    assert any(w.startswith(f"{__file__}:{line}: ascend: this {access}") for w in res.metadata["warnings"]), \
        res.metadata["warnings"]
    cpp = res.asm["cpp"]
    if kernel is embedding_kernel:  # a GetValue from GM per active lane
        assert "tableGm.GetValue(" in cpp
    else:  # a one-element DataCopyPad per active lane (no scalar GM writes: cores share 64-byte lines)
        assert "DataCopyPad(outGm[" in cpp and "outGm.SetValue" not in cpp
        assert ("SetAtomicAdd<float>();" in cpp) == (kernel is embedding_backward_kernel)


# ----- an index out of range ---------------------------------------------------------------------

@pytest.mark.parametrize("bad", [7, -1])
def test_an_index_out_of_range_is_an_error_at_the_line(bad):
    C, V = 32, 7
    idx = np.array([1, bad, 0], np.int64)
    table = np.ones((V, C), np.float32)
    out = np.full(3 * C, 4.0, np.float32)
    before = [a.copy() for a in (idx, table, out)]
    with pytest.raises(ExecutionError) as e:
        xblock.jit(embedding_kernel)[(2,)](idx, table, out, 3 * C, C=C, XBLOCK=64, target="ascend")
    msg = str(e.value)
    assert msg.startswith(f"{__file__}:{_line(embedding_kernel, '# the gather')}: "), msg
    assert "GetValue" in msg and "table_ptr" in msg, msg
    for a, b in zip((idx, table, out), before):
        np.testing.assert_array_equal(a, b)


def test_a_scatter_out_of_range_is_an_error_at_the_line():
    idx = np.array([0, 3, 9], np.int32)
    x = np.ones(3, np.float32)
    out = np.zeros(4, np.float32)
    with pytest.raises(ExecutionError) as e:
        xblock.jit(scatter_store_kernel)[(1,)](idx, x, out, 3, BLOCK=32, target="ascend")
    msg = str(e.value)
    assert msg.startswith(f"{__file__}:{_line(scatter_store_kernel, '# the scatter')}: "), msg
    np.testing.assert_array_equal(out, np.zeros(4, np.float32))


@triton.jit
def hoisted_pointer_kernel(idx_ptr, table_ptr, out_ptr, steps, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    ptrs = table_ptr + tl.load(idx_ptr + offs)
    acc = tl.zeros([BLOCK], tl.float32)
    for _ in range(steps):
        acc += tl.load(ptrs)  # the load in the loop
    tl.store(out_ptr + offs, acc)


def test_a_data_pointer_made_outside_the_loop_that_reads_it_is_a_clear_error():
    with pytest.raises(xblock.CompilationError) as e:
        xblock.compile(hoisted_pointer_kernel, target="ascend", constexprs={"BLOCK": 16},
                       signature={"idx_ptr": "*i32", "table_ptr": "*fp32", "out_ptr": "*fp32", "steps": "i32"})
    msg = str(e.value)
    assert f"test_data_gathers.py:{_line(hoisted_pointer_kernel, '# the load in the loop')}:" in msg, msg
    assert "made outside the loop" in msg, msg


@triton.jit
def gather_update_kernel(idx_ptr, x_ptr, n, BLOCK: tl.constexpr):
    """x[idx[i]] += 1 through one pointer block (a load, then a store through it: its offsets stay live)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = x_ptr + tl.load(idx_ptr + offs, mask, other=0)
    v = tl.load(p, mask)
    tl.store(p, v + 1.0, mask)


def test_one_data_pointer_block_read_then_written():
    idx = np.array([4, 0, 7, 2, 9], np.int32)
    x = np.arange(10, dtype=np.float32)
    sim, asc, _ = _both(gather_update_kernel, (2,), [idx, x], 5, BLOCK=4)
    want = x.copy()
    want[idx] += 1
    np.testing.assert_array_equal(asc[1], want)
    np.testing.assert_array_equal(asc[1], sim[1])
