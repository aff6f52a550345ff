"""Integer bit operations on ascend, bit for bit against numpy (and the sim, the reference): `&`, `|`,
`^`, `~` on every integer width the vector unit holds, shifts by a constant, a runtime scalar and a
block of counts (logical for unsigned, arithmetic for signed, counts taken mod the width as the sim
does), tl.umulhi, and `^`/`~` of masks; plus what ascend refuses, at the kernel's line."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xblock
import xblock.language as xl

N = 64  # a power of 2 (arange), less than a 256-byte repeat for 8- and 16-bit lanes
TARGETS = ["sim", "ascend"]
WIDTHS = {np.int32: 32, np.uint32: 32, np.int16: 16, np.uint16: 16, np.int8: 8, np.uint8: 8}


def _edges(dt) -> np.ndarray:
    """0, -1, the extremes, signaling-NaN bit patterns of half and float (Select moves lanes as
    floats: the bits must come through), then random values."""
    info = np.iinfo(dt)
    unsigned = np.dtype(f"u{info.bits // 8}")
    edge = np.array([0, -1, info.min, info.max, 1, info.min + 1, info.max - 1, 0x55, 2], np.int64).astype(dt)
    nans = (np.array([0x7C01, 0xFC01, 0x7F800001, 0xFF800001], np.uint64) & np.uint64(np.iinfo(unsigned).max))
    rng = np.random.default_rng(info.bits)
    rand = rng.integers(info.min, info.max, N - edge.size - nans.size, dtype=np.int64, endpoint=True).astype(dt)
    return np.concatenate([edge, nans.astype(unsigned).view(dt), rand])


def _counts(width: int) -> np.ndarray:
    """Every count 0..width-1, then counts past the width (taken mod the width)."""
    c = np.arange(N) % width
    c[-8:] = [width, width + 3, 2 * width - 1, 255 % 128, 64, 65, 100, 127]
    return c


def _shl(a, c, width):
    u = a.view(f"u{a.itemsize}").astype(np.uint64) << (c.astype(np.uint64) % width)
    return u.astype(f"u{a.itemsize}").view(a.dtype)


def _shr(a, c, width):
    c = c.astype(np.int64) % width
    if np.issubdtype(a.dtype, np.signedinteger):
        return (a.astype(np.int64) >> c).astype(a.dtype)
    return (a.astype(np.uint64) >> c.astype(np.uint64)).astype(a.dtype)


def _umulhi(a, b):
    p = a.view(np.uint32).astype(np.uint64) * b.view(np.uint32).astype(np.uint64)
    return (p >> np.uint64(32)).astype(np.uint32).view(a.dtype)


@xblock.jit
def logic_kernel(a_ptr, b_ptr, out_ptr, s, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    a = xl.load(a_ptr + offs)
    b = xl.load(b_ptr + offs)
    s = s.to(a.dtype)
    xl.store(out_ptr + offs, a & b)
    xl.store(out_ptr + BLOCK + offs, a | b)
    xl.store(out_ptr + 2 * BLOCK + offs, a ^ b)
    xl.store(out_ptr + 3 * BLOCK + offs, ~a)
    xl.store(out_ptr + 4 * BLOCK + offs, a ^ s)  # a runtime scalar
    xl.store(out_ptr + 5 * BLOCK + offs, s & a)
    xl.store(out_ptr + 6 * BLOCK + offs, a | 0x5A)  # a constant
    xl.store(out_ptr + 7 * BLOCK + offs, (a ^ b) ^ a)  # b again, through two xors


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dt", list(WIDTHS), ids=lambda d: np.dtype(d).name)
def test_and_or_xor_not(target, dt):
    a, b = _edges(dt), np.roll(_edges(dt), 3)[::-1].copy()
    s = -0x3C3C3C3D
    out = np.zeros(8 * N, dt)
    logic_kernel[(1,)](a, b, out, s, BLOCK=N, target=target)
    sv = np.array(s).astype(np.int64).astype(dt)
    want = [a & b, a | b, a ^ b, ~a, a ^ sv, a & sv, a | dt(0x5A), b]
    np.testing.assert_array_equal(out.reshape(8, N), np.stack(want))


@xblock.jit
def shift_kernel(a_ptr, c_ptr, out_ptr, s, BLOCK: xl.constexpr, K: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    a = xl.load(a_ptr + offs)
    c = xl.load(c_ptr + offs)
    s = s.to(a.dtype)
    xl.store(out_ptr + offs, a << c)  # a block of counts
    xl.store(out_ptr + BLOCK + offs, a >> c)
    xl.store(out_ptr + 2 * BLOCK + offs, a << s)  # a runtime scalar
    xl.store(out_ptr + 3 * BLOCK + offs, a >> s)
    xl.store(out_ptr + 4 * BLOCK + offs, a << K)  # a constant
    xl.store(out_ptr + 5 * BLOCK + offs, a >> K)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dt", [np.int32, np.uint32, np.int16, np.uint16], ids=lambda d: np.dtype(d).name)
def test_shifts_by_a_block_a_scalar_and_a_constant(target, dt):
    width = WIDTHS[dt]
    a, c = _edges(dt), _counts(width).astype(dt)
    for s, k in [(0, 1), (width - 1, width // 2), (width + 5, width - 1), (3, 0)]:
        out = np.zeros(6 * N, dt)
        shift_kernel[(1,)](a, c, out, s, BLOCK=N, K=k, target=target)
        sc, kc = np.full(N, s), np.full(N, k)
        want = [_shl(a, c, width), _shr(a, c, width), _shl(a, sc, width), _shr(a, sc, width),
                _shl(a, kc, width), _shr(a, kc, width)]
        np.testing.assert_array_equal(out.reshape(6, N), np.stack(want), err_msg=f"s={s} K={k}")


@xblock.jit
def shift_scalar_kernel(a_ptr, out_ptr, s, BLOCK: xl.constexpr, K: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    a = xl.load(a_ptr + offs)
    s = s.to(a.dtype)
    xl.store(out_ptr + offs, a << s)
    xl.store(out_ptr + BLOCK + offs, a >> s)
    xl.store(out_ptr + 2 * BLOCK + offs, a << K)
    xl.store(out_ptr + 3 * BLOCK + offs, a >> K)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dt", [np.int8, np.uint8], ids=lambda d: np.dtype(d).name)
def test_int8_shifts_by_a_scalar(target, dt):
    a = _edges(dt)
    for s in [0, 2, 3, 4, 5, 6, 7, 8, 11]:  # (1 would be specialized into a constant)
        k = (s * 3) % 8
        out = np.zeros(4 * N, dt)
        shift_scalar_kernel[(1,)](a, out, s, BLOCK=N, K=k, target=target)
        sc, kc = np.full(N, s), np.full(N, k)
        want = [_shl(a, sc, 8), _shr(a, sc, 8), _shl(a, kc, 8), _shr(a, kc, 8)]
        np.testing.assert_array_equal(out.reshape(4, N), np.stack(want), err_msg=f"s={s} K={k}")


@xblock.jit
def scalar_bits_kernel(out_ptr, s, t, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    zero = offs * 0
    u = s.to(xl.uint32, bitcast=True)
    xl.store(out_ptr + offs, zero + (s << t))
    xl.store(out_ptr + BLOCK + offs, zero + (s >> t))
    xl.store(out_ptr + 2 * BLOCK + offs, zero + (u >> t.to(xl.uint32)).to(xl.int32, bitcast=True))
    xl.store(out_ptr + 3 * BLOCK + offs, zero + (s ^ t))
    xl.store(out_ptr + 4 * BLOCK + offs, zero + (u >> 7).to(xl.int32, bitcast=True))
    xl.store(out_ptr + 5 * BLOCK + offs, zero + xl.umulhi(s, t))


@pytest.mark.parametrize("target", TARGETS)
def test_scalar_shifts_and_umulhi(target):
    for s, t in [(-5, 3), (-2**31, 31), (2**31 - 1, 0), (-1, 33), (0x1234567, 17), (-7, 64)]:
        out = np.zeros(6 * 8, np.int32)
        scalar_bits_kernel[(1,)](out, s, t, BLOCK=8, target=target)
        a, c = np.array([s], np.int32), np.array([t])
        want = [_shl(a, c, 32), _shr(a, c, 32), _shr(a.view(np.uint32), c, 32).view(np.int32), a ^ np.int32(t),
                _shr(a.view(np.uint32), np.array([7]), 32).view(np.int32), _umulhi(a, np.array([t], np.int32))]
        np.testing.assert_array_equal(out.reshape(6, 8), np.repeat(np.stack(want), 8, axis=1), err_msg=f"{s} {t}")


@xblock.jit
def umulhi_kernel(a_ptr, b_ptr, out_ptr, s, BLOCK: xl.constexpr, C: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    a = xl.load(a_ptr + offs)
    b = xl.load(b_ptr + offs)
    s = s.to(a.dtype, bitcast=True)
    xl.store(out_ptr + offs, xl.umulhi(a, b))
    xl.store(out_ptr + BLOCK + offs, xl.umulhi(a, C))  # a constant
    xl.store(out_ptr + 2 * BLOCK + offs, xl.umulhi(s, a))  # a runtime scalar
    xl.store(out_ptr + 3 * BLOCK + offs, xl.umulhi(a, a) ^ (a * b))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dt", [np.uint32, np.int32], ids=lambda d: np.dtype(d).name)
def test_umulhi(target, dt):
    a = _edges(dt)
    top = np.array([0xFFFFFFFF, 0xFFFFFFFF, 0x80000000, 0xFFFFFFFF, 0x7FFFFFFF, 3, 0x10000, 0xFFFF], np.uint32)
    b = np.concatenate([top, _edges(np.uint32)[:N - top.size]]).view(dt)
    s = -0x32C60D2F  # 0xCD39F2D1 as int32
    c = np.array([0xD2511F53], np.uint32).view(dt)  # Philox's multiplier
    out = np.zeros(4 * N, dt)
    umulhi_kernel[(1,)](a, b, out, s, BLOCK=N, C=int(c[0]), target=target)
    sv = np.full(N, s, np.int32).view(dt)
    with np.errstate(over="ignore"):
        want = [_umulhi(a, b), _umulhi(a, np.repeat(c, N)), _umulhi(sv, a), _umulhi(a, a) ^ (a * b)]
    np.testing.assert_array_equal(out.reshape(4, N), np.stack(want))


@xblock.jit
def mask_xor_kernel(a_ptr, b_ptr, out_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    a = xl.load(a_ptr + offs)
    b = xl.load(b_ptr + offs)
    m = a > b
    xl.store(out_ptr + offs, xl.where(m ^ (a < 0.0), 1.0, 0.0))
    xl.store(out_ptr + BLOCK + offs, xl.where(~m, 1.0, 0.0))
    xl.store(out_ptr + 2 * BLOCK + offs, xl.where(m ^ (offs < 37), 1.0, 0.0))  # a structured mask


@pytest.mark.parametrize("target", TARGETS)
def test_xor_and_not_of_masks(target):
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    out = np.zeros(3 * N, np.float32)
    mask_xor_kernel[(1,)](a, b, out, BLOCK=N, target=target)
    m = a > b
    want = [m ^ (a < 0), ~m, m ^ (np.arange(N) < 37)]
    np.testing.assert_array_equal(out.reshape(3, N), np.stack(want).astype(np.float32))


@xblock.jit
def int8_block_shift_kernel(a_ptr, c_ptr, out_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    a, c = xl.load(a_ptr + offs), xl.load(c_ptr + offs)
    xl.store(out_ptr + offs, a << c)
    xl.store(out_ptr + BLOCK + offs, a >> c)
    xl.store(out_ptr + 2 * BLOCK + offs, (a.to(xl.uint8, bitcast=True) >> c.to(xl.uint8)).to(xl.int8, bitcast=True))


def test_int8_shifts_by_a_block_of_counts():
    """In int16 lanes (fuzz seed 12, kernels 3 and two more): counts mod 8, as the sim."""
    rng = np.random.default_rng(9)
    a = rng.integers(-128, 128, 64).astype(np.int8)
    c = rng.integers(0, 12, 64).astype(np.int8)
    outs = {}
    for target in ("sim", "ascend"):
        outs[target] = np.zeros(192, np.int8)
        int8_block_shift_kernel[(1,)](a, c, outs[target], BLOCK=64, target=target)
    m = (c % 8).astype(np.int8)
    want = np.concatenate([(a.astype(np.int32) << m).astype(np.int8), a >> m,
                           (a.view(np.uint8) >> m.astype(np.uint8)).view(np.int8)])
    np.testing.assert_array_equal(outs["sim"], want)
    np.testing.assert_array_equal(outs["ascend"], want)


@xblock.jit
def int16_umulhi_kernel(a_ptr, out_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    a = xl.load(a_ptr + offs)
    xl.store(out_ptr + offs, xl.umulhi(a, a))


@pytest.mark.parametrize("kernel, dt, n_args, says", [
    (int16_umulhi_kernel, np.int16, 2, "umulhi needs int32, int64, uint32 or uint64 operands (as in Triton)"),
])
def test_what_ascend_refuses_is_said_at_the_line(kernel, dt, n_args, says):
    arrays = [np.zeros(64, dt) for _ in range(n_args)]
    with pytest.raises(xblock.CompilationError) as e:
        kernel[(1,)](*arrays, BLOCK=64, target="ascend")
    msg = str(e.value)
    assert "test_bitwise.py:" in msg and says in msg and "Traceback" not in msg, msg


def test_the_cpp_uses_the_16_bit_logic_and_the_shift_instructions():
    sig = {"a_ptr": "*i32", "b_ptr": "*i32", "c_ptr": "*i32", "out_ptr": "*i32", "s": "i32"}
    shifts = xblock.compile(shift_kernel, target="ascend", signature={k: v for k, v in sig.items() if k != "b_ptr"},
                            constexprs={"BLOCK": 64, "K": 3}).asm["cpp"]
    assert "ShiftLeft(" in shifts and "ShiftRight(" in shifts and ".ReinterpretCast<uint32_t>()" in shifts
    logic = xblock.compile(logic_kernel, target="ascend", signature={k: v for k, v in sig.items() if k != "c_ptr"},
                           constexprs={"BLOCK": 64}).asm["cpp"]
    calls = re.findall(r"\b(And|Or|Not)\(([^,]*),", logic)
    assert {c for c, _ in calls} == {"And", "Or", "Not"}
    assert all(dst.endswith(".ReinterpretCast<uint16_t>()") for _, dst in calls)  # 16-bit lanes only on A2


MODEL_CPP = r"""
#include <string>
#include "emu_launch.h"
using namespace AscendC;
static int32_t gm[8];
static int64_t got[8];

