"""Frontend features, each run on the sim against numpy: helpers, loops, `if`, tuples, indexing, casts,
generic reduce/scan, atomics under contention, Triton and plain-Python kernels, and source locations."""

import inspect
import re

import numpy as np
import pytest

import xblock
import xblock.language as xl

GLOBAL_BLOCK = xl.constexpr(16)
GLOBAL_SCALE = 3


def _line(fn, text: str) -> int:
    """Absolute line number of the one line of `fn` containing `text`."""
    fn = getattr(fn, "fn", fn)
    lines, first = inspect.getsourcelines(fn)
    hits = [i for i, line in enumerate(lines) if text in line]
    assert len(hits) == 1, text
    return first + hits[0]


# ---------------------------------------------------------------------------------------- helpers
@xblock.jit
def _square(x):
    return x * x


@xblock.jit
def _stats(x, SCALE: xl.constexpr):
    s = xl.sum(x, axis=0) * SCALE
    return s, xl.max(x, axis=0), _square(x)  # a tuple, one element from a nested helper


def _plain_helper(x, y):
    return x + 2 * y


@xblock.jit
def helpers(x_ptr, sum_ptr, max_ptr, sq_ptr, plain_ptr, i_ptr, N: xl.constexpr):
    offs = xl.arange(0, N)
    x = xl.load(x_ptr + offs)
    s, m, sq = _stats(x, 2)
    xl.store(sum_ptr, s)
    xl.store(max_ptr, m)
    xl.store(sq_ptr + offs, sq)
    xl.store(plain_ptr + offs, _plain_helper(x, sq))
    xl.store(i_ptr + offs, _square(offs))  # the same helper specialized for int32


def test_helper_calls_nested_and_returning_tuples():
    x = np.arange(-4, 4, dtype=np.float32)
    s, m, sq, plain = np.zeros(1, np.float32), np.zeros(1, np.float32), np.zeros(8, np.float32), np.zeros(8, np.float32)
    ints = np.zeros(8, np.int32)
    helpers[(1,)](x, s, m, sq, plain, ints, N=8, target="sim")
    assert s[0] == 2 * x.sum() and m[0] == x.max()
    np.testing.assert_array_equal(sq, x * x)
    np.testing.assert_array_equal(plain, x + 2 * x * x)
    np.testing.assert_array_equal(ints, np.arange(8) ** 2)


def test_helpers_are_inlined_and_located_in_their_own_lines():
    ck = xblock.compile(helpers, target="sim", signature=["*fp32"] * 5 + ["*i32"], constexprs={"N": 8})
    xb_text = ck.asm["xb"]
    assert "func.call" not in xb_text
    file = inspect.getsourcefile(helpers.fn)
    assert f'loc("{file}":{_line(_square, "return x * x")}:' in xb_text
    assert f'loc("{file}":{_line(_stats, "xl.sum(x, axis=0) * SCALE")}:' in xb_text


# ---------------------------------------------------------------------------------------- loops
@xblock.jit
def unrolled(x_ptr, out_ptr, N: xl.constexpr, STEPS: xl.constexpr):
    offs = xl.arange(0, N)
    acc = xl.zeros((N,), xl.float32)
    for i in xl.static_range(STEPS):
        acc += xl.load(x_ptr + i * N + offs) * (i + 1)
    xl.store(out_ptr + offs, acc)


def test_static_range_unrolls():
    x = np.arange(32, dtype=np.float32)
    out = np.zeros(8, np.float32)
    unrolled[(1,)](x, out, N=8, STEPS=4, target="sim")
    np.testing.assert_array_equal(out, sum(x[i * 8:(i + 1) * 8] * (i + 1) for i in range(4)))
    ck = xblock.compile(unrolled, target="sim", signature=["*fp32", "*fp32"], constexprs={"N": 8, "STEPS": 4})
    assert "scf.for" not in ck.asm["xb"] and ck.asm["xb"].count('"xb.load"') == 4


@xblock.jit
def divergent_for(x_ptr, out_ptr, N: xl.constexpr):
    pid = xl.program_id(0)
    offs = xl.arange(0, N)
    acc = xl.zeros((N,), xl.float32)
    total = 0
    for k in xl.range(pid, 2 * pid + 1, num_stages=2):  # a different trip count in every program
        acc += xl.load(x_ptr + k * N + offs)
        total += 1
    xl.store(out_ptr + pid * N + offs, acc + total * 1000)


