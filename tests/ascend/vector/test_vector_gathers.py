"""Loads with quasi-affine offsets as one UB window and the vector `Gather`, on ascend (issue #18).

TorchInductor's kernels load a bias with `x0 = xindex % 128`, split heads with `x0 + 16 * x2 + 96 *
x1 + 1248 * x3` (`x1 = (xindex // 16) % 13`), read transposed tiles `x0 + 32 * r0_1` and rows of 13
from a tile of 16. None of these is rows of contiguous elements; before this change each ran as a
scalar GetValue/SetValue loop with a warning. They now copy the span the active lanes touch into
UB (one DataCopyPad) and fill the tile with `Gather` (backends/ascend/vector/gathers.py): no warning, and
`Gather` in the generated code. Each is checked against numpy at boundary sizes, with masks, `other`
and programs whose lanes are all off. Offsets the window cannot hold (a divisor that is a kernel
argument, a span past the window) stay scalar loops with their warning. Planted kernels check the
CPU model's `Gather` against the facts of asc-devkit's Gather.md (byte offsets, misuse refused).
"""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

import xblock
from tests.ascend.inductor_gpt import triton_poi_fused_clone_2 as clone_kernel  # the head split
from tests.ascend.model.test_model_fidelity import build, kernel_source, metadata
from xblock.errors import ExecutionError

triton = pytest.importorskip("triton")
tl = triton.language

SCALAR = "GetValue/SetValue loop"