template <typename T>
static void Shift(const std::string& api, T x, T count, int64_t* out) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> calc;
    pipe.InitBuffer(calc, 1024);
    LocalTensor<T> a = calc.Get<T>(256 / sizeof(T)), b = calc.GetWithOffset<T>(256 / sizeof(T), 512);
    Duplicate(a, x, 256 / sizeof(T));
    if (api == "ShiftLeft") ShiftLeft(b, a, count, 256 / sizeof(T));
    if (api == "ShiftRight") ShiftRight(b, a, count, 256 / sizeof(T));
    if constexpr (sizeof(T) == 2) {  // Not has 16-bit lanes only
        if (api == "Not") Not(b, a, 256 / sizeof(T));
    }
    event_t e = static_cast<event_t>(pipe.FetchEventID(HardEvent::V_S));
    SetFlag<HardEvent::V_S>(e);
    WaitFlag<HardEvent::V_S>(e);
    *out = static_cast<int64_t>(b.GetValue(3));
}

extern "C" int run_case(const char* api, int type, int64_t x, int64_t count, char* err, int errlen) {
    uint8_t* bufs[1] = {reinterpret_cast<uint8_t*>(gm)};
    uint64_t sizes[1] = {sizeof(gm)};
    const char* names[1] = {"gm"};
    uint32_t soc[3] = {192 * 1024, 184 * 1024, 1};
    uint64_t counters[6];
    std::string a = api;
    return xbemu::run(1, bufs, sizes, names, 1, soc, err, errlen, counters, [&]() {
        if (type == 0) Shift<int32_t>(a, int32_t(x), int32_t(count), got);
        if (type == 1) Shift<uint32_t>(a, uint32_t(x), uint32_t(count), got);
        if (type == 2) Shift<int16_t>(a, int16_t(x), int16_t(count), got);
        if (type == 3) Shift<uint16_t>(a, uint16_t(x), uint16_t(count), got);
    });
}
extern "C" int64_t result() { return got[0]; }
"""
TYPES = {"int32": 0, "uint32": 1, "int16": 2, "uint16": 3}


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    import ctypes
    import shutil
    import subprocess

    from xblock.backends.ascend.model.launch import EMU_DIR

    if shutil.which("g++") is None:
        pytest.skip("the AscendC model is built with g++")
    d = tmp_path_factory.mktemp("bits_model")
    (d / "m.cpp").write_text(MODEL_CPP)
    subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", "-O0", "-shared", "-fPIC", "-I", str(EMU_DIR),
                    str(d / "m.cpp"), "-o", str(d / "m.so")], check=True, capture_output=True, text=True)
    so = ctypes.CDLL(str(d / "m.so"))
    so.run_case.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_char_p,
                            ctypes.c_int]
    so.result.restype = ctypes.c_int64

    def run(api, dtype, x, count=0):
        err = ctypes.create_string_buffer(1024)
        if so.run_case(api.encode(), TYPES[dtype], x, count, err, 1024):
            return err.value.decode()
        return so.result()

    return run


@pytest.mark.parametrize("api, dtype, x, count, want", [
    # ShiftLeft/ShiftRight: logical on unsigned lanes, arithmetic on signed ones (asc-devkit docs)
    ("ShiftLeft", "uint16", 0b1010101010101010, 1, 0b0101010101010100),
    ("ShiftLeft", "int16", -0b0101010101010110, 1, -0b0010101010101100),  # 1010...10 -> 1101...00: sign kept
    ("ShiftLeft", "int16", -0b0101010101010110, 3, -0b0010101010110000),  # -> 1101010101010000
    ("ShiftLeft", "int32", -1, 31, -2**31),
    ("ShiftLeft", "int32", 1, 31, 0),  # the sign bit is not shifted into
    ("ShiftLeft", "uint32", 1, 31, 2**31),
    ("ShiftLeft", "uint32", 5, 32, 0),
    ("ShiftRight", "uint16", 0b1010101010101010, 1, 0b0101010101010101),
    ("ShiftRight", "int16", -0b0101010101010110, 1, -0b0010101010101011),  # -> 1101010101010101
    ("ShiftRight", "int16", -0b0101010101010110, 3, -0b0000101010101011),  # -> 1111010101010101
    ("ShiftRight", "int32", -2**31, 32, -1),
    ("ShiftRight", "uint32", 2**32 - 1, 32, 0),
    ("Not", "int16", 9, 0, -10),
    ("Not", "uint16", 0, 0, 0xFFFF),
])
def test_the_model_shifts_as_the_docs_say(model, api, dtype, x, count, want):
    assert model(api, dtype, x, count) == want


@pytest.mark.parametrize("api, dtype, count", [("ShiftLeft", "int16", 17), ("ShiftRight", "uint32", 33),
                                               ("ShiftLeft", "int32", -1)])
def test_the_model_refuses_counts_past_the_width(model, api, dtype, count):
    msg = model(api, dtype, 1, count)
    assert isinstance(msg, str) and f"{api}: scalarValue {count} outside [0, " in msg, msg


@pytest.mark.parametrize("call, says", [
    ("And(i32, i32, i32, 64)", "And: int16_t/uint16_t only"),  # A2: 32-bit lanes only through ReinterpretCast
    ("Not(i32, i32, 64)", "Not: int16_t/uint16_t only"),
    ("ShiftLeft(f32, f32, 1.0f, 64)", "ShiftLeft: int16_t/uint16_t/int32_t/uint32_t only"),
    ("Mul(u32, u32, u32, 64)", "Mul: data type not supported"),  # no unsigned Mul on A2
])
def test_the_model_does_not_compile_what_a2_lacks(tmp_path, call, says):
    import shutil
    import subprocess

    from xblock.backends.ascend.model.launch import EMU_DIR

    if shutil.which("g++") is None:
        pytest.skip("the AscendC model is built with g++")
    src = tmp_path / "bad.cpp"
    src.write_text('#include "kernel_operator.h"\nusing namespace AscendC;\n'
                   "void f(LocalTensor<int32_t> i32, LocalTensor<uint32_t> u32, LocalTensor<float> f32) {\n"
                   f"    {call};\n}}\n")
    r = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-I", str(EMU_DIR), str(src)], capture_output=True,
                       text=True)
    assert r.returncode != 0 and says in r.stderr, r.stderr[-2000:]
