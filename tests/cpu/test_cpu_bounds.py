"""The cpu target's bounds checks: an active lane outside its array is an error at the access's line
(as on the sim), the access is skipped (no memory is touched), and `bounds_check=False` drops the
checks. Masked-off lanes may point anywhere."""

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.errors import ExecutionError


@xblock.jit
def copy_n(x_ptr, y_ptr, n_load, n_store, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    v = xl.load(x_ptr + offs, mask=offs < n_load)
    xl.store(y_ptr + offs, v, mask=offs < n_store)


@xblock.jit
def strided(x_ptr, y_ptr, stride, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    xl.store(y_ptr + offs, xl.load(x_ptr + offs * stride))


@xblock.jit
def scalar_ops(x_ptr, y_ptr, k):
    xl.store(y_ptr + k, xl.load(x_ptr + k))


@xblock.jit
def atomics(x_ptr, k, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    xl.atomic_add(x_ptr + offs + k, 1.0)


def _arrays(n=16):
    return np.arange(n, dtype=np.float32), np.zeros(n, np.float32)


@pytest.mark.parametrize("n_load,n_store,what,arg", [(32, 16, "load", "x_ptr"), (16, 32, "store", "y_ptr")])
def test_dense_out_of_bounds(n_load, n_store, what, arg):
    x, y = _arrays()
    with pytest.raises(ExecutionError, match=rf"test_cpu_bounds.py:1[67]: out-of-bounds {what} in program "
                                             rf"\(0, 0, 0\): .*outside argument '{arg}' \(16 elements of 4 bytes\)"):
        copy_n[(1,)](x, y, n_load, n_store, BLOCK=32, target="cpu")


def test_masked_tail_is_not_an_error():
    x, y = _arrays(20)
    copy_n[(2,)](x, y, 20, 20, BLOCK=16, target="cpu")  # lanes 20..31 masked off
    np.testing.assert_array_equal(y, x)


def test_gather_checked_lane_by_lane():
    x, y = _arrays()
    strided[(1,)](x, y[:8], 2, BLOCK=8, target="cpu")
    np.testing.assert_array_equal(y[:8], x[::2])
    with pytest.raises(ExecutionError, match=r"test_cpu_bounds.py:23: out-of-bounds load .*'x_ptr'"):
        strided[(1,)](x, y[:8], 3, BLOCK=8, target="cpu")


def test_scalar_and_atomic_accesses():
    x, y = _arrays()
    with pytest.raises(ExecutionError, match=r"test_cpu_bounds.py:28: out-of-bounds load"):
        scalar_ops[(1,)](x, y, 16, target="cpu")
    with pytest.raises(ExecutionError, match=r"test_cpu_bounds.py:34: out-of-bounds atomic"):
        atomics[(1,)](x, 9, BLOCK=8, target="cpu")
    np.testing.assert_array_equal(x, np.arange(16, dtype=np.float32) + (np.arange(16) >= 9))  # in-bounds lanes


def test_the_error_matches_the_sim():
    x, y = _arrays()
    errors = []
    for target in ("sim", "cpu"):
        with pytest.raises(ExecutionError) as info:
            copy_n[(1,)](x, y.copy(), 32, 16, BLOCK=32, target=target)
        errors.append(str(info.value).split(": an unmasked")[0])
    assert errors[0] == errors[1]


def test_checks_can_be_turned_off():
    x, y = _arrays(64)
    # in bounds either way; the unchecked build is another compiled kernel
    copy_n[(1,)](x, y, 64, 64, BLOCK=64, target="cpu", bounds_check=False)
    np.testing.assert_array_equal(y, x)
