"""Language semantics against Triton 3.x: type promotion, weak scalars, division, NaN, masks, casts.

Every expectation follows triton/language/semantic.py (computation_type_impl, binary_op_type_checking_impl,
truediv/floordiv/mod) and standard.py (sum/max/argmax/cumsum); `test_table_matches_triton` re-derives the
promotion tables with the installed Triton's own frontend when it is available. Values are checked by
running small kernels on the sim against numpy.
"""

import contextlib
import importlib.util
import io

import ml_dtypes
import numpy as np
import pytest

import xblock
import xblock.language as xl

N = 8
NP = {"int1": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
      "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "fp16": np.float16,
      "bf16": ml_dtypes.bfloat16, "fp32": np.float32, "fp64": np.float64}
XL = {"int1": xl.int1, "int8": xl.int8, "int16": xl.int16, "int32": xl.int32, "int64": xl.int64,
      "uint8": xl.uint8, "uint16": xl.uint16, "uint32": xl.uint32, "uint64": xl.uint64, "fp16": xl.float16,
      "bf16": xl.bfloat16, "fp32": xl.float32, "fp64": xl.float64}


def _data(name, n=N, lo=1):
    """Small exactly representable positive values (safe as divisors and in every dtype)."""
    if name == "int1":
        return (np.arange(n) % 2 == 0)
    v = np.arange(lo, lo + n)
    if name in ("fp16", "bf16", "fp32", "fp64"):
        v = v * 0.5
    return v.astype(NP[name])


# ---------------------------------------------------------------------------------------- tensor op tensor
@xblock.jit
def binop(a_ptr, b_ptr, out_ptr, OP: xl.constexpr, EXPECT: xl.constexpr, N: xl.constexpr):
    offs = xl.arange(0, N)
    a = xl.load(a_ptr + offs)
    b = xl.load(b_ptr + offs)
    if OP == "add":
        c = a + b
    elif OP == "sub":
        c = a - b
    elif OP == "mul":
        c = a * b
    elif OP == "truediv":
        c = a / b
    elif OP == "floordiv":
        c = a // b
    elif OP == "mod":
        c = a % b
    elif OP == "and":
        c = a & b
    elif OP == "where":
        c = xl.where(a == a, a, b)
    elif OP == "maximum":
        c = xl.maximum(a, b)
    xl.static_assert(c.dtype == EXPECT, f"{OP} computes in {c.dtype}")
    xl.store(out_ptr + offs, c)


_NUMPY_OP = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.divide,
             "floordiv": np.floor_divide, "mod": np.fmod, "and": np.bitwise_and,
             "where": lambda a, b: a, "maximum": np.maximum}

# (op, lhs dtype, rhs dtype, result dtype), as Triton 3.6's computation_type_impl gives them
PROMOTION = [
    ("add", "int8", "int32", "int32"),
    ("add", "int32", "uint32", "uint32"),  # same width: unsigned wins
    ("add", "uint8", "int16", "int16"),  # wider signed wins
    ("add", "int64", "uint32", "int64"),
    ("add", "uint64", "int64", "uint64"),
    ("add", "int1", "int8", "int8"),
    ("add", "fp16", "fp32", "fp32"),
    ("add", "fp16", "bf16", "fp16"),  # "prefer float16"
    ("add", "bf16", "bf16", "bf16"),
    ("add", "int32", "fp16", "fp16"),
    ("add", "int32", "bf16", "fp32"),  # bf16 with a non-bf16 operand computes in fp32
    ("add", "uint8", "fp16", "fp16"),
    ("add", "fp16", "fp64", "fp64"),
    ("sub", "int16", "int8", "int16"),
    ("mul", "int16", "int16", "int16"),
    ("mul", "bf16", "int8", "fp32"),
    ("truediv", "int32", "int32", "fp32"),
    ("truediv", "int8", "int8", "fp32"),
    ("truediv", "fp16", "fp16", "fp32"),
    ("truediv", "bf16", "bf16", "fp32"),
    ("truediv", "fp16", "fp32", "fp32"),
    ("truediv", "fp64", "int32", "fp64"),
    ("floordiv", "int16", "int16", "int16"),
    ("floordiv", "uint8", "uint8", "uint8"),
    ("floordiv", "int8", "int64", "int64"),
    ("mod", "int8", "int8", "int8"),
    ("mod", "fp16", "fp16", "fp32"),
    ("and", "uint8", "uint8", "uint8"),
    ("and", "int8", "int32", "int32"),
    ("where", "fp16", "int32", "fp16"),
    ("where", "bf16", "fp16", "fp16"),
    ("maximum", "fp16", "fp16", "fp16"),
    ("maximum", "bf16", "bf16", "fp32"),  # tl.maximum promotes bf16 first
    ("maximum", "int8", "uint8", "uint8"),
]


