"""Triton surface that real kernels lean on (issue 28): unmodified @triton.jit kernels against numpy on
every target that runs here, and compiled for cuda.

- an argument dereferenced only under a constexpr `if` that is off may be any value (a float);
- a block pointer's `dtype` is Triton's pointer-to-block type (`x.to(p.dtype.element_ty)`);
- a variable that is None before a loop stays None through it (an optional block pointer);
- libdevice's float -> integer roundings (llrint, llround, float2int_rn, ..., double2ll_ru);
- triton.language.core's helpers that TorchInductor's triton_helpers calls (get_int_dtype);
- the names Triton has, reached through every module path a kernel spells them with.
"""

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile

triton = pytest.importorskip("triton")
tl = triton.language
libdevice = pytest.importorskip("triton.language.extra.libdevice")
cuda_libdevice = pytest.importorskip("triton.language.extra.cuda.libdevice")

RUN_TARGETS = ["sim", "cpu", "ascend"]


# ------------------------------------------------------------- pointer-ness follows the compiled code
@triton.jit
def dequant_rows(q_ptr, out_ptr, out_scale, n, HAS_SCALE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(q_ptr + offs, mask=mask).to(tl.float32)
    if HAS_SCALE:
        v = v * tl.load(out_scale)  # a pointer only when HAS_SCALE
    tl.store(out_ptr + offs, v, mask=mask)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_unused_pointer_argument_takes_a_float(target):
    q = np.arange(-50, 50, dtype=np.int8)
    out = np.zeros(100, np.float32)
    kernel = xblock.jit(dequant_rows)
    kernel[(2,)](q, out, 1.0, 100, HAS_SCALE=False, BLOCK=64, target=target)
    np.testing.assert_array_equal(out, q.astype(np.float32))
    scale = np.array([0.25], np.float32)
    kernel[(2,)](q, out, scale, 100, HAS_SCALE=True, BLOCK=64, target=target)
    np.testing.assert_array_equal(out, q.astype(np.float32) * 0.25)


def test_unused_pointer_argument_compiles_for_cuda():
    q, out = np.zeros(100, np.int8), np.zeros(100, np.float32)
    ck = precompile(dequant_rows, (q, out, 1.0, 100), {"HAS_SCALE": False, "BLOCK": 64})
    assert "cubin" in ck.asm


def test_a_float_dereferenced_is_an_error_at_its_line():
    q, out = np.zeros(100, np.int8), np.zeros(100, np.float32)
    with pytest.raises(xblock.CompilationError) as info:
        xblock.jit(dequant_rows)[(2,)](q, out, 1.0, 100, HAS_SCALE=True, BLOCK=64, target="sim")
    assert "pointer" in info.value.message and "tl.load(out_scale)" in str(info.value)


# ------------------------------------------------------ block pointer dtype, None through a loop
@triton.jit
def scaled_tiles(a_ptr, bias_ptr, o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    p_a = tl.make_block_ptr(a_ptr, (M, N), (N, 1), (pid * BM, 0), (BM, BN), (1, 0))
    p_o = tl.make_block_ptr(o_ptr, (M, N), (N, 1), (pid * BM, 0), (BM, BN), (1, 0))
    if bias_ptr is None:
        p_bias = None
    else:
        p_bias = tl.make_block_ptr(bias_ptr, (N,), (1,), (0,), (BN,), (0,))
    for _ in range(0, tl.cdiv(N, BN)):
        b_a = tl.load(p_a, boundary_check=(0, 1)).to(tl.float32) * 3
        if p_bias is not None:
            b_a += tl.load(p_bias, boundary_check=(0,)).to(tl.float32)[None, :]
            p_bias = tl.advance(p_bias, (BN,))
        tl.store(p_o, b_a.to(p_o.dtype.element_ty), boundary_check=(0, 1))
        p_a = tl.advance(p_a, (0, BN))
        p_o = tl.advance(p_o, (0, BN))


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("with_bias", [False, True])
def test_block_pointer_dtype_and_optional_block_pointer(target, with_bias):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((20, 40)).astype(np.float16)
    bias = rng.standard_normal(40).astype(np.float16) if with_bias else None
    out = np.zeros_like(a)
    xblock.jit(scaled_tiles)[(2,)](a, bias, out, 20, 40, BM=16, BN=16, target=target)
    ref = a.astype(np.float32) * 3 + (bias.astype(np.float32) if with_bias else 0)
    np.testing.assert_allclose(out.astype(np.float32), ref.astype(np.float16).astype(np.float32), rtol=1e-3)


def test_block_pointer_surface_compiles_for_cuda():
    a = np.zeros((20, 40), np.float16)
    for bias in (None, np.zeros(40, np.float16)):
        assert "cubin" in precompile(scaled_tiles, (a, bias, a, 20, 40), {"BM": 16, "BN": 16}).asm


# ------------------------------------------------------------------ libdevice's integer roundings
@triton.jit
def to_integers(x_ptr, ll_ptr, i_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(ll_ptr + 0 * n + offs, libdevice.llrint(x), mask=mask)
    tl.store(ll_ptr + 1 * n + offs, libdevice.llround(x), mask=mask)
    if x.dtype == tl.float64:
        tl.store(ll_ptr + 2 * n + offs, cuda_libdevice.double2ll_ru(x), mask=mask)
        tl.store(i_ptr + 0 * n + offs, libdevice.double2int_rn(x), mask=mask)
        tl.store(i_ptr + 1 * n + offs, libdevice.double2int_rz(x), mask=mask)
        tl.store(i_ptr + 2 * n + offs, libdevice.double2int_rd(x), mask=mask)
    else:
        tl.store(ll_ptr + 2 * n + offs, cuda_libdevice.float2ll_ru(x), mask=mask)
        tl.store(i_ptr + 0 * n + offs, libdevice.float2int_rn(x), mask=mask)
        tl.store(i_ptr + 1 * n + offs, libdevice.float2int_rz(x), mask=mask)
        tl.store(i_ptr + 2 * n + offs, libdevice.float2int_rd(x), mask=mask)


def _rounding_inputs(dtype):
    halves = np.arange(-6, 6.5, 0.5)
    rng = np.random.default_rng(4)
    return np.concatenate([halves, [0.49999997, -0.49999997, 1e6 + 0.5, -2.5e8 - 0.75],
                           rng.uniform(-1e4, 1e4, 60)]).astype(dtype)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_libdevice_integer_roundings(target, dtype):
    if target == "ascend" and dtype == np.float64:
        pytest.skip("ascend has no fp64 (refused at the line)")
    x = _rounding_inputs(dtype)
    n = len(x)
    ll = np.zeros(3 * n, np.int64)
    i32 = np.zeros(3 * n, np.int32)
    xblock.jit(to_integers)[(triton.cdiv(n, 64),)](x, ll, i32, n, BLOCK=64, target=target)
    w = x.astype(np.float64)
    away = np.sign(w) * np.floor(np.abs(w) + 0.5)
    np.testing.assert_array_equal(ll[:n], np.rint(w).astype(np.int64))
    np.testing.assert_array_equal(ll[n:2 * n], away.astype(np.int64))
    np.testing.assert_array_equal(ll[2 * n:], np.ceil(w).astype(np.int64))
    np.testing.assert_array_equal(i32[:n], np.rint(w).astype(np.int32))
    np.testing.assert_array_equal(i32[n:2 * n], np.trunc(w).astype(np.int32))
    np.testing.assert_array_equal(i32[2 * n:], np.floor(w).astype(np.int32))


def test_libdevice_integer_roundings_compile_for_cuda():
    for dtype in (np.float32, np.float64):
        x = np.zeros(8, dtype)
        ck = precompile(to_integers, (x, np.zeros(24, np.int64), np.zeros(24, np.int32), 8), {"BLOCK": 64})
        assert "cubin" in ck.asm


# ------------------------------------------- triton.language.core helpers (TorchInductor's helpers)
@triton.jit
def _pick_along(x, mask, dim):
    # one element per row, chosen by a 0/1 mask, moved through the integers of x's width
    idtype = tl.core.get_int_dtype(x.dtype.primitive_bitwidth, signed=False)
    ix = x.to(idtype, bitcast=True)
    return tl.sum(ix * mask, dim).to(x.dtype, bitcast=True)


@triton.jit
def pick_columns(x_ptr, col_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)[:, None]
    cols = tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + rows * C + cols)
    want = tl.load(col_ptr + tl.arange(0, R))[:, None]
    SIGNED: tl.constexpr = tl.core._unwrap_if_constexpr(True)
    sdt = tl.core.get_int_dtype(bitwidth=16, signed=SIGNED)
    tl.static_assert(sdt == tl.int16)
    tl.store(out_ptr + tl.arange(0, R), _pick_along(x, (cols == want).to(tl.uint32), 1))


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_core_int_dtype_helpers(target):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    col = rng.integers(0, 16, 8).astype(np.int32)
    out = np.zeros(8, np.float32)
    xblock.jit(pick_columns)[(1,)](x, col, out, R=8, C=16, target=target)
    np.testing.assert_array_equal(out, x[np.arange(8), col])


def test_core_int_dtype_helpers_compile_for_cuda():
    ck = precompile(pick_columns, (np.zeros((8, 16), np.float32), np.zeros(8, np.int32), np.zeros(8, np.float32)),
                    {"R": 8, "C": 16})
    assert "cubin" in ck.asm


# ------------------------------------------------- names Triton has, through each module path
@triton.jit
def spellings(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.math.exp2(x) + tl.extra.cuda.libdevice.floor(x) + libdevice.tanh(x) + cuda_libdevice.exp(x)
    y += triton.language.standard.sum(x, 0) + tl.core.maximum(x, 0.0)
    tl.store(out_ptr + offs, y.to(tl.core.float32))


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_names_triton_has_keep_working(target):
    x = np.linspace(-2, 2, 16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    xblock.jit(spellings)[(1,)](x, out, BLOCK=16, target=target)
    ref = np.exp2(x) + np.floor(x) + np.tanh(x) + np.exp(x) + x.sum() + np.maximum(x, 0)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------- a block's logical_and / logical_or methods
@triton.jit
def in_window_or_sentinel(x_ptr, y_ptr, lo, hi, N: tl.constexpr):
    # TorchInductor's bucketize_binary_search combines its bool blocks with these methods
    x = tl.load(x_ptr + tl.arange(0, N))
    keep = (x > lo).logical_and(x < hi).logical_or(x == -3)
    tl.store(y_ptr + tl.arange(0, N), keep.to(tl.int32))


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_block_logical_and_or_methods(target):
    x = np.arange(-4, 12, dtype=np.int32)
    y = np.zeros(16, np.int32)
    xblock.jit(in_window_or_sentinel)[(1,)](x, y, 0, 5, N=16, target=target)
    np.testing.assert_array_equal(y, (((x > 0) & (x < 5)) | (x == -3)).astype(np.int32))


def test_block_logical_and_or_methods_compile_for_cuda():
    ck = precompile(in_window_or_sentinel, (np.zeros(16, np.int32), np.zeros(16, np.int32), 0, 5), {"N": 16})
    assert "cubin" in ck.asm


@triton.jit
def logical_and_of_ints(x_ptr, y_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(y_ptr + tl.arange(0, N), x.logical_and(x > 0).to(tl.int32))


def test_block_logical_and_of_an_integer_block_is_an_error_at_its_line():
    with pytest.raises(xblock.CompilationError, match=r"test_triton_surface.py:\d+.*`logical_and` needs bool"):
        xblock.jit(logical_and_of_ints)[(1,)](np.zeros(8, np.int32), np.zeros(8, np.int32), N=8, target="sim")


# ------------------------------------------------------------- an np.float64 scalar is fp32, as in Triton
@triton.jit
def scaled_row_sums(x_ptr, out_ptr, sm_scale, n_rows, N: tl.constexpr):
    offs = tl.arange(0, N)
    acc = tl.zeros((N,), dtype=tl.float32)
    for r in range(n_rows):  # the accumulator keeps its type through the loop only if sm_scale is fp32
        acc += tl.load(x_ptr + r * N + offs) * sm_scale
    tl.store(out_ptr + offs, acc)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_an_np_float64_scalar_is_fp32_as_in_triton(target):
    # SGLang's prefill attention passes sm_scale = 1.0 / np.sqrt(head_dim), an np.float64
    x = np.arange(3 * 16, dtype=np.float32).reshape(3, 16)
    out = np.zeros(16, np.float32)
    scale = 1.0 / np.sqrt(np.float64(64))
    xblock.jit(scaled_row_sums)[(1,)](x, out, scale, 3, N=16, target=target)
    np.testing.assert_array_equal(out, (x * np.float32(scale)).sum(0, dtype=np.float32))
    md = xblock.jit(scaled_row_sums).warmup(x, out, scale, 3, N=16, target="sim").metadata
    assert dict(zip(md["arg_names"], md["arg_types"]))["sm_scale"] == "fp32"
