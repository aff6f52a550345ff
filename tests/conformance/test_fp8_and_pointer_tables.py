"""float8 dtypes and casts, and pointers made from integers (pointer tables), in unmodified
@triton.jit kernels on every target.

- fp8 casts are bit-exact to Triton 3.6 compiled for sm_90: `golden/fp8_sm90.npz` holds what an
  H200 computed (every f16 and bf16 value to fp8e4nv/fp8e5/fp8e4b15, 565,248 structured f32 values,
  every byte of each fp8 type back to f16/bf16/f32; `tests/cuda/fp8_ground_truth.py` made it).
- a quantize/dequantize pair with a per-row scale, on numpy float8 (ml_dtypes) arrays;
- a grouped GEMM whose groups come from int64 tables of addresses (`arr.ctypes.data`), on ascend too
  (through the Cube unit; tests/ascend/lower/test_pointer_tables.py has the rest of ascend's pointer tables),
  and int64 arithmetic on addresses (`ptr.to(tl.int64)`);
- the errors: an address outside every argument of the launch (sim), ascend (no fp8), fp8 types cuda
  lacks, unsupported rounding.
"""

import os
from types import SimpleNamespace

import ml_dtypes
import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile

triton = pytest.importorskip("triton")
tl = triton.language

# NaN inputs make numpy warn where it converts them (the sim's bf16 rounding, the references)
pytestmark = [pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")]
RUN = ["sim", "cpu"]
GOLDEN = np.load(os.path.join(os.path.dirname(__file__), "golden", "fp8_sm90.npz"))
FP8 = {"e4nv": tl.float8e4nv, "e5": tl.float8e5, "e4b15": tl.float8e4b15}


def golden_f32_inputs():
    """The f32 values of the golden record, in its order: sign x exponent x top 10 mantissa bits x low
    13 bits (exact values, ties of every fp8 format, the halfway points past them)."""
    sign = np.array([0, 1], np.uint32)
    exps = np.array(list(range(104, 146)) + [0, 1, 254, 255], np.uint32)
    top = np.arange(1024, dtype=np.uint32)
    low = np.array([0, 1, 0x0FFF, 0x1000, 0x1001, 0x1FFF], np.uint32)
    bits = (sign[:, None, None, None] << 31) | (exps[None, :, None, None] << 23) | (top[None, None, :, None] << 13) \
        | low[None, None, None, :]
    return bits.ravel().view(np.float32)


ALL16 = np.arange(65536, dtype=np.uint32).astype(np.uint16)


# ------------------------------------------------------------------------------------ kernels
@triton.jit
def narrow_bits(x_ptr, bits_ptr, n, DST: tl.constexpr, ROUNDING: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask).to(DST, fp_downcast_rounding=ROUNDING)
    if DST.primitive_bitwidth == 8:
        tl.store(bits_ptr + offs, y.to(tl.uint8, bitcast=True), mask=mask)
    else:
        tl.store(bits_ptr + offs, y.to(tl.uint16, bitcast=True), mask=mask)


@triton.jit
def widen_bits(bits_ptr, out_ptr, n, SRC: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(bits_ptr + offs, mask=mask).to(SRC, bitcast=True)
    tl.store(out_ptr + offs, x.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def quantize_rows(x_ptr, q_ptr, scale_ptr, n_cols, stride, BLOCK: tl.constexpr):
    """Per-row absmax scaling into float8: q = x / scale, scale = absmax / largest fp8 value."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    q_dtype: tl.constexpr = q_ptr.dtype.element_ty
    if q_dtype == tl.float8e4nv:
        top: tl.constexpr = 448.0
    else:
        top: tl.constexpr = 57344.0
    scale = tl.maximum(tl.max(tl.abs(x), axis=0), 1e-12) / top
    tl.store(q_ptr + row * stride + cols, (x / scale).to(q_dtype), mask=mask)
    tl.store(scale_ptr + row, scale)


@triton.jit
def dequantize_rows(q_ptr, scale_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    q = tl.load(q_ptr + row * stride + cols, mask=mask, other=0.0)
    y = q.to(tl.float32) * tl.load(scale_ptr + row)
    tl.store(out_ptr + row * stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def narrow_store(x_ptr, q_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(q_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)  # the store converts


@triton.jit
def narrow_load(q_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(q_ptr + offs, mask=mask).to(tl.float32), mask=mask)


@triton.jit
def widen_rtz(x_ptr, y_ptr):
    tl.store(y_ptr, tl.load(x_ptr).to(tl.float32, fp_downcast_rounding="rtz"))


@triton.jit
def fp8_in_dead_branch(x_ptr, y_ptr, n, OUT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if OUT == tl.float8e4nv or OUT == tl.float8e5 or OUT.is_fp8():
        x = tl.clamp(x, -448.0, 448.0).to(tl.float8e4b15).to(OUT)
    elif OUT == tl.float8e4b8 or OUT == tl.float8e5b16:
        x = x.to(OUT)
    tl.store(y_ptr + offs, x.to(OUT), mask=mask)


@triton.jit
def grouped_matmul(a_table, b_table, c_table, dims, n_groups, a_all, b_all, c_all,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C_g = A_g @ B_g for every group g: M, N, K and the three matrices' addresses from tables.

    Programs walk the tiles of all groups in turn (tile t, t + programs, ...). `a_all`, `b_all` and
    `c_all` are the buffers the tables point into: the kernel never names them, but passing them
    lets the simulator check every access against them.
    """
    tile = tl.program_id(0)
    first = 0
    for g in range(n_groups):
        M = tl.load(dims + 3 * g)
        N = tl.load(dims + 3 * g + 1)
        K = tl.load(dims + 3 * g + 2)
        a_ptr = tl.load(a_table + g).to(tl.pointer_type(tl.float16))
        b_ptr = tl.load(b_table + g).to(tl.pointer_type(tl.float16))
        c_ptr = tl.load(c_table + g).to(tl.pointer_type(tl.float32))
        tiles_n = tl.cdiv(N, BN)
        count = tl.cdiv(M, BM) * tiles_n
        while tile >= first and tile < first + count:
            local = tile - first
            rows = (local // tiles_n) * BM + tl.arange(0, BM)
            cols = (local % tiles_n) * BN + tl.arange(0, BN)
            acc = tl.zeros((BM, BN), tl.float32)
            for k in range(0, K, BK):
                ks = k + tl.arange(0, BK)
                a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K),
                            other=0.0)
                b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N),
                            other=0.0)
                acc = tl.dot(a, b, acc)
            tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))
            tile += tl.num_programs(0)
        first += count


