"""Every conversion between the language's dtypes on ascend, bit for bit against the sim (the
reference) and numpy: bool, int8..int64, uint8..uint64, float16, bfloat16, float32, each to every
other, at boundary values (the extremes of each type, roundings to nearest even, float overflow)
and boundary sizes. Float -> int is defined for values in int32's range (fptosi then truncation,
as numpy on x86 computes it: 300.0 -> int8 is 44); uint64 -> float is the one refused pair. The
cpu target runs the same kernel where LLVM defines the result."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import xblock
import xblock.language as xl

BLOCK = 64
SIZES = (1, BLOCK - 1, BLOCK + 1)
DT = {"bool": (xl.int1, np.bool_), "int8": (xl.int8, np.int8), "uint8": (xl.uint8, np.uint8),
      "int16": (xl.int16, np.int16), "uint16": (xl.uint16, np.uint16), "int32": (xl.int32, np.int32),
      "uint32": (xl.uint32, np.uint32), "int64": (xl.int64, np.int64), "uint64": (xl.uint64, np.uint64),
      "float16": (xl.float16, np.float16), "bfloat16": (xl.bfloat16, ml_dtypes.bfloat16),
      "float32": (xl.float32, np.float32)}
OUTS = list(DT)
FLOATS = ("float16", "bfloat16", "float32")


@xblock.jit
def cast_all(b_ptr, i8_ptr, u8_ptr, i16_ptr, u16_ptr, i32_ptr, u32_ptr, i64_ptr, u64_ptr, f16_ptr, bf16_ptr, f32_ptr,
             o_b, o_i8, o_u8, o_i16, o_u16, o_i32, o_u32, o_i64, o_u64, o_f16, o_bf16, o_f32, n,
             BLOCK: xl.constexpr, ROW: xl.constexpr):
    """Row k of every output: source k (in the order of the arguments) converted to that output's type."""
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    xs = (xl.load(b_ptr + offs, mask=m), xl.load(i8_ptr + offs, mask=m), xl.load(u8_ptr + offs, mask=m),
          xl.load(i16_ptr + offs, mask=m), xl.load(u16_ptr + offs, mask=m), xl.load(i32_ptr + offs, mask=m),
          xl.load(u32_ptr + offs, mask=m), xl.load(i64_ptr + offs, mask=m), xl.load(u64_ptr + offs, mask=m),
          xl.load(f16_ptr + offs, mask=m), xl.load(bf16_ptr + offs, mask=m), xl.load(f32_ptr + offs, mask=m))
    for k in xl.static_range(12):
        x = xs[k]
        at = k * ROW + offs
        xl.store(o_b + at, x.to(xl.int1), mask=m)
        xl.store(o_i8 + at, x.to(xl.int8), mask=m)
        xl.store(o_u8 + at, x.to(xl.uint8), mask=m)
        xl.store(o_i16 + at, x.to(xl.int16), mask=m)
        xl.store(o_u16 + at, x.to(xl.uint16), mask=m)
        xl.store(o_i32 + at, x.to(xl.int32), mask=m)
        xl.store(o_u32 + at, x.to(xl.uint32), mask=m)
        xl.store(o_i64 + at, x.to(xl.int64), mask=m)
        xl.store(o_u64 + at, x.to(xl.uint64), mask=m)
        if k != 8:  # uint64 -> float is refused on ascend (test_uint64_to_float_is_refused_at_the_line)
            xl.store(o_f16 + at, x.to(xl.float16), mask=m)
            xl.store(o_bf16 + at, x.to(xl.bfloat16), mask=m)
            xl.store(o_f32 + at, x.to(xl.float32), mask=m)


def _int_values(dt) -> np.ndarray:
    info = np.iinfo(dt)
    special = [info.min, info.max, 0, 1, info.min + 1, info.max - 1, 127, 128, 255, 256, -129, 2049, 2051,
               65504, 65519, 65520, 32767, 32768, 2**24 + 1, 2**24 + 3, 2**31 - 1, 2**31, 2**32 - 1, 2**35 + 6144,
               2**53 + 1, 2**62 + 2**39 + 1, -(2**24) - 1, -(2**31), -(2**31) - 1, -1, -2]
    special = [v for v in special if info.min <= v <= info.max]
    rng = np.random.default_rng(info.bits + (info.min < 0))
    rand = rng.integers(info.min, info.max, 2 * BLOCK, dtype=np.int64 if info.min < 0 else np.uint64,
                        endpoint=True)
    return np.concatenate([np.array(special, dtype=dt), rand.astype(dt)])[:2 * BLOCK]