def test_for_with_bounds_that_differ_between_programs():
    P, N = 5, 4
    x = np.arange(2 * P * N, dtype=np.float32)
    out = np.zeros(P * N, np.float32)
    divergent_for[(P,)](x, out, N=N, target="sim")
    for p in range(P):
        rows = x.reshape(-1, N)[p:2 * p + 1]
        np.testing.assert_array_equal(out[p * N:(p + 1) * N], rows.sum(0) + (p + 1) * 1000)


@xblock.jit
def collatz(n_ptr, steps_ptr, last_ptr):
    pid = xl.program_id(0)
    n = xl.load(n_ptr + pid)
    steps = 0
    while n != 1:  # a data-dependent trip count per program
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    xl.store(steps_ptr + pid, steps)
    xl.store(last_ptr + pid, n)


def _collatz(n):
    s = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        s += 1
    return s


def test_while_loops_that_diverge_between_programs():
    n = np.array([1, 2, 3, 6, 7, 27, 97, 16], np.int32)
    steps, last = np.zeros(8, np.int32), np.zeros(8, np.int32)
    collatz[(8,)](n, steps, last, target="sim")
    np.testing.assert_array_equal(steps, [_collatz(int(v)) for v in n])
    np.testing.assert_array_equal(last, 1)


@xblock.jit
def scalar_becomes_block(x_ptr, out_ptr, n, N: xl.constexpr):
    offs = xl.arange(0, N)
    acc = 0  # a Python number that the loop turns into a block
    for i in range(n):
        acc = acc + xl.load(x_ptr + i * N + offs)
    xl.store(out_ptr + offs, acc)


def test_loop_carried_number_that_becomes_a_block():
    x = np.arange(24, dtype=np.float32)
    out = np.zeros(8, np.float32)
    scalar_becomes_block[(1,)](x, out, 3, N=8, target="sim")
    np.testing.assert_array_equal(out, x.reshape(3, 8).sum(0))


# ---------------------------------------------------------------------------------------- if
@xblock.jit
def constexpr_if(x_ptr, out_ptr, MODE: xl.constexpr, N: xl.constexpr):
    offs = xl.arange(0, N)
    x = xl.load(x_ptr + offs)
    if MODE == "double":
        y = x * 2
    elif MODE == "square":
        y = x * x
    else:
        y = -x
    xl.store(out_ptr + offs, y)


@pytest.mark.parametrize("mode,fn", [("double", lambda x: x * 2), ("square", lambda x: x * x), ("neg", np.negative)])
def test_if_on_constexpr_is_folded(mode, fn):
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    constexpr_if[(1,)](x, out, MODE=mode, N=8, target="sim")
    np.testing.assert_array_equal(out, fn(x))
    ck = xblock.compile(constexpr_if, target="sim", signature=["*fp32", "*fp32"], constexprs={"MODE": mode, "N": 8})
    assert "scf.if" not in ck.asm["xb"]


@xblock.jit
def divergent_if(x_ptr, out_ptr, flag_ptr, N: xl.constexpr):
    pid = xl.program_id(0)
    offs = pid * N + xl.arange(0, N)
    x = xl.load(x_ptr + offs)
    y = x + 0.5
    if pid % 3 == 0:
        y = x * 2
        xl.store(flag_ptr + pid, 1)  # a side effect in only some programs
    elif pid % 3 == 1:
        y = y - 100
    if xl.load(flag_ptr + pid) == 7:  # a condition read from memory
        y = y * 0
    xl.store(out_ptr + offs, y)


def test_if_with_runtime_conditions_that_diverge_between_programs():
    P, N = 7, 4
    x = np.arange(P * N, dtype=np.float32)
    out = np.zeros(P * N, np.float32)
    flag = np.zeros(P, np.int32)
    flag[5] = 7
    divergent_if[(P,)](x, out, flag, N=N, target="sim")
    want = x.reshape(P, N).copy()
    for p in range(P):
        row = x[p * N:(p + 1) * N]
        want[p] = row * 2 if p % 3 == 0 else (row + 0.5 - 100 if p % 3 == 1 else row + 0.5)
    want[5] *= 0
    np.testing.assert_array_equal(out, want.ravel())
    np.testing.assert_array_equal(flag, [1, 0, 0, 1, 0, 7, 1])


