"""Non-constexpr values where a constexpr is needed, static_assert, and bad calls to helpers."""

import xblock
import xblock.language as xl

from ._helpers import compile_error, def_line, line_of

SIG = {"x_ptr": "*fp32", "n": "i32"}


@xblock.jit
def k_arange_runtime(x_ptr, n):
    offs = xl.arange(0, n)  # ERR
    xl.store(x_ptr + offs, 1.0)


def test_arange_bounds_not_constexpr():
    compile_error(k_arange_runtime, SIG, match="constexpr")


@xblock.jit
def k_arange_empty(x_ptr, n):
    offs = xl.arange(16, 16)  # ERR
    xl.store(x_ptr + offs, 1.0)


def test_arange_end_not_above_start():
    compile_error(k_arange_empty, SIG, match="end must be greater than start")


@xblock.jit
def k_program_id_runtime(x_ptr, n):
    pid = xl.program_id(n)  # ERR
    xl.store(x_ptr + pid, 1.0)


def test_program_id_axis_not_constexpr():
    compile_error(k_program_id_runtime, SIG, match="constexpr")


@xblock.jit
def k_program_id_axis3(x_ptr, n):
    pid = xl.program_id(3)  # ERR
    xl.store(x_ptr + pid, 1.0)


def test_program_id_axis_out_of_range():
    compile_error(k_program_id_axis3, SIG, match="0, 1 or 2")


@xblock.jit
def k_reduce_axis_runtime(x_ptr, n):
    x = xl.load(x_ptr + xl.arange(0, 16))
    s = xl.sum(x, axis=n)  # ERR
    xl.store(x_ptr, s)


def test_reduction_axis_not_constexpr():
    compile_error(k_reduce_axis_runtime, SIG, match="constexpr")


@xblock.jit
def k_zeros_runtime_shape(x_ptr, n):
    z = xl.zeros((n,), xl.float32)  # ERR
    xl.store(x_ptr, xl.sum(z))


def test_zeros_shape_not_constexpr():
    compile_error(k_zeros_runtime_shape, SIG, match="constexpr")


@xblock.jit
def k_static_range_runtime(x_ptr, n):
    for i in xl.static_range(n):  # ERR
        xl.store(x_ptr + i, 1.0)


def test_static_range_bound_not_constexpr():
    compile_error(k_static_range_runtime, SIG, match="constexpr")


@xblock.jit
def k_range_step_zero(x_ptr, n):
    for i in range(0, n, 0):  # ERR
        xl.store(x_ptr + i, 1.0)


def test_range_step_zero():
    compile_error(k_range_step_zero, SIG, match="step")


@xblock.jit
def k_static_assert_runtime(x_ptr, n):
    xl.static_assert(n > 0)  # ERR
    xl.store(x_ptr, 1.0)


def test_static_assert_on_runtime_value():
    compile_error(k_static_assert_runtime, SIG, match="constexpr")


@xblock.jit
def k_static_assert_fails(x_ptr, n, BLOCK: xl.constexpr):
    xl.static_assert(BLOCK % 32 == 0, "BLOCK must be a multiple of 32")  # ERR
    xl.store(x_ptr + xl.arange(0, BLOCK), 1.0)


def test_static_assert_failure():
    err = compile_error(k_static_assert_fails, SIG, {"BLOCK": 48}, match="static_assert failed")
    assert "BLOCK must be a multiple of 32" in err.message


@xblock.jit
def k_assert_constexpr(x_ptr, n, BLOCK: xl.constexpr):
    assert BLOCK <= 64, "BLOCK too large"  # ERR
    xl.store(x_ptr + xl.arange(0, BLOCK), 1.0)


def test_python_assert_on_constexpr():
    compile_error(k_assert_constexpr, SIG, {"BLOCK": 128}, match="BLOCK too large")


@xblock.jit
def k_device_assert_false(x_ptr, n, DEBUG: xl.constexpr):
    xl.device_assert(DEBUG, "never")  # ERR
    xl.store(x_ptr, 1.0)


def test_device_assert_constant_false():
    compile_error(k_device_assert_false, SIG, {"DEBUG": False}, match="never")


# ------------------------------------------------------------------------------- helpers
@xblock.jit
def _add_one(x):
    return x + 1


@xblock.jit
def _fails_inside(x):
    y = x + 1
    return y & 1  # HELPER-ERR


@xblock.jit
def _calls_failing(x):
    return _fails_inside(x)


@xblock.jit
def k_helper_too_many(x_ptr, n):
    x = xl.load(x_ptr + xl.arange(0, 16))
    y = _add_one(x, 2)  # ERR
    xl.store(x_ptr + xl.arange(0, 16), y)


def test_helper_called_with_too_many_arguments():
    compile_error(k_helper_too_many, SIG, match="_add_one")


@xblock.jit
def k_helper_too_few(x_ptr, n):
    y = _add_one()  # ERR
    xl.store(x_ptr, y)


def test_helper_called_with_too_few_arguments():
    compile_error(k_helper_too_few, SIG, match="_add_one")


@xblock.jit
def k_helper_bad_keyword(x_ptr, n):
    x = xl.load(x_ptr + xl.arange(0, 16))
    y = _add_one(x, scale=2)  # ERR
    xl.store(x_ptr + xl.arange(0, 16), y)


def test_helper_called_with_unknown_keyword():
    compile_error(k_helper_bad_keyword, SIG, match="scale")


@xblock.jit
def k_builtin_bad_args(x_ptr, n):
    offs = xl.arange(0, 16, 2)  # ERR
    xl.store(x_ptr + offs, 1.0)


def test_builtin_called_with_too_many_arguments():
    compile_error(k_builtin_bad_args, SIG, match="arange")


@xblock.jit
def k_error_in_helper(x_ptr, n):
    x = xl.load(x_ptr + xl.arange(0, 16))
    xl.store(x_ptr + xl.arange(0, 16), _fails_inside(x))


def test_error_inside_helper_points_at_helper_line():
    # the error is in the helper's body: its own file and line, not the call site
    compile_error(k_error_in_helper, SIG, line=line_of(_fails_inside, "# HELPER-ERR"), match="integer operands")


@xblock.jit
def k_error_in_nested_helper(x_ptr, n):
    x = xl.load(x_ptr + xl.arange(0, 16))
    xl.store(x_ptr + xl.arange(0, 16), _calls_failing(x))


def test_error_in_nested_helper_points_at_innermost_line():
    compile_error(k_error_in_nested_helper, SIG, line=line_of(_fails_inside, "# HELPER-ERR"))


def test_def_line_helper_agrees_with_inspect():
    assert def_line(k_error_in_helper) == line_of(k_error_in_helper, "def k_error_in_helper")
