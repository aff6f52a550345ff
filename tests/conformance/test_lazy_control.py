"""Lazy control flow as Triton 3.6 compiles it: a runtime `a if c else b` evaluates only the side taken,
early `return` in every form Triton accepts (under a constexpr `if`, with a trailing bare `return`), and
`range` with a negative constexpr step. Unmodified @triton.jit kernels against numpy on every target that
runs here, and compiled to cubin for cuda."""

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile

triton = pytest.importorskip("triton")
tl = triton.language

RUN_TARGETS = ["sim", "cpu", "ascend"]


# ------------------------------------------------------------------------- a if c else b, lazily
@triton.jit
def segment_mean(values_ptr, cu_lens_ptr, out_ptr, MAX_LEN: tl.constexpr):
    # cumulative segment ends, no leading zero: segment 0 would read cu_lens[-1] if both sides ran
    seg = tl.program_id(0)
    start = 0 if seg == 0 else tl.load(cu_lens_ptr + seg - 1)
    end = tl.load(cu_lens_ptr + seg)
    offs = start + tl.arange(0, MAX_LEN)
    x = tl.load(values_ptr + offs, mask=offs < end, other=0.0)
    n = end - start
    mean = tl.sum(x, 0) / n if n > 0 else -1.0
    tl.store(out_ptr + seg, mean)


@triton.jit
def stencil3(x_ptr, out_ptr, n):
    # both ends guarded by a conditional expression: program 0 and program n-1 read out of bounds if eager
    i = tl.program_id(0)
    left = 0.0 if i == 0 else tl.load(x_ptr + i - 1)
    right = 0.0 if i == n - 1 else tl.load(x_ptr + i + 1)
    tl.store(out_ptr + i, left + 2.0 * tl.load(x_ptr + i) + right)


@triton.jit
def prev_block_carry(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # a block on each side: the previous block's values, or zeros for the first program
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    prev = tl.load(x_ptr + offs - BLOCK, mask=offs < n) if pid > 0 else tl.zeros([BLOCK], tl.float32)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) - prev, mask=offs < n)


@triton.jit
def and_or_scalars(x_ptr, out_ptr):
    # `and`/`or` of runtime scalars evaluate every operand (Triton does not short-circuit them)
    i = tl.program_id(0)
    v = tl.load(x_ptr + i)
    both = (i > 0) and (v > 0)
    either = (i == 0) or (v < -1)
    tl.store(out_ptr + i, both.to(tl.int32) * 2 + either.to(tl.int32))


def _segments():
    lens = np.array([3, 0, 5, 1, 7, 2], np.int32)
    cu = np.cumsum(lens).astype(np.int32)
    values = np.arange(1, cu[-1] + 1, dtype=np.float32)
    starts = cu - lens
    ref = np.array([values[s:e].mean() if e > s else -1.0 for s, e in zip(starts, cu)], np.float32)
    return values, cu, ref


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_conditional_expression_loads_only_the_side_taken(target):
    values, cu, ref = _segments()
    out = np.zeros(len(cu), np.float32)
    xblock.jit(segment_mean)[(len(cu),)](values, cu, out, MAX_LEN=8, target=target)
    np.testing.assert_allclose(out, ref, rtol=1e-6)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_conditional_expressions_guard_both_ends(target):
    x = np.arange(1, 10, dtype=np.float32) ** 2
    out = np.zeros_like(x)
    xblock.jit(stencil3)[(len(x),)](x, out, len(x), target=target)
    pad = np.concatenate([[0], x, [0]])
    np.testing.assert_array_equal(out, pad[:-2] + 2 * x + pad[2:])


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_conditional_expression_of_blocks(target):
    x = np.arange(40, dtype=np.float32)
    out = np.zeros_like(x)
    xblock.jit(prev_block_carry)[(3,)](x, out, len(x), BLOCK=16, target=target)
    prev = np.concatenate([np.zeros(16, np.float32), x[:-16]])
    np.testing.assert_array_equal(out, x - prev)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_and_or_of_runtime_scalars(target):
    x = np.array([5, -3, 2, 0, -0.5], np.float32)
    out = np.zeros(len(x), np.int32)
    xblock.jit(and_or_scalars)[(len(x),)](x, out, target=target)
    i = np.arange(len(x))
    np.testing.assert_array_equal(out, ((i > 0) & (x > 0)) * 2 + ((i == 0) | (x < -1)))


