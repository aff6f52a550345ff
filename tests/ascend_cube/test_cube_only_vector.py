"""A kernel whose dots go out through Fixpipe is cube-only (AIC); vector work beside them (a tile copy
that does not use the dot) is a clear error at its line, not generated code the model (and a 910B)
refuses (fuzz campaign 7, entry O)."""

from __future__ import annotations

import numpy as np
import pytest

import xblock

triton = pytest.importorskip("triton")
tl = triton.language


@triton.jit
def dot_and_copy(a_ptr, b_ptr, x_ptr, c_ptr, y_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    r = tl.arange(0, BM)
    c = tl.arange(0, BN)
    kk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptr + r[:, None] * K + (k * BK + kk)[None, :])
        b = tl.load(b_ptr + (k * BK + kk)[:, None] * BN + c[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + r[:, None] * BN + c[None, :], acc)
    tl.store(y_ptr + r[:, None] * BN + c[None, :], tl.load(x_ptr + r[:, None] * BN + c[None, :]))


def test_vector_work_beside_a_fixpipe_dot_is_a_clear_error():
    a, b = np.ones((16, 32), np.float16), np.ones((32, 16), np.float16)
    x, c, y = np.ones((16, 16), np.float32), np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32)
    with pytest.raises(xblock.CompilationError, match="cube-only .AIC. kernel, and it also moves blocks") as e:
        xblock.jit(dot_and_copy)[(1,)](a, b, x, c, y, 32, BM=16, BN=16, BK=16, target="ascend")
    line = dot_and_copy.fn.__code__.co_firstlineno + 11  # from the decorator line: the last store
    assert f"{__file__}:{line}:" in str(e.value)
    assert not y.any() and not c.any()  # nothing ran
