"""Serving kernels' gaps on ascend (issue #30, items 4-7), each against numpy (exact for integers) and the
sim: unsigned max/min of packed uint64 keys, an int64 load whose `other` is a runtime pad id, `if ptr:`
on an optional pointer, float `%` (C's fmod), TorchInductor's mm template (`% M` wrapped rows, `acc +=
tl.dot(a, b)`) on the Cube, tutorial 09's persistent matmul, and the atomics 910B has no instruction for
as clear errors at the kernel line."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import xblock
import xblock.language as xl

pytestmark = pytest.mark.filterwarnings("ignore::xblock.errors.XBlockWarning")  # int64 and fmod lane by lane


def _both(kernel, grid, make, **meta):
    """Run `kernel` on the sim and on ascend with fresh arrays from `make()`; the outputs of each."""
    outs = {}
    for target in ("sim", "ascend"):
        args = make()
        kernel[grid](*args, target=target, **meta)
        outs[target] = args
    return outs["sim"], outs["ascend"]


# ----- item 4: 64-bit keys and runtime pad ids -------------------------------------------------------------

@xblock.jit
def packed_topk1(scores_ptr, out_ptr, n, BLOCK: xl.constexpr):
    """The best expert of each row: sigmoid scores in the high word of a uint64 key, the reversed index in
    the low word, an unsigned max over the keys (positive floats order as their bits)."""
    row = xl.program_id(0)
    offs = xl.arange(0, BLOCK)
    on = offs < n
    s = xl.sigmoid(xl.load(scores_ptr + row * n + offs, mask=on, other=0.0))
    key = (s.to(xl.uint32, bitcast=True).to(xl.uint64) << 32) | (BLOCK - 1 - offs).to(xl.uint64)
    best = xl.max(xl.where(on, key, 0), axis=0)
    xl.store(out_ptr + row, (BLOCK - 1) - (best & 0xFFFFFFFF).to(xl.int32))


@xblock.jit
def unsigned_extremes(x_ptr, y_ptr, out_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    x, y = xl.load(x_ptr + offs), xl.load(y_ptr + offs)
    xl.store(out_ptr + offs, xl.maximum(x, y))
    xl.store(out_ptr + BLOCK + offs, xl.minimum(x, y))
    xl.store(out_ptr + 2 * BLOCK, xl.max(x, axis=0))
    xl.store(out_ptr + 2 * BLOCK + 1, xl.min(x, axis=0))
    xl.store(out_ptr + 2 * BLOCK + 2, xl.argmax(x, axis=0).to(x.dtype))


def test_a_packed_uint64_key_picks_the_best_expert():
    rng = np.random.default_rng(0)
    s = rng.standard_normal((6, 13)).astype(np.float32)
    sim, asc = _both(packed_topk1, (6,), lambda: (s, np.zeros(6, np.int32), 13), BLOCK=16)
    np.testing.assert_array_equal(asc[1], np.argmax(s, 1))
    np.testing.assert_array_equal(sim[1], asc[1])


@pytest.mark.parametrize("dtype", [np.uint64, np.uint32, np.int64])
def test_unsigned_max_min_of_keys_with_the_top_bit_set(dtype):
    rng = np.random.default_rng(1)
    bits = 8 * np.dtype(dtype).itemsize
    x = rng.integers(0, 2 ** (bits - 1), 16, dtype=np.uint64).astype(dtype)
    y = rng.integers(0, 2 ** (bits - 1), 16, dtype=np.uint64).astype(dtype)
    x[::3] |= dtype(1) << dtype(bits - 1) if dtype != np.int64 else np.int64(0)
    if dtype == np.int64:
        x[::3] = -x[::3]
    want = np.concatenate([np.maximum(x, y), np.minimum(x, y), np.array([x.max(), x.min(), np.argmax(x)], dtype)])
    sim, asc = _both(unsigned_extremes, (1,), lambda: (x, y, np.zeros(35, dtype)), BLOCK=16)
    np.testing.assert_array_equal(asc[2], want)
    np.testing.assert_array_equal(sim[2], want)


@xblock.jit
def vocab_embedding(ids_ptr, w_ptr, out_ptr, n, vocab_start, vocab_end, pad_id, D: xl.constexpr,
                    BLOCK: xl.constexpr):
    """A vocab-parallel embedding shard: ids past the end read the runtime pad id, ids of other shards 0."""
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    ids = xl.load(ids_ptr + offs, mask=offs < n, other=pad_id)
    mine = (ids >= vocab_start) & (ids < vocab_end)
    d = xl.arange(0, D)
    rows = xl.load(w_ptr + xl.where(mine, ids - vocab_start, 0)[:, None] * D + d[None, :], mask=mine[:, None],
                   other=0.0)
    xl.store(out_ptr + offs[:, None] * D + d[None, :], rows)
    xl.store(ids_ptr + n + offs, ids)  # the padded ids themselves


@pytest.mark.parametrize("dtype,pad", [(np.int64, -1), (np.int64, 3 * 2**33 + 12), (np.int32, 15)])
def test_an_id_load_whose_other_is_a_runtime_pad_id(dtype, pad):
    rng = np.random.default_rng(2)
    n, lo, hi = 37, 10, 30
    w = rng.standard_normal((hi - lo, 8)).astype(np.float32)

    ids = np.zeros(n + 48, dtype)
    ids[:n] = rng.integers(0, 40, n)

    def make():
        return ids.copy(), w, np.zeros((48, 8), np.float32), n, lo, hi, pad

    sim, asc = _both(vocab_embedding, (3,), make, D=8, BLOCK=16)
    ids = np.concatenate([sim[0][:n], np.full(48 - n, pad, dtype)]).astype(np.int64)
    np.testing.assert_array_equal(asc[0][n:], ids.astype(dtype))
    mine = (ids >= lo) & (ids < hi)
    want = np.where(mine[:, None], w[np.clip(ids - lo, 0, hi - lo - 1)], 0)
    np.testing.assert_array_equal(asc[2], want)
    np.testing.assert_array_equal(sim[2], want)


# ----- item 6: `if ptr:`, float %, the persistent matmul --------------------------------------------------

@xblock.jit
def optional_start(x_ptr, start_ptr, out_ptr, n, BLOCK: xl.constexpr):
    pid = xl.program_id(0)
    if start_ptr:
        start = xl.load(start_ptr + pid)
    else:
        start = 0
    offs = xl.arange(0, BLOCK)
    xl.store(out_ptr + pid * BLOCK + offs, xl.load(x_ptr + start + offs, mask=offs < n, other=-1.0))


@pytest.mark.parametrize("given", [False, True])
def test_a_pointer_argument_tested_for_truth(given):
    x = np.arange(64, dtype=np.float32)
    starts = np.array([3, 40], np.int32) if given else None
    sim, asc = _both(optional_start, (2,), lambda: (x, starts, np.zeros(32, np.float32), 10), BLOCK=16)
    first = starts if given else [0, 0]
    want = np.concatenate([np.where(np.arange(16) < 10, x[s + np.arange(16) % 10], -1) for s in first])
    np.testing.assert_array_equal(asc[2], want)
    np.testing.assert_array_equal(sim[2], want)


@xblock.jit
def float_mod(x_ptr, y_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    on = offs < n
    x = xl.load(x_ptr + offs, mask=on, other=1.0)
    y = xl.load(y_ptr + offs, mask=on, other=1.0)
    xl.store(out_ptr + offs, x % y, mask=on)
    xl.store(out_ptr + n + offs, x % -2.5, mask=on)


def _mod_operands(n=300):
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.standard_normal(n // 2) * 100, rng.standard_normal(n // 2) * 1e30]).astype(np.float32)
    y = np.concatenate([rng.standard_normal(n // 2) * 3, rng.standard_normal(n // 2) * 1e-30]).astype(np.float32)
    x[:12] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -3e-39, 5.0, -5.0, 7.5, -7.5, 1e38]
    y[:12] = [1.0, 2.0, 1.0, 1.0, 1.0, 3e-45, 1e-40, 0.0, 2.5, np.inf, -2.5, 3e-38]
    bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x[-40:], y[-40:] = bits[-40:], bits[-80:-40]
    return x, y


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_float_mod_is_c_fmod_bit_for_bit(dtype):
    with np.errstate(over="ignore"):  # 1e30 is inf in half
        x, y = (v.astype(dtype) for v in _mod_operands())
    n = x.size
    sim, asc = _both(float_mod, (xblock.cdiv(n, 128),), lambda: (x, y, np.zeros(2 * n, dtype), n), BLOCK=128)
    with np.errstate(all="ignore"):
        want = np.concatenate([np.fmod(x.astype(np.float32), y.astype(np.float32)),
                               np.fmod(x.astype(np.float32), np.float32(-2.5))]).astype(dtype)
    word = np.uint32 if dtype == np.float32 else np.uint16
    for got in (asc[2], sim[2]):
        nan = np.isnan(got.astype(np.float32)) & np.isnan(want.astype(np.float32))
        same = (got.view(word) == want.view(word)) | nan
        assert same.all(), np.nonzero(~same)[0][:8]


@xblock.jit
def inductor_mm(A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                EVEN_K: xl.constexpr, MASKED: xl.constexpr, BLOCK_M: xl.constexpr, BLOCK_N: xl.constexpr,
                BLOCK_K: xl.constexpr):
    """TorchInductor's mm template: wrapped rows and columns, K masks only, `acc += dot(a, b)`."""
    pid = xl.program_id(0)
    grid_n = xl.cdiv(N, BLOCK_N)
    pid_m = pid // grid_n
    pid_n = pid % grid_n
    rm = pid_m * BLOCK_M + xl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + xl.arange(0, BLOCK_N)
    ram = xl.max_contiguous(xl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    rbn = xl.max_contiguous(xl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    rk = xl.arange(0, BLOCK_K)
    A = A + (ram[:, None] * stride_am + rk[None, :] * stride_ak)
    B = B + (rk[:, None] * stride_bk + rbn[None, :] * stride_bn)
    acc = xl.zeros((BLOCK_M, BLOCK_N), dtype=xl.float32)
    for k in range(K, 0, -BLOCK_K):
        if EVEN_K:
            a = xl.load(A)
            b = xl.load(B)
        else:
            a = xl.load(A, mask=rk[None, :] < k, other=0.0)
            b = xl.load(B, mask=rk[:, None] < k, other=0.0)
        acc += xl.dot(a, b)
        A += BLOCK_K * stride_ak
        B += BLOCK_K * stride_bk
    rm = pid_m * BLOCK_M + xl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + xl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    if MASKED:
        xl.store(C + (rm[:, None] * stride_cm + rn[None, :] * stride_cn), acc, mask=mask)
    else:  # every lane, the wrapped rows and columns too
        xl.store(C + (rm[:, None] * stride_cm + rn[None, :] * stride_cn), acc)


def _mm_case(M, N, K, rows=None, cols=None):
    rng = np.random.default_rng(M * N + K)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    rows, cols = rows or M, cols or N
    want = a[np.arange(rows) % M].astype(np.float32) @ b[:, np.arange(cols) % N].astype(np.float32)
    return a, b, np.zeros((rows, cols), np.float32), want


@pytest.mark.parametrize("M,N,K,even", [(37, 45, 64, True), (37, 45, 50, False), (20, 70, 96, True), (5, 33, 40, False),
                                        (1, 33, 40, False)])
def test_inductor_mm_template_runs_on_the_cube(M, N, K, even):
    a, b, c, want = _mm_case(M, N, K)
    meta = dict(EVEN_K=even, MASKED=True, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
    grid = (xblock.cdiv(M, 32) * xblock.cdiv(N, 32),)
    sim, asc = _both(inductor_mm, grid, lambda: (a, b, c.copy(), M, N, K, K, 1, N, 1, N, 1), **meta)
    ck = inductor_mm.warmup(*asc, target="ascend", grid=grid, **meta)
    if M > 1:  # `% 1` folds to 0: rows of stride 0, which the vector core loads for the Cube
        assert ck.metadata["kernel_type"] == "KERNEL_TYPE_AIC_ONLY"  # the Cube alone: no gathers
    np.testing.assert_allclose(asc[2], want, atol=2e-2, rtol=2e-2)
    np.testing.assert_allclose(sim[2], want, atol=2e-2, rtol=2e-2)


def test_inductor_mm_stored_unmasked_honours_the_wrap():
    """The wrapped rows and columns reach the store: the dot goes to the vector core, which loads them."""
    M, N, K = 37, 45, 64
    a, b, c, want = _mm_case(M, N, K, rows=64, cols=64)
    meta = dict(EVEN_K=True, MASKED=False, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
    sim, asc = _both(inductor_mm, (4,), lambda: (a, b, c.copy(), M, N, K, K, 1, N, 1, 64, 1), **meta)
    np.testing.assert_allclose(asc[2], want, atol=2e-2, rtol=2e-2)
    np.testing.assert_allclose(sim[2], want, atol=2e-2, rtol=2e-2)


@xblock.jit
def _tile_of(tile_id, in_group, tiles_m, GROUP_M: xl.constexpr):
    group = tile_id // in_group
    first_m = group * GROUP_M
    size_m = min(tiles_m - first_m, GROUP_M)
    return first_m + (tile_id % size_m), (tile_id % in_group) // size_m


@xblock.jit
def persistent_mm(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: xl.constexpr, BLOCK_N: xl.constexpr,
                  BLOCK_K: xl.constexpr, GROUP_M: xl.constexpr, NUM_CORES: xl.constexpr):
    """Tutorial 09's persistent loop: the epilogue's tile id advanced apart from the loop's."""
    start = xl.program_id(0)
    tiles_m = xl.cdiv(M, BLOCK_M)
    tiles_n = xl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * tiles_n
    tile_c = start - NUM_CORES
    for tile in xl.range(start, tiles_m * tiles_n, NUM_CORES, flatten=True):
        pid_m, pid_n = _tile_of(tile, in_group, tiles_m, GROUP_M)
        offs_am = xl.where(pid_m * BLOCK_M + xl.arange(0, BLOCK_M) < M, pid_m * BLOCK_M + xl.arange(0, BLOCK_M), 0)
        offs_bn = xl.where(pid_n * BLOCK_N + xl.arange(0, BLOCK_N) < N, pid_n * BLOCK_N + xl.arange(0, BLOCK_N), 0)
        acc = xl.zeros((BLOCK_M, BLOCK_N), dtype=xl.float32)
        for kk in range(xl.cdiv(K, BLOCK_K)):
            offs_k = kk * BLOCK_K + xl.arange(0, BLOCK_K)
            a = xl.load(a_ptr + offs_am[:, None] * K + offs_k[None, :], mask=offs_k[None, :] < K, other=0.0)
            b = xl.load(b_ptr + offs_k[:, None] * N + offs_bn[None, :], mask=offs_k[:, None] < K, other=0.0)
            acc = xl.dot(a, b, acc)
        tile_c += NUM_CORES
        pid_m, pid_n = _tile_of(tile_c, in_group, tiles_m, GROUP_M)
        offs_cm = pid_m * BLOCK_M + xl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + xl.arange(0, BLOCK_N)
        xl.store(c_ptr + offs_cm[:, None] * N + offs_cn[None, :], acc.to(xl.float16),
                 mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@pytest.mark.parametrize("M,N,K", [(100, 70, 64), (33, 31, 40)])
def test_persistent_matmul(M, N, K):
    a, b, _, want = _mm_case(M, N, K)
    meta = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=2, NUM_CORES=3)
    sim, asc = _both(persistent_mm, (3,), lambda: (a, b, np.zeros((M, N), np.float16), M, N, K), **meta)
    np.testing.assert_allclose(asc[2].astype(np.float32), want, atol=3e-2, rtol=2e-2)
    np.testing.assert_allclose(sim[2].astype(np.float32), want, atol=3e-2, rtol=2e-2)


# ----- item 7: what 910B cannot do stays a clear error at the line ---------------------------------------

@xblock.jit
def refused_atomics(x_ptr, out_ptr, KIND: xl.constexpr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs)
    if KIND == 0:
        xl.atomic_cas(out_ptr + offs, x, x + 1)
    elif KIND == 1:
        xl.atomic_xchg(out_ptr + offs, x)
    elif KIND == 2:
        xl.atomic_and(out_ptr + offs, x)
    elif KIND == 3:
        xl.atomic_or(out_ptr + offs, x)
    elif KIND == 4:
        xl.atomic_xor(out_ptr + offs, x)
    elif KIND == 5:
        xl.store(x_ptr + offs, xl.atomic_max(out_ptr + offs, x))
    else:
        xl.store(x_ptr + offs, xl.atomic_min(out_ptr + offs, x))


@pytest.mark.parametrize("kind,needle", [
    (0, "atomic_cas (xb.atomic_cas) is not supported on ascend: it needs AscendC's scalar AtomicCas"),
    (1, "atomic_xchg (xb.atomic_rmw xchg) is not supported on ascend: it needs AscendC's scalar AtomicExch"),
    (2, "atomic_and (xb.atomic_rmw and) is not supported on ascend: AscendC has no atomic bitwise and"),
    (3, "atomic_or (xb.atomic_rmw or) is not supported on ascend: AscendC has no atomic bitwise or"),
    (4, "atomic_xor (xb.atomic_rmw xor) is not supported on ascend: AscendC has no atomic bitwise xor"),
    (5, "the old value atomic_max returns is not available on ascend: it needs AscendC's scalar AtomicMax"),
    (6, "the old value atomic_min returns is not available on ascend: it needs AscendC's scalar AtomicMin"),
])
def test_atomics_910b_has_no_instruction_for(kind, needle):
    with pytest.raises(xblock.CompilationError) as e:
        xblock.compile(refused_atomics, target="ascend", signature={"x_ptr": "*i32", "out_ptr": "*i32"},
                       constexprs={"KIND": kind, "BLOCK": 64})
    msg = str(e.value)
    line = {0: "xl.atomic_cas(", 1: "xl.atomic_xchg(", 2: "xl.atomic_and(", 3: "xl.atomic_or(", 4: "xl.atomic_xor(",
            5: "xl.atomic_max(", 6: "xl.atomic_min("}[kind]
    assert "test_serving_gaps.py:" in msg and line in msg and needle in msg, msg
    assert "Atlas A2" in msg or "950" in msg
    assert "Traceback" not in msg and "xblock/backends" not in msg