@xblock.jit
def ternary(x_ptr, out_ptr, n, N: xl.constexpr):
    offs = xl.arange(0, N)
    x = xl.load(x_ptr + offs)
    y = x * 2 if n > 3 else x * 3  # a runtime scalar condition becomes a select
    xl.store(out_ptr + offs, y)


def test_conditional_expression_on_runtime_scalar():
    x = np.arange(4, dtype=np.float32)
    out = np.zeros(4, np.float32)
    ternary[(1,)](x, out, 5, N=4, target="sim")
    np.testing.assert_array_equal(out, x * 2)
    ternary[(1,)](x, out, 1, N=4, target="sim")
    np.testing.assert_array_equal(out, x * 3)


# ---------------------------------------------------------------------------------------- tuples, shapes
@xblock.jit
def shapes(x_ptr, out_ptr, t_ptr, M: xl.constexpr, N: xl.constexpr):
    rows = xl.arange(0, M)
    cols = xl.arange(0, N)
    x = xl.load(x_ptr + rows[:, None] * N + cols[None, :])
    xl.static_assert(x.shape == (M, N), "shape is a tuple of ints")
    xl.static_assert(x.dtype == xl.float32, "dtype")
    a, b = x.shape
    a, b = b, a  # tuple swap
    pair = (x, a)
    y = pair[0].to(xl.int32).to(xl.float32) + pair[1] + b * 100
    xl.store(out_ptr + rows[:, None] * N + cols[None, :], y)
    t = xl.trans(x)
    xl.static_assert(t.shape == (N, M), "trans")
    xl.store(t_ptr + cols[:, None] * M + rows[None, :], t + x.T - t)


def test_tuples_shape_dtype_indexing_and_casts():
    x = np.arange(12, dtype=np.float32).reshape(3, 4) + 0.75
    out, t = np.zeros((3, 4), np.float32), np.zeros((4, 3), np.float32)
    shapes[(1,)](x, out, t, M=3, N=4, target="sim")
    np.testing.assert_array_equal(out, np.trunc(x) + 4 + 300)
    np.testing.assert_array_equal(t, x.T)


@xblock.jit
def outer(a_ptr, b_ptr, out_ptr, out3_ptr, M: xl.constexpr, N: xl.constexpr):
    i = xl.arange(0, M)
    j = xl.arange(0, N)
    a = xl.load(a_ptr + i)
    b = xl.load(b_ptr + j)
    prod = a[:, None] * b[None, :]
    xl.store(out_ptr + i[:, None] * N + j[None, :], prod)
    cube = xl.expand_dims(prod, 0) + xl.reshape(xl.broadcast_to(a[:, None], (M, N)), (1, M, N))
    flat = xl.reshape(xl.permute(cube, (0, 2, 1)), (N * M,))
    xl.store(out3_ptr + xl.arange(0, N * M), flat)


def test_broadcasting_indexing_and_shape_ops():
    a = np.arange(1, 4, dtype=np.float32)
    b = np.arange(1, 5, dtype=np.float32)
    out, out3 = np.zeros((3, 4), np.float32), np.zeros(12, np.float32)
    outer[(1,)](a, b, out, out3, M=3, N=4, target="sim")
    np.testing.assert_array_equal(out, np.outer(a, b))
    np.testing.assert_array_equal(out3, (np.outer(a, b) + a[:, None]).T.ravel())


@xblock.jit
def globals_kernel(x_ptr, out_ptr):
    offs = xl.arange(0, GLOBAL_BLOCK)
    xl.store(out_ptr + offs, xl.load(x_ptr + offs) * GLOBAL_SCALE)


def test_global_constants():
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    globals_kernel[(1,)](x, out, target="sim")
    np.testing.assert_array_equal(out, x * 3)


# ---------------------------------------------------------------------------------------- generic reduce and scan
@xblock.jit
def _add_fn(a, b):
    return a + b