@triton.jit
def address_arithmetic(x_ptr, out_ptr, addr_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    base = x_ptr.to(tl.int64)
    if tl.program_id(0) == 0:
        tl.store(addr_ptr, base)
        tl.store(addr_ptr + 1, (base % 16 == 0).to(tl.int64) + 2 * x_ptr.to(tl.int1).to(tl.int64))
    ptrs = (base + offs.to(tl.int64) * 4).to(tl.pointer_type(tl.float32))
    tl.store(out_ptr + offs, tl.load(ptrs, mask=mask) * 2, mask=mask)


@triton.jit
def row_from_table(table, out_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    src = tl.cast(tl.load(table + row), tl.pointer_type(tl.float32))
    offs = tl.arange(0, N)
    tl.store(out_ptr + row * N + offs, tl.load(src + offs))


# ------------------------------------------------------------------------------------ reference
def saturate_to(x, dtype):
    """Triton's conversion to fp8e4nv/fp8e5 on sm_90: nearest even, saturating, NaN -> 0x7F."""
    x = np.asarray(x, np.float32)
    top = np.float32(float(ml_dtypes.finfo(dtype).max))
    bits = np.where(np.isnan(x), x, np.clip(x, -top, top)).astype(dtype).view(np.uint8)
    return np.where(np.isnan(x), np.uint8(0x7F), bits).view(dtype)


def launch(kernel, n, *args, block=1024, **meta):
    xblock.jit(kernel)[(triton.cdiv(n, block),)](*args, n, BLOCK=block, **meta)


# ------------------------------------------------------------------------------------ dtypes
def test_fp8_dtypes_are_named_as_in_triton():
    import xblock.language as xl

    for ns in (tl, xl):
        for name, (man, bias) in {"float8e4nv": (3, 7), "float8e5": (2, 15), "float8e4b15": (3, 15),
                                  "float8e4b8": (3, 8), "float8e5b16": (2, 16)}.items():
            dt = getattr(ns, name)
            assert dt.primitive_bitwidth == 8 and dt.is_fp8() and dt.is_floating()
            assert (dt.fp_mantissa_width, dt.exponent_bias) == (man, bias)
    assert not xl.float8e4nv.is_standard_floating() and xl.float8e4nv.is_fp8e4nv() and not xl.float8e5.is_fp8e4nv()
    assert str(xl.float8e5) == "float8e5" and xl.core.dtype("fp8e4b15") == xl.float8e4b15


@pytest.mark.parametrize("target", RUN + ["ascend"])
def test_fp8_names_in_a_constexpr_false_branch_compile_everywhere(target):
    x = np.linspace(-3, 3, 37).astype(np.float32)
    y = np.zeros_like(x)
    launch(fp8_in_dead_branch, 37, x, y, OUT=tl.float32, block=64, target=target)
    np.testing.assert_array_equal(y, x)
    assert "cubin" in precompile(fp8_in_dead_branch, (x, y, 37), {"OUT": tl.float16, "BLOCK": 64}).asm


# ------------------------------------------------------------------------------------ casts, bit-exact
@pytest.mark.parametrize("target", RUN)
@pytest.mark.parametrize("dst", ["e4nv", "e5", "e4b15"])
def test_downcasts_to_fp8_match_sm90_bit_for_bit(target, dst):
    for src, x in (("f16", ALL16.view(np.float16)), ("bf16", ALL16.view(ml_dtypes.bfloat16)),
                   ("f32", golden_f32_inputs())):
        want = GOLDEN.get(f"{src}_to_{dst}")
        if want is None:  # bf16 -> fp8e4b15 is not Triton's (xblock goes through f32)
            continue
        bits = np.zeros(x.size, np.uint8)
        launch(narrow_bits, x.size, x, bits, DST=FP8[dst], ROUNDING=None, target=target)
        bad = np.flatnonzero(bits != want)
        first = bad[:4]
        assert bad.size == 0, f"{src}->{dst}: {bad.size} differ, first {x[first]} -> {bits[first]} not {want[first]}"


@pytest.mark.parametrize("target", RUN)
def test_rounding_toward_zero_matches_sm90(target):
    x = golden_f32_inputs()
    bits = np.zeros(x.size, np.uint8)
    launch(narrow_bits, x.size, x, bits, DST=tl.float8e5, ROUNDING="rtz", target=target)
    np.testing.assert_array_equal(bits, GOLDEN["f32_to_e5_rtz"])
    # f32 -> f16/bf16 toward zero: never Inf from a finite value, NaN stays NaN
    for dst, np_dt in ((tl.float16, np.float16), (tl.bfloat16, ml_dtypes.bfloat16)):
        bits = np.zeros(x.size, np.uint16)
        launch(narrow_bits, x.size, x, bits, DST=dst, ROUNDING="rtz", target=target)
        got = bits.view(np_dt).astype(np.float64)
        exact = x.astype(np.float64)
        finite = np.isfinite(x)
        assert np.all(np.abs(got[finite]) <= np.abs(exact[finite])) and np.all(np.isfinite(got[finite]))
        nearest = x.astype(np_dt).astype(np.float64)
        step_ok = (got == nearest) | (np.abs(nearest) > np.abs(exact))  # nearest, unless that rounded away
        assert np.all(step_ok[finite]) and np.all(np.isnan(got[np.isnan(x)]))
        assert np.array_equal(got[np.isinf(x)], exact[np.isinf(x)])


@pytest.mark.parametrize("target", RUN)
@pytest.mark.parametrize("src", ["e4nv", "e5", "e4b15"])
def test_upcasts_from_fp8_are_exact(target, src):
    b = np.arange(256, dtype=np.uint8)
    for dst, np_dt, view in (("f16", np.float16, np.uint16), ("bf16", ml_dtypes.bfloat16, np.uint16),
                             ("f32", np.float32, np.uint32)):
        out = np.zeros(256, np_dt)
        launch(widen_bits, 256, b, out, SRC=FP8[src], block=256, target=target)
        want = GOLDEN[f"{src}_to_{dst}"].view(np_dt)
        special = np.zeros(256, bool)
        if src == "e5" and dst == "bf16":
            # Triton's sm_90 routine makes fp8e5 Inf and NaN finite in bf16 (65536, ...); xblock goes through
            # f32 and keeps them
            special = (np.arange(256) & 0x7F) >= 0x7C
            np.testing.assert_array_equal(out[special].astype(np.float32)[[0, 4]], [np.inf, -np.inf])
            assert np.isnan(out[special].astype(np.float32)[[1, 2, 3, 5, 6, 7]]).all()
        nan = np.isnan(want.astype(np.float32)) & ~special
        keep = ~nan & ~special
        np.testing.assert_array_equal(out.view(view)[keep], want.view(view)[keep])
        assert np.isnan(out.astype(np.float32)[nan]).all()


@pytest.mark.parametrize("target", RUN)
@pytest.mark.parametrize("fmt", [ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2fnuz], ids=["e4b8", "e5b16"])
def test_amd_fp8_types_saturate_and_keep_nan(target, fmt):
    """fp8e4b8/fp8e5b16 as Triton's AMD routine: nearest even, finite values saturate, Inf/NaN -> NaN."""
    x = np.concatenate([golden_f32_inputs()[::7], [np.inf, -np.inf, np.nan, -0.0, 1e30, -1e-30]]).astype(np.float32)
    q = np.zeros(x.size, fmt)
    launch(narrow_store, x.size, x, q, target=target)
    top = np.float32(float(ml_dtypes.finfo(fmt).max))
    want = np.where(np.isfinite(x), np.clip(x, -top, top), x).astype(fmt)
    np.testing.assert_array_equal(q.view(np.uint8), want.view(np.uint8))
    back = np.zeros(x.size, np.float32)
    launch(narrow_load, x.size, q, back, target=target)
    np.testing.assert_array_equal(back, want.astype(np.float32))


# ------------------------------------------------------------------------------------ quantization
@pytest.mark.parametrize("target", RUN)
@pytest.mark.parametrize("fmt", [ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2], ids=["e4nv", "e5"])
@pytest.mark.parametrize("shape,src", [((1, 1), np.float32), ((3, 37), np.float16), ((5, 128), ml_dtypes.bfloat16),
                                       ((2, 129), np.float32)])
def test_quantize_and_dequantize_with_a_row_scale(target, fmt, shape, src):
    rows, cols = shape
    rng = np.random.default_rng(rows * cols)
    x = (rng.standard_normal(shape) * np.exp(rng.uniform(-6, 6, (rows, 1)))).astype(src)
    x[0, 0] = -x[0, 0] if cols == 1 else x[0, 0]
    block = triton.next_power_of_2(cols)
    q, scale = np.zeros(shape, fmt), np.zeros(rows, np.float32)
    xblock.jit(quantize_rows)[(rows,)](x, q, scale, cols, cols, BLOCK=block, target=target)
    x32 = x.astype(np.float32)
    top = np.float32(float(ml_dtypes.finfo(fmt).max))
    want_scale = np.maximum(np.abs(x32).max(1), np.float32(1e-12)) / top
    np.testing.assert_array_equal(scale, want_scale)
    np.testing.assert_array_equal(q.view(np.uint8), saturate_to(x32 / want_scale[:, None], fmt).view(np.uint8))
    out = np.zeros(shape, np.float32)
    xblock.jit(dequantize_rows)[(rows,)](q, scale, out, cols, cols, BLOCK=block, target=target)
    np.testing.assert_array_equal(out, q.astype(np.float32) * scale[:, None])
    # the round trip loses at most half a float8 step
    rel = np.abs(out - x32) / np.maximum(np.abs(x32), 1e-30)
    half_step = 2.0 ** -4 if fmt is ml_dtypes.float8_e4m3fn else 2.0 ** -3
    assert rel[np.abs(x32) > want_scale[:, None] * 2].max() <= half_step


def test_fp8_kernels_compile_for_cuda_as_triton_writes_them():
    x = np.zeros(64, np.float32)
    bits = np.zeros(64, np.uint8)
    for dst, rounding in ((tl.float8e4nv, None), (tl.float8e5, None), (tl.float8e5, "rtz"), (tl.float8e4b15, None)):
        ck = precompile(narrow_bits, (x, bits, 64), {"DST": dst, "ROUNDING": rounding, "BLOCK": 64})
        assert ck.asm["cubin"][:4] == b"\x7fELF"
        if dst == tl.float8e4b15:  # Triton's own routine, in integer ops (fp8e4b15 is an i8 in TTIR)
            assert "arith.minui" in ck.asm["ttir"] and "f8E4M3B11FNUZ" not in ck.asm["ttir"]
        else:
            assert "tt.fp_to_fp" in ck.asm["ttir"] and ("rounding = rtz" in ck.asm["ttir"]) == (rounding == "rtz")
    q = np.zeros((4, 64), ml_dtypes.float8_e4m3fn)
    ck = precompile(quantize_rows, (q.astype(np.float16), q, np.zeros(4, np.float32), 64, 64), {"BLOCK": 64})
    assert "!tt.ptr<f8E4M3FN>" in ck.asm["ttir"]


# ------------------------------------------------------------------------------------ pointer tables
def _groups(shapes, seed=0):
    """Packed A, B, C buffers and int64 tables of each group's address in them (bytes from .ctypes.data)."""
    rng = np.random.default_rng(seed)
    a_all = np.zeros(sum(m * k for m, n, k in shapes), np.float16)
    b_all = np.zeros(sum(k * n for m, n, k in shapes), np.float16)
    c_all = np.zeros(sum(m * n for m, n, k in shapes), np.float32)
    tables, views = ([], [], []), []
    offsets = [0, 0, 0]
    for m, n, k in shapes:
        parts = []
        for i, (buf, size) in enumerate(((a_all, m * k), (b_all, k * n), (c_all, m * n))):
            part = buf[offsets[i]:offsets[i] + size]
            tables[i].append(buf.ctypes.data + offsets[i] * buf.itemsize)
            offsets[i] += size
            parts.append(part)
        parts[0][:] = rng.standard_normal(m * k)
        parts[1][:] = rng.standard_normal(k * n)
        views.append(parts)
    tabs = [np.array(t, np.int64) for t in tables]
    dims = np.array(shapes, np.int32).ravel()
    return tabs, dims, (a_all, b_all, c_all), views


@pytest.mark.parametrize("target", RUN + ["ascend"])
def test_grouped_matmul_reads_its_groups_from_pointer_tables(target):
    shapes = [(33, 17, 40), (64, 64, 64), (1, 5, 3), (70, 31, 16), (16, 1, 1)]
    tabs, dims, bufs, views = _groups(shapes)
    xblock.jit(grouped_matmul)[(6,)](*tabs, dims, len(shapes), *bufs, BM=16, BN=16, BK=16, target=target)
    for (m, n, k), (a, b, c) in zip(shapes, views):
        want = a.reshape(m, k).astype(np.float32) @ b.reshape(k, n).astype(np.float32)
        np.testing.assert_allclose(c.reshape(m, n), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", RUN)
@pytest.mark.parametrize("n", [1, 100, 256])
def test_int64_arithmetic_on_addresses(target, n):
    x = np.arange(n, dtype=np.float32) - 7
    out, addr = np.zeros(n, np.float32), np.zeros(2, np.int64)
    launch(address_arithmetic, n, x, out, addr, block=128, target=target)
    np.testing.assert_array_equal(out, 2 * x)
    assert addr[0] == x.ctypes.data  # the host address, as tensor.data_ptr() is on a GPU
    assert addr[1] == (x.ctypes.data % 16 == 0) + 2


def test_pointer_tables_compile_for_cuda_as_triton_writes_them():
    tabs, dims, bufs, _ = _groups([(16, 16, 16)])
    ck = precompile(grouped_matmul, (*tabs, dims, 1, *bufs), {"BM": 16, "BN": 16, "BK": 16})
    assert "tt.int_to_ptr" in ck.asm["ttir"] and ck.asm["cubin"][:4] == b"\x7fELF"
    x = np.zeros(64, np.float32)
    ck = precompile(address_arithmetic, (x, x, np.zeros(2, np.int64), 64), {"BLOCK": 64})
    assert "tt.ptr_to_int" in ck.asm["ttir"]


# ------------------------------------------------------------------------------------ errors
def test_sim_reports_an_address_outside_every_argument():
    # in an object's attribute, not a variable: the launch does not find them (runtime/tables.py)
    held = SimpleNamespace(rows=[np.arange(8, dtype=np.float32) + 10 * i for i in range(3)])
    out = np.zeros(24, np.float32)
    table = np.array([r.ctypes.data for r in held.rows], np.int64)
    # unchecked, the cpu reads any host address; checked (the default), it refuses as the sim does
    xblock.jit(row_from_table)[(3,)](table, out, N=8, target="cpu", bounds_check=False)
    np.testing.assert_array_equal(out, np.concatenate(held.rows))
    with pytest.raises(xblock.ExecutionError, match=r"test_fp8_and_pointer_tables.py:\d+: out-of-bounds load in "
                       r"program \(0, 0, 0\): .*outside every argument buffer"):
        xblock.jit(row_from_table)[(3,)](table, out, N=8, target="cpu")
    with pytest.raises(xblock.ExecutionError, match=r"test_fp8_and_pointer_tables.py:\d+: out-of-bounds load in "
                       r"program \(0, 0, 0\): .*address 0x[0-9a-f]+ \(a pointer made from an integer\), outside "
                       r"every argument buffer"):
        xblock.jit(row_from_table)[(3,)](table, out, N=8, target="sim")


def test_sim_reports_a_table_address_past_the_end_of_an_argument():
    tabs, dims, bufs, _ = _groups([(4, 4, 4), (4, 4, 4)])
    tabs[0][1] += 8 * 2  # the second group's A starts 8 elements late: its last row runs past a_all
    with pytest.raises(xblock.ExecutionError, match=r"out-of-bounds load in program \(\d+, 0, 0\): an unmasked lane "
                       r"accesses element 32 of argument 'a_all' \(32 elements of 2 bytes\)"):
        xblock.jit(grouped_matmul)[(2,)](*tabs, dims, 2, *bufs, BM=16, BN=16, BK=16, target="sim")


def test_ascend_reports_a_table_address_past_the_end_of_an_argument():
    tabs, dims, bufs, _ = _groups([(4, 4, 4), (4, 4, 4)])
    tabs[0][1] += 8 * 2  # as above; on ascend the Cube's GM->L1 copy of A runs past a_all
    before = [b.copy() for b in bufs]
    # the model's Cube copies carry no call site: the error names the kernel's def line
    with pytest.raises(xblock.ExecutionError, match=r"test_fp8_and_pointer_tables.py:\d+: grouped_matmul: the "
                       r"AscendC model stopped the kernel: block \d+: .*reads \d+ B of GM at byte offset 64 of "
                       r"'a_all' \(64 B\)"):
        xblock.jit(grouped_matmul)[(2,)](*tabs, dims, 2, *bufs, BM=16, BN=16, BK=16, target="ascend")
    for b, was in zip(bufs, before):
        np.testing.assert_array_equal(b, was)


def test_ascend_refuses_fp8_at_the_line():
    x = np.zeros((2, 64), np.float16)
    with pytest.raises(xblock.CompilationError, match=r"test_fp8_and_pointer_tables.py:\d+:\d+: ascend: float8 types "
                       r"\(fp8e4nv\) are not supported on ascend: the 910B vector unit has no 8-bit float type"):
        xblock.jit(quantize_rows)[(2,)](x, np.zeros((2, 64), ml_dtypes.float8_e4m3fn), np.zeros(2, np.float32), 64,
                                        64, BLOCK=64, target="ascend")


@pytest.mark.parametrize("dst,rounding,message", [
    (tl.float8e4nv, "rtz", r"fp_downcast_rounding='rtz' from float32 to float8e4nv is not supported: as in "
                           r"Triton's NVIDIA backend, a downcast rounds toward zero only from float32 to float16, "
                           r"bfloat16 or float8e5"),
    (tl.float8e5, "rd", r"Invalid rounding mode: rd"),
])
def test_unsupported_rounding_is_an_error_at_the_line(dst, rounding, message):
    x = np.zeros(16, np.float32)
    with pytest.raises(xblock.CompilationError, match=r"test_fp8_and_pointer_tables.py:\d+:\d+: .*" + message):
        launch(narrow_bits, 16, x, np.zeros(16, np.uint8), DST=dst, ROUNDING=rounding, target="sim")
    with pytest.raises(xblock.CompilationError, match=r"fp_downcast_rounding should be set only for truncating"):
        xblock.jit(widen_rtz)[(1,)](np.zeros(1, np.float16), np.zeros(1, np.float32), target="sim")


@triton.jit
def fp8_add(x_ptr, y_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    tl.store(y_ptr + tl.arange(0, 16), x + x)


@triton.jit
def fp8_sum(x_ptr, y_ptr):
    tl.store(y_ptr, tl.sum(tl.load(x_ptr + tl.arange(0, 16)), 0))


@triton.jit
def fp8_dot(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    b = tl.load(b_ptr + r[:, None] * N + r[None, :])
    tl.store(c_ptr + r[:, None] * N + r[None, :], tl.dot(a, b))


@triton.jit
def int32_to_pointer(table, out_ptr):
    p = tl.load(table).to(tl.pointer_type(tl.float32))
    tl.store(out_ptr, tl.load(p))


def test_fp8_arithmetic_and_narrow_addresses_are_errors():
    q = np.zeros(16, ml_dtypes.float8_e4m3fn)
    with pytest.raises(xblock.CompilationError, match=r"arithmetic on float8e4nv values is not supported: convert them "
                       r"first \(x.to\(tl.float32\)\)"):
        xblock.jit(fp8_add)[(1,)](q, q.copy(), target="sim")
    with pytest.raises(xblock.CompilationError, match=r"sum of float8e4nv values is not supported"):
        xblock.jit(fp8_sum)[(1,)](q, q.copy(), target="sim")
    with pytest.raises(xblock.CompilationError, match=r"only a 64-bit integer holds an address"):
        xblock.jit(int32_to_pointer)[(1,)](np.zeros(1, np.int32), np.zeros(1, np.float32), target="sim")


def test_fp8_dot_runs_on_sim_and_is_an_error_on_cpu():
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal((16, 16)).astype(ml_dtypes.float8_e4m3fn) for _ in range(2))
    c = np.zeros((16, 16), np.float32)
    xblock.jit(fp8_dot)[(1,)](a, b, c, N=16, target="sim")
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-6, atol=1e-6)
    with pytest.raises(xblock.CompilationError, match=r"cpu: dot of float8 blocks is not supported on cpu"):
        xblock.jit(fp8_dot)[(1,)](a, b, c, N=16, target="cpu")


def test_cuda_refuses_fp8_types_triton_lowers_only_on_amd_or_newer_gpus():
    x = np.zeros(64, np.float32)
    with pytest.raises(xblock.CompilationError, match=r"cuda: fp8e4b8 \(f8E4M3FNUZ\) is not supported by Triton's "
                       r"NVIDIA backend, only on AMD GPUs"):
        precompile(narrow_store, (x, np.zeros(64, ml_dtypes.float8_e4m3fnuz), 64), {"BLOCK": 64})
    with pytest.raises(xblock.CompilationError, match=r"cuda: fp8e4nv \(f8E4M3FN\) needs compute capability 8.9 or "
                       r"newer; compiling for sm_80"):
        precompile(narrow_store, (x, np.zeros(64, ml_dtypes.float8_e4m3fn), 64), {"BLOCK": 64}, arch=80)
