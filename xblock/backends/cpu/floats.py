"""`xb.fp_to_fp` as integer code: float8 conversions and downcasts rounded toward zero.

The semantics are Triton's on sm_90 (see `sim/floats.py`, which computes the same with ml_dtypes):
float8 values are i8 bits here (`irtypes`). A downcast reads the f32 bits of its source (f16 and bf16
widen exactly first) and rounds them in integer arithmetic: a normal result rounds the mantissa
(nearest even or toward zero) and rebiases the exponent, a subnormal one is the magnitude scaled to
an integer multiple of the smallest subnormal, rounded with the 2**23 trick (exact in f32). Then
saturation, Inf and NaN as the format wants, and the sign. An upcast places exponent and mantissa
into f32 bits (subnormals through an exact multiply). A helper of the rule modules: no rule here.
"""

from __future__ import annotations

from .elementwise import with_elem
from .emit import V

# format -> (mantissa bits, exponent bias, largest finite bits, Inf: None (saturates), "nan" (is a NaN)
#            or its bits without the sign, NaN bits (no sign), unsigned zero)
_FP8 = {
    "f8E4M3FN": (3, 7, 0x7E, None, 0x7F, False),
    "f8E5M2": (2, 15, 0x7B, None, 0x7F, False),
    "f8E4M3FNUZ": (3, 8, 0x7F, "nan", 0x80, True),
    "f8E5M2FNUZ": (2, 16, 0x7F, "nan", 0x80, True),
}
_F16_RTZ = (10, 15, 0x7BFF, 0x7C00, 0x7FFF, False)  # f32 -> f16 toward zero (no overflow to Inf)
_E5_RTZ = (2, 15, 0x7B, 0x7C, 0x7F, False)  # f32 -> fp8e5 toward zero: f16 toward zero, low byte dropped
E4B15 = "f8E4M3B11FNUZ"


def convert(e, x: V, src: str, dst: str, rounding: str, ty: str) -> V:
    """`x` (of element `src`, float8 as i8 bits) as `dst`; `ty` is the result's lowered type."""
    if dst in _FP8 or dst == E4B15:
        f32 = _widen(e, x, src)
        if dst == E4B15:
            return _e4b15_from_f16_bits(e, _f16_bits(e, x, src, f32), ty)
        spec = _E5_RTZ if rounding == "rtz" else _FP8[dst]
        return _trunc(e, _encode(e, f32, spec, rounding == "rtz", 8), ty)
    if src in _FP8 or src == E4B15:
        if src == E4B15:
            h = _bitcast(e, _trunc(e, _e4b15_to_f16_bits(e, x), with_elem(ty, "i16")), with_elem(ty, "f16"))
            return h if dst == "f16" else e.op(f"arith.extf {h} : {h.type} to {ty}", ty)
        f = _decode(e, x, src)
        return f if dst == "f32" else e.op(f"arith.truncf {f} : {f.type} to {ty}", ty)  # exact
    if rounding == "rtz" and src == "f32" and dst in ("f16", "bf16"):
        i16 = with_elem(ty, "i16")
        bits = _encode(e, x, _F16_RTZ, True, 16) if dst == "f16" else _bf16_rtz(e, x)
        return _bitcast(e, _trunc(e, bits, i16), ty)
    raise ValueError(f"internal error: no fp_to_fp from {src} to {dst} (rounding {rounding!r})")


# ------------------------------------------------------------------------------------ helpers
def _c(e, value: int, like: V) -> V:
    return e.const(value, like.type)


def _op(e, name: str, a: V, b) -> V:
    b = b if isinstance(b, V) else _c(e, b, a)
    return e.op(f"arith.{name} {a}, {b} : {a.type}", a.type)


def _cmp(e, pred: str, a: V, b) -> V:
    b = b if isinstance(b, V) else _c(e, b, a)
    return e.op(f"arith.cmpi {pred}, {a}, {b} : {a.type}", with_elem(a.type, "i1"))


def _sel(e, c: V, a, b) -> V:
    like = a if isinstance(a, V) else b
    a = a if isinstance(a, V) else _c(e, a, like)
    b = b if isinstance(b, V) else _c(e, b, like)
    sig = f"{c.type}, {a.type}" if c.type.startswith("vector<") else a.type
    return e.op(f"arith.select {c}, {a}, {b} : {sig}", a.type)


def _bitcast(e, v: V, ty: str) -> V:
    return e.op(f"arith.bitcast {v} : {v.type} to {ty}", ty)


def _trunc(e, v: V, ty: str) -> V:
    return e.op(f"arith.trunci {v} : {v.type} to {ty}", ty)


def _widen(e, x: V, src: str) -> V:
    f32 = with_elem(x.type, "f32")
    return x if src == "f32" else e.op(f"arith.extf {x} : {x.type} to {f32}", f32)


