"""The launch hot path (`kernel[grid](...)` after the first launch of a shape): a dictionary hit
and the launcher call. It must still pick a new specialization whenever the full path would:
another dtype, a pointer no longer 16-byte aligned, an int becoming 1, another constexpr.
The cuda launcher is replaced by a recorder, so this runs without a GPU (compiling needs Triton).
"""

from __future__ import annotations

import pytest

from examples.add import add_kernel
from xblock.backends.cuda import launch as cuda_launch
from xblock.backends.cuda.precompile import TensorSpec

pytest.importorskip("triton")
pytest.importorskip("mlir")


@pytest.fixture
def calls(monkeypatch):
    seen = []
    monkeypatch.setattr(cuda_launch.CudaLauncher, "__call__",
                        lambda self, grid, args: seen.append((self.metadata["arg_types"], self.metadata["constexprs"],
                                                              grid, list(args), id(self))))
    add_kernel._fast.clear()
    return seen


def _t(dtype="float32", aligned=True):
    return TensorSpec(4096, dtype, aligned)


def test_hot_path_reuses_and_respecializes(calls):
    x, y, o = _t(), _t(), _t()
    ck1 = add_kernel[(4,)](x, y, o, 4096, BLOCK=1024, target="cuda")
    ck2 = add_kernel[(4,)](y, x, o, 4096, BLOCK=1024, target="cuda")  # same shape: the fast path
    assert ck1 is ck2 and calls[1][3] == [y, x, o, 4096] and calls[1][2] == (4, 1, 1)
    assert add_kernel[(4,)](x, y, o, 1, BLOCK=1024, target="cuda") is not ck1  # n == 1 is specialized
    assert add_kernel[(4,)](_t(aligned=False), y, o, 4096, BLOCK=1024, target="cuda") is not ck1
    h = add_kernel[(4,)](_t("float16"), _t("float16"), _t("float16"), 4096, BLOCK=1024, target="cuda")
    assert h is not ck1 and h.metadata["arg_types"][0] == "*fp16"
    assert add_kernel[(4,)](x, y, o, 4096, BLOCK=512, target="cuda") is not ck1
    assert add_kernel[(4,)](x, y, o, 4096, BLOCK=1024, target="cuda", num_warps=8) is not ck1
    assert add_kernel[(4,)](x, y, o, 4096, BLOCK=1024, target="cuda") is ck1  # and back
    assert len({c[4] for c in calls}) == 6


def test_grids_on_the_hot_path(calls):
    x = _t()
    for grid, want in [((3,), (3, 1, 1)), ((3, 2), (3, 2, 1)), ((3, 2, 5), (3, 2, 5)), ((3,), (3, 1, 1))]:
        add_kernel[grid](x, x, x, 4096, BLOCK=1024, target="cuda")
        assert calls[-1][2] == want
    add_kernel[lambda meta: (meta["n"] // meta["BLOCK"],)](x, x, x, 4096, BLOCK=1024, target="cuda")
    assert calls[-1][2] == (4, 1, 1)
    with pytest.raises(Exception, match="grid"):
        add_kernel[(-1,)](x, x, x, 4096, BLOCK=1024, target="cuda")
