"""`xb.fp_to_fp` in numpy: float8 conversions and downcasts rounded toward zero, bit for bit as
Triton 3.6 compiles them for an H100/H200 (sm_90), checked there over every f16 and bf16 value and
a million f32 values (tests/conformance/fp8_sm90.npz keeps part of that record).

- f16/bf16/f32 -> fp8e4nv (f8E4M3FN), fp8e5 (f8E5M2): round to nearest even from the exact value,
  saturating: any finite or infinite value past the largest finite one becomes it (`cvt.rn.satfinite`);
  NaN becomes 0x7F.
- f32 -> fp8e5 rounded toward zero: through f16 rounded toward zero, then the low 8 bits dropped
  (finite values saturate to 57344, Inf stays Inf, NaN becomes 0x7F).
- f32 -> f16/bf16 rounded toward zero: finite values never overflow to Inf; NaN becomes 0x7FFF.
- fp8e4b8 (f8E4M3FNUZ), fp8e5b16 (f8E5M2FNUZ), which Triton lowers on AMD GPUs only: round to nearest
  even, finite values saturating, Inf and NaN to NaN (0x80), -0 to +0 (Triton's AMD routine).
- fp8e4b15 (f8E4M3B11FNUZ in xb; no NaN, no Inf, bias 15): Triton's own routine. Downcasts go
  through f16 (f32 -> f16 rounds toward zero first), clamp the magnitude to 1.75 (NaN and Inf too)
  and round half away from zero; upcasts place the 7 magnitude bits into an f16.
- float8 -> f16/f32: exact; NaN becomes the positive NaN of all-ones payload.
"""

from __future__ import annotations

import numpy as np

from .program import FP8

_NV = ("f8E4M3FN", "f8E5M2")
_AMD = ("f8E4M3FNUZ", "f8E5M2FNUZ")
E4B15 = "f8E4M3B11FNUZ"


def fp_to_fp(a: np.ndarray, src: str, dst: str, rounding: str) -> np.ndarray:
    """`a` (held as program.py holds `src`: bf16 in float32) converted to `dst` (held likewise)."""
    with np.errstate(all="ignore"):
        if dst in FP8:
            return _to_fp8(np.asarray(a), src, dst, rounding)
        if src in FP8:
            return _from_fp8(np.asarray(a), src, dst)
        if rounding == "rtz" and src == "f32":
            return _rtz_f16(a) if dst == "f16" else _rtz_bf16(a)
    raise ValueError(f"internal error: no fp_to_fp from {src} to {dst} (rounding {rounding!r})")


def _to_fp8(a, src, dst, rounding):
    t = np.dtype(FP8[dst])
    if dst == E4B15:
        h = a.astype(np.float16) if src == "f16" else _rtz_f16(a.astype(np.float32))
        return f16_to_e4b15(h).view(t)
    x = a.astype(np.float32)  # exact: the sources are f16, bf16 (held in f32) or f32
    nan = np.isnan(x)
    if dst in _NV and rounding == "rtz":
        bits = (_rtz_f16(x).view(np.uint16) >> 8).astype(np.uint8)
        return np.where(nan, np.uint8(0x7F), bits).view(t)
    top = np.float32(float(np.finfo(t).max))
    if dst in _NV:
        bits = np.where(nan, x, np.clip(x, -top, top)).astype(t).view(np.uint8)
        return np.where(nan, np.uint8(0x7F), bits).view(t)
    # fnuz: ml_dtypes already turns Inf and NaN into 0x80 and -0 into +0
    return np.where(np.isfinite(x), np.clip(x, -top, top), x).astype(t)


def _from_fp8(a, src, dst):
    out = np.float16 if dst == "f16" else np.float32
    if src == E4B15:
        return e4b15_to_f16(a.view(np.uint8)).astype(out)
    x = a.astype(np.float32)
    canonical = np.array(0x7FFF if out is np.float16 else 0x7FFFFFFF,
                         dtype=np.uint16 if out is np.float16 else np.uint32).view(out)
    return np.where(np.isnan(x), canonical, x.astype(out))


def _rtz_f16(x) -> np.ndarray:
    """float32 -> float16 rounded toward zero (NaN -> 0x7FFF, as the GPU's cvt.rz gives it)."""
    x = np.asarray(x, dtype=np.float32)
    r = x.astype(np.float16)  # nearest even: one step too far from zero where it rounded up
    up = np.abs(r.astype(np.float32)) > np.abs(x)
    bits = r.view(np.uint16)
    bits = np.where(up, bits - np.uint16(1), bits).astype(np.uint16)  # Inf - 1 step is the largest finite
    return np.where(np.isnan(x), np.uint16(0x7FFF), bits).view(np.float16)


def _rtz_bf16(x) -> np.ndarray:
    """float32 -> bfloat16 rounded toward zero, held in float32 (NaN -> 0x7FFF)."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
    return np.where(np.isnan(x), np.uint32(0x7FFF0000), bits).view(np.float32)


def f16_to_e4b15(h) -> np.ndarray:
    """Triton's fp16 -> fp8e4b15: |x| clamped to 1.75 (NaN too), rounded half away from zero."""
    u = np.asarray(h, dtype=np.float16).view(np.uint16).astype(np.uint32)
    mag = np.minimum(u & 0x7FFF, 0x3F00)
    return (((u >> 8) & 0x80) | ((mag * 2 + 0x80) >> 8)).astype(np.uint8)


def e4b15_to_f16(b) -> np.ndarray:
    """Triton's fp8e4b15 -> fp16: the sign, and the 7 other bits as f16 bits 13..7 (exact)."""
    b = np.asarray(b, dtype=np.uint8).astype(np.uint16)
    return (((b & 0x80) << 8) | ((b & 0x7F) << 7)).astype(np.uint16).view(np.float16)
