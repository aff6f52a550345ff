"""`tl.dot` as Triton 3.6 defines it, in unmodified @triton.jit kernels, against numpy:

- every `input_precision` of fp32 operands (tf32, tf32x3, ieee, bf16x3, bf16x6), and the older
  `allow_tf32`, with the rounding an H200 gives (docs/LANGUAGE.md, "dot precision"): a product with an
  identity matrix shows each operand's rounding bit for bit on every target; random data checks the
  sums within accumulation-order noise;
- `out_dtype` (fp16 results of fp16 inputs, int32 of int8, fp64, bf16 inputs, float8 on the sim);
- batched (3-D) dots, batch 1 and 3 (a ragged BLOCK_B of 4), with masks at ragged M/N/K edges;
- cuda compile-only: the precision, `maxNumImpreciseAcc` and the 3-D shapes reach `tt.dot`;
- ascend: every precision of an fp32 dot is the plain fp32 product (the Cube's HF32 mode stays off), so it
  matches the "ieee" model; 3-D dots run matrix by matrix; fp64 dots are errors at the dot's line.
"""

import ml_dtypes
import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile

triton = pytest.importorskip("triton")
tl = triton.language

RUN = ["sim", "cpu"]
PRECISIONS = ["tf32", "tf32x3", "ieee", "bf16x3", "bf16x6"]


