"""Python's `print` inside a kernel is a device print, as in Triton: a leading string is the prefix."""

import numpy as np
import pytest

import xblock

triton = pytest.importorskip("triton")
tl = triton.language


@triton.jit
def show(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    print("x", x)


@pytest.mark.parametrize("target", ["sim", "cpu"])
def test_print_with_a_prefix(target, capfd):
    xblock.jit(show)[(1,)](np.arange(4, dtype=np.float32), target=target)
    out = capfd.readouterr().out
    assert "x" in out and "[0. 1. 2. 3.]" in out.replace(",", "")


def test_ascend_says_it_cannot_print():
    with pytest.raises(xblock.CompilationError, match=r"test_print.py:\d+:\d+: ascend: device_print is not "
                       r"supported"):
        xblock.jit(show)[(1,)](np.arange(4, dtype=np.float32), target="ascend")
