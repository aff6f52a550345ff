"""Bad launch arguments: a LaunchError naming the kernel's file and `def` line; arrays untouched."""

import numpy as np
import pytest

import xblock
import xblock.language as xl

from ._helpers import assert_clean, def_line, source_file


@xblock.jit
def scale2(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    xl.store(out_ptr + offs, xl.load(x_ptr + offs, mask=m) * 2, mask=m)


def _arrays():
    x = np.arange(16, dtype=np.float32)
    out = np.full(16, -1.0, dtype=np.float32)
    return x, out


def _launch_error(args, kwargs, match, arrays):
    before = [a.copy() for a in arrays]
    with pytest.raises(xblock.LaunchError) as info:
        scale2[(1,)](*args, target="sim", **kwargs)
    err = info.value
    text = str(err)
    assert err.file == source_file(scale2) and err.line == def_line(scale2), text
    assert text.startswith(f"{source_file(scale2)}:{def_line(scale2)}: scale2: "), text
    assert_clean(text)
    assert match in err.message, text
    for a, b in zip(arrays, before):
        np.testing.assert_array_equal(a, b)
    return err


def test_too_few_arguments():
    x, out = _arrays()
    _launch_error((x, out), {"BLOCK": 16}, "missing argument 'n'", [x, out])


def test_missing_constexpr_argument():
    x, out = _arrays()
    _launch_error((x, out, 16), {}, "missing argument 'BLOCK'", [x, out])


def test_too_many_arguments():
    x, out = _arrays()
    _launch_error((x, out, 16, 16, 3), {}, "takes 4 arguments but 5 were given", [x, out])


def test_unexpected_keyword():
    x, out = _arrays()
    _launch_error((x, out, 16), {"BLOCK": 16, "BLOK": 3}, "unexpected argument 'BLOK'", [x, out])


def test_multiple_values_for_argument():
    x, out = _arrays()
    _launch_error((x, out, 16), {"n": 16, "BLOCK": 16}, "multiple values for argument 'n'", [x, out])


def test_non_contiguous_array():
    base = np.arange(32, dtype=np.float32)
    x = base[::2]
    x_before = x.copy()
    out = np.full(16, -1.0, dtype=np.float32)
    _launch_error((x, out, 16), {"BLOCK": 16}, "'x_ptr' is not contiguous", [base, out])
    np.testing.assert_array_equal(x, x_before)


def test_fortran_order_array():
    x = np.asfortranarray(np.arange(16, dtype=np.float32).reshape(4, 4))
    out = np.full(16, -1.0, dtype=np.float32)
    _launch_error((x, out, 16), {"BLOCK": 16}, "'x_ptr' is not contiguous", [x, out])


def test_complex_dtype():
    x = np.arange(16).astype(np.complex64)
    out = np.full(16, -1.0, dtype=np.float32)
    _launch_error((x, out, 16), {"BLOCK": 16}, "'x_ptr' has dtype complex64", [x, out])


def test_object_dtype():
    x = np.array([1.0] * 16, dtype=object)
    out = np.full(16, -1.0, dtype=np.float32)
    _launch_error((x, out, 16), {"BLOCK": 16}, "'x_ptr' has dtype object", [x, out])


def test_string_argument():
    x, out = _arrays()
    _launch_error((x, out, "16"), {"BLOCK": 16}, "'n' has type str", [x, out])


def test_list_argument():
    x, out = _arrays()
    _launch_error(([1.0] * 16, out, 16), {"BLOCK": 16}, "'x_ptr' has type list", [x, out])


def test_integer_too_large():
    x, out = _arrays()
    _launch_error((x, out, 2**70), {"BLOCK": 16}, "does not fit in 64 bits", [x, out])


def test_negative_grid():
    x, out = _arrays()
    before = out.copy()
    with pytest.raises(xblock.LaunchError) as info:
        scale2[(-1,)](x, out, 16, BLOCK=16, target="sim")
    assert info.value.line == def_line(scale2) and "grid" in info.value.message
    np.testing.assert_array_equal(out, before)


def test_grid_with_four_dimensions():
    x, out = _arrays()
    with pytest.raises(xblock.LaunchError) as info:
        scale2[(1, 1, 1, 1)](x, out, 16, BLOCK=16, target="sim")
    assert info.value.line == def_line(scale2) and "grid" in info.value.message


def test_calling_a_kernel_directly():
    x, out = _arrays()
    with pytest.raises(RuntimeError, match=r"scale2\[grid\]"):
        scale2(x, out, 16, BLOCK=16)


def test_read_only_input_is_accepted():
    x, out = _arrays()
    x.setflags(write=False)
    scale2[(1,)](x, out, 16, BLOCK=16, target="sim")
    np.testing.assert_array_equal(out, np.arange(16, dtype=np.float32) * 2)


def test_read_only_output_is_an_error():
    x, out = _arrays()
    out.setflags(write=False)
    _launch_error((x, out, 16), {"BLOCK": 16}, "'out_ptr' is read-only", [x, out])


def test_good_launch_after_errors():
    x, out = _arrays()
    scale2[(1,)](x, out, 16, BLOCK=16, target="sim")
    np.testing.assert_array_equal(out, x * 2)
