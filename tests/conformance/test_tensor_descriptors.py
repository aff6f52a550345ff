"""Tensor descriptors (`tl.make_tensor_descriptor`, `desc.load/store/atomic_add`, host `TensorDescriptor`
arguments) in unmodified @triton.jit kernels in the style of Triton's TMA tutorials: out-of-bounds
reads are zero (or NaN), out-of-bounds writes are dropped, as TMA does. Run on sim, cpu and ascend
against numpy (exact), compiled to cubin for cuda (TMA on sm_90: tests/cuda/test_tma.py)."""

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import TensorSpec, precompile
from xblock.runtime.args import TensorDescriptor

triton = pytest.importorskip("triton")
tl = triton.language

RUN_TARGETS = ["sim", "cpu", "ascend"]
B = 16
EDGES = [(1, 4), (B - 1, B + 1), (B, B), (B + 1, 2 * B + 3)]


@triton.jit
def _shifted_abs(desc, m_off, n_off):
    return tl.abs(desc.load([m_off, n_off])) + 1.0


@triton.jit
def inplace_abs(in_out_ptr, M, N, M_BLOCK: tl.constexpr, N_BLOCK: tl.constexpr):
    desc = tl.make_tensor_descriptor(in_out_ptr, shape=[M, N], strides=[N, 1], block_shape=[M_BLOCK, N_BLOCK])
    moffset = tl.program_id(0) * M_BLOCK
    noffset = tl.program_id(1) * N_BLOCK
    desc.store([moffset, noffset], _shifted_abs(desc, moffset, noffset))


@triton.jit
def matmul_descriptors(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    offs_am = tl.program_id(0) * BLOCK_M
    offs_bn = tl.program_id(1) * BLOCK_N
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([offs_am, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, offs_bn])
        accumulator = tl.dot(a, b, accumulator)
    c_desc.store([offs_am, offs_bn], accumulator.to(tl.float16))


@triton.jit
def split_k_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr):
    """Each program multiplies one K slice and adds its tile into C with a descriptor atomic_add."""
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    om = tl.program_id(0) * BLOCK_M
    on = tl.program_id(1) * BLOCK_N
    ok = tl.program_id(2) * BLOCK_K
    part = tl.dot(tl.load_tensor_descriptor(a_desc, [om, ok]), tl.load_tensor_descriptor(b_desc, [ok, on]))
    c_desc.atomic_add([om, on], part)


@triton.jit
def overlapping_counts(counts_ptr, M, START, STEP, BM: tl.constexpr):
    desc = tl.make_tensor_descriptor(counts_ptr, [M], [1], [BM])
    desc.atomic_add([START + tl.program_id(0) * STEP], tl.full((BM,), 1, tl.int32))


@triton.jit
def shifted_tiles(x_ptr, out_ptr, M, N, SHIFT: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                  PAD: tl.constexpr):
    """Tile (i, j) of the window starting at (-SHIFT, -SHIFT): partly before the tensor, partly past it."""
    src = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN], padding_option=PAD)
    width = tl.num_programs(1) * BN
    dst = tl.make_tensor_descriptor(out_ptr, [tl.num_programs(0) * BM, width], [width, 1], [BM, BN])
    pm = tl.program_id(0) * BM
    pn = tl.program_id(1) * BN
    tl.store_tensor_descriptor(dst, [pm, pn], src.load([pm - SHIFT, pn - SHIFT]))


@triton.jit
def host_descriptor_copy(x_desc, y_desc, scale, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0) * BM
    pn = tl.program_id(1) * BN
    y_desc.store([pm, pn], x_desc.load([pm, pn]) * scale)


@triton.jit
def gather_rows(x_ptr, idx_ptr, out_ptr, M, N, COL, R: tl.constexpr, BN: tl.constexpr):
    desc = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [1, BN])
    rows = tl.load(idx_ptr + tl.arange(0, R))
    tile = desc.gather(rows, COL)
    out = tl.make_tensor_descriptor(out_ptr, [M, N], [N, 1], [1, BN])
    out.scatter(tile * 10, rows, COL)


def _grid(m, n):
    return (triton.cdiv(m, B), triton.cdiv(n, B))


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("m,n", EDGES)
def test_inplace_abs(target, m, n):
    x = np.random.default_rng(m * n).standard_normal((m, n)).astype(np.float32)
    want = np.abs(x) + 1
    xblock.jit(inplace_abs)[_grid(m, n)](x, m, n, M_BLOCK=B, N_BLOCK=B, target=target)
    np.testing.assert_array_equal(x, want)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("m,n,k", [(1, 8, 8), (B + 1, B - 1 + 8, 2 * B + 8), (2 * B, B, 3 * B)])