@pytest.mark.parametrize("op,da,db,expect", PROMOTION, ids=["-".join(p) for p in PROMOTION])
def test_promotion(op, da, db, expect):
    a, b = _data(da), _data(db, lo=2)
    out = np.zeros(N, NP[expect])
    binop[(1,)](a, b, out, OP=op, EXPECT=XL[expect], N=N, target="sim")
    with np.errstate(all="ignore"):
        want = _NUMPY_OP[op](a.astype(NP[expect]), b.astype(NP[expect])).astype(NP[expect])
    np.testing.assert_array_equal(out, want)


# ---------------------------------------------------------------------------------------- weak scalars
@xblock.jit
def scalar_op(a_ptr, out_ptr, S: xl.constexpr, OP: xl.constexpr, LEFT: xl.constexpr, EXPECT: xl.constexpr,
              N: xl.constexpr):
    offs = xl.arange(0, N)
    a = xl.load(a_ptr + offs)
    if OP == "add":
        c = S + a if LEFT else a + S
    elif OP == "mul":
        c = S * a if LEFT else a * S
    elif OP == "truediv":
        c = S / a if LEFT else a / S
    elif OP == "floordiv":
        c = S // a if LEFT else a // S
    elif OP == "mod":
        c = S % a if LEFT else a % S
    elif OP == "and":
        c = S & a if LEFT else a & S
    elif OP == "maximum":
        c = xl.maximum(a, S)
    xl.static_assert(c.dtype == EXPECT, f"{OP} with a scalar computes in {c.dtype}")
    xl.store(out_ptr + offs, c)


# (op, block dtype, Python scalar, scalar on the left, result dtype)
WEAK = [
    ("add", "fp16", 2.5, False, "fp16"),  # a float scalar does not widen an fp16 block
    ("mul", "fp16", 3, True, "fp16"),
    ("add", "bf16", 1.5, False, "bf16"),
    ("add", "int8", 3, False, "int8"),  # an int scalar does not widen an int8 block
    ("add", "int8", -3, True, "int8"),
    ("add", "uint8", 3, False, "uint8"),  # signed or unsigned are one kind for scalars
    ("add", "int8", True, False, "int8"),  # bool is a lower kind
    ("add", "int8", 2.5, False, "fp32"),  # a float scalar is a higher kind than int8
    ("add", "int64", 2**40, False, "int64"),
    ("add", "int1", 3, False, "int32"),
    ("truediv", "fp16", 2, False, "fp32"),  # / on fp16 computes in fp32
    ("truediv", "int8", 2, False, "fp32"),
    ("truediv", "fp32", 2, True, "fp32"),
    ("floordiv", "int16", 3, False, "int16"),
    ("mod", "int8", 3, True, "int8"),
    ("mod", "bf16", 2.0, False, "fp32"),
    ("and", "uint8", 6, False, "uint8"),
    ("and", "int16", 3, True, "int16"),
    ("maximum", "fp16", 0.0, False, "fp32"),  # tl.maximum makes the scalar a tensor first
]


@pytest.mark.parametrize("op,dt,s,left,expect", WEAK, ids=[f"{w[0]}-{w[1]}-{w[2]}-{'l' if w[3] else 'r'}"
                                                          for w in WEAK])
def test_weak_scalar(op, dt, s, left, expect):
    a = _data(dt)
    out = np.zeros(N, NP[expect])
    scalar_op[(1,)](a, out, S=s, OP=op, LEFT=left, EXPECT=XL[expect], N=N, target="sim")
    fn = {"add": np.add, "mul": np.multiply, "truediv": np.divide, "floordiv": np.floor_divide,
          "mod": np.fmod, "and": np.bitwise_and, "maximum": np.maximum}[op]
    av = a.astype(NP[expect])
    sv = np.array(s).astype(NP[expect])
    want = fn(sv, av) if left and op != "maximum" else fn(av, sv)
    np.testing.assert_array_equal(out, want.astype(NP[expect]))


@xblock.jit
def weak_overflow(a_ptr, b_ptr, out16_ptr, out8_ptr, N: xl.constexpr):
    offs = xl.arange(0, N)
    xl.store(out16_ptr + offs, xl.load(a_ptr + offs) * 1000)  # fp16 * 1000 stays fp16: overflows to inf
    xl.store(out8_ptr + offs, xl.load(b_ptr + offs) + 100)  # int8 + 100 stays int8: wraps