# ------------------------------------------------------------------------------------ kernels
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        rk = k * BLOCK_K + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def allow_tf32_kernel(a_ptr, b_ptr, c_ptr, N: tl.constexpr, ALLOW: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    b = tl.load(b_ptr + r[:, None] * N + r[None, :])
    tl.store(c_ptr + r[:, None] * N + r[None, :], tl.dot(a, b, allow_tf32=ALLOW))


@triton.jit
def out_dtype_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                     OUT_DTYPE: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = tl.dot(a, b, out_dtype=OUT_DTYPE)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


@triton.jit
def int8_acc_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    acc = tl.full((M, N), 7, tl.int32)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    acc = tl.dot(a, b, acc, out_dtype=tl.int32)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def batched_matmul_kernel(a_ptr, b_ptr, c_ptr, B, M, N, K, BLOCK_B: tl.constexpr, BLOCK_M: tl.constexpr,
                          BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    rb = tl.arange(0, BLOCK_B)[:, None, None]
    rm = tl.arange(0, BLOCK_M)[None, :, None]
    rn = tl.arange(0, BLOCK_N)[None, None, :]
    acc = tl.zeros((BLOCK_B, BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        ka = k * BLOCK_K + tl.arange(0, BLOCK_K)[None, None, :]
        kb = k * BLOCK_K + tl.arange(0, BLOCK_K)[None, :, None]
        a = tl.load(a_ptr + rb * M * K + rm * K + ka, mask=(rb < B) & (rm < M) & (ka < K), other=0.0)
        b = tl.load(b_ptr + rb * K * N + kb * N + rn, mask=(rb < B) & (kb < K) & (rn < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(c_ptr + rb * M * N + rm * N + rn, acc, mask=(rb < B) & (rm < M) & (rn < N))


@triton.jit
def rank4_kernel(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    i = tl.arange(0, 2)[:, None, None, None] * 2 + tl.arange(0, 2)[None, :, None, None]
    r = tl.arange(0, N)[None, None, :, None]
    s = tl.arange(0, N)[None, None, None, :]
    a = tl.load(a_ptr + i * N * N + r * N + s)
    b = tl.load(b_ptr + i * N * N + r * N + s)
    tl.store(c_ptr + i * N * N + r * N + s, tl.dot(a, b, input_precision="ieee"))


@triton.jit
def fp8_imprecise_kernel(a_ptr, b_ptr, c_ptr, N: tl.constexpr, IMPRECISE: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    b = tl.load(b_ptr + r[:, None] * N + r[None, :])
    tl.store(c_ptr + r[:, None] * N + r[None, :], tl.dot(a, b, max_num_imprecise_acc=IMPRECISE))


# ------------------------------------------------------------------------------------ numpy model
def _bits(x):
    return np.asarray(x, np.float32).view(np.uint32)


def tf32_truncated(x):
    """What an H200's tensor cores read of an fp32 operand: the low 13 mantissa bits dropped."""
    return np.where(np.isfinite(x), (_bits(x) & np.uint32(0xFFFFE000)).view(np.float32), x)


def tf32_round_away(x):
    """`cvt.rna.tf32.f32`: to 10 mantissa bits, to nearest, ties away from zero."""
    return np.where(np.isfinite(x), ((_bits(x) + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32), x)


def bf16_round(x):
    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def _mm(a, b, c):
    return (a.astype(np.float64) @ b.astype(np.float64) + c).astype(np.float32)


def _parts(x, precision):
    if precision == "tf32":
        return [tf32_truncated(x)]
    if precision == "tf32x3":
        big = tf32_round_away(x)
        return [big, tf32_truncated(x - big)]
    parts = []
    for _ in range(2 if precision == "bf16x3" else 3):
        parts.append(bf16_round(x))
        x = x - parts[-1]
    return parts


PAIRS = {"tf32x3": [(1, 0), (0, 1)], "bf16x3": [(1, 0), (0, 1)],
         "bf16x6": [(1, 1), (2, 0), (0, 2), (1, 0), (0, 1)]}


def model_dot(a, b, acc, precision):
    """One tl.dot of fp32 blocks as Triton 3.6 computes it on an H200 (products exact, sums fp32)."""
    if precision == "ieee":
        return _mm(a, b, acc)
    pa, pb = _parts(a, precision), _parts(b, precision)
    if precision == "tf32":
        return _mm(pa[0], pb[0], acc)
    small = np.float32(0)
    for i, j in PAIRS[precision]:
        small = _mm(pa[i], pb[j], small)
    small = np.where(np.isnan(small), np.float32(0), small)
    return _mm(pa[0], pb[0], small) + acc


def model_matmul(a, b, block_k, precision):
    """matmul_kernel's K loop: acc = dot(a block, b block, acc) from zeros."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for k in range(0, a.shape[1], block_k):
        acc = model_dot(a[:, k:k + block_k], b[k:k + block_k], acc, precision)
    return acc


def crafted(shape, seed):
    """fp32 values whose low bits sit on, just above and just below the tf32 and bf16 rounding points."""
    rng = np.random.default_rng(seed)
    bits = _bits(rng.standard_normal(shape).astype(np.float32)).copy()
    flat = bits.reshape(-1)
    low = np.array([0x1000, 0x1001, 0x0FFF, 0x3000, 0x8000, 0x18000, 0x7FFF], np.uint32)
    pick = rng.integers(0, len(low) + 1, flat.size)
    for i, v in enumerate(low):
        mask = np.uint32(0x1FFF if v < 0x2000 else 0x1FFFF if v > 0xFFFF else 0xFFFF)
        sel = pick == i
        flat[sel] = (flat[sel] & ~mask) | v
    return bits.view(np.float32)


def launch(a, b, block, precision, target):
    M, K = a.shape
    N = b.shape[1]
    c = np.zeros((M, N), np.float32)
    grid = (triton.cdiv(M, block[0]), triton.cdiv(N, block[1]))
    xblock.jit(matmul_kernel)[grid](a, b, c, M, N, K, BLOCK_M=block[0], BLOCK_N=block[1], BLOCK_K=block[2],
                                    PRECISION=precision, target=target)
    return c


# ------------------------------------------------------------------------------------ precision
@pytest.mark.parametrize("target", RUN)
@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("side", ["a", "b"])
def test_each_precision_rounds_the_operands_bit_for_bit(target, precision, side):
    """x @ I (or I @ x): every output is one product, so each target must give the model exactly."""
    x = crafted((48, 64), seed=len(precision))
    eye = np.eye(64, dtype=np.float32)
    if side == "a":
        got, want = launch(x, eye, (32, 32, 32), precision, target), model_matmul(x, eye, 32, precision)
    else:
        x = np.ascontiguousarray(x.T)
        got, want = launch(eye, x, (32, 16, 16), precision, target), model_matmul(eye, x, 16, precision)
    np.testing.assert_array_equal(got, want)
    if precision not in ("ieee", "bf16x6"):  # bf16x6 keeps all 24 bits of these values
        assert not np.array_equal(got, x), "the operands must be rounded"


@pytest.mark.parametrize("target", RUN)
@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("shape", [(16, 16, 16), (32, 64, 32), (64, 32, 64), (33, 17, 50)])
def test_each_precision_on_random_data(target, precision, shape):
    M, N, K = shape
    rng = np.random.default_rng(M + N + K)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    got = launch(a, b, (16, 32, 16), precision, target)
    want = model_matmul(a, b, 16, precision)
    tol = 2e-6 * np.sqrt(K) * np.abs(want).max()  # fp32 sums in another order
    np.testing.assert_allclose(got, want, rtol=0, atol=tol)
    if precision == "tf32":  # the rounding is far above the tolerance: the test tells tf32 from ieee
        assert np.abs(model_matmul(a, b, 16, "ieee") - want).max() > 10 * tol


@pytest.mark.parametrize("target", RUN)
def test_infinities_survive_the_split_precisions(target):
    """1.0 * inf: the small parts' inf * 0 NaNs are dropped, as on the GPU."""
    a = np.ones((16, 16), np.float32)
    b = np.zeros((16, 16), np.float32)
    b[0, 0] = np.inf
    for precision in PRECISIONS:
        got = launch(a, b, (16, 16, 16), precision, target)
        assert np.all(got[:, 0] == np.inf) and np.all(got[:, 1:] == 0), precision


@pytest.mark.parametrize("target", RUN)
def test_allow_tf32_is_the_older_spelling(target):
    x = crafted((16, 16), seed=3)
    eye = np.eye(16, dtype=np.float32)
    for allow, want in ((True, tf32_truncated(x)), (False, x)):
        c = np.zeros_like(x)
        xblock.jit(allow_tf32_kernel)[(1,)](x, eye, c, N=16, ALLOW=allow, target=target)
        np.testing.assert_array_equal(c, want)


# ------------------------------------------------------------------------------------ out_dtype
def _small_ints(shape, dtype, seed):
    return np.random.default_rng(seed).integers(-3, 4, shape).astype(dtype)


@pytest.mark.parametrize("target", RUN + ["ascend"])
@pytest.mark.parametrize("dtype,out,result", [
    (np.float16, tl.float16, np.float16), (np.float16, tl.float32, np.float32),
    (ml_dtypes.bfloat16, tl.float32, np.float32), (ml_dtypes.bfloat16, tl.float16, np.float32),
    (np.float32, tl.float16, np.float32), (np.float64, tl.float32, np.float64), (np.int8, tl.int32, np.int32)])
def test_out_dtype_gives_triton_result_dtype(target, dtype, out, result):
    """Small integers: every sum is exact, so each target must give numpy's answer exactly."""
    M, N, K = 16, 32, 32
    a, b = _small_ints((M, K), dtype, 1), _small_ints((K, N), dtype, 2)
    c = np.zeros((M, N), result)
    run = xblock.jit(out_dtype_kernel)[(1,)]
    if target == "ascend" and dtype == np.float64:  # the Cube has no fp64
        with pytest.raises(xblock.CompilationError, match=r"test_dot_precision.py:\d+:\d+: ascend: "):
            run(a, b, c, M=M, N=N, K=K, OUT_DTYPE=out, target=target)
        return
    run(a, b, c, M=M, N=N, K=K, OUT_DTYPE=out, target=target)
    np.testing.assert_array_equal(c, (a.astype(np.int64) @ b.astype(np.int64)).astype(result))


@pytest.mark.parametrize("target", RUN)
def test_int8_dot_accumulates_into_int32(target):
    a = np.random.default_rng(4).integers(-128, 128, (16, 64)).astype(np.int8)
    b = np.random.default_rng(5).integers(-128, 128, (64, 16)).astype(np.int8)
    c = np.zeros((16, 16), np.int32)
    xblock.jit(int8_acc_kernel)[(1,)](a, b, c, M=16, N=16, K=64, target=target)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32) + 7)


def test_float8_operands_of_two_formats_on_the_sim():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((16, 32)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((32, 16)).astype(ml_dtypes.float8_e5m2)
    for out, result in ((tl.float32, np.float32), (tl.float16, np.float16)):
        c = np.zeros((16, 16), result)
        xblock.jit(out_dtype_kernel)[(1,)](a, b, c, M=16, N=16, K=32, OUT_DTYPE=out, target="sim")
        want = a.astype(np.float64) @ b.astype(np.float64)
        np.testing.assert_allclose(c, want.astype(result), rtol=1e-3 if result == np.float16 else 1e-6)


# ------------------------------------------------------------------------------------ batched
BATCHED = [(1, 16, 16, 16, 1), (3, 16, 16, 16, 4), (3, 32, 64, 32, 4), (3, 64, 32, 64, 4), (3, 17, 31, 50, 4),
           (1, 33, 16, 40, 1)]


def _batched(target, B, M, N, K, block_b, dtype, precision):
    rng = np.random.default_rng(B * M + N * K)
    a = rng.standard_normal((B, M, K)).astype(dtype)
    b = rng.standard_normal((B, K, N)).astype(dtype)
    c = np.zeros((B, M, N), np.float32)
    blocks = {"BLOCK_M": triton.next_power_of_2(M), "BLOCK_N": triton.next_power_of_2(N), "BLOCK_K": 16}
    xblock.jit(batched_matmul_kernel)[(1,)](a, b, c, B, M, N, K, BLOCK_B=block_b, PRECISION=precision,
                                            target=target, **blocks)
    return a, b, c


@pytest.mark.parametrize("target", RUN + ["ascend"])
@pytest.mark.parametrize("case", BATCHED, ids=lambda c: "x".join(map(str, c)))
def test_batched_dot_fp16(target, case):
    a, b, c = _batched(target, *case, np.float16, "ieee")
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", RUN)
@pytest.mark.parametrize("precision", ["tf32", "tf32x3", "ieee"])
@pytest.mark.parametrize("case", BATCHED[1:5:3], ids=lambda c: "x".join(map(str, c)))
def test_batched_dot_fp32_precisions(target, precision, case):
    a, b, c = _batched(target, *case, np.float32, precision)
    K = case[3]
    want = np.stack([model_matmul(x, y, 16, precision) for x, y in zip(a, b)])
    np.testing.assert_allclose(c, want, rtol=0, atol=2e-6 * np.sqrt(K) * np.abs(want).max())


@pytest.mark.parametrize("target", RUN)
def test_rank4_dot_is_a_batch_over_the_leading_dimensions(target):
    rng = np.random.default_rng(9)
    a, b = (rng.standard_normal((2, 2, 16, 16)).astype(np.float32) for _ in range(2))
    c = np.zeros_like(a)
    xblock.jit(rank4_kernel)[(1,)](a, b, c, N=16, target=target)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------------------------ ascend
def test_ascend_fp16_dot_ignores_the_precision():
    rng = np.random.default_rng(10)
    a = rng.standard_normal((40, 48)).astype(np.float16)
    b = rng.standard_normal((48, 24)).astype(np.float16)
    for precision in ("tf32x3", "bf16x6"):
        c = launch(a, b, (32, 32, 32), precision, "ascend")
        np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("precision", PRECISIONS)
def test_ascend_fp32_dot_is_the_fp32_product_whatever_the_precision(precision):
    """The Cube multiplies fp32 operands as fp32 (HF32 off): x @ I is x, bit for bit, for every precision."""
    x = crafted((48, 64), seed=len(precision))
    eye = np.eye(64, dtype=np.float32)
    np.testing.assert_array_equal(launch(x, eye, (32, 32, 32), precision, "ascend"), x)
    rng = np.random.default_rng(12)
    a, b = rng.standard_normal((33, 50)).astype(np.float32), rng.standard_normal((50, 17)).astype(np.float32)
    want = model_matmul(a, b, 16, "ieee")
    np.testing.assert_allclose(launch(a, b, (16, 32, 16), precision, "ascend"), want, rtol=0,
                               atol=2e-6 * np.sqrt(50) * np.abs(want).max())


@pytest.mark.parametrize("case", BATCHED[1:5:3], ids=lambda c: "x".join(map(str, c)))
def test_ascend_batched_dot_fp32(case):
    a, b, c = _batched("ascend", *case, np.float32, "tf32")
    want = np.stack([model_matmul(x, y, 16, "ieee") for x, y in zip(a, b)])
    np.testing.assert_allclose(c, want, rtol=0, atol=2e-6 * np.sqrt(case[3]) * np.abs(want).max())


# ------------------------------------------------------------------------------------ cuda
def _ttir_dots(kernel, args, meta, **options):
    ck = precompile(kernel, args, meta, **options)
    assert ck.asm["cubin"][:4] == b"\x7fELF"
    return [line for line in ck.asm["ttir"].splitlines() if "tt.dot" in line]


@pytest.mark.parametrize("precision", PRECISIONS)
def test_cuda_gets_each_precision(precision):
    x = np.zeros((64, 64), np.float32)
    (dot,) = _ttir_dots(matmul_kernel, (x, x, x, 64, 64, 64),
                        {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "PRECISION": precision})
    assert "tensor<32x16xf32> * tensor<16x32xf32> -> tensor<32x32xf32>" in dot
    # Triton prints the attribute unless it is ieee, its default
    assert (f"inputPrecision = {precision}" in dot) if precision != "ieee" else ("inputPrecision" not in dot), dot


def test_cuda_batched_dot_is_a_rank3_tt_dot():
    x = np.zeros((3, 32, 32), np.float16)
    (dot,) = _ttir_dots(batched_matmul_kernel, (x, x, x.astype(np.float32), 3, 32, 32, 32),
                        {"BLOCK_B": 4, "BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "PRECISION": "ieee"})
    assert "tensor<4x32x16xf16> * tensor<4x16x32xf16> -> tensor<4x32x32xf32>" in dot


def test_cuda_max_num_imprecise_acc():
    a = np.zeros((32, 32), ml_dtypes.float8_e5m2)
    c = np.zeros((32, 32), np.float32)
    (dot,) = _ttir_dots(fp8_imprecise_kernel, (a, a, c), {"N": 32, "IMPRECISE": 16})
    assert "maxNumImpreciseAcc = 16" in dot
    (dot,) = _ttir_dots(fp8_imprecise_kernel, (a, a, c), {"N": 32, "IMPRECISE": None})
    assert "maxNumImpreciseAcc = 1073741824" in dot  # Triton's default for float8 on sm_90
    (dot,) = _ttir_dots(fp8_imprecise_kernel, (a, a, c), {"N": 32, "IMPRECISE": None}, arch=89)
    assert "maxNumImpreciseAcc" not in dot  # 0 elsewhere


def test_max_num_imprecise_acc_changes_nothing_on_the_sim():
    rng = np.random.default_rng(11)
    a = rng.standard_normal((32, 32)).astype(ml_dtypes.float8_e5m2)
    want = a.astype(np.float64) @ a.astype(np.float64)
    for n in (None, 0, 8, 32):
        c = np.zeros((32, 32), np.float32)
        xblock.jit(fp8_imprecise_kernel)[(1,)](a, a, c, N=32, IMPRECISE=n, target="sim")
        np.testing.assert_allclose(c, want, rtol=1e-6)
