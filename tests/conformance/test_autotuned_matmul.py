"""The unmodified @triton.autotune tiled matmul (tests/unit/test_triton_autotune.py) with fp16
inputs on ascend, where `dot` goes to the Cube unit, and compiled for cuda; against numpy."""

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile
from xblock.runtime import autotune

pytest.importorskip("triton")
from tests.unit.test_triton_autotune import MATMUL_CONFIGS, _matmul_grid, tiled_matmul  # noqa: E402


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path))


def _args(M, N, K):
    rng = np.random.default_rng(13)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    return a, b, np.zeros((M, N), np.float32), M, N, K, K, 1, N, 1, N, 1


@pytest.mark.parametrize("shape", [(70, 50, 40), (16, 16, 16), (33, 17, 65)])
def test_autotuned_matmul_on_ascend(shape):
    M, N, K = shape
    kernel = autotune.wrap(tiled_matmul)
    kernel.cache.clear()
    args = _args(M, N, K)
    kernel[_matmul_grid(M, N)](*args, target="ascend")
    a, b, c = args[:3]
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)
    assert kernel.best_config in MATMUL_CONFIGS


def test_autotuned_matmul_compiles_for_cuda():
    args = _args(64, 64, 64)
    meta = dict(MATMUL_CONFIGS[1].kwargs)
    assert "cubin" in precompile(xblock.jit(tiled_matmul).fn, args, meta).asm