def test_weak_scalars_compute_in_the_block_dtype():
    a = np.full(N, 300, np.float16)
    b = np.full(N, 100, np.int8)
    o16, o8 = np.zeros(N, np.float32), np.zeros(N, np.int32)
    weak_overflow[(1,)](a, b, o16, o8, N=N, target="sim")
    assert np.isinf(o16).all()
    np.testing.assert_array_equal(o8, -56)


@xblock.jit
def strong_runtime_scalar(a_ptr, b_ptr, n, f, EXPECT_I: xl.constexpr, EXPECT_F: xl.constexpr):
    a = xl.load(a_ptr + xl.arange(0, 4))
    b = xl.load(b_ptr + xl.arange(0, 4))
    xl.static_assert((a + n).dtype == EXPECT_I, "a runtime int argument is an int32 tensor, not weak")
    xl.static_assert((b * f).dtype == EXPECT_F, "a runtime float argument is an fp32 tensor, not weak")


def test_runtime_scalar_arguments_are_not_weak():
    strong_runtime_scalar[(1,)](np.zeros(4, np.int8), np.zeros(4, np.float16), 3, 1.5,
                                EXPECT_I=xl.int32, EXPECT_F=xl.float32, target="sim")


@xblock.jit
def compare_scalar(a_ptr, out_ptr, N: xl.constexpr):
    offs = xl.arange(0, N)
    xl.store(out_ptr + offs, xl.load(a_ptr + offs) < 0.1)


def test_comparison_with_scalar_is_not_weak():
    # fp16(0.1) < 0.1 only when compared in fp32, which Triton does: comparisons make scalars tensors
    a = np.full(N, 0.1, np.float16)
    out = np.zeros(N, np.bool_)
    compare_scalar[(1,)](a, out, N=N, target="sim")
    assert out.all()


