"""Block pointers (`tl.make_block_ptr`, `tl.advance`, `boundary_check`, `padding_option`) in unmodified
@triton.jit kernels written as public ones write them: a ragged 2-D copy and transpose, a K-loop
matmul that advances its pointers, a row reduction over column tiles, block pointers through `if`
and helpers. Run on sim, cpu and ascend against numpy (exact), compiled to cubin for cuda."""

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile

triton = pytest.importorskip("triton")
tl = triton.language

RUN_TARGETS = ["sim", "cpu", "ascend"]
B = 16
EDGES = [(1, 1), (B - 1, B + 1), (B, B), (B + 1, 2 * B + 3), (37, 5)]


@triton.jit
def copy_plus_one(x_ptr, y_ptr, M, N, stride_xm, stride_ym, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    x_block = tl.make_block_ptr(base=x_ptr, shape=(M, N), strides=(stride_xm, 1), offsets=(pid_m * BM, pid_n * BN),
                                block_shape=(BM, BN), order=(1, 0))
    y_block = tl.make_block_ptr(base=y_ptr, shape=(M, N), strides=(stride_ym, 1), offsets=(pid_m * BM, pid_n * BN),
                                block_shape=(BM, BN), order=(1, 0))
    x = tl.load(x_block, boundary_check=(0, 1), padding_option="zero")
    tl.store(y_block, x + 1, boundary_check=(0, 1))


@triton.jit
def transpose(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    src = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(y_ptr, (N, M), (M, 1), (pid_n * BN, pid_m * BM), (BN, BM), (0, 1))  # order: a hint
    tl.store(dst, tl.trans(tl.load(src, boundary_check=(1, 0))), boundary_check=(0, 1))


@triton.jit
def padded_tiles(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, PAD: tl.constexpr):
    """Every tile of x, out-of-bounds elements as the padding gives them, into a dense [grid*BM, grid*BN]."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    x_block = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0))
    tile = tl.load(x_block, boundary_check=(0, 1), padding_option=PAD)
    width = tl.num_programs(1) * BN
    out_block = tl.make_block_ptr(out_ptr, (tl.num_programs(0) * BM, width), (width, 1), (pid_m * BM, pid_n * BN),
                                  (BM, BN), (1, 0))
    tl.store(out_block, tile)


@triton.jit
def rows_checked_only(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """boundary_check=(0,): the column range is in bounds by construction (BN divides N)."""
    pid = tl.program_id(0)
    src = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (pid * BM, 0), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(y_ptr, (M, N), (N, 1), (pid * BM, 0), (BM, BN), (1, 0))
    for _ in range(0, N // BN):
        tl.store(dst, tl.load(src, boundary_check=(0,)) * 2, boundary_check=(0,))
        src = tl.advance(src, (0, BN))
        dst = dst.advance((0, BN))


@triton.jit
def row_sums(x_ptr, out_ptr, M, N, stride_m, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    x_block = tl.make_block_ptr(x_ptr, (M, N), (stride_m.to(tl.int64), 1), (pid * BM, 0), (BM, BN), (1, 0))
    acc = tl.zeros((BM,), dtype=tl.float32)
    for _ in range(0, tl.cdiv(N, BN)):
        acc += tl.sum(tl.load(x_block, boundary_check=(0, 1)), axis=1)
        x_block = tl.advance(x_block, (0, BN))
    out_block = tl.make_block_ptr(out_ptr, (M,), (1,), (pid * BM,), (BM,), (0,))
    tl.store(out_block, acc, boundary_check=(0,))


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_block_ptr = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, stride_ak),
                                    offsets=(pid_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    b_block_ptr = tl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(stride_bk, stride_bn),
                                    offsets=(0, pid_n * BLOCK_N), block_shape=(BLOCK_K, BLOCK_N), order=(1, 0))
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_block_ptr, boundary_check=(0, 1))
        b = tl.load(b_block_ptr, boundary_check=(0, 1))
        accumulator = tl.dot(a, b, accumulator)
        a_block_ptr = tl.advance(a_block_ptr, (0, BLOCK_K))
        b_block_ptr = tl.advance(b_block_ptr, (BLOCK_K, 0))
    c_block_ptr = tl.make_block_ptr(base=c_ptr, shape=(M, N), strides=(stride_cm, stride_cn),
                                    offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N), block_shape=(BLOCK_M, BLOCK_N),
                                    order=(1, 0))
    tl.store(c_block_ptr, accumulator.to(tl.float16), boundary_check=(0, 1))


@triton.jit
def one_tile_dot(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a = tl.load(tl.make_block_ptr(a_ptr, (M, K), (K, 1), (0, 0), (BM, BK), (1, 0)), boundary_check=(0, 1))
    b = tl.load(tl.make_block_ptr(b_ptr, (K, N), (N, 1), (0, 0), (BK, BN), (1, 0)), boundary_check=(0, 1))
    c_block = tl.make_block_ptr(c_ptr, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    tl.store(c_block, tl.dot(a, b), boundary_check=(0, 1))


@triton.jit
def _load_scaled(block, scale):
    return tl.load(block, boundary_check=(0,)) * scale, tl.advance(block, (block.block_shape[0],))


@triton.jit
def through_if_and_helpers(x_ptr, out_ptr, n, skip, BLOCK: tl.constexpr):
    if skip != 0:
        src = tl.make_block_ptr(x_ptr, (n,), (1,), (skip,), (BLOCK,), (0,))
    else:
        src = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
    ob = tl.make_block_ptr(out_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
    for _ in range(0, tl.cdiv(n, BLOCK)):
        v, src = _load_scaled(src, 3.0)
        tl.store(ob, v, boundary_check=(0,))
        ob = ob.advance((BLOCK,))


@triton.jit
def choose_base(x_ptr, y_ptr, out_ptr, n, use_y, BLOCK: tl.constexpr):
    xb = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
    yb = tl.make_block_ptr(y_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
    src = xb
    if use_y != 0:
        src = yb
    tl.store(tl.make_block_ptr(out_ptr, (n,), (1,), (0,), (BLOCK,), (0,)), tl.load(src, boundary_check=(0,)),
             boundary_check=(0,))


@triton.jit
def _step(state):
    v, count = state
    return v * 2 + 1, count + 1


@triton.jit
def tuple_carried(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    state = (x, tl.zeros((BLOCK,), dtype=tl.int32))
    for _ in range(2):
        v, count = state
        state = (v * 2 + 1, count + 1)
    state = _step(state)
    v, count = state
    tl.store(out_ptr + offs, v + count.to(tl.float32), mask=offs < n)


@triton.jit
def while_advance(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    src = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
    dst = tl.make_block_ptr(out_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
    done = 0
    while done < n:
        tl.store(dst, tl.load(src, boundary_check=(0,)) + 1, boundary_check=(0,))
        src, dst = tl.advance(src, (BLOCK,)), tl.advance(dst, (BLOCK,))
        done += BLOCK


@triton.jit
def bool_block(flags_ptr, out_ptr, n, BLOCK: tl.constexpr):
    bp = tl.make_block_ptr(flags_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
    f = tl.load(bp, boundary_check=(0,))  # as in Triton, a block of int1 reads as int8
    tl.store(out_ptr + tl.arange(0, BLOCK), f.to(tl.int32) + 10)


def _grid(m, n, bm=B, bn=B):
    return (triton.cdiv(m, bm), triton.cdiv(n, bn))


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("m,n", EDGES)
def test_ragged_copy(target, m, n):
    x = np.random.default_rng(m * 100 + n).standard_normal((m, n)).astype(np.float32)
    y = np.full((m, n), -7, np.float32)
    xblock.jit(copy_plus_one)[_grid(m, n)](x, y, m, n, n, n, BM=B, BN=B, target=target)
    np.testing.assert_array_equal(y, x + 1)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("m,n", EDGES)
def test_ragged_transpose(target, m, n):
    x = np.arange(m * n, dtype=np.float32).reshape(m, n)
    y = np.zeros((n, m), np.float32)
    xblock.jit(transpose)[_grid(m, n)](x, y, m, n, BM=B, BN=B, target=target)
    np.testing.assert_array_equal(y, x.T)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("pad", ["zero", "nan", ""])
@pytest.mark.parametrize("m,n", [(1, 1), (B + 1, B - 1)])
def test_padding(target, pad, m, n):
    x = np.random.default_rng(3).standard_normal((m, n)).astype(np.float32)
    gm, gn = _grid(m, n)
    out = np.full((gm * B, gn * B), 5, np.float32)
    xblock.jit(padded_tiles)[(gm, gn)](x, out, m, n, BM=B, BN=B, PAD=pad, target=target)
    want = np.full_like(out, np.nan if pad == "nan" else 0.0)  # "": zero in xblock (undefined in Triton)
    want[:m, :n] = x
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("m", [1, B - 1, B + 1])
def test_boundary_check_of_one_dimension(target, m):
    n = 3 * B
    x = np.random.default_rng(m).standard_normal((m, n)).astype(np.float32)
    y = np.zeros_like(x)
    xblock.jit(rows_checked_only)[(triton.cdiv(m, B),)](x, y, m, n, BM=B, BN=B, target=target)
    np.testing.assert_array_equal(y, 2 * x)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("m,n", [(1, 1), (B - 1, B + 1), (B + 1, 3 * B)])
def test_loop_carried_block_pointer(target, m, n):
    x = np.random.default_rng(n).integers(-8, 8, (m, n + 2)).astype(np.float32)  # sums are exact
    out = np.zeros(m, np.float32)
    xblock.jit(row_sums)[(triton.cdiv(m, B),)](x, out, m, n, n + 2, BM=B, BN=B, target=target)
    np.testing.assert_array_equal(out, x[:, :n].sum(1))


def _matmul_reference(a, b):
    return (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (B + 1, B - 1, 2 * B + 1), (2 * B, B, 3 * B)])
def test_matmul_with_advance(target, m, n, k):
    """On ascend the K loop runs on the Cube unit and carries the advanced offsets as plain scalars."""
    rng = np.random.default_rng(m + n + k)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)  # small integers: every sum exact in fp32
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float16)
    xblock.jit(matmul_kernel)[_grid(m, n)](a, b, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_M=B, BLOCK_N=B,
                                            BLOCK_K=B, target=target)
    np.testing.assert_array_equal(c, _matmul_reference(a, b))


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (B - 1, B, B + 1)])
def test_one_tile_dot(target, m, n, k):
    rng = np.random.default_rng(k)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    bk = 32 if k > B else B
    xblock.jit(one_tile_dot)[(1,)](a, b, c, m, n, k, BM=B, BN=B, BK=bk, target=target)
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("skip", [0, 3])
@pytest.mark.parametrize("n", [1, B - 1, 2 * B + 1])
def test_block_pointers_through_if_and_helpers(target, skip, n):
    x = np.arange(n, dtype=np.float32) + 1
    out = np.full(n, -1, np.float32)
    xblock.jit(through_if_and_helpers)[(1,)](x, out, n, skip, BLOCK=B, target=target)
    np.testing.assert_array_equal(out, 3 * np.r_[x[skip:], np.zeros(min(skip, n), np.float32)])


@pytest.mark.parametrize("target", ["sim", "cpu", "ascend"])
@pytest.mark.parametrize("use_y", [0, 2])
def test_if_chooses_the_base_pointer(target, use_y):
    x, y = np.arange(5, dtype=np.float32), -np.arange(5, dtype=np.float32) - 1
    out = np.zeros(5, np.float32)
    run = xblock.jit(choose_base)[(1,)]
    if target == "ascend":  # as for `p = y_ptr if ... else x_ptr` with plain pointers: ascend needs argument roots
        with pytest.raises(xblock.CompilationError, match="ascend: this pointer does not come from a kernel argument"):
            run(x, y, out, 5, use_y, BLOCK=B, target=target)
        return
    run(x, y, out, 5, use_y, BLOCK=B, target=target)
    np.testing.assert_array_equal(out, y if use_y else x)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_tuple_of_blocks_carried_by_a_loop(target):
    x = np.arange(20, dtype=np.float32)
    out = np.zeros(20, np.float32)
    xblock.jit(tuple_carried)[(1,)](x, out, 20, BLOCK=32, target=target)
    np.testing.assert_array_equal(out, ((x * 2 + 1) * 2 + 1) * 2 + 1 + 3)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("n", [1, B, 2 * B + 1])
def test_block_pointers_carried_by_a_while_loop(target, n):
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    xblock.jit(while_advance)[(1,)](x, out, n, BLOCK=B, target=target)
    np.testing.assert_array_equal(out, x + 1)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_block_pointer_to_int1_reads_int8(target):
    flags = np.array([True, False, True, True, False], np.bool_)
    out = np.zeros(B, np.int32)
    try:
        xblock.jit(bool_block)[(1,)](flags, out, 5, BLOCK=B, target=target)
    except xblock.CompilationError as e:  # ascend reads the bytes; its Cast set may lack int8 -> int32
        assert target == "ascend" and "test_block_pointers.py:171" in str(e) and "Cast from i8 to i32" in str(e)
        return
    np.testing.assert_array_equal(out, np.r_[flags.astype(np.int32), np.zeros(B - 5, np.int32)] + 10)


def test_compiles_for_cuda():
    x = np.zeros((33, 17), np.float32)
    assert "cubin" in precompile(copy_plus_one, (x, x, 33, 17, 17, 17), {"BM": 32, "BN": 32}).asm
    a, b, c = np.zeros((64, 96), np.float16), np.zeros((96, 48), np.float16), np.zeros((64, 48), np.float16)
    ck = precompile(matmul_kernel, (a, b, c, 64, 48, 96, 96, 1, 48, 1, 48, 1),
                    {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32})
    assert "cubin" in ck.asm and "tt.dot" in ck.asm["ttir"]
    assert "cubin" in precompile(row_sums, (x, np.zeros(33, np.float32), 33, 17, 17), {"BM": 32, "BN": 32}).asm
