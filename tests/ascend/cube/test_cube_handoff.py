"""Dots in any expression on ascend, against numpy: the Cube computes each dot, the vector core the rest.

`acc += dot(a, b) * scale`, `acc = acc * alpha[:, None] + dot(a, b)`, dots feeding reductions,
`dot(a * 2, tl.trans(b))` (an operand the vector core computes, one read transposed from GM), and
K loops that carry scalars or offset blocks besides the accumulator. Sizes at the block edges;
small integers keep every sum exact. Fused attention runs in tests/conformance/test_attention.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import xblock
from tests._pkg import mentions_package
from tests.ascend.cube.test_cube_golden import _compare, _compare_mlir

triton = pytest.importorskip("triton")
tl = triton.language
B = 32
EDGES = [(1, 1, 1), (B - 1, B + 1, B), (B + 1, B - 1, 2 * B + 3), (40, 33, 70)]  # M, N, K


@triton.jit
def scaled_mm(a_ptr, b_ptr, c_ptr, M, N, K, scale, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * N + offs_n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BK), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BK) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b) * scale
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def rescaled(a_ptr, b_ptr, s_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Attention's update: the running tile rescaled per row, then the next product added."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + offs_m[:, None] * K + ks[None, :], mask=(offs_m[:, None] < M) & (ks[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + ks[:, None] * N + offs_n[None, :], mask=(ks[:, None] < K) & (offs_n[None, :] < N),
                    other=0.0)
        alpha = tl.load(s_ptr + offs_m, mask=offs_m < M, other=1.0)
        acc = acc * alpha[:, None] + tl.dot(a, b)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def dot_reductions(a_ptr, b_ptr, out_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Dots feeding reductions: per row, max over the valid columns plus the sum of a second dot."""
    pid = tl.program_id(0)
    offs_m = pid * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a = tl.load(a_ptr + offs_m[:, None] * K + offs_k[None, :], mask=(offs_m[:, None] < M) & (offs_k[None, :] < K),
                other=0.0)
    b = tl.load(b_ptr + offs_k[:, None] * N + offs_n[None, :], mask=(offs_k[:, None] < K) & (offs_n[None, :] < N),
                other=0.0)
    s = tl.where(offs_n[None, :] < N, tl.dot(a, b), float("-inf"))
    tl.store(out_ptr + offs_m, tl.max(s, 1) + tl.sum(tl.dot(a, b), 1), mask=offs_m < M)


