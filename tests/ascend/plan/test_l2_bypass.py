"""The L2 hint on streamed inputs (backends/ascend/plan/streaming.py): an input every program reads its own
part of, once, is kept out of L2 (`SetL2CacheHint(CacheMode::CACHE_MODE_DISABLE)`) when the launch moves more
than L2 holds; nothing else is. Results against numpy on the AscendC model with the hint set, and the cost
model's view of it (cost.py `l2_writeback`)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xblock
import xblock.language as xl

pytestmark = pytest.mark.filterwarnings("ignore")

HINT = "SetL2CacheHint(CacheMode::CACHE_MODE_DISABLE);"


@xblock.jit
def add_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    xl.store(z_ptr + offs, xl.load(x_ptr + offs, mask=m) + xl.load(y_ptr + offs, mask=m), mask=m)


@xblock.jit
def copy_tiles(x_ptr, y_ptr, M, N, BM: xl.constexpr, BN: xl.constexpr):
    rows = xl.program_id(0) * BM + xl.arange(0, BM)
    cols = xl.program_id(1) * BN + xl.arange(0, BN)
    m = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * N + cols[None, :]
    xl.store(y_ptr + offs, xl.load(x_ptr + offs, mask=m) * 2, mask=m)


@xblock.jit
def add_in_place(x_ptr, y_ptr, n, BLOCK: xl.constexpr):
    """x is read and written: it keeps L2; y is streamed."""
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    xl.store(x_ptr + offs, xl.load(x_ptr + offs, mask=m) + xl.load(y_ptr + offs, mask=m), mask=m)


@xblock.jit
def pairs_kernel(x_ptr, z_ptr, n, BLOCK: xl.constexpr):
    """Programs 2k and 2k+1 read the same x block: read twice."""
    pid = xl.program_id(0)
    src = (pid // 2) * BLOCK + xl.arange(0, BLOCK)
    offs = pid * BLOCK + xl.arange(0, BLOCK)
    xl.store(z_ptr + offs, xl.load(x_ptr + src, mask=src < n), mask=offs < 2 * n)


@xblock.jit
def twice_kernel(x_ptr, z_ptr, n, BLOCK: xl.constexpr):
    """x loaded by two loads (its own block and the next): bytes read twice."""
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    a = xl.load(x_ptr + offs, mask=offs < n)
    b = xl.load(x_ptr + offs + BLOCK, mask=offs + BLOCK < n)
    xl.store(z_ptr + offs, a + b, mask=offs < n)


@xblock.jit
def bias_kernel(x_ptr, b_ptr, z_ptr, n_cols, stride, BLOCK: xl.constexpr):
    """b is read alike by every program (a weight); x's rows are `stride` apart but masked by `n_cols`: a
    row may overlap the next, so neither is streamed."""
    pid = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    m = cols < n_cols
    x = xl.load(x_ptr + pid * stride + cols, mask=m)
    b = xl.load(b_ptr + cols, mask=m)
    xl.store(z_ptr + pid * stride + cols, x + b, mask=m)


@xblock.jit
def rows_kernel(x_ptr, z_ptr, n_cols, BLOCK: xl.constexpr):
    """One row per program, its columns masked by the row length: streamed."""
    pid = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    m = cols < n_cols
    xl.store(z_ptr + pid * n_cols + cols, xl.load(x_ptr + pid * n_cols + cols, mask=m) + 1, mask=m)


def _cpp(kernel, args, **meta) -> str:
    return kernel.warmup(*args, target="ascend", **meta).asm["cpp"]


def _hinted(cpp: str) -> set:
    return set(re.findall(r"(\w+)Gm\.SetL2CacheHint", cpp))


def test_streamed_inputs_get_the_hint_and_the_output_does_not():
    x = np.ones(4096, np.float16)
    cpp = _cpp(add_kernel, (x, x, x, 4096), BLOCK=1024, grid=(4,))
    assert _hinted(cpp) == {"x", "y"}
    # guarded at run time: the launch's bytes (3 x 2 KB a program) against L2, and one program on the unused axes
    guard = cpp[cpp.rfind("if (", 0, cpp.find(HINT)):cpp.find(HINT)]
    assert "(numPrograms * 6144) > 201326592" in guard and "gridY == 1" in guard
    # set before the grid loop, once
    assert cpp.find(HINT) < cpp.find("for (int64_t pid = GetBlockIdx();") and cpp.count(HINT) == 2


def test_two_axis_tiles_masked_by_the_row_stride():
    x = np.ones((64, 256), np.float32)
    cpp = _cpp(copy_tiles, (x, x, 64, 256), BM=16, BN=128, grid=(4, 2))
    assert _hinted(cpp) == {"x"}
    guard = cpp[cpp.rfind("if (", 0, cpp.find(HINT)):cpp.find(HINT)]
    assert "gridY == 1" not in guard  # both axes used
    # rows of 256 B: programs share 512-B request windows, which L2 serves once: no hint
    assert not _hinted(_cpp(copy_tiles, (x, x, 64, 256), BM=16, BN=64, grid=(4, 4)))


@pytest.mark.parametrize("kernel, args, meta, hinted", [
    (add_in_place, lambda a: (a, a, 4096), dict(BLOCK=1024, grid=(4,)), {"y"}),
    (pairs_kernel, lambda a: (a, a, 2048), dict(BLOCK=1024, grid=(4,)), set()),
    (twice_kernel, lambda a: (a, a, 4096), dict(BLOCK=1024, grid=(4,)), set()),
    (bias_kernel, lambda a: (a, a, a, 100, 128, ), dict(BLOCK=128, grid=(4,)), set()),
    (rows_kernel, lambda a: (a, a, 1000), dict(BLOCK=1024, grid=(4,)), {"x"}),
])
def test_only_streamed_inputs(kernel, args, meta, hinted):
    a = np.ones(4096, np.float32)
    assert _hinted(_cpp(kernel, args(a), **meta)) == hinted


def test_off_by_option_and_on_parts_without_the_hint():
    x = np.ones(4096, np.float16)
    assert HINT not in _cpp(add_kernel, (x, x, x, 4096), BLOCK=1024, grid=(4,), l2_bypass=False)
    assert HINT not in _cpp(add_kernel, (x, x, x, 4096), BLOCK=1024, grid=(4,), soc="310P")


def test_results_with_the_hint_set_on_the_model():
    """A launch larger than L2 (3 x 68 MB): the guard holds, the model runs SetL2CacheHint (it checks the
    mode) and the results are numpy's."""
    n = (1 << 25) + (1 << 20)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float16)
    y = rng.standard_normal(n).astype(np.float16)
    z = np.empty_like(x)
    add_kernel[(xblock.cdiv(n, 8192),)](x, y, z, n, BLOCK=8192, target="ascend")
    np.testing.assert_array_equal(z, x + y)
    p = xblock.profile(add_kernel, (xblock.cdiv(n, 8192),), x, y, z, n, BLOCK=8192, sample=True)
    assert p.counters["uncached_read_bytes"] == pytest.approx(2 * n * 2, rel=0.01)
    assert p.counters["l2_writeback_bytes"] == 0
    through = xblock.profile(add_kernel, (xblock.cdiv(n, 8192),), x, y, z, n, BLOCK=8192, sample=True,
                             l2_bypass=False)
    assert through.counters["uncached_read_bytes"] == 0
    assert through.counters["l2_writeback_bytes"] > 0  # 204 MB put in a 192 MB L2
    assert p.estimate_us < through.estimate_us