@xblock.jit
def _argmax_fn(v1, i1, v2, i2):
    take1 = (v1 > v2) | ((v1 == v2) & (i1 < i2))
    return xl.where(take1, v1, v2), xl.where(take1, i1, i2)


@xblock.jit
def _max_fn(a, b):
    return xl.maximum(a, b)


@xblock.jit
def generic(x_ptr, sum_ptr, scan_ptr, pair_ptr, M: xl.constexpr, N: xl.constexpr):
    rows = xl.arange(0, M)
    cols = xl.arange(0, N)
    x = xl.load(x_ptr + rows[:, None] * N + cols[None, :])
    xl.store(sum_ptr + rows, xl.reduce(x, 1, _add_fn))
    xl.store(scan_ptr + rows[:, None] * N + cols[None, :], xl.associative_scan(x, 1, _max_fn))
    s, c = xl.associative_scan((x, x * 0 + 1), 1, _add_fn2)
    xl.store(pair_ptr + rows[:, None] * N + cols[None, :], s * 1000 + c)


@xblock.jit
def _add_fn2(a1, b1, a2, b2):
    return a1 + a2, b1 + b2


def test_generic_reduce_and_associative_scan():
    rng = np.random.default_rng(0)
    x = rng.integers(-20, 20, (5, 12)).astype(np.float32)
    sums, scan, pair = np.zeros(5, np.float32), np.zeros((5, 12), np.float32), np.zeros((5, 12), np.float32)
    generic[(1,)](x, sums, scan, pair, M=5, N=12, target="sim")
    np.testing.assert_array_equal(sums, x.sum(1))
    np.testing.assert_array_equal(scan, np.maximum.accumulate(x, axis=1))
    np.testing.assert_array_equal(pair, np.cumsum(x, 1) * 1000 + np.arange(1, 13))


@xblock.jit
def generic_argmax(x_ptr, val_ptr, idx_ptr, M: xl.constexpr, N: xl.constexpr):
    rows = xl.arange(0, M)
    cols = xl.arange(0, N)
    x = xl.load(x_ptr + rows[:, None] * N + cols[None, :])
    idx = xl.broadcast_to(cols[None, :], (M, N))
    v, i = xl.reduce((x, idx), 1, _argmax_fn)
    xl.store(val_ptr + rows, v)
    xl.store(idx_ptr + rows, i)


def test_generic_reduce_of_values_and_indices():
    x = np.random.default_rng(0).integers(-20, 20, (5, 12)).astype(np.float32)
    x[1, 3] = x[1, 9] = 50  # a tie: the combine function picks the first index
    vals, idx = np.zeros(5, np.float32), np.zeros(5, np.int32)
    generic_argmax[(1,)](x, vals, idx, M=5, N=12, target="sim")
    np.testing.assert_array_equal(vals, x.max(1))
    np.testing.assert_array_equal(idx, x.argmax(1))


# ---------------------------------------------------------------------------------------- atomics
@xblock.jit
def contention(acc_ptr, tickets_ptr, mx_ptr, mn_ptr, bits_ptr, x_ptr, N: xl.constexpr):
    pid = xl.program_id(0)
    offs = xl.arange(0, N)
    x = xl.load(x_ptr + pid * N + offs)
    xl.atomic_add(acc_ptr + offs, x)  # every program adds its row into the same N elements
    xl.atomic_add(acc_ptr + N, 1.0)  # and one scalar counter
    ticket = xl.atomic_add(tickets_ptr, 1)  # old values: each program gets a distinct ticket
    xl.store(tickets_ptr + 1 + pid, ticket)
    xl.atomic_max(mx_ptr + offs, x)
    xl.atomic_min(mn_ptr + offs, x)
    xl.atomic_or(bits_ptr, 1 << (pid % 31))
    xl.atomic_xor(bits_ptr + 1, pid)
    xl.atomic_and(bits_ptr + 2, ~(1 << (pid % 31)))