def _float_values(dt) -> np.ndarray:
    """In int32's range (float -> int of anything else is undefined in Triton), with halves, the edges
    of the narrow integers and of float16, and the largest float32 below 2^31."""
    special = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, 127.9, -128.9, 255.5, 300.7, -300.7, 40000.5, -40000.5, 65504.0,
               -65504.0, 2049.0, 1e-8, -1e-8, 1e9, -1e9, 2**31 - 128, -(2**31), 3.0e-5, 6.1e-5]
    rng = np.random.default_rng(len(str(dt)))
    rand = rng.standard_normal(2 * BLOCK) * np.exp2(rng.integers(0, 30, 2 * BLOCK))
    v = np.concatenate([np.array(special), rand])[:2 * BLOCK]
    tops = {np.dtype(np.float16): 65504.0, np.dtype(ml_dtypes.bfloat16): 2.0**31 - 2**23}
    top = tops.get(np.dtype(dt), 2.0**31 - 128)  # the largest value below 2^31 (that rounds into int32)
    return np.clip(v, -top, top).astype(dt)


def _values(name: str) -> np.ndarray:
    dt = DT[name][1]
    if name == "bool":
        return (np.arange(2 * BLOCK) % 3 == 1)
    return _float_values(dt) if name in FLOATS else _int_values(dt)