# ---------------------------------------------------------------------------------------- division
@xblock.jit
def divmod_kernel(a_ptr, b_ptr, q_ptr, r_ptr, N: xl.constexpr):
    offs = xl.arange(0, N)
    a = xl.load(a_ptr + offs)
    b = xl.load(b_ptr + offs)
    xl.store(q_ptr + offs, a // b)
    xl.store(r_ptr + offs, a % b)


@pytest.mark.parametrize("dt", [np.int8, np.int32, np.int64])
def test_integer_div_and_mod_truncate_toward_zero(dt):
    a = np.array([-7, 7, -7, 7, -1, 0, 6, -6], dt)
    b = np.array([2, -2, -2, 2, 3, 5, -4, -4], dt)
    q, r = np.zeros(8, dt), np.zeros(8, dt)
    divmod_kernel[(1,)](a, b, q, r, N=8, target="sim")
    np.testing.assert_array_equal(q, [-3, -3, 3, 3, 0, 0, -1, 1])  # C: trunc(a / b), not Python's floor
    np.testing.assert_array_equal(r, [-1, 1, -1, 1, -1, 0, 2, -2])  # the sign of the dividend
    np.testing.assert_array_equal(q * b + r, a)


@xblock.jit
def divmod_const(a_ptr, q_ptr, r_ptr, N: xl.constexpr):
    offs = xl.arange(0, N)
    a = xl.load(a_ptr + offs)
    xl.store(q_ptr + offs, a // -4)
    xl.store(r_ptr + offs, a % -4)


def test_div_and_mod_by_negative_scalar():
    a = np.array([-7, 7, -8, 8, -1, 0, 3, -3], np.int32)
    q, r = np.zeros(8, np.int32), np.zeros(8, np.int32)
    divmod_const[(1,)](a, q, r, N=8, target="sim")
    np.testing.assert_array_equal(q, np.trunc(a / -4).astype(np.int32))
    np.testing.assert_array_equal(r, np.fmod(a, -4))


def test_float_mod_is_fmod():
    a = np.array([-7.5, 7.5, -7.5, 7.5, -1.0, 0.5, 6.0, -6.0], np.float32)
    b = np.array([2, -2, -2, 2, 3, 5, -4, -4], np.float32)
    out = np.zeros(8, np.float32)
    binop[(1,)](a, b, out, OP="mod", EXPECT=xl.float32, N=8, target="sim")
    np.testing.assert_array_equal(out, np.fmod(a, b))


def test_int_true_division_values():
    a = np.array([7, -7, 1, 0, 5, 9, -3, 2], np.int32)
    b = np.array([2, 2, 3, 1, -5, 4, 7, 8], np.int32)
    out = np.zeros(8, np.float32)
    binop[(1,)](a, b, out, OP="truediv", EXPECT=xl.float32, N=8, target="sim")
    np.testing.assert_array_equal(out, a.astype(np.float32) / b.astype(np.float32))


# ---------------------------------------------------------------------------------------- NaN
@xblock.jit
def nan_kernel(a_ptr, b_ptr, mx_ptr, mn_ptr, mxp_ptr, mnp_ptr, rmax_ptr, rmin_ptr, N: xl.constexpr):
    offs = xl.arange(0, N)
    a = xl.load(a_ptr + offs)
    b = xl.load(b_ptr + offs)
    xl.store(mx_ptr + offs, xl.maximum(a, b))
    xl.store(mn_ptr + offs, xl.minimum(a, b))
    xl.store(mxp_ptr + offs, xl.maximum(a, b, propagate_nan=xl.PropagateNan.ALL))
    xl.store(mnp_ptr + offs, xl.minimum(a, b, propagate_nan=xl.PropagateNan.ALL))
    tile = xl.reshape(a, (2, N // 2))
    xl.store(rmax_ptr + xl.arange(0, 2), xl.max(tile, axis=1))
    xl.store(rmin_ptr + xl.arange(0, 2), xl.min(tile, axis=1))


def test_nan_in_maximum_minimum_and_reductions():
    nan = np.nan
    a = np.array([nan, 1.0, nan, 3.0, nan, nan, nan, nan], np.float32)
    b = np.array([2.0, nan, nan, 1.0, 0.0, 0.0, 0.0, 0.0], np.float32)
    outs = [np.zeros(8, np.float32) for _ in range(4)] + [np.zeros(2, np.float32) for _ in range(2)]
    nan_kernel[(1,)](a, b, *outs, N=8, target="sim")
    mx, mn, mxp, mnp, rmax, rmin = outs
    np.testing.assert_array_equal(mx, np.fmax(a, b))  # NONE: a NaN operand is ignored
    np.testing.assert_array_equal(mn, np.fmin(a, b))
    np.testing.assert_array_equal(mxp, np.maximum(a, b))  # ALL: NaN propagates
    np.testing.assert_array_equal(mnp, np.minimum(a, b))
    np.testing.assert_array_equal(rmax, [3.0, nan])  # max/min reductions skip NaN; all-NaN stays NaN
    np.testing.assert_array_equal(rmin, [1.0, nan])


# ---------------------------------------------------------------------------------------- masked loads
@xblock.jit
def masked_other(x_ptr, f_ptr, i_ptr, b_ptr, n, N: xl.constexpr):
    offs = xl.arange(0, N)
    m = offs < n
    xl.store(f_ptr + offs, xl.load(x_ptr + offs, mask=m, other=-1.5))
    xl.store(i_ptr + offs, xl.load(x_ptr + offs, mask=m, other=7).to(xl.int32))
    xl.store(b_ptr + offs, xl.load(x_ptr + offs, mask=m, other=offs * 10.0))


def test_other_fills_masked_lanes():
    x = np.arange(1, 6, dtype=np.float16)  # 5 elements; lanes 5..7 are masked off and out of bounds
    f, i, b = np.zeros(8, np.float32), np.zeros(8, np.int32), np.zeros(8, np.float32)
    masked_other[(1,)](x, f, i, b, 5, N=8, target="sim")
    np.testing.assert_array_equal(f, [1, 2, 3, 4, 5, -1.5, -1.5, -1.5])
    np.testing.assert_array_equal(i, [1, 2, 3, 4, 5, 7, 7, 7])
    np.testing.assert_array_equal(b, [1, 2, 3, 4, 5, 50, 60, 70])  # a block `other`


@xblock.jit
def masked_other_int(x_ptr, out_ptr, n, N: xl.constexpr):
    offs = xl.arange(0, N)
    xl.store(out_ptr + offs, xl.load(x_ptr + offs, mask=offs < n, other=2.9))


def test_float_other_is_cast_to_the_pointer_element_type():
    x = np.arange(1, 5, dtype=np.int32)
    out = np.zeros(8, np.int32)
    masked_other_int[(1,)](x, out, 4, N=8, target="sim")
    np.testing.assert_array_equal(out, [1, 2, 3, 4, 2, 2, 2, 2])  # 2.9 -> int32 truncates


# ---------------------------------------------------------------------------------------- reductions
@xblock.jit
def reductions(x_ptr, sum_ptr, max_ptr, argmax_ptr, argmin_ptr, vmax_ptr, imax_ptr, N: xl.constexpr,
               SUM_T: xl.constexpr, MAX_T: xl.constexpr, VMAX_T: xl.constexpr):
    x = xl.load(x_ptr + xl.arange(0, N))
    s = xl.sum(x, axis=0)
    m = xl.max(x, axis=0)
    am = xl.argmax(x, axis=0)
    an = xl.argmin(x, axis=0)
    vm, im = xl.max(x, axis=0, return_indices=True)
    xl.static_assert(s.dtype == SUM_T, f"sum gives {s.dtype}")
    xl.static_assert(m.dtype == MAX_T, f"max gives {m.dtype}")
    xl.static_assert(am.dtype == xl.int32, f"argmax gives {am.dtype}")
    xl.static_assert(an.dtype == xl.int32, f"argmin gives {an.dtype}")
    xl.static_assert(vm.dtype == VMAX_T, f"max with indices gives {vm.dtype}")
    xl.store(sum_ptr, s)
    xl.store(max_ptr, m)
    xl.store(argmax_ptr, am)
    xl.store(argmin_ptr, an)
    xl.store(vmax_ptr, vm)
    xl.store(imax_ptr, im)


@pytest.mark.parametrize("dt,sum_t,max_t,vmax_t", [
    ("int8", "int32", "int32", "int8"),  # sums and plain max widen below 32 bits (standard.py)
    ("uint8", "uint32", "int32", "uint8"),
    ("int16", "int32", "int32", "int16"),
    ("int32", "int32", "int32", "int32"),
    ("int64", "int64", "int64", "int64"),
    ("fp16", "fp16", "fp32", "fp16"),
    ("bf16", "bf16", "fp32", "fp32"),
    ("fp32", "fp32", "fp32", "fp32"),
])
def test_reduction_result_dtypes_and_ties(dt, sum_t, max_t, vmax_t):
    x = np.array([3, 9, 1, 9, 0, 1, 9, 2] * 4, dtype=NP[dt]) if dt != "int8" else \
        np.array([100, 120, 3, 120, 100, 3, 120, 5] * 4, np.int8)
    outs = [np.zeros(1, NP[sum_t]), np.zeros(1, NP[max_t]), np.zeros(1, np.int32), np.zeros(1, np.int32),
            np.zeros(1, NP[vmax_t]), np.zeros(1, np.int32)]
    reductions[(1,)](x, *outs, N=32, SUM_T=XL[sum_t], MAX_T=XL[max_t], VMAX_T=XL[vmax_t], target="sim")
    s, m, am, an, vm, im = (o[0] for o in outs)
    assert s == x.astype(np.float64).sum()  # no int8 overflow: 32 * ~80 does not fit in int8
    assert m == x.max() and vm == x.max()
    assert am == np.argmax(x) and im == np.argmax(x)  # ties: the first index
    assert an == np.argmin(x)


@xblock.jit
def sum_bool(m_ptr, out_ptr, N: xl.constexpr):
    m = xl.load(m_ptr + xl.arange(0, N))
    s = xl.sum(m, axis=0)
    xl.static_assert(s.dtype == xl.uint32, f"sum of int1 gives {s.dtype}")
    xl.store(out_ptr, s)


def test_sum_of_booleans_counts():
    m = np.array([True, False, True, True] * 8)
    out = np.zeros(1, np.uint32)
    sum_bool[(1,)](m, out, N=32, target="sim")
    assert out[0] == 24


@xblock.jit
def row_argmax(x_ptr, out_ptr, M: xl.constexpr, N: xl.constexpr):
    rows = xl.arange(0, M)
    cols = xl.arange(0, N)
    x = xl.load(x_ptr + rows[:, None] * N + cols[None, :])
    xl.store(out_ptr + rows, xl.argmax(x, axis=1))


def test_argmax_tie_breaking_takes_first_index_per_row():
    x = np.zeros((4, 16), np.float32)
    x[0, [3, 7]] = 5
    x[1, :] = 1
    x[2, [15, 0]] = -1
    x[3, [8, 9, 10]] = 2
    out = np.zeros(4, np.int32)
    row_argmax[(1,)](x, out, M=4, N=16, target="sim")
    np.testing.assert_array_equal(out, [3, 0, 1, 8])


# ---------------------------------------------------------------------------------------- scans
@xblock.jit
def scans(x_ptr, cs_ptr, cp_ptr, rcs_ptr, N: xl.constexpr, CS_T: xl.constexpr, CP_T: xl.constexpr):
    offs = xl.arange(0, N)
    x = xl.load(x_ptr + offs)
    cs = xl.cumsum(x, axis=0)
    cp = xl.cumprod(x, axis=0)
    xl.static_assert(cs.dtype == CS_T, f"cumsum gives {cs.dtype}")
    xl.static_assert(cp.dtype == CP_T, f"cumprod gives {cp.dtype}")
    xl.store(cs_ptr + offs, cs)
    xl.store(cp_ptr + offs, cp)
    xl.store(rcs_ptr + offs, xl.cumsum(x, axis=0, reverse=True))


@pytest.mark.parametrize("dt,cs_t,cp_t", [("int8", "int32", "int8"), ("int32", "int32", "int32"),
                                          ("fp32", "fp32", "fp32"), ("bf16", "fp32", "fp32")])
def test_cumsum_and_cumprod(dt, cs_t, cp_t):
    x = np.array([3, 1, 2, 1, 2, 2, 1, 3] * 2, dtype=NP[dt])
    cs, cp, rcs = np.zeros(16, NP[cs_t]), np.zeros(16, NP[cp_t]), np.zeros(16, NP[cs_t])
    scans[(1,)](x, cs, cp, rcs, N=16, CS_T=XL[cs_t], CP_T=XL[cp_t], target="sim")
    xv = x.astype(np.int64)
    np.testing.assert_array_equal(cs, np.cumsum(xv))
    np.testing.assert_array_equal(rcs, np.cumsum(xv[::-1])[::-1])
    with np.errstate(all="ignore"):
        want_cp = np.cumprod(xv).astype(NP[cp_t]) if dt != "bf16" else np.cumprod(xv).astype(np.float32)
    np.testing.assert_array_equal(cp, want_cp)  # int8 cumprod wraps in int8, as in Triton


# ---------------------------------------------------------------------------------------- where
@xblock.jit
def where_kernel(c_ptr, a_ptr, out_ptr, out2_ptr, M: xl.constexpr, N: xl.constexpr):
    rows = xl.arange(0, M)
    cols = xl.arange(0, N)
    c = xl.load(c_ptr + rows)  # int32 condition, one per row
    a = xl.load(a_ptr + rows[:, None] * N + cols[None, :])
    w = xl.where(c[:, None], a, 0)
    xl.static_assert(w.dtype == xl.float16, "where(fp16, 0) stays fp16")
    xl.store(out_ptr + rows[:, None] * N + cols[None, :], w)
    xl.store(out2_ptr + rows[:, None] * N + cols[None, :], xl.where(a > 2, a, -a))


def test_where_broadcasts_condition_and_keeps_block_dtype():
    c = np.array([1, 0, -3, 0], np.int32)
    a = np.arange(16, dtype=np.float16).reshape(4, 4)
    out, out2 = np.zeros((4, 4), np.float16), np.zeros((4, 4), np.float16)
    where_kernel[(1,)](c, a, out, out2, M=4, N=4, target="sim")
    np.testing.assert_array_equal(out, np.where(c[:, None] != 0, a, 0))
    np.testing.assert_array_equal(out2, np.where(a > 2, a, -a))


# ---------------------------------------------------------------------------------------- casts
@xblock.jit
def cast_kernel(x_ptr, out_ptr, TO: xl.constexpr, BITCAST: xl.constexpr, N: xl.constexpr):
    offs = xl.arange(0, N)
    y = xl.load(x_ptr + offs).to(TO, bitcast=BITCAST)
    xl.static_assert(y.dtype == TO, "cast result dtype")
    xl.store(out_ptr + offs, y)


CASTS = [
    ("fp32", [-2.7, 2.7, -0.5, 0.5, 100.9, -100.9, 0.0, 3.0], "int32", None),  # truncation toward zero
    ("fp32", [0.0, 0.5, 255.9, 1.0, 7.99, 128.0, 3.0, 200.5], "uint8", None),
    ("fp32", [0.0, -0.0, 0.5, -2.0, np.nan, np.inf, 1e-30, 3.0], "int1", None),  # nonzero (and NaN) -> True
    ("int32", [0, 1, -1, 5, 0, 2**31 - 1, -(2**31), 7], "int1", None),
    ("int1", [True, False, True, True, False, False, True, False], "int32", None),  # True -> 1, not -1
    ("int8", [-1, -128, 127, 0, 5, -56, 1, 2], "uint8", None),  # same width: bits reinterpreted
    ("int32", [300, -1, 255, 256, -129, 127, 0, 1000], "int8", None),  # truncation of the bits
    ("uint8", [200, 255, 0, 1, 128, 127, 3, 4], "int32", None),  # zero extension
    ("int8", [-56, -1, -128, 0, 1, 127, 3, 4], "int32", None),  # sign extension
    ("int32", [-3, 3, 2**24 + 1, -(2**24) - 1, 0, 1, 7, 9], "fp32", None),
    ("fp32", [1.0, -2.5, 65504.0, 1e5, 1e-8, 0.1, 3.14159, -0.0], "fp16", None),
    ("fp32", [1.0, -2.5, 1.00390625, 1.01171875, 3.14159, 1e30, 0.1, -0.0], "bf16", None),  # round to nearest even
    ("fp16", [1.0, -2.5, 65504.0, 0.1, 3.0, -0.0, 2.0, 0.5], "bf16", None),
]


@pytest.mark.parametrize("src,vals,dst,_", CASTS, ids=[f"{c[0]}-to-{c[2]}-{i}" for i, c in enumerate(CASTS)])
def test_cast(src, vals, dst, _):
    with np.errstate(all="ignore"):
        x = np.array(vals, dtype=np.float64 if src.startswith(("fp", "bf")) else None).astype(NP[src])
        out = np.zeros(8, NP[dst])
        cast_kernel[(1,)](x, out, TO=XL[dst], BITCAST=False, N=8, target="sim")
        if dst == "int1":
            want = x.astype(np.float64) != 0
        elif src.startswith(("fp", "bf")) and not dst.startswith(("fp", "bf")):
            want = np.trunc(x.astype(np.float64)).astype(NP[dst])
        elif dst == "bf16":
            want = x.astype(np.float32).astype(NP[dst])
        else:
            want = x.astype(NP[dst])
    np.testing.assert_array_equal(out.astype(np.float64), want.astype(np.float64))


def test_bitcast_float_and_int():
    x = np.array([1.0, -2.0, 0.0, -0.0, np.inf, 0.1, 3.5, 1e-40], np.float32)
    out = np.zeros(8, np.int32)
    cast_kernel[(1,)](x, out, TO=xl.int32, BITCAST=True, N=8, target="sim")
    np.testing.assert_array_equal(out, x.view(np.int32))
    back = np.zeros(8, np.float32)
    cast_kernel[(1,)](out, back, TO=xl.float32, BITCAST=True, N=8, target="sim")
    np.testing.assert_array_equal(back.view(np.int32), x.view(np.int32))


def test_bitcast_fp16_to_int16():
    x = np.array([1.0, -2.0, 0.0, -0.0, np.inf, 0.1, 3.5, 6e-8], np.float16)
    out = np.zeros(8, np.int16)
    cast_kernel[(1,)](x, out, TO=xl.int16, BITCAST=True, N=8, target="sim")
    np.testing.assert_array_equal(out, x.view(np.int16))


# ---------------------------------------------------------------------------------------- bits and signs
@xblock.jit
def unary_int(x_ptr, inv_ptr, neg_ptr, shr_ptr, shl_ptr, N: xl.constexpr):
    offs = xl.arange(0, N)
    x = xl.load(x_ptr + offs)
    xl.store(inv_ptr + offs, ~x)
    xl.store(neg_ptr + offs, -x)
    xl.store(shr_ptr + offs, x >> 2)
    xl.store(shl_ptr + offs, x << 1)


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int32, np.uint32])
def test_invert_negate_and_shifts(dt):
    x = np.array([0, 1, 5, 100, 127, 3, 64, 2], np.int64).astype(dt)
    if np.dtype(dt).kind == "i":
        x[5:7] = [-3, -128 if dt == np.int8 else -1000]
    outs = [np.zeros(8, dt) for _ in range(4)]
    unary_int[(1,)](x, *outs, N=8, target="sim")
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(outs[0], ~x)
        np.testing.assert_array_equal(outs[1], (-x.astype(np.int64)).astype(dt))  # wraps, unsigned too
        np.testing.assert_array_equal(outs[2], x >> 2)  # arithmetic for signed, logical for unsigned
        np.testing.assert_array_equal(outs[3], (x.astype(np.int64) << 1).astype(dt))


@xblock.jit
def bool_arith(a_ptr, b_ptr, add_ptr, mul_ptr, N: xl.constexpr):
    offs = xl.arange(0, N)
    a = xl.load(a_ptr + offs) != 0
    b = xl.load(b_ptr + offs) != 0
    s = a + b
    xl.static_assert(s.dtype == xl.int1, "int1 + int1 stays int1")
    xl.store(add_ptr + offs, s)
    xl.store(mul_ptr + offs, a * b)


def test_int1_arithmetic_wraps_modulo_two():
    a = np.array([0, 0, 1, 1], np.int8)
    b = np.array([0, 1, 0, 1], np.int8)
    add, mul = np.zeros(4, np.int8), np.zeros(4, np.int8)
    bool_arith[(1,)](a, b, add, mul, N=4, target="sim")
    np.testing.assert_array_equal(add, [0, 1, 1, 0])
    np.testing.assert_array_equal(mul, [0, 0, 0, 1])


# ---------------------------------------------------------------------------------------- against Triton
def _triton_result_dtypes(cases, kernel_src, path):
    """Result dtype names that the installed Triton's frontend gives, via tl.static_print."""
    pytest.importorskip("triton")
    try:
        from triton._C.libtriton import ir
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
        from triton.compiler.compiler import make_backend

        target = GPUTarget("cuda", 90, 32)
        backend = make_backend(target)
        options = backend.parse_options({})
    except Exception as e:  # pragma: no cover - another Triton layout
        pytest.skip(f"Triton's frontend is not reachable here: {e}")
    path.write_text(kernel_src)
    spec = importlib.util.spec_from_file_location("_triton_oracle", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = []
    for sig, constexprs in cases:
        sig = {**sig, **{k: "constexpr" for k in constexprs}}
        ctx = ir.context()
        ir.load_dialects(ctx)
        backend.load_dialects(ctx)
        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf):
                ASTSource(mod.k, signature=sig, constexprs=constexprs).make_ir(
                    target, options, backend.get_codegen_implementation(options), backend.get_module_map(), ctx)
        except Exception as e:  # pragma: no cover
            pytest.skip(f"Triton's frontend failed here ({type(e).__name__}); cannot cross-check")
        out.append(buf.getvalue().split()[-1])
    return out


_TRITON_BINOP = '''
import triton, triton.language as tl
@triton.jit
def k(a_ptr, b_ptr, OP: tl.constexpr):
    a = tl.load(a_ptr + tl.arange(0, 4))
    b = tl.load(b_ptr + tl.arange(0, 4))
    if OP == "add":
        c = a + b
    elif OP == "sub":
        c = a - b
    elif OP == "mul":
        c = a * b
    elif OP == "truediv":
        c = a / b
    elif OP == "floordiv":
        c = a // b
    elif OP == "mod":
        c = a % b
    elif OP == "and":
        c = a & b
    elif OP == "where":
        c = tl.where(a == a, a, b)
    elif OP == "maximum":
        c = tl.maximum(a, b)
    tl.static_print(c.dtype)
'''

_TRITON_SCALAR = '''
import triton, triton.language as tl
@triton.jit
def k(a_ptr, S: tl.constexpr, OP: tl.constexpr, LEFT: tl.constexpr):
    a = tl.load(a_ptr + tl.arange(0, 4))
    if OP == "add":
        c = S + a if LEFT else a + S
    elif OP == "mul":
        c = S * a if LEFT else a * S
    elif OP == "truediv":
        c = S / a if LEFT else a / S
    elif OP == "floordiv":
        c = S // a if LEFT else a // S
    elif OP == "mod":
        c = S % a if LEFT else a % S
    elif OP == "and":
        c = S & a if LEFT else a & S
    elif OP == "maximum":
        c = tl.maximum(a, S)
    tl.static_print(c.dtype)
'''

_SIG = {"int1": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
        "uint16": "u16", "uint32": "u32", "uint64": "u64", "fp16": "fp16", "bf16": "bf16", "fp32": "fp32",
        "fp64": "fp64"}


def test_table_matches_triton(tmp_path):
    """The PROMOTION and WEAK tables above are what Triton's own frontend computes."""
    cases = [({"a_ptr": "*" + _SIG[a], "b_ptr": "*" + _SIG[b]}, {"OP": op}) for op, a, b, _ in PROMOTION]
    got = _triton_result_dtypes(cases, _TRITON_BINOP, tmp_path / "binop.py")
    assert got == [e for *_, e in PROMOTION]
    cases = [({"a_ptr": "*" + _SIG[dt]}, {"S": s, "OP": op, "LEFT": left}) for op, dt, s, left, _ in WEAK]
    got = _triton_result_dtypes(cases, _TRITON_SCALAR, tmp_path / "scalar.py")
    assert got == [e for *_, e in WEAK]
