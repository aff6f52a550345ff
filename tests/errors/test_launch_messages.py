"""Launch errors a user can act on: a misspelled target gets a suggestion, a shifted binding names
the pointer parameter that got a scalar and shows what every parameter received, and the traceback
holds one xblock frame at most below the user's call."""

import traceback

import numpy as np
import pytest

import xblock
import xblock.language as xl
from tests._pkg import in_package


@xblock.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    xl.store(out_ptr + offs, xl.load(x_ptr + offs, mask=m) + xl.load(y_ptr + offs, mask=m), mask=m)


X = np.zeros(10, np.float32)


def _xblock_frames(exc) -> list:
    return [f for f in traceback.extract_tb(exc.__traceback__) if in_package(f.filename)]


def test_misspelled_target_suggests_the_name():
    with pytest.raises(xblock.XBlockError, match=r"unknown target 'ascnd' .*did you mean 'ascend'\?") as info:
        add[(1,)](X, X, X, 10, BLOCK=16, target="ascnd")
    assert isinstance(info.value, ValueError)  # still a ValueError, as before
    assert len(_xblock_frames(info.value)) <= 1


def test_a_shifted_binding_names_the_pointer_that_got_a_scalar():
    with pytest.raises(xblock.LaunchError) as info:
        add[(1,)](X, X, 10, BLOCK=16, target="sim")
    msg = str(info.value)
    assert "test_launch_messages.py:16: add: argument 'out_ptr' is used as a pointer but got int 10" in msg
    assert "bound: x_ptr=ndarray(float32[10]), y_ptr=ndarray(float32[10]), out_ptr=10, n=<missing>" in msg
    assert len(_xblock_frames(info.value)) <= 1


def test_a_missing_argument_shows_the_binding():
    with pytest.raises(xblock.LaunchError, match=r"missing argument 'n'; bound: .*out_ptr=ndarray"):
        add[(1,)](X, X, X, BLOCK=16, target="sim")


def test_misspelled_keywords_get_a_suggestion():
    with pytest.raises(xblock.LaunchError, match=r"unexpected argument 'BLOK'; did you mean 'BLOCK'\?") as info:
        add[(1,)](X, X, X, 10, BLOK=16, target="sim")
    assert len(_xblock_frames(info.value)) <= 1
    with pytest.raises(xblock.LaunchError, match=r"unexpected argument 'num_wrps'; did you mean 'num_warps'\?"):
        add[(1,)](X, X, X, 10, BLOCK=16, num_wrps=4, target="sim")