def _cdiv(a, b):
    return -(-a // b)


def _launch(kernel, grid, args, **meta) -> list[str]:
    """Launch on ascend; the texts of the warnings it gave."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        xblock.jit(kernel)[grid](*args, target="ascend", **meta)
    return [str(x.message) for x in w]


def _cpp(kernel, sig, **consts) -> str:
    return xblock.compile(kernel, target="ascend", signature=sig, constexprs=consts).asm["cpp"]


# ----- the kernels, as TorchInductor writes them -----------------------------------------------------

@triton.jit
def bias_kernel(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    # h + b with b a row of 128 broadcast over the flat index (triton_poi_fused_gelu_5's bias)
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex % 128
    tmp0 = tl.load(in_ptr0 + (xindex), xmask)
    tmp1 = tl.load(in_ptr1 + (x0), xmask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (xindex), tmp0 + tmp1, xmask)


@triton.jit
def bias_other_kernel(in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    # the bias alone, stored unmasked: lanes past xnumel show `other` (whole programs of them too)
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:]
    tmp1 = tl.load(in_ptr1 + (xindex % 128), xindex < xnumel, other=5.0)
    tl.store(out_ptr0 + (xindex), tmp1)


@triton.jit
def column_sums_kernel(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    # sums over the rows of a [r0_numel, 32] tensor, x over its columns: tiles read transposed
    # (triton_red_fused_native_layer_norm_backward_13)
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    x0 = xindex
    _tmp1 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_1 = r0_offset + r0_base
        r0_mask = r0_1 < r0_numel
        tmp0 = tl.load(in_ptr0 + (x0 + 32 * r0_1), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        _tmp1 = _tmp1 + tmp0
    tl.store(out_ptr0 + (x0), tl.sum(_tmp1, 1)[:, None], xmask)


@triton.jit
def row_max_kernel(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr):
    # rows of 13 in a tile of 16: the rows overlap the next ones' (triton_per_fused__softmax_*)
    R0_BLOCK: tl.constexpr = 16
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_mask = r0_index < r0_numel
    tmp0 = tl.load(in_ptr0 + (r0_index + 13 * xindex), r0_mask & xmask, other=float("-inf"))
    tl.store(out_ptr0 + (xindex), tl.max(tmp0, 1)[:, None], xmask)


@triton.jit
def token_ids_kernel(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    # int64 ids of rows of 32, one per lane (triton_poi_fused_add_embedding_0's `in_ptr0 + x1`)
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x1 = xindex // 32
    tmp0 = tl.load(in_ptr0 + (x1), xmask, other=-7)
    tl.store(out_ptr0 + (xindex), tmp0, xmask)


@triton.jit
def runtime_divisor_kernel(x_ptr, out_ptr, n, d, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs // d, mask=mask), mask=mask)


@triton.jit
def wide_stride_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + (offs % 64) * 1000, mask=mask), mask=mask)


# ----- the vector path ------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 127, 128, 129, 1000])
def test_bias_broadcast(n):
    rng = np.random.default_rng(n)
    h, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(128).astype(np.float32)
    out = np.zeros(n, np.float32)
    assert _launch(bias_kernel, (_cdiv(n, 256),), (h, b, out, n), XBLOCK=256) == []
    np.testing.assert_array_equal(out, h + b[np.arange(n) % 128])


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.int16, np.int32])
def test_bias_types_and_other(dtype):
    """16- and 32-bit elements; lanes past xnumel, and a whole program of them, take `other`."""
    n, block = 200, 128
    b = (np.arange(128) * 3 - 100).astype(dtype)
    out = np.zeros(3 * block, dtype)
    assert _launch(bias_other_kernel, (3,), (b, out, n), XBLOCK=block) == []
    want = np.where(np.arange(3 * block) < n, b[np.arange(3 * block) % 128], dtype(5))
    np.testing.assert_array_equal(out.astype(np.float64), want.astype(np.float64))


@pytest.mark.parametrize("part", [0, 1, 2])
def test_head_split(part):
    """[B, T, 3, H, D] = [2, 13, 3, 2, 16] to [B, H, T, D], one of q, k, v (an offset into qkv)."""
    rng = np.random.default_rng(part)
    qkv = rng.standard_normal((2, 13, 3, 2, 16)).astype(np.float32)
    out = np.zeros(2 * 2 * 13 * 16, np.float32)
    assert _launch(clone_kernel, (_cdiv(out.size, 256),), (qkv.reshape(-1)[32 * part:], out, out.size),
                   XBLOCK=256) == []
    np.testing.assert_array_equal(out, qkv[:, :, part].transpose(0, 2, 1, 3).reshape(-1))


@pytest.mark.parametrize("rows", [1, 15, 16, 17, 40])
def test_transposed_tiles(rows):
    x = np.random.default_rng(rows).standard_normal((rows, 32)).astype(np.float32)
    out = np.zeros(32, np.float32)
    assert _launch(column_sums_kernel, (4,), (x, out, 32, rows), XBLOCK=8, R0_BLOCK=16) == []
    np.testing.assert_allclose(out, x.sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rows", [1, 7, 8, 9, 26])
def test_overlapping_rows(rows):
    x = np.random.default_rng(rows).standard_normal(rows * 13).astype(np.float32)
    out = np.zeros(rows, np.float32)
    assert _launch(row_max_kernel, (_cdiv(rows, 8),), (x, out, rows, 13), XBLOCK=8) == []
    np.testing.assert_array_equal(out, x.reshape(rows, 13).max(1))


@pytest.mark.parametrize("n", [5, 32 * 13 + 5])
def test_int64_ids(n):
    """64-bit elements: Gather of their 32-bit word pairs."""
    ids = np.random.default_rng(n).integers(-2**40, 2**40, _cdiv(n, 32)).astype(np.int64)
    out = np.zeros(n, np.int64)
    assert _launch(token_ids_kernel, (_cdiv(n, 128),), (ids, out, n), XBLOCK=128) == []
    np.testing.assert_array_equal(out, ids[np.arange(n) // 32])


def test_the_generated_code_gathers():
    f32 = "*fp32"
    cases = [(bias_kernel, {"in_ptr0": f32, "in_ptr1": f32, "out_ptr0": f32, "xnumel": "i32"}, {"XBLOCK": 256}),
             (clone_kernel, {"in_ptr0": f32, "out_ptr0": f32, "xnumel": "i32"}, {"XBLOCK": 256}),
             (column_sums_kernel, {"in_ptr0": f32, "out_ptr0": f32, "xnumel": "i32", "r0_numel": "i32"},
              {"XBLOCK": 8, "R0_BLOCK": 16})]
    for kernel, sig, consts in cases:
        src = _cpp(kernel, sig, **consts)
        assert src.count("Gather(") == 1 and "DataCopyPad(" in src, kernel.__name__
        assert "GetValue(i" not in src  # no lane loop reads GM


def test_the_sim_agrees():
    n = 300
    rng = np.random.default_rng(1)
    h, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(128).astype(np.float32)
    outs = {}
    for target in ("sim", "ascend"):
        outs[target] = np.zeros(n, np.float32)
        xblock.jit(bias_kernel)[(_cdiv(n, 256),)](h, b, outs[target], n, target=target, XBLOCK=256)
    np.testing.assert_array_equal(outs["ascend"], outs["sim"])


# ----- what stays a scalar loop ----------------------------------------------------------------------

def test_runtime_divisor_stays_a_scalar_loop():
    n, d = 100, 3
    x = np.arange(_cdiv(n, d), dtype=np.float32)
    out = np.zeros(n, np.float32)
    warns = _launch(runtime_divisor_kernel, (1,), (x, out, n, d), BLOCK=128)
    assert any(SCALAR in w for w in warns), warns
    np.testing.assert_array_equal(out, x[np.arange(n) // d])


def test_a_span_past_the_window_stays_a_scalar_loop():
    x = np.arange(64 * 1000, dtype=np.float32)
    out = np.zeros(100, np.float32)
    warns = _launch(wide_stride_kernel, (1,), (x, out, 100), BLOCK=128)
    assert any(SCALAR in w for w in warns), warns
    np.testing.assert_array_equal(out, x[(np.arange(100) % 64) * 1000])


# ----- the CPU model's Gather (planted kernels) -------------------------------------------------------

GATHER_BODY = """    GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer((__gm__ float *)x);
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    const int32_t mode = tiling.mode;
    if (GetBlockIdx() != 0) return;
    LocalTensor<float> src = buf.GetWithOffset<float>(64, 0);
    LocalTensor<float> dst = buf.GetWithOffset<float>(64, mode == 3 ? 128 : 256);
    LocalTensor<uint32_t> off = buf.GetWithOffset<uint32_t>(64, 512);
    DataCopy(src, xGm, 64);
    for (int32_t i = 0; i < 64; i++) {
        off.SetValue(i, static_cast<uint32_t>((63 - i) * 4));
    }
    if (mode == 1) off.SetValue(5, 64 * 4);
    if (mode == 2) off.SetValue(5, 6);
    event_t e = static_cast<event_t>(pipe.FetchEventID(HardEvent::S_V));
    SetFlag<HardEvent::S_V>(e);
    WaitFlag<HardEvent::S_V>(e);
    event_t f = static_cast<event_t>(pipe.FetchEventID(HardEvent::MTE2_V));
    SetFlag<HardEvent::MTE2_V>(f);
    WaitFlag<HardEvent::MTE2_V>(f);
    // planted.py:9: g = gather(x, offsets)
    Gather(dst, src, off, mode == 4 ? 4 : 0, 60);
    event_t g = static_cast<event_t>(pipe.FetchEventID(HardEvent::V_MTE3));
    SetFlag<HardEvent::V_MTE3>(g);
    WaitFlag<HardEvent::V_MTE3>(g);
    DataCopy(xGm[64], dst, 64);
"""


@pytest.fixture(scope="module")
def planted_gather():
    meta = metadata("gath", ["x"], [("mode", 0)], [0])
    launch = build("gath", kernel_source("gath", "GM_ADDR x", GATHER_BODY), meta)

    def run(mode):
        x = np.concatenate([np.arange(64, dtype=np.float32), np.zeros(64, np.float32)])
        launch((1, 1, 1), [x, mode])
        return x[64:124]

    return run


def test_model_gather_reads_bytes_from_the_base(planted_gather):
    """srcOffset is bytes from the source's start (Gather.md, its pseudo-code): dst[i] = src[63 - i]."""
    np.testing.assert_array_equal(planted_gather(0), np.arange(63, 3, -1, dtype=np.float32))


@pytest.mark.parametrize("mode, what", [(1, "reads element 64 past the source's 64 elements"),
                                        (2, "= 6 bytes is not a multiple of the element size"),
                                        (3, "the source and the destination share memory"),
                                        (4, "reads element 64 past the source's 64 elements")])
def test_model_gather_refuses_misuse(planted_gather, mode, what):
    with pytest.raises(ExecutionError) as e:
        planted_gather(mode)
    msg = str(e.value)
    assert msg.startswith("/planted/planted.py:") and "Gather: " in msg and what in msg, msg[:500]