def test_atomics_from_many_programs_to_the_same_addresses():
    P, N = 64, 8
    rng = np.random.default_rng(1)
    x = rng.integers(-100, 100, (P, N)).astype(np.float32)
    acc = np.zeros(N + 1, np.float32)
    tickets = np.zeros(P + 1, np.int32)
    mx, mn = np.full(N, -1e9, np.float32), np.full(N, 1e9, np.float32)
    bits = np.array([0, 0, -1], np.int32)
    contention[(P,)](acc, tickets, mx, mn, bits, x, N=N, target="sim")
    np.testing.assert_array_equal(acc[:N], x.sum(0))
    assert acc[N] == P
    assert tickets[0] == P and sorted(tickets[1:]) == list(range(P))
    np.testing.assert_array_equal(mx, x.max(0))
    np.testing.assert_array_equal(mn, x.min(0))
    assert bits[0] == (1 << 31) - 1
    xor = 0
    for p in range(P):
        xor ^= p
    assert bits[1] == xor
    assert bits[2] == np.int32(-1) & ~np.int32((1 << 31) - 1)


@xblock.jit
def cas_lock(lock_ptr, winner_ptr, old_ptr):
    pid = xl.program_id(0)
    old = xl.atomic_cas(lock_ptr, 0, pid + 1)  # only the first program finds 0
    xl.store(old_ptr + pid, old)
    if old == 0:
        xl.store(winner_ptr, pid)


def test_atomic_cas_has_one_winner():
    P = 16
    lock, winner, old = np.zeros(1, np.int32), np.full(1, -1, np.int32), np.full(P, -1, np.int32)
    cas_lock[(P,)](lock, winner, old, target="sim")
    w = int(winner[0])
    assert 0 <= w < P and lock[0] == w + 1
    assert (old == 0).sum() == 1 and old[w] == 0
    assert set(old[old != 0]) == {w + 1}


@xblock.jit
def xchg_kernel(slot_ptr, seen_ptr):
    pid = xl.program_id(0)
    prev = xl.atomic_xchg(slot_ptr, pid + 1)
    xl.store(seen_ptr + pid, prev)


def test_atomic_xchg_passes_every_value_on_once():
    P = 32
    slot, seen = np.zeros(1, np.int32), np.full(P, -1, np.int32)
    xchg_kernel[(P,)](slot, seen, target="sim")
    values = sorted(list(seen) + [int(slot[0])])
    assert values == list(range(P + 1))  # a chain: 0 -> ... -> last, each value seen exactly once


@xblock.jit
def masked_atomic(acc_ptr, n, N: xl.constexpr):
    offs = xl.arange(0, N)
    xl.atomic_add(acc_ptr + offs, 1, mask=offs < n)


def test_masked_atomics_skip_masked_lanes():
    acc = np.zeros(8, np.int32)
    masked_atomic[(10,)](acc, 5, N=16, target="sim")  # lanes past 8 are masked off and out of bounds
    np.testing.assert_array_equal(acc, [10] * 5 + [0] * 3)


# ---------------------------------------------------------------------------------------- math, dot
@xblock.jit
def math_kernel(x_ptr, out_ptr, N: xl.constexpr, K: xl.constexpr):
    offs = xl.arange(0, N)
    x = xl.load(x_ptr + offs)
    vals = (xl.exp(x), xl.exp2(x), xl.log(x), xl.log2(x), xl.sqrt(x), xl.rsqrt(x), xl.sin(x), xl.cos(x),
            xl.abs(x - 1), xl.erf(x), xl.sigmoid(x), xl.floor(x), xl.ceil(x), xl.fma(x, x, 1.0),
            xl.clamp(x, 0.5, 1.5), xl.cdiv(offs + 1, 3).to(xl.float32), min(x, 1.0), max(x, 1.0, 0.25))
    xl.static_assert(len(vals) == K, "count")
    for k in xl.static_range(K):
        xl.store(out_ptr + k * N + offs, vals[k])