@triton.jit
def block_condition(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    y = x if x > 0 else -x
    tl.store(x_ptr + tl.arange(0, BLOCK), y)


def test_conditional_expression_with_a_block_condition_is_a_clear_error():
    with pytest.raises(xblock.CompilationError, match=r"test_lazy_control.py:\d+:\d+: the condition of "
                       r"`a if c else b` is a block of shape \[8\]: it must be a scalar"):
        xblock.jit(block_condition)[(1,)](np.zeros(8, np.float32), BLOCK=8, target="sim")


# ------------------------------------------------------------------------- early return
@triton.jit
def masked_kl_rows(p_ptr, q_ptr, label_ptr, loss_ptr, n_cols, stride, HAS_LABEL: tl.constexpr,
                   IGNORE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    if HAS_LABEL:
        label = tl.load(label_ptr + row)
        if label == IGNORE:
            tl.store(loss_ptr + row, 0.0)
            return
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        p = tl.load(p_ptr + row * stride + cols, mask=cols < n_cols, other=1.0)
        q = tl.load(q_ptr + row * stride + cols, mask=cols < n_cols, other=1.0)
        acc += p * (tl.log(p) - tl.log(q))
    tl.store(loss_ptr + row, tl.sum(acc, 0))


@triton.jit
def state_update(state_ptr, x_ptr, idx_ptr, out_ptr, dim, HAS_IDX: tl.constexpr, PAD: tl.constexpr,
                 BLOCK: tl.constexpr):
    b = tl.program_id(0)
    if HAS_IDX:
        slot = tl.load(idx_ptr + b)
        if slot == PAD:
            return
    else:
        slot = b
    offs = tl.arange(0, BLOCK)
    m = offs < dim
    s = tl.load(state_ptr + slot * dim + offs, mask=m)
    s = s * 0.5 + tl.load(x_ptr + b * dim + offs, mask=m)
    tl.store(state_ptr + slot * dim + offs, s, mask=m)
    tl.store(out_ptr + b * dim + offs, s * 2.0, mask=m)


@triton.jit
def scatter_to_cache(key_ptr, cache_ptr, slot_ptr, head_size, block_size, BLOCK: tl.constexpr):
    tok = tl.program_id(0)
    slot = tl.load(slot_ptr + tok).to(tl.int64)
    if slot < 0:
        return
    blk = slot // block_size
    off = slot % block_size
    d = tl.arange(0, BLOCK)
    k = tl.load(key_ptr + tok * head_size + d, mask=d < head_size)
    tl.store(cache_ptr + (blk * block_size + off) * head_size + d, k, mask=d < head_size)
    return


def _kl_case(rows=9, cols=70):
    rng = np.random.default_rng(3)
    p = rng.uniform(0.1, 1.0, (rows, cols)).astype(np.float32)
    q = rng.uniform(0.1, 1.0, (rows, cols)).astype(np.float32)
    labels = np.arange(rows, dtype=np.int32)
    labels[[1, 4, 5]] = -100
    ref = (p.astype(np.float64) * (np.log(p.astype(np.float64)) - np.log(q.astype(np.float64)))).sum(1)
    return p, q, labels, ref


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("has_label", [True, False])
def test_return_under_a_runtime_if_inside_a_constexpr_if(target, has_label):
    p, q, labels, ref = _kl_case()
    loss = np.full(len(labels), 7, np.float32)
    xblock.jit(masked_kl_rows)[(len(labels),)](p, q, labels, loss, p.shape[1], p.shape[1], HAS_LABEL=has_label,
                                               IGNORE=-100, BLOCK=32, target=target)
    if has_label:
        ref[labels == -100] = 0
    np.testing.assert_allclose(loss, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("has_idx", [True, False])
def test_padded_slots_return_early(target, has_idx):
    batch, dim, pad = 5, 12, -1
    rng = np.random.default_rng(4)
    state = rng.integers(-8, 8, (7, dim)).astype(np.float32)
    x = rng.integers(-8, 8, (batch, dim)).astype(np.float32)
    idx = np.array([3, pad, 0, 6, pad], np.int32)
    out = np.full((batch, dim), -7, np.float32)
    want_state, want_out = state.copy(), out.copy()
    for b in range(batch):
        slot = idx[b] if has_idx else b
        if slot == pad:
            continue
        want_state[slot] = state[slot] * 0.5 + x[b]
        want_out[b] = want_state[slot] * 2
    xblock.jit(state_update)[(batch,)](state, x, idx, out, dim, HAS_IDX=has_idx, PAD=pad, BLOCK=16,
                                       target=target)
    np.testing.assert_array_equal(state, want_state)
    np.testing.assert_array_equal(out, want_out)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_data_dependent_return_then_a_trailing_bare_return(target):
    tokens, head, block_size, n_blocks = 6, 10, 4, 3
    key = np.arange(tokens * head, dtype=np.float32).reshape(tokens, head)
    slots = np.array([5, -1, 0, 11, -1, 7], np.int32)
    cache = np.full((n_blocks * block_size, head), -1, np.float32)
    want = cache.copy()
    for t, s in enumerate(slots):
        if s >= 0:
            want[s] = key[t]
    xblock.jit(scatter_to_cache)[(tokens,)](key, cache, slots, head, block_size, BLOCK=16, target=target)
    np.testing.assert_array_equal(cache, want)


@triton.jit
def partial_returns(x_ptr, out_ptr, n_skip):
    # a `return` on some paths of a runtime branch only, with more statements after the `if`
    pid = tl.program_id(0)
    x = tl.load(x_ptr + pid)
    if pid % 3 == 0:
        if pid >= n_skip:
            return
        x = x * 10
    tl.store(out_ptr + pid, x + 1)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_return_on_some_paths_of_a_runtime_branch(target):
    x = np.arange(10, dtype=np.float32)
    out = np.full(10, -1, np.float32)
    xblock.jit(partial_returns)[(10,)](x, out, 5, target=target)
    pid = np.arange(10)
    want = np.where(pid % 3 == 0, x * 10 + 1, x + 1)
    want[(pid % 3 == 0) & (pid >= 5)] = -1
    np.testing.assert_array_equal(out, want)


# ------------------------------------------------------------------------- negative range steps
@triton.jit
def int8_mm_remaining_k(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.int32)
    for k in range(K, 0, -BK):  # k: how much of K is left
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k), other=0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < k) & (rn[None, :] < N), other=0)
        acc += tl.dot(a, b)
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def countdown_orders(seq_ptr, n, LO: tl.constexpr, STEP: tl.constexpr, COUNT: tl.constexpr):
    j = tl.full([], 0, tl.int32)
    for i in range(n - 1, LO - 1, -STEP):  # runtime start, constexpr negative step
        tl.store(seq_ptr + j, i)
        j += 1
    for i in tl.range(n, LO, -STEP, num_stages=1):
        tl.store(seq_ptr + j, i)
        j += 1
    for i in tl.static_range(COUNT, 0, -2):
        tl.store(seq_ptr + j, i)
        j += 1
    tl.store(seq_ptr + j, -1)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("K", [32, 80, 100])