def _encode(e, x: V, spec, toward_zero: bool, width: int) -> V:
    """The bits (in i32) of the f32 `x` in a narrower float format `spec` (see _FP8)."""
    man, bias, top, inf_bits, nan_bits, unsigned_zero = spec
    i32 = with_elem(x.type, "i32")
    u = _bitcast(e, x, i32)
    a = _op(e, "andi", u, 0x7FFFFFFF)
    shift = 23 - man
    if toward_zero:
        r = _op(e, "shrui", a, shift)
    else:  # nearest even: add half an ulp minus one, plus the bit that decides ties
        odd = _op(e, "andi", _op(e, "shrui", a, shift), 1)
        r = _op(e, "shrui", _op(e, "addi", _op(e, "addi", a, (1 << (shift - 1)) - 1), odd), shift)
    normal = _op(e, "subi", r, (127 - bias) << man)
    # below the smallest normal: |x| / (smallest subnormal), an integer after rounding (exact in f32)
    scaled = e.op(f"arith.mulf {_bitcast(e, a, x.type)}, {e.const(2.0 ** (bias - 1 + man), x.type)} : {x.type}",
                  x.type)
    if not toward_zero:
        magic = e.const(2.0 ** 23, x.type)
        scaled = e.op(f"arith.addf {scaled}, {magic} : {x.type}", x.type)
        scaled = e.op(f"arith.subf {scaled}, {magic} : {x.type}", x.type)
    sub = e.op(f"arith.fptosi {scaled} : {x.type} to {i32}", i32)
    bits = _sel(e, _cmp(e, "ult", a, (128 - bias) << 23), sub, normal)
    bits = _sel(e, _cmp(e, "sgt", bits, top), top, bits)
    if isinstance(inf_bits, int):
        bits = _sel(e, _cmp(e, "eq", a, 0x7F800000), inf_bits, bits)
    bits = _op(e, "ori", bits, _op(e, "shli", _op(e, "shrui", u, 31), width - 1))
    if unsigned_zero:
        bits = _sel(e, _cmp(e, "eq", bits, 1 << (width - 1)), 0, bits)
    nan = _cmp(e, "uge" if inf_bits == "nan" else "ugt", a, 0x7F800000)
    return _sel(e, nan, nan_bits, bits)


def _bf16_rtz(e, x: V) -> V:
    i32 = with_elem(x.type, "i32")
    u = _bitcast(e, x, i32)
    nan = _cmp(e, "ugt", _op(e, "andi", u, 0x7FFFFFFF), 0x7F800000)
    return _sel(e, nan, 0x7FFF, _op(e, "shrui", u, 16))


def _decode(e, b: V, src: str) -> V:
    """The f32 value of float8 bits `b` (exact; NaN as 0x7FFFFFFF)."""
    man, bias = _FP8[src][:2]
    i32, f32 = with_elem(b.type, "i32"), with_elem(b.type, "f32")
    u = e.op(f"arith.extui {b} : {b.type} to {i32}", i32)
    sign = _op(e, "shli", _op(e, "andi", u, 0x80), 24)
    mag = _op(e, "andi", u, 0x7F)
    normal = _op(e, "shli", _op(e, "addi", mag, (127 - bias) << man), 23 - man)
    frac = _op(e, "andi", mag, (1 << man) - 1)
    tiny = e.op(f"arith.mulf {e.op(f'arith.sitofp {frac} : {i32} to {f32}', f32)}, "
                f"{e.const(2.0 ** (1 - bias - man), f32)} : {f32}", f32)
    bits = _sel(e, _cmp(e, "ult", mag, 1 << man), _bitcast(e, tiny, i32), normal)
    bits = _op(e, "ori", bits, sign)
    if src == "f8E4M3FN":
        bits = _sel(e, _cmp(e, "eq", mag, 0x7F), 0x7FFFFFFF, bits)
    elif src == "f8E5M2":
        special = _cmp(e, "uge", mag, 0x7C)
        inf = _op(e, "ori", sign, 0x7F800000)
        bits = _sel(e, special, _sel(e, _cmp(e, "eq", mag, 0x7C), inf, 0x7FFFFFFF), bits)
    else:  # fnuz: 0x80 is the NaN, there is no -0 and no Inf
        bits = _sel(e, _cmp(e, "eq", u, 0x80), 0x7FFFFFFF, bits)
    return _bitcast(e, bits, f32)


def _f16_bits(e, x: V, src: str, f32: V) -> V:
    """The f16 bits (in i32) fp8e4b15 starts from: the f16 value, or f32 rounded toward zero."""
    if src != "f16":
        return _encode(e, f32, _F16_RTZ, True, 16)
    i16, i32 = with_elem(x.type, "i16"), with_elem(x.type, "i32")
    return e.op(f"arith.extui {_bitcast(e, x, i16)} : {i16} to {i32}", i32)


def _e4b15_from_f16_bits(e, h: V, ty: str) -> V:
    """Triton's f16 -> fp8e4b15: the magnitude clamped to 1.75 (0x3F00; NaN and Inf too), then the
    top 7 bits rounded half away from zero, and the sign."""
    mag = e.op(f"arith.minui {_op(e, 'andi', h, 0x7FFF)}, {_c(e, 0x3F00, h)} : {h.type}", h.type)
    r = _op(e, "shrui", _op(e, "addi", _op(e, "shli", mag, 1), 0x80), 8)
    return _trunc(e, _op(e, "ori", r, _op(e, "andi", _op(e, "shrui", h, 8), 0x80)), ty)


def _e4b15_to_f16_bits(e, b: V) -> V:
    i32 = with_elem(b.type, "i32")
    u = e.op(f"arith.extui {b} : {b.type} to {i32}", i32)
    return _op(e, "ori", _op(e, "shli", _op(e, "andi", u, 0x80), 8), _op(e, "shli", _op(e, "andi", u, 0x7F), 7))