def test_math_functions():
    from math import erf

    x = np.linspace(0.1, 2.0, 16, dtype=np.float32)
    out = np.zeros((18, 16), np.float32)
    math_kernel[(1,)](x, out, N=16, K=18, target="sim")
    xd = x.astype(np.float64)
    want = [np.exp(xd), np.exp2(xd), np.log(xd), np.log2(xd), np.sqrt(xd), 1 / np.sqrt(xd), np.sin(xd),
            np.cos(xd), np.abs(xd - 1), [erf(v) for v in xd], 1 / (1 + np.exp(-xd)), np.floor(xd), np.ceil(xd),
            xd * xd + 1, np.clip(xd, 0.5, 1.5), (np.arange(16) + 3) // 3, np.minimum(xd, 1), np.maximum(xd, 1)]
    for k, w in enumerate(want):
        np.testing.assert_allclose(out[k], np.asarray(w, np.float64), rtol=2e-6, atol=1e-6, err_msg=f"row {k}")


@xblock.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: xl.constexpr, N: xl.constexpr, K: xl.constexpr):
    i = xl.arange(0, M)
    j = xl.arange(0, N)
    k = xl.arange(0, K)
    a = xl.load(a_ptr + i[:, None] * K + k[None, :])
    b = xl.load(b_ptr + k[:, None] * N + j[None, :])
    acc = xl.full((M, N), 1.0, xl.float32)
    c = xl.dot(a, b, acc)
    xl.static_assert(c.dtype == xl.float32, "fp16 dot accumulates in fp32")
    xl.store(c_ptr + i[:, None] * N + j[None, :], c)


def test_dot_with_accumulator():
    rng = np.random.default_rng(2)
    a = rng.integers(-3, 4, (16, 32)).astype(np.float16)
    b = rng.integers(-3, 4, (32, 16)).astype(np.float16)
    c = np.zeros((16, 16), np.float32)
    dot_kernel[(1,)](a, b, c, M=16, N=16, K=32, target="sim")
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32) + 1)


# ---------------------------------------------------------------------------------------- launch surface
@xblock.jit
def grid3(out_ptr):
    p0, p1, p2 = xl.program_id(0), xl.program_id(1), xl.program_id(2)
    n0, n1 = xl.num_programs(0), xl.num_programs(1)
    xl.store(out_ptr + (p2 * n1 + p1) * n0 + p0, p0 * 100 + p1 * 10 + p2 + xl.num_programs(2) * 1000)


def test_three_dimensional_grid_and_options():
    out = np.zeros((2, 3, 4), np.int32)
    grid3[(4, 3, 2)](out, target="sim", num_warps=4, num_stages=3)
    p2, p1, p0 = np.meshgrid(range(2), range(3), range(4), indexing="ij")
    np.testing.assert_array_equal(out, p0 * 100 + p1 * 10 + p2 + 2000)


@xblock.jit
def mul_add(x_ptr, y_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    x = xl.load(x_ptr + offs, mask=m)
    xl.store(out_ptr + offs, x * xl.load(y_ptr + offs, mask=m) + x, mask=m)


@pytest.mark.parametrize("target", ["sim", "cpu"])
def test_enable_fp_fusion_is_accepted_and_the_product_is_rounded(target):
    # Triton's launch option (accelerated-scan's launches pass enable_fp_fusion=False); these targets
    # never contract x * y + x, with the option or without: the product is rounded, as numpy rounds it
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(100).astype(np.float32), rng.standard_normal(100).astype(np.float32)
    for fusion in (False, True):
        out = np.zeros_like(x)
        mul_add[(4,)](x, y, out, 100, BLOCK=32, target=target, enable_fp_fusion=fusion)
        np.testing.assert_array_equal(out, x * y + x)


@xblock.jit
def scale(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    xl.store(out_ptr + offs, xl.load(x_ptr + offs, mask=m) * 2, mask=m)


def test_callable_grid_and_specialization_per_dtype():
    for dt in (np.float32, np.float16, np.int32):
        x = np.arange(37).astype(dt)
        out = np.zeros(37, dt)
        scale[lambda meta: (xblock.cdiv(meta["n"], meta["BLOCK"]),)](x, out, 37, BLOCK=8, target="sim")
        np.testing.assert_array_equal(out, x * 2)
    assert len({k for k in scale.kernels if k[0] == "sim"}) >= 3


def test_device_print_and_static_print(capsys, tmp_path, monkeypatch):
    from xblock.runtime import compiler

    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path))  # static_print runs when the kernel compiles
    monkeypatch.setattr(compiler, "_MEMORY", {})
    printing.kernels.clear()
    printing._fast.clear()
    printing[(2,)](np.arange(2, dtype=np.int32), target="sim")
    out = capsys.readouterr().out
    assert "compile-time 4" in out
    assert re.search(r"pid \(0, 0, 0\).*value.*0", out) and re.search(r"pid \(1, 0, 0\).*value.*1", out)