def test_negative_step_over_the_remaining_k(target, K):
    M, N = 20, 24
    rng = np.random.default_rng(K)
    a = rng.integers(-128, 128, (M, K)).astype(np.int8)
    b = rng.integers(-128, 128, (K, N)).astype(np.int8)
    c = np.zeros((M, N), np.int32)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
    xblock.jit(int8_mm_remaining_k)[grid](a, b, c, M, N, K, BM=16, BN=16, BK=32, target=target)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("n, lo, step", [(10, 0, 3), (10, 2, 1), (7, 7, 2), (3, 5, 4)])
def test_negative_steps_count_down_as_python_does(target, n, lo, step):
    want = list(range(n - 1, lo - 1, -step)) + list(range(n, lo, -step)) + list(range(5, 0, -2)) + [-1]
    seq = np.full(len(want) + 2, 99, np.int32)
    xblock.jit(countdown_orders)[(1,)](seq, n, LO=lo, STEP=step, COUNT=5, target=target)
    np.testing.assert_array_equal(seq, want + [99, 99])


# ------------------------------------------------------------------------- cuda
def test_lazy_control_compiles_for_cuda():
    values, cu, _ = _segments()
    out = np.zeros(len(cu), np.float32)
    ck = precompile(segment_mean, (values, cu, out), {"MAX_LEN": 8})
    assert "cubin" in ck.asm and "scf.if" in ck.asm["xb"]
    x = np.zeros(16, np.float32)
    assert "cubin" in precompile(stencil3, (x, x, 16)).asm
    assert "cubin" in precompile(prev_block_carry, (x, x, 16), {"BLOCK": 16}).asm
    assert "cubin" in precompile(and_or_scalars, (x, np.zeros(16, np.int32))).asm
    p, q, labels, _ = _kl_case()
    ck = precompile(masked_kl_rows, (p, q, labels, np.zeros(9, np.float32), 70, 70),
                    {"HAS_LABEL": True, "IGNORE": -100, "BLOCK": 32})
    assert "cubin" in ck.asm
    st = np.zeros((7, 12), np.float32)
    assert "cubin" in precompile(state_update, (st, st, np.zeros(5, np.int32), st, 12),
                                 {"HAS_IDX": True, "PAD": -1, "BLOCK": 16}).asm
    assert "cubin" in precompile(partial_returns, (x, x, 5)).asm
    assert "cubin" in precompile(scatter_to_cache, (st, st, np.zeros(5, np.int32), 12, 4), {"BLOCK": 16}).asm
    a8 = np.zeros((20, 80), np.int8)
    assert "cubin" in precompile(int8_mm_remaining_k, (a8, a8.T.copy(), np.zeros((20, 20), np.int32), 20, 20, 80),
                                 {"BM": 16, "BN": 16, "BK": 32}).asm
    assert "cubin" in precompile(countdown_orders, (np.zeros(32, np.int32), 10),
                                 {"LO": 0, "STEP": 3, "COUNT": 5}).asm