@triton.jit
def computed_and_transposed(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """c = (2 a) @ b^T, b given as N x K rows: one operand from the vector core, one read transposed."""
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a = tl.load(a_ptr + offs_m[:, None] * K + offs_k[None, :], mask=(offs_m[:, None] < M) & (offs_k[None, :] < K),
                other=0.0)
    b = tl.load(b_ptr + offs_n[:, None] * K + offs_k[None, :], mask=(offs_n[:, None] < N) & (offs_k[None, :] < K),
                other=0.0)
    c = tl.dot(a * 2, tl.trans(b))
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def k0_loop(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A plain Cube K loop that also carries `k0 += BK` (a scalar)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    k0 = 0
    for _ in range(0, tl.cdiv(K, BK)):
        ks = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + offs_m[:, None] * K + ks[None, :], mask=(offs_m[:, None] < M) & (ks[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + ks[:, None] * N + offs_n[None, :], mask=(ks[:, None] < K) & (offs_n[None, :] < N),
                    other=0.0)
        acc = tl.dot(a, b, acc)
        k0 += BK
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def offsets_block_loop(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A K loop carrying the K offsets as a block (`ks += BK`): the dot is handed over, ks stays symbolic."""
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptr + offs_m[:, None] * K + ks[None, :], mask=(offs_m[:, None] < M) & (ks[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + ks[:, None] * N + offs_n[None, :], mask=(ks[:, None] < K) & (offs_n[None, :] < N),
                    other=0.0)
        acc = tl.dot(a, b, acc)
        ks += BK
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def dots_in_branches(a_ptr, b_ptr, c_ptr, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
    b = tl.load(b_ptr + offs[:, None] * BLOCK + offs[None, :])
    if flag > 0:
        acc = tl.dot(a, b) + 1.0
    else:
        acc = tl.dot(b, a) - 1.0
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], acc)


@triton.jit
def chained_dots(a_ptr, b_ptr, c_ptr, d_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """Two dots of different shapes, the second on the first's result (cast on the vector core)."""
    om = tl.arange(0, M)
    on = tl.arange(0, N)
    ok = tl.arange(0, K)
    a = tl.load(a_ptr + om[:, None] * K + ok[None, :])
    b = tl.load(b_ptr + ok[:, None] * N + on[None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + om[:, None] * N + on[None, :], c)
    d = tl.dot(c.to(tl.float16), tl.trans(b))
    tl.store(d_ptr + om[:, None] * K + ok[None, :], d * 0.5)


@triton.jit
def trip_count_from_data(a_ptr, n_ptr, c_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    trips = tl.sum(tl.load(n_ptr + offs))
    acc = tl.zeros((BLOCK, BLOCK), tl.float32)
    for _ in range(trips):
        a = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
        acc += tl.dot(a, a) * 2
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], acc)


def _ints(rng, shape, dtype=np.float16):
    return rng.integers(-3, 4, shape).astype(np.float32).astype(dtype)


def _grid(m, n):
    return (triton.cdiv(m, B), triton.cdiv(n, B))


def _mm(a, b):
    return a.astype(np.float32) @ b.astype(np.float32)


@pytest.mark.parametrize("m,n,k", EDGES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_scaled_dot_in_a_k_loop(m, n, k, dtype):
    import ml_dtypes

    dt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16
    rng = np.random.default_rng(m + n + k)
    a, b = _ints(rng, (m, k), dt), _ints(rng, (k, n), dt)
    c = np.zeros((m, n), np.float32)
    xblock.jit(scaled_mm)[_grid(m, n)](a, b, c, m, n, k, 0.5, BM=B, BN=B, BK=B, target="ascend")
    np.testing.assert_array_equal(c, _mm(a, b) * 0.5)


@pytest.mark.parametrize("m,n,k", EDGES)
def test_rescaled_accumulator(m, n, k):
    rng = np.random.default_rng(m * n + k)
    a, b = _ints(rng, (m, k)), _ints(rng, (k, n))
    alpha = rng.choice([0.5, 1.0, 2.0], m).astype(np.float32)
    want = np.zeros((m, n), np.float32)
    for k0 in range(0, k, B):
        want = want * alpha[:, None] + _mm(a[:, k0:k0 + B], b[k0:k0 + B])
    c = np.zeros((m, n), np.float32)
    xblock.jit(rescaled)[_grid(m, n)](a, b, alpha, c, m, n, k, BM=B, BN=B, BK=B, target="ascend")
    np.testing.assert_array_equal(c, want)


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (40, 20, 30), (B, B, B)])
def test_dots_feeding_reductions(m, n, k):
    rng = np.random.default_rng(m + 2 * n + k)
    a, b = _ints(rng, (m, k)), _ints(rng, (k, n))
    out = np.zeros(m, np.float32)
    xblock.jit(dot_reductions)[(triton.cdiv(m, B),)](a, b, out, m, n, k, BM=B, BN=B, BK=B, target="ascend")
    p = _mm(a, b)
    np.testing.assert_array_equal(out, p.max(1) + p.sum(1))


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (40, 20, 30), (2 * B, B, B)])
def test_computed_and_transposed_operands(m, n, k):
    rng = np.random.default_rng(m + n + 3 * k)
    a, bt = _ints(rng, (m, k)), _ints(rng, (n, k))
    c = np.zeros((m, n), np.float32)
    xblock.jit(computed_and_transposed)[(1,)](a, bt, c, m, n, k, BM=2 * B, BN=B, BK=B, target="ascend")
    np.testing.assert_array_equal(c, _mm(2 * a, bt.T))


@pytest.mark.parametrize("m,n,k", EDGES)
def test_k_loop_carrying_a_scalar_stays_on_the_cube(m, n, k):
    rng = np.random.default_rng(m + n + k)
    a, b = _ints(rng, (m, k)), _ints(rng, (k, n))
    c = np.zeros((m, n), np.float32)
    run = xblock.jit(k0_loop)
    run[_grid(m, n)](a, b, c, m, n, k, BM=B, BN=B, BK=B, target="ascend")
    np.testing.assert_array_equal(c, _mm(a, b))
    if k > 1:
        cpp = run.warmup(a, b, c, m, n, k, BM=B, BN=B, BK=B, target="ascend").asm["cpp"]
        assert "KERNEL_TYPE_AIC_ONLY" in cpp and "Fixpipe(" in cpp  # the K loop and a Fixpipe store


@pytest.mark.parametrize("m,n,k", [(B - 1, B + 1, 2 * B + 3), (B, B, B)])
def test_k_loop_carrying_an_offsets_block(m, n, k):
    rng = np.random.default_rng(m + n + k)
    a, b = _ints(rng, (m, k)), _ints(rng, (k, n))
    c = np.zeros((m, n), np.float32)
    xblock.jit(offsets_block_loop)[(1,)](a, b, c, m, n, k, BM=B, BN=2 * B, BK=B, target="ascend")
    np.testing.assert_array_equal(c, _mm(a, b))


@pytest.mark.parametrize("flag", [0, 1])
def test_dots_in_the_branches_of_an_if(flag):
    rng = np.random.default_rng(flag)
    a, b = _ints(rng, (B, B)), _ints(rng, (B, B))
    c = np.zeros((B, B), np.float32)
    xblock.jit(dots_in_branches)[(1,)](a, b, c, flag, BLOCK=B, target="ascend")
    np.testing.assert_array_equal(c, _mm(a, b) + 1 if flag else _mm(b, a) - 1)


def test_chained_dots_of_two_shapes():
    rng = np.random.default_rng(5)
    a, b = _ints(rng, (16, 64)), _ints(rng, (64, 32))
    c, d = np.zeros((16, 32), np.float32), np.zeros((16, 64), np.float32)
    xblock.jit(chained_dots)[(1,)](a, b, c, d, M=16, N=32, K=64, target="ascend")
    np.testing.assert_array_equal(c, _mm(a, b))
    np.testing.assert_array_equal(d, _mm(_mm(a, b).astype(np.float16), b.T) * 0.5)


def test_golden_rescaled():
    """The sections of a handed-off dot: AIC (copies, Mmad, Fixpipe to the workspace) and AIV (the
    result back, the rescale), with the credited workspace flags around the grid loop; its rows split over
    both vector cores (cube/rowsplit.py: the AIC's dot takes both halves, each AIV reads its own)."""
    sig = dict(a_ptr="*fp16", b_ptr="*fp16", s_ptr="*fp32", c_ptr="*fp32", M="i32", N="i32", K="i32")
    ck = xblock.compile(rescaled, target="ascend", signature=sig, constexprs=dict(BM=B, BN=B, BK=B))
    _compare_mlir("rescaled_f16", ck)  # the lowering first: a printing change fails only the .cpp
    _compare("rescaled_f16.cpp", ck.asm["cpp"])
    cpp = ck.asm["cpp"]
    for api in ("KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);", "(GetSubBlockIdx() * 512)",
                "if ASCEND_IS_AIC {", "if ASCEND_IS_AIV {",
                "CrossCoreSetFlag<2, PIPE_FIX>(2);", "CrossCoreWaitFlag(2);", "CrossCoreSetFlag<2, PIPE_MTE2>(3);",
                "CrossCoreWaitFlag(3);", "// Cube dot 1 of 1: 32 x 32 x 32 f16, result handed to the vector core:"):
        assert api in cpp, api
    assert ck.metadata["workspace_bytes"] > 0


def test_control_flow_on_a_vector_result_is_an_error_at_the_loop():
    a, n, c = np.ones((B, B), np.float16), np.zeros(B, np.int32), np.zeros((B, B), np.float32)
    with pytest.raises(xblock.CompilationError) as e:
        xblock.jit(trip_count_from_data)[(1,)](a, n, c, BLOCK=B, target="ascend")
    msg = str(e.value)
    assert "test_cube_handoff.py:" in msg and "for _ in range(trips):" in msg
    assert "ascend: control flow around a dot depends on a value only the vector core computes" in msg
    assert "Traceback" not in msg and not mentions_package(msg)