@xblock.jit
def printing(x_ptr):
    xl.static_print("compile-time", 4)
    xl.device_print("value", xl.load(x_ptr + xl.program_id(0)))


# ---------------------------------------------------------------------------------------- other kernel kinds
def plain_kernel(x_ptr, out_ptr, N: xl.constexpr):
    offs = xl.arange(0, N)
    xl.store(out_ptr + offs, xl.load(x_ptr + offs) + 1)


def test_plain_python_function_as_kernel():
    k = xblock.jit(plain_kernel)
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    k[(1,)](x, out, N=8, target="sim")
    np.testing.assert_array_equal(out, x + 1)
    ck = xblock.compile(plain_kernel, target="sim", signature={"x_ptr": "*fp32", "out_ptr": "*fp32"},
                        constexprs={"N": 8})
    assert "@plain_kernel" in ck.asm["xb"]


def test_unmodified_triton_kernels():
    pytest.importorskip("triton")
    from tests.unit import _triton_kernels as tk

    k = xblock.jit(tk.add_kernel)
    n = 100
    x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    k[(tk.triton.cdiv(n, 32),)](x, y, out, n, BLOCK=32, target="sim")
    np.testing.assert_array_equal(out, x + y)

    rows, cols = 5, 13
    a = np.random.default_rng(3).standard_normal((rows, cols)).astype(np.float32)
    sm = np.zeros_like(a)
    xblock.jit(tk.softmax_kernel)[(rows,)](sm, a, cols, cols, cols, BLOCK=16, target="sim")
    e = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(sm, e / e.sum(1, keepdims=True), rtol=1e-6)

    ck = xblock.compile(tk.add_kernel, target="sim", signature={"x_ptr": "*fp32", "y_ptr": "*fp32",
                                                                "out_ptr": "*fp32", "n": "i32"},
                        constexprs={"BLOCK": 32})
    assert f'loc("{inspect.getsourcefile(tk)}":' in ck.asm["xb"]


def test_triton_kernel_errors_point_at_its_source():
    pytest.importorskip("triton")
    from tests.unit import _triton_kernels as tk

    with pytest.raises(xblock.CompilationError) as info:
        xblock.compile(tk.bad_kernel, target="sim", signature={"x_ptr": "*fp32"})
    assert info.value.file == inspect.getsourcefile(tk)
    assert info.value.line == _line(tk.bad_kernel, "x & 1")


# ---------------------------------------------------------------------------------------- locations
@xblock.jit
def located(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    mask = offs < n
    x = xl.load(x_ptr + offs, mask=mask)
    y = xl.exp(x) * 2.0
    xl.store(out_ptr + offs, y, mask=mask)


def test_xb_module_carries_user_locations():
    ck = xblock.compile(located, target="sim", signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                        constexprs={"BLOCK": 64})
    text = ck.asm["xb"]
    file = inspect.getsourcefile(located.fn)
    lines = {int(m) for m in re.findall(r'loc\("' + re.escape(file) + r'":(\d+):\d+\)', text)}
    for snippet in ("xl.arange(0, BLOCK)", "offs < n", "xl.load(x_ptr + offs", "xl.exp(x) * 2.0",
                    "xl.store(out_ptr + offs"):
        assert _line(located, snippet) in lines, snippet
    load_line = _line(located, "xl.load(x_ptr + offs")
    lines, first = inspect.getsourcelines(located.fn)
    col = lines[load_line - first].index("xl.load") + 1
    assert f'loc("{file}":{load_line}:{col})' in text
    assert "<unknown>" not in text


@xblock.jit
def print_mixed(i_ptr, f_ptr):
    xl.device_print("vals", xl.load(i_ptr), xl.load(f_ptr))


def test_device_print_of_mixed_dtypes(capsys):
    print_mixed[(1,)](np.array([3], np.int32), np.array([1.5], np.float32), target="sim")
    assert re.search(r"vals.*3.*1\.5", capsys.readouterr().out)
