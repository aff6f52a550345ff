"""xb-strip-mine on xb IR: the chunk shapes and loops it makes, the split kernels' results on the sim
against the unsplit ones (boundary sizes, reductions, scans, phases, loops), and its refusals."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir

import xblock
import xblock.language as xl
from xblock.backends import get_backend
from xblock.dialects import xb
from xblock.passes import strip_mine, verify


# ----------------------------------------------------------------------------- kernels
@xblock.jit
def scale_shift(x_ptr, y_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    mask = offs < n
    x = xl.load(x_ptr + offs, mask=mask)
    xl.store(y_ptr + offs, x * 2.0 + 1.0, mask=mask)


@xblock.jit
def tile_reductions(x_ptr, rsum_ptr, cmax_ptr, m, n, BM: xl.constexpr, BN: xl.constexpr):
    rows = xl.arange(0, BM)
    cols = xl.arange(0, BN)
    mask = (rows[:, None] < m) & (cols[None, :] < n)
    x = xl.load(x_ptr + rows[:, None] * n + cols[None, :], mask=mask, other=0.0)
    xl.store(rsum_ptr + rows, xl.sum(x, axis=1), mask=rows < m)
    xl.store(cmax_ptr + cols, xl.max(xl.where(mask, x, -float("inf")), axis=0), mask=cols < n)


@xblock.jit
def full_reductions(x_ptr, out_ptr, idx_ptr, n, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    mask = offs < n
    x = xl.load(x_ptr + offs, mask=mask, other=0.0)
    xl.store(out_ptr, xl.sum(x))
    xl.store(out_ptr + 1, xl.max(xl.where(mask, x, -float("inf"))))
    xl.store(out_ptr + 2, xl.min(xl.where(mask, x, float("inf"))))
    xl.store(idx_ptr, xl.argmax(xl.where(mask, x, -float("inf")), axis=0))
    xl.store(idx_ptr + 1, xl.argmin(xl.where(mask, x, float("inf")), axis=0))


@xblock.jit
def _add(a, b):
    return a + b


@xblock.jit
def other_folds(x_ptr, i_ptr, out_ptr, iout_ptr, hist_ptr, n, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    mask = offs < n
    x = xl.load(x_ptr + offs, mask=mask, other=0.0)
    i = xl.load(i_ptr + offs, mask=mask, other=0)
    xl.store(out_ptr, xl.reduce(x, 0, _add))
    xl.store(iout_ptr, xl.xor_sum(i, axis=0))
    xl.store(iout_ptr + 1, xl.max(i, axis=0))
    xl.store(hist_ptr + xl.arange(0, 16), xl.histogram(i & 15, 16, mask=mask))


@xblock.jit
def scans(x_ptr, y_ptr, z_ptr, n, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    mask = offs < n
    x = xl.load(x_ptr + offs, mask=mask, other=0.0)
    xl.store(y_ptr + offs, xl.cumsum(x, axis=0), mask=mask)
    xl.store(z_ptr + offs, xl.cumsum(x, axis=0, reverse=True), mask=mask)


@xblock.jit
def softmax(out_ptr, in_ptr, n_rows, n_cols, BLOCK: xl.constexpr):
    for row in xl.range(xl.program_id(0), n_rows, xl.num_programs(0)):
        cols = xl.arange(0, BLOCK)
        x = xl.load(in_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
        num = xl.exp(x - xl.max(x, axis=0))
        xl.store(out_ptr + row * n_cols + cols, num / xl.sum(num, axis=0), mask=cols < n_cols)


@xblock.jit
def layer_norm(y_ptr, x_ptr, w_ptr, mean_ptr, n, BLOCK: xl.constexpr):
    row = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    mask = cols < n
    x = xl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(xl.float32)
    mean = xl.sum(x, axis=0) / n
    xm = xl.where(mask, x - mean, 0.0)
    rstd = 1.0 / xl.sqrt(xl.sum(xm * xm, axis=0) / n + 1e-5)
    xl.store(mean_ptr + row, mean)
    w = xl.load(w_ptr + cols, mask=mask)
    xl.store(y_ptr + row * n + cols, (xm * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


@xblock.jit
def carried(x_ptr, out_ptr, n, k, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    acc = xl.zeros([BLOCK], xl.float32)
    for i in range(k):
        acc += xl.load(x_ptr + i * n + offs, mask=offs < n, other=0.0)
    if k > 1:
        acc = acc * 0.5
    xl.store(out_ptr + offs, acc, mask=offs < n)
    xl.store(out_ptr + n, xl.sum(acc))


@xblock.jit
def in_place(x_ptr, s_ptr, n, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs, mask=offs < n, other=0.0)
    xl.store(s_ptr, xl.sum(x))
    xl.store(x_ptr + offs, x * 3.0, mask=offs < n)


@xblock.jit
def in_place_then_sum(x_ptr, s_ptr, n, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs, mask=offs < n, other=0.0)
    xl.store(x_ptr + offs, x * 3.0, mask=offs < n)
    xl.store(s_ptr, xl.sum(x))


@xblock.jit
def regroup(x_ptr, out_ptr, BLOCK: xl.constexpr):
    x = xl.load(x_ptr + xl.arange(0, BLOCK))
    xl.store(out_ptr + xl.arange(0, BLOCK // 2), xl.sum(xl.reshape(x, [BLOCK // 2, 2]), axis=1))


@xblock.jit
def running_max(x_ptr, y_ptr, BLOCK: xl.constexpr):
    x = xl.load(x_ptr + xl.arange(0, BLOCK))
    xl.store(y_ptr + xl.arange(0, BLOCK), xl.associative_scan(x, 0, xl.maximum))


# ----------------------------------------------------------------------------- helpers
def _compile(kernel, signature: dict, **constexprs):
    return xblock.compile(kernel, signature=signature, constexprs=constexprs)


def _split(ck, factor: int):
    with xb.context(), ir.Location.unknown():
        module = ir.Module.parse(ck.asm["xb"])
        split = strip_mine.run(module, factor)
        verify(module, strip_mine.NAME)
        return module, split, str(module)


def _launch(ck, module, grid, args) -> None:
    """Run `module` (a changed copy of ck's xb) on ck's target with ck's metadata."""
    backend = get_backend(ck.target)
    cur = module
    asm = {"xb": str(module)}
    with module.context:
        for ext, stage in backend.stages(backend.options_cls()).items():
            cur = asm[ext] = stage(cur, ck.metadata)
    backend.load(asm, ck.metadata)(tuple(grid) + (1,) * (3 - len(grid)), list(args))


def _both(ck, module, grid, args):
    """The outputs of the unsplit and the split kernel on copies of `args`."""
    out = []
    for m in (None, module):
        a = [v.copy() if isinstance(v, np.ndarray) else v for v in args]
        if m is None:
            ck.run(tuple(grid) + (1,) * (3 - len(grid)), a)
        else:
            _launch(ck, m, grid, a)
        out.append(a)
    return out


def _close(want, got, rtol=1e-5, atol=1e-5):
    for w, g in zip(want, got):
        if isinstance(w, np.ndarray):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


F32, I32 = "*fp32", "*i32"
rng = np.random.default_rng(7)


# ----------------------------------------------------------------------------- shapes
def test_a_1d_block_becomes_chunks_in_one_loop():
    ck = _compile(scale_shift, {"x_ptr": F32, "y_ptr": F32, "n": "i32"}, BLOCK=65536)
    module, split, text = _split(ck, 8)
    assert split == strip_mine.Split(extent=65536, factor=8, chunk=8192, loops=1)
    assert split.describe() == "8 chunks of 8192 elements"
    assert "tensor<65536x" not in text and "tensor<8192xf32>" in text
    assert text.count("scf.for") == 1 and '"xb.arange"() {end = 8192 : i32, start = 0 : i32}' in text
    for n in (65535, 65536, 65537):
        x = rng.standard_normal(n).astype(np.float32)
        want, got = _both(ck, module, ((n + 65535) // 65536,), [x, np.zeros(n, np.float32), n])
        _close(want, got)


def test_a_2d_tile_is_split_by_rows_and_axis_1_stays_in_the_chunk():
    ck = _compile(tile_reductions, {"x_ptr": F32, "rsum_ptr": F32, "cmax_ptr": F32, "m": "i32", "n": "i32"},
                  BM=256, BN=256)
    module, split, text = _split(ck, 4)
    assert (split.extent, split.chunk, split.loops, split.describe()) == (256, 64, 1, "4 chunks of 64 rows")
    assert "tensor<64x256xf32>" in text and "tensor<1x256xi32>" in text and "tensor<256x256x" not in text
    assert "iter_args" in text and "tensor<256xf32>" in text  # the column max is carried
    for m, n in ((255, 257 - 2), (256, 256), (129, 3)):
        x = rng.standard_normal((m, n)).astype(np.float32)
        want, got = _both(ck, module, (1,), [x, np.zeros(256, np.float32), np.zeros(256, np.float32), m, n])
        _close(want, got, rtol=1e-4, atol=1e-4)


def test_a_factor_that_does_not_divide_the_block_is_refused():
    ck = _compile(scale_shift, {"x_ptr": F32, "y_ptr": F32, "n": "i32"}, BLOCK=64)
    with pytest.raises(strip_mine.Refused) as e:
        _split(ck, 128)
    assert e.value.exhausted and "64 long" in e.value.reason


# ----------------------------------------------------------------------------- folds and scans
def test_full_reductions_carry_scalars():
    ck = _compile(full_reductions, {"x_ptr": F32, "out_ptr": F32, "idx_ptr": I32, "n": "i32"}, BLOCK=4096)
    module, split, _ = _split(ck, 8)
    assert split.loops == 1
    for n in (4095, 4096, 1000):
        x = rng.standard_normal(n).astype(np.float32)
        x[n // 3] = x[n - 5] = 9.0  # ties across chunks: the first index wins
        x[n // 2] = x[n - 7] = -9.0
        want, got = _both(ck, module, (1,), [x, np.zeros(3, np.float32), np.zeros(2, np.int32), n])
        _close(want, got, rtol=1e-4)
        assert got[2].tolist() == [n // 3, n // 2]


def test_nan_chunks_are_ignored_by_max_as_by_the_reduction():
    ck = _compile(full_reductions, {"x_ptr": F32, "out_ptr": F32, "idx_ptr": I32, "n": "i32"}, BLOCK=256)
    module, _, _ = _split(ck, 4)
    x = rng.standard_normal(256).astype(np.float32)
    x[:64] = np.nan  # the whole first chunk
    want, got = _both(ck, module, (1,), [x, np.zeros(3, np.float32), np.zeros(2, np.int32), 256])
    np.testing.assert_array_equal(got[1][1:], want[1][1:])
    np.testing.assert_array_equal(got[2], want[2])


def test_combine_functions_xor_sum_integer_max_and_histograms():
    sig = {"x_ptr": F32, "i_ptr": I32, "out_ptr": F32, "iout_ptr": I32, "hist_ptr": I32, "n": "i32"}
    ck = _compile(other_folds, sig, BLOCK=1024)
    module, _, _ = _split(ck, 4)
    for n in (1023, 1024):
        x = rng.standard_normal(n).astype(np.float32)
        i = rng.integers(-1000, 1000, n).astype(np.int32)
        args = [x, i, np.zeros(1, np.float32), np.zeros(2, np.int32), np.zeros(16, np.int32), n]
        want, got = _both(ck, module, (1,), args)
        _close(want, got, rtol=1e-4, atol=1e-4)


def test_scans_carry_the_running_total_both_ways():
    ck = _compile(scans, {"x_ptr": F32, "y_ptr": F32, "z_ptr": F32, "n": "i32"}, BLOCK=2048)
    module, split, _ = _split(ck, 8)
    assert split.loops == 2  # a forward and a reverse scan walk the chunks in opposite orders
    for n in (2047, 2048):
        x = rng.standard_normal(n).astype(np.float32)
        want, got = _both(ck, module, (1,), [x, np.zeros(n, np.float32), np.zeros(n, np.float32), n])
        _close(want, got, rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------------------- phases
def test_softmax_in_a_row_loop_becomes_three_chunk_loops_inside_it():
    ck = _compile(softmax, {"out_ptr": F32, "in_ptr": F32, "n_rows": "i32", "n_cols": "i32"}, BLOCK=8192)
    module, split, text = _split(ck, 4)
    assert split.loops == 3 and text.count("scf.for") == 4
    for n in (8191, 8192, 100):
        x = rng.standard_normal((3, n)).astype(np.float32)
        want, got = _both(ck, module, (2,), [np.zeros_like(x), x, 3, n])
        _close(want, got, rtol=1e-5, atol=1e-7)


def test_layer_norm_stores_scalars_between_the_loops():
    ck = _compile(layer_norm, {"y_ptr": "*fp16", "x_ptr": "*fp16", "w_ptr": "*fp16", "mean_ptr": F32, "n": "i32"},
                  BLOCK=4096)
    module, split, _ = _split(ck, 8)
    assert split.loops == 3
    for n in (4095, 4096):
        x = rng.standard_normal((2, n)).astype(np.float16)
        w = rng.standard_normal(n).astype(np.float16)
        want, got = _both(ck, module, (2,), [np.zeros_like(x), x, w, np.zeros(2, np.float32), n])
        _close(want, got, rtol=1e-2, atol=1e-2)


def test_a_loop_carrying_a_block_is_computed_per_chunk():
    ck = _compile(carried, {"x_ptr": F32, "out_ptr": F32, "n": "i32", "k": "i32"}, BLOCK=1024)
    module, split, _ = _split(ck, 4)
    assert split.loops == 1
    for n, k in ((1023, 3), (1024, 1)):
        x = rng.standard_normal(n * k).astype(np.float32)
        want, got = _both(ck, module, (1,), [x, np.zeros(n + 1, np.float32), n, k])
        _close(want, got, rtol=1e-4, atol=1e-4)


def test_an_in_place_update_shares_its_loop_with_the_load():
    ck = _compile(in_place, {"x_ptr": F32, "s_ptr": F32, "n": "i32"}, BLOCK=1024)
    module, split, _ = _split(ck, 4)
    assert split.loops == 2  # the sum first, then the update
    x = rng.standard_normal(1000).astype(np.float32)
    want, got = _both(ck, module, (1,), [x, np.zeros(1, np.float32), 1000])
    _close(want, got, rtol=1e-4)


# ----------------------------------------------------------------------------- refusals
@pytest.mark.parametrize("kernel, sig, why", [
    (in_place_then_sum, {"x_ptr": F32, "s_ptr": F32, "n": "i32"}, "loaded again after the store at line"),
    (regroup, {"x_ptr": F32, "out_ptr": F32}, "tl.reshape"),
    (running_max, {"x_ptr": F32, "y_ptr": F32}, "scan with a combine function"),
])
def test_refusals_name_the_reason_and_the_line(kernel, sig, why):
    ck = _compile(kernel, sig, BLOCK=1024)
    with pytest.raises(strip_mine.Refused) as e:
        _split(ck, 2)
    assert why in e.value.reason
    assert e.value.where is not None and not e.value.exhausted


# ----------------------------------------------------------------------------- ops kept whole
@xblock.jit
def dot_then_leaky(a_ptr, b_ptr, c_ptr, M, N, K, BM: xl.constexpr, BN: xl.constexpr, BK: xl.constexpr):
    rows = xl.arange(0, BM)
    cols = xl.arange(0, BN)
    ks = xl.arange(0, BK)
    acc = xl.zeros((BM, BN), dtype=xl.float32)
    for k in range(0, xl.cdiv(K, BK)):
        a = xl.load(a_ptr + rows[:, None] * K + (k * BK + ks)[None, :], mask=(rows[:, None] < M), other=0.0)
        b = xl.load(b_ptr + (k * BK + ks)[:, None] * N + cols[None, :], mask=(cols[None, :] < N), other=0.0)
        acc = xl.dot(a, b, acc)
    c = xl.where(acc >= 0, acc, 0.01 * acc)
    xl.store(c_ptr + rows[:, None] * N + cols[None, :], c, mask=(rows[:, None] < M) & (cols[None, :] < N))


def _dot_kernel_split(factor, keep):
    ck = _compile(dot_then_leaky, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": F32, "M": "i32", "N": "i32",
                                   "K": "i32"}, BM=64, BN=32, BK=32)
    with xb.context(), ir.Location.unknown():
        module = ir.Module.parse(ck.asm["xb"])
        split = strip_mine.run(module, factor, keep=keep)
        verify(module, strip_mine.NAME)
        chunk_ops = []

        def visit(op):
            op = op.operation
            if op.name == "scf.for" and "xb.chunks" in op.attributes:
                op.walk(lambda o: chunk_ops.append(o.operation.name) or ir.WalkResult.ADVANCE)
            return ir.WalkResult.ADVANCE
        module.operation.walk(visit)
        return split, str(module), chunk_ops


def test_a_dot_not_kept_whole_is_split_by_its_rows():
    """Without `keep`, the K loop carrying the accumulator runs whole per chunk of rows, each dot on the
    chunk's rows of `a` and the whole `b` (issue #30; dots were refused)."""
    split, text, chunk_ops = _dot_kernel_split(2, None)
    assert split == strip_mine.Split(extent=64, factor=2, chunk=32, loops=1, rows=True)
    assert "tensor<64x" not in text and "tensor<32x32xf32>" in text and "tensor<32x32xf16>" in text
    assert chunk_ops.count("xb.dot") == 1 and chunk_ops.count("xb.store") == 1
    ck = _compile(dot_then_leaky, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": F32, "M": "i32", "N": "i32",
                                   "K": "i32"}, BM=64, BN=32, BK=32)
    with xb.context(), ir.Location.unknown():
        module = ir.Module.parse(ck.asm["xb"])
        strip_mine.run(module, 2)
        for m, n, k in ((64, 32, 64), (50, 20, 32)):  # (the kernel masks no K tail)
            a = rng.integers(-3, 4, (m, k)).astype(np.float16)
            b = rng.integers(-3, 4, (k, n)).astype(np.float16)
            want, got = _both(ck, module, (1,), [a, b, np.zeros((m, n), np.float32), m, n, k])
            np.testing.assert_array_equal(got[2], want[2])


def test_a_kept_k_loop_stays_whole_and_the_epilogue_reads_its_rows_chunk_by_chunk():
    keep = lambda op: op.name == "scf.for" and "xb.dot" in str(op)  # noqa: E731
    split, text, chunk_ops = _dot_kernel_split(4, keep)
    assert split == strip_mine.Split(extent=64, factor=4, chunk=16, loops=1, rows=True)
    # the K loop and its dot keep the whole 64 x 32 tile; the epilogue works on 16-row chunks of it
    assert "tensor<64x32xf32>" in text and "tensor<16x32xf32>" in text
    assert text.count("tensor.extract_slice") == 1 and text.count("xb.chunks = 4") == 1
    assert '"xb.dot"' in text and text.count("scf.for") == 2
    # the chunk loop slices the kept result and stores; it neither reloads the operands nor multiplies
    assert chunk_ops.count("tensor.extract_slice") == 1 and chunk_ops.count("xb.store") == 1
    assert "xb.dot" not in chunk_ops and chunk_ops.count("xb.load") == 0


@xblock.jit
def dot_of_interleaved_b(a_ptr, b_ptr, c_ptr, K, BM: xl.constexpr, BN: xl.constexpr, BK: xl.constexpr):
    rm = xl.arange(0, BM)
    rk = xl.arange(0, BK)
    rn = xl.arange(0, BN // 2)
    acc = xl.zeros((BM, BN), dtype=xl.float32)
    for k in range(0, xl.cdiv(K, BK)):
        a = xl.load(a_ptr + rm[:, None] * K + (k * BK + rk)[None, :])
        b = xl.load(b_ptr + (k * BK + rk)[:, None] * (BN // 2) + rn[None, :])
        acc = xl.dot(a, xl.interleave(b, b), acc)
    xl.store(c_ptr + rm[:, None] * BN + xl.arange(0, BN)[None, :], acc)


def test_an_interleaved_b_in_a_k_loop_split_by_rows_is_copied_whole():
    """The loop runs whole per chunk of rows; the interleave of `b` (a reshape off the split axis) is copied
    as it is in its body (it crashed, taken for a reshaped repeated row: vllm's awq_gemm_kernel on ascend)."""
    ck = _compile(dot_of_interleaved_b, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": F32, "K": "i32"},
                  BM=32, BN=32, BK=16)
    module, split, text = _split(ck, 2)
    assert split == strip_mine.Split(extent=32, factor=2, chunk=16, loops=1, rows=True)
    assert "tensor<16x32xf32>" in text and "tensor<16x16x2xf16>" in text and "tensor<32x32xf32>" not in text
    a = rng.integers(-3, 4, (32, 48)).astype(np.float16)
    b = rng.integers(-3, 4, (48, 16)).astype(np.float16)
    want, got = _both(ck, module, (1,), [a, b, np.zeros((32, 32), np.float32), 48])
    np.testing.assert_array_equal(got[2], want[2])
    np.testing.assert_array_equal(got[2], a.astype(np.float32) @ np.repeat(b, 2, 1).astype(np.float32))


@xblock.jit
def reshaped_in_a_loop(x_ptr, y_ptr, out_ptr, BM: xl.constexpr, BN: xl.constexpr):
    rows = xl.arange(0, BM)
    cols = xl.arange(0, 4 * BN)
    acc = xl.zeros((BM, BN), dtype=xl.float32)
    for i in range(2):
        acc += xl.reshape(xl.load(x_ptr + i * BM * BN + xl.arange(0, BM * BN)), (BM, BN))
    big = xl.load(y_ptr + rows[:, None] * 4 * BN + cols[None, :])
    xl.store(out_ptr + rows[:, None] * 4 * BN + cols[None, :], big + xl.sum(acc, axis=1)[:, None])


def test_a_reshape_onto_the_split_axis_in_a_loop_body_is_refused():
    """A reshape whose result (not its operand) is on the split axis, in a loop carrying the block: refused
    at its line, not an internal error."""
    ck = _compile(reshaped_in_a_loop, {"x_ptr": F32, "y_ptr": F32, "out_ptr": F32}, BM=16, BN=16)
    with pytest.raises(strip_mine.Refused) as e:
        _split(ck, 2)
    assert "xb.reshape, which needs the whole block" in e.value.reason
    assert e.value.loc[1] == reshaped_in_a_loop.fn.__code__.co_firstlineno + 6  # (the decorator line + 6)