def test_descriptor_matmul(target, m, n, k):
    rng = np.random.default_rng(m + n + k)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)  # small integers: every sum exact
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    c = np.full((m, n), 99, np.float16)
    xblock.jit(matmul_descriptors)[_grid(m, n)](a, b, c, m, n, k, BLOCK_M=B, BLOCK_N=B, BLOCK_K=B, target=target)
    np.testing.assert_array_equal(c, (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16))


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("m,n,k", [(B - 1, B + 8, 3 * B + 5), (B, B, B)])
def test_split_k_with_descriptor_atomic_add(target, m, n, k):
    rng = np.random.default_rng(k)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)  # small integers: every sum exact, in any order
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    c = np.ones((m, n), np.float32)
    grid = (*_grid(m, n), triton.cdiv(k, B))
    xblock.jit(split_k_matmul)[grid](a, b, c, m, n, k, BLOCK_M=B, BLOCK_N=B, BLOCK_K=B, target=target)
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32) + 1)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("m,start,step", [(1, 0, 1), (B + 1, 0, B - 1), (3 * B, 2, 5), (B + 1, -1, 3)])
def test_overlapping_integer_atomic_add(target, m, start, step):
    programs = triton.cdiv(m - start, step)
    counts = np.zeros(m, np.int32)
    run = xblock.jit(overlapping_counts)[(programs,)]
    run(counts, m, start, step, BM=B, target=target)
    want = np.zeros(m, np.int32)
    for p in range(programs):
        lo = start + p * step
        want[max(lo, 0):max(lo + B, 0)] += 1  # elements outside [0, m) are dropped
    np.testing.assert_array_equal(counts, want)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("pad", ["zero", "nan"])
@pytest.mark.parametrize("m,n,shift", [(1, 4, 0), (B - 1, B + 1, 0), (B + 1, 2 * B + 3, 3)])
def test_out_of_bounds_reads(target, pad, m, n, shift):
    x = np.random.default_rng(n).standard_normal((m, n)).astype(np.float32)
    gm, gn = _grid(m + shift, n + shift)
    out = np.full((gm * B, gn * B), 5, np.float32)
    run = xblock.jit(shifted_tiles)[(gm, gn)]
    run(x, out, m, n, SHIFT=shift, BM=B, BN=B, PAD=pad, target=target)  # ascend: the copy starts in bounds
    want = np.full_like(out, np.nan if pad == "nan" else 0.0)
    want[shift:shift + m, shift:shift + n] = x
    np.testing.assert_array_equal(out, want)


class _HostArray(np.ndarray):
    """A numpy array with `data_ptr()`, so that Triton's own TensorDescriptor accepts it."""

    def data_ptr(self):
        return self.ctypes.data


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("m,n", [(1, 4), (B + 1, 12)])
@pytest.mark.parametrize("kind", ["xblock", "triton"])
def test_host_tensor_descriptor_arguments(target, m, n, kind):
    from triton.tools.tensor_descriptor import TensorDescriptor as TritonDescriptor

    x = np.random.default_rng(m).standard_normal((m, n)).astype(np.float32)
    y = np.full((m, n + 4), 7, np.float32)  # a wider buffer: its last 4 columns lie outside the descriptor
    if kind == "triton":
        xd = TritonDescriptor(x.view(_HostArray), [m, n], [n, 1], [B, 8])
        yd = TritonDescriptor(y.view(_HostArray), [m, n], [n + 4, 1], [B, 8])
    else:
        xd, yd = TensorDescriptor.from_tensor(x, [B, 8]), TensorDescriptor(y, [m, n], [n + 4, 1], [B, 8])
    xblock.jit(host_descriptor_copy)[(triton.cdiv(m, B), triton.cdiv(n, 8))](xd, yd, 3.0, BM=B, BN=8, target=target)
    np.testing.assert_array_equal(y[:, :n], 3 * x)
    np.testing.assert_array_equal(y[:, n:], 7)


def test_host_descriptor_block_shape_is_part_of_the_specialization():
    kernel = xblock.jit(host_descriptor_copy)
    x, y = np.ones((8, 8), np.float32), np.zeros((8, 8), np.float32)
    for bn in (4, 8):
        kernel[(1, 8 // bn)](TensorDescriptor.from_tensor(x, [8, bn]), TensorDescriptor.from_tensor(y, [8, bn]), 2.0,
                             BM=8, BN=bn, target="sim")
    assert len(kernel.kernels) == 2
    np.testing.assert_array_equal(y, 2 * x)


@pytest.mark.parametrize("target", ["sim", "cpu"])
def test_gather_and_scatter(target):
    m, n = 20, 40
    x = np.arange(m * n, dtype=np.float32).reshape(m, n)
    out = np.zeros_like(x)
    rows = np.array([3, 0, 19, 7, 25, 11, 2, 5], np.int32)  # row 25 is out of bounds: read 0, not written
    xblock.jit(gather_rows)[(1,)](x, rows, out, m, n, 30, R=8, BN=16, target=target)
    want = np.zeros_like(x)
    for r in rows[rows < m]:
        want[r, 30:40] = 10 * x[r, 30:40]
    np.testing.assert_array_equal(out, want)


def test_compiles_for_cuda():
    a, b, c = np.zeros((64, 96), np.float16), np.zeros((96, 48), np.float16), np.zeros((64, 48), np.float16)
    ck = precompile(matmul_descriptors, (a, b, c, 64, 48, 96), {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32})
    assert "cubin" in ck.asm and "tt.dot" in ck.asm["ttir"]
    x, y = TensorSpec((33, 17), "float32"), TensorSpec((33, 17), "float32")
    ck = precompile(host_descriptor_copy, (TensorDescriptor(x, [33, 17], [17, 1], [32, 16]),
                                           TensorDescriptor(y, [33, 17], [17, 1], [32, 16]), 2.0),
                    {"BM": 32, "BN": 16})
    assert "cubin" in ck.asm
    assert ck.metadata["arg_names"][:3] == ["x_desc_base", "x_desc_shape0", "x_desc_shape1"]
    c32 = np.zeros((64, 48), np.float32)
    assert "cubin" in precompile(split_k_matmul, (a.astype(np.float32), b.astype(np.float32), c32, 64, 48, 96),
                                 {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}).asm
