"""dtypes are values as in compiled Triton (helpers take them, predicates and widths fold), and the
cast spellings public kernels use: unmodified @triton.jit kernels against numpy on every target."""

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile

triton = pytest.importorskip("triton")
tl = triton.language

RUN_TARGETS = ["sim", "cpu", "ascend"]


@triton.jit
def _lowest(dtype: tl.constexpr):
    if dtype.is_floating():
        return -float("inf")
    return dtype.get_int_min_value()


@triton.jit
def row_max(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    dt: tl.constexpr = x_ptr.dtype.element_ty
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=_lowest(dt))
    acc_dt: tl.constexpr = tl.float32 if dt.is_fp16() or dt.is_bf16() else dt
    tl.static_assert(acc_dt.primitive_bitwidth == 32)
    tl.store(out_ptr + row, tl.max(x.to(acc_dt), 0).to(out_ptr.dtype.element_ty))


@triton.jit
def swiglu_fwd(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0).cast(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0)
    c = (a * tl.sigmoid(a)).cast(b.dtype) * b
    tl.store(c_ptr + offs, c, mask=mask)


@triton.jit
def geglu_fwd(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.cast(tl.load(a_ptr + offs, mask=mask, other=0), tl.float32, fp_downcast_rounding="rtne")
    b = tl.load(b_ptr + offs, mask=mask, other=0)
    gelu = 0.5 * a * (1 + tl.erf(a * 0.7071067811865476))
    tl.store(c_ptr + offs, tl.cast(gelu, b.dtype) * b, mask=mask)


@triton.jit
def dtype_queries(out_ptr):
    dt: tl.constexpr = out_ptr.dtype.element_ty
    tl.static_assert(tl.constexpr(dt).value == dt)
    tl.static_assert(dt.is_int32() and dt.is_int() and dt.is_int_signed() and not dt.is_floating())
    tl.static_assert(not dt.is_int64() and tl.uint8.is_int_unsigned() and tl.float16.fp_mantissa_width == 10)
    tl.static_assert(tl.core.dtype("fp32") == tl.float32 and tl.bfloat16.is_bf16())
    bits = tl.full((4,), 1.0, tl.float32).to(tl.int32, bitcast=True)
    tl.store(out_ptr + tl.arange(0, 4), bits + tl.int32(dt.primitive_bitwidth))


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int32])
def test_helper_takes_the_dtype_for_its_identity(target, dtype):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((5, 37)) * 50).astype(dtype)
    if np.dtype(dtype).kind == "i":
        x -= 1000  # all negative: a wrong identity (0) would win
    else:
        x = -np.abs(x) - 1
    out = np.zeros(5, dtype)
    xblock.jit(row_max)[(5,)](x, out, 37, BLOCK=64, target=target)
    np.testing.assert_array_equal(out, x.max(1))


GATED = [(t, swiglu_fwd) for t in RUN_TARGETS] + [(t, geglu_fwd) for t in RUN_TARGETS]


@pytest.mark.parametrize("target,kernel", GATED, ids=[f"{k.fn.__name__}-{t}" for t, k in GATED])
@pytest.mark.parametrize("n", [1, 127, 128, 129])
def test_gated_activations_with_cast(target, kernel, n):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(n).astype(np.float16), rng.standard_normal(n).astype(np.float16)
    c = np.zeros(n, np.float16)
    xblock.jit(kernel)[(triton.cdiv(n, 128),)](a, b, c, n, BLOCK=128, target=target)
    a32 = a.astype(np.float32)
    if kernel is swiglu_fwd:
        act = a32 / (1 + np.exp(-a32))
    else:
        from math import erf
        act = 0.5 * a32 * (1 + np.vectorize(erf)(a32 / np.sqrt(2))).astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), (act.astype(np.float16) * b).astype(np.float32),
                               rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_dtype_predicates_and_constructor_casts(target):
    out = np.zeros(4, np.int32)
    xblock.jit(dtype_queries)[(1,)](out, target=target)
    np.testing.assert_array_equal(out, np.float32(1).view(np.int32) + 32)


def test_compiles_for_cuda():
    x = np.zeros((5, 37), np.float16)
    assert "cubin" in precompile(row_max, (x, np.zeros(5, np.float16), 37), {"BLOCK": 64}).asm
    h = np.zeros(128, np.float16)
    assert "cubin" in precompile(swiglu_fwd, (h, h, h, 128), {"BLOCK": 128}).asm


@triton.jit
def rtz_cast(x_ptr, y_ptr):
    tl.store(y_ptr, tl.load(x_ptr).to(tl.float32, fp_downcast_rounding="rtz"))


def test_unsupported_rounding_is_a_clear_error():
    # toward zero from float32 to float16/bfloat16/float8e5 only (tests/conformance/test_fp8_and_pointer_tables.py)
    with pytest.raises(xblock.CompilationError, match=r"test_dtypes_and_casts.py:\d+:\d+: .*"
                       r"fp_downcast_rounding='rtz' from float64 to float32 is not supported"):
        xblock.jit(rtz_cast)[(1,)](np.zeros(1, np.float64), np.zeros(1, np.float32), target="sim")