def _run(target, xs, n):
    row = xs[0].size
    outs = [np.zeros(len(OUTS) * row, DT[o][1]) for o in OUTS]
    cast_all[(-(-n // BLOCK),)](*xs, *outs, n, BLOCK=BLOCK, ROW=row, target=target)
    return [o.reshape(len(OUTS), row) for o in outs]


def _same(a, b, what):
    if a.dtype in (np.float16, np.float32) or a.dtype == ml_dtypes.bfloat16:
        a, b = a.astype(np.float32), b.astype(np.float32)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b), err_msg=what)
    np.testing.assert_array_equal(a, b, err_msg=what)


@pytest.mark.parametrize("n", SIZES)
def test_every_cast(n):
    xs = [_values(src) for src in DT]
    want, got = _run("sim", xs, n), _run("ascend", xs, n)
    for j, name in enumerate(OUTS):
        for k, src in enumerate(DT):
            if src == "uint64" and name in FLOATS:
                continue
            _same(got[j][k, :n], want[j][k, :n], f"{src} -> {name}, n = {n}")
            assert not got[j][k, n:].any(), f"{src} -> {name} wrote past n = {n}"
            # numpy agrees with the sim where C defines the conversion: integer to integer and to float
            if src not in FLOATS and src != "bool" and name != "bool":
                with np.errstate(over="ignore"):
                    _same(want[j][k, :n], xs[k][:n].astype(DT[name][1]), f"sim {src} -> {name}")


def test_every_cast_on_cpu():
    """The same kernel on cpu, where LLVM leaves float -> int out of the destination's range undefined:
    those lanes are skipped there."""
    n = BLOCK + 1
    xs = [_values(src) for src in DT]
    want, got = _run("sim", xs, n), _run("cpu", xs, n)
    for j, name in enumerate(OUTS):
        for k, src in enumerate(DT):
            if src == "uint64" and name in FLOATS:
                continue
            keep = np.ones(n, bool)
            if src in FLOATS and name not in FLOATS and name != "bool":
                t = np.trunc(xs[k][:n].astype(np.float64))
                keep = (t >= np.iinfo(DT[name][1]).min) & (t <= np.iinfo(DT[name][1]).max)
            _same(got[j][k, :n][keep], want[j][k, :n][keep], f"cpu {src} -> {name}")


@xblock.jit
def float_casts(x_ptr, h_ptr, b_ptr, f_ptr, hb_ptr, bh_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs)
    h = x.to(xl.float16)
    b = x.to(xl.bfloat16)
    xl.store(h_ptr + offs, h)
    xl.store(b_ptr + offs, b)
    xl.store(f_ptr + offs, h.to(xl.float32) + b.to(xl.float32))
    xl.store(hb_ptr + offs, h.to(xl.bfloat16))
    xl.store(bh_ptr + offs, b.to(xl.float16))


def test_float_to_float_edges():
    """Overflow to inf, NaN, signed zeros, subnormals and ties to even, both narrowing ways and back."""
    edge = [np.inf, -np.inf, np.nan, 0.0, -0.0, 65504.0, 65519.0, 65520.0, 1e6, -1e6, 2.0**-24, 2.0**-25, 2.0**-26,
            3 * 2.0**-26, 1 + 2.0**-11, 1 + 3 * 2.0**-11, 1 + 2.0**-8, 1 + 3 * 2.0**-8, 3.4e38, 1e-40, -1e-40,
            1 / 3, 2.0**-14, 2.0**-133]
    rng = np.random.default_rng(5)
    x = np.concatenate([edge, rng.standard_normal(BLOCK - len(edge)) * 1e3]).astype(np.float32)
    res = {}
    for target in ("sim", "ascend"):
        outs = [np.zeros(BLOCK, np.float16), np.zeros(BLOCK, ml_dtypes.bfloat16), np.zeros(BLOCK, np.float32),
                np.zeros(BLOCK, ml_dtypes.bfloat16), np.zeros(BLOCK, np.float16)]
        float_casts[(1,)](x, *outs, BLOCK=BLOCK, target=target)
        res[target] = outs
    for name, w, g in zip(("f16", "bf16", "sum", "f16->bf16", "bf16->f16"), res["sim"], res["ascend"]):
        _same(g, w, name)
    with np.errstate(over="ignore"):
        _same(res["ascend"][0], x.astype(np.float16), "numpy f16")
    _same(res["ascend"][1], x.astype(ml_dtypes.bfloat16), "numpy bf16")


@xblock.jit
def wide_float_to_int(x_ptr, i64_ptr, u64_ptr, u32_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs)
    xl.store(i64_ptr + offs, x.to(xl.int64))
    xl.store(u64_ptr + offs, x.to(xl.uint64))
    xl.store(u32_ptr + offs, x.to(xl.uint32))


def test_float_to_wide_ints():
    """float32 -> int64/uint64/uint32 beyond int32: the top bit of unsigned results, exact; the
    largest float32 below 2^63, 2^64 and 2^32."""
    x = np.array([2.0**63 - 2**39, -(2.0**63), 1e18, -1e18, 2.0**32 - 256, 2.0**31, 3.5, -3.5] * 4, np.float32)
    x64 = np.array([2.0**64 - 2**40, 1e19, 2.0**63, 2.0**63 + 2**40, 9e18, 0.5, 7.0, 2.0**32 - 256] * 4, np.float32)
    for vals in (x, x64):
        outs = {t: [np.zeros(32, np.int64), np.zeros(32, np.uint64), np.zeros(32, np.uint32)]
                for t in ("sim", "ascend")}
        for t in outs:
            wide_float_to_int[(1,)](vals, *outs[t], BLOCK=32, target=t)
        in_range = [np.abs(vals) < 2.0**63, vals >= 0, (vals >= 0) & (vals < 2.0**32)]
        for k, (w, g, ok) in enumerate(zip(outs["sim"], outs["ascend"], in_range)):
            np.testing.assert_array_equal(g[ok], w[ok], err_msg=f"output {k}")
            np.testing.assert_array_equal(g[ok], vals[ok].astype(np.float64).astype(w.dtype), err_msg=f"numpy {k}")


def test_uint64_to_float_is_refused_at_the_line():
    x = np.arange(BLOCK, dtype=np.uint64)
    out = np.zeros(BLOCK, np.float32)
    with pytest.raises(xblock.CompilationError, match=r"test_casts_all.py:\d+.*uint64 block converted to f32"):
        _u64_to_f32[(1,)](x, out, BLOCK=BLOCK, target="ascend")


@xblock.jit
def _u64_to_f32(x_ptr, y_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    xl.store(y_ptr + offs, xl.load(x_ptr + offs).to(xl.float32))
