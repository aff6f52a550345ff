"""The bad-input table: user mistakes, each on every target (sim, cpu, ascend), each getting an xblock
error that names the problem (and the kernel's line where it has one) while the user's arrays stay
as they were; the valid-but-unusual inputs of the same list (fp64, bool, NaN/Inf, empty arrays,
in-place updates, a zero grid) run and give numpy's answer. Kernels: bad_inputs.py."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import xblock
from xblock.errors import CompilationError, ExecutionError, LaunchError, XBlockError

from . import bad_inputs as B
from ._helpers import assert_clean, line_of, source_file

TARGETS = ["sim", "cpu", "ascend"]


def f32(n=64):
    return np.arange(n, dtype=np.float32)


# --------------------------------------------------------------------------- mistakes in the kernel
# (kernel, positional args, meta, what the message says); the error is at the kernel's `# ERR` line
COMPILE = {
    "runtime arange bound": (B.arange_runtime, (f32(), 8), {}, r"arange's start and end must be constexpr"),
    "runtime block shape": (B.zeros_runtime, (f32(), 8), {}, r"block shapes must be constexpr"),
    "block over 2**20 elements": (B.huge_block, (f32(),), {"BLOCK": 1 << 21}, r"exceeds the largest block"),
    "shapes that do not broadcast": (B.no_broadcast, (f32(),), {"BLOCK": 8}, r"\[8\] and \[16\] do not broadcast"),
    "float pointer offset": (B.float_offset, (f32(),), {"BLOCK": 8}, r"pointer offsets must be integers"),
    "dot of 1-D blocks": (B.dot_1d, (f32(),), {"BLOCK": 16}, r"dot needs two 2-D blocks"),
    "reduction axis out of range": (B.bad_axis, (f32(),), {"BLOCK": 8}, r"axis 1 out of range"),
    "block through a scalar pointer": (B.block_into_scalar_ptr, (f32(),), {"BLOCK": 8},
                                       r"cannot store a block of shape \[8\] through a scalar pointer"),
    "`if` on a block": (B.if_on_block, (f32(),), {"BLOCK": 8}, r"`if` condition must be a scalar"),
    "loop-carried shape change": (B.carried_type_change, (f32(), 2), {"BLOCK": 8},
                                  r"loop-carried variable 'acc' has type"),
    "float range bound": (B.float_range, (f32(),), {}, r"range bounds must be integers"),
    "bitwise and of floats": (B.bitwise_float, (f32(),), {"BLOCK": 8}, r"bitwise operator needs integer"),
    "shift of floats": (B.shift_float, (f32(),), {"BLOCK": 8}, r"bitwise operator needs integer"),
    "float store mask": (B.float_mask, (f32(),), {"BLOCK": 8}, r"store's mask must be a bool block"),
    "`other` without a mask": (B.other_without_mask, (f32(),), {"BLOCK": 8}, r"`other` cannot be provided"),
    "unknown dtype": (B.unknown_cast, (f32(),), {"BLOCK": 8}, r"no attribute 'float128'"),
    "failing static_assert": (B.failing_static_assert, (f32(),), {"BLOCK": 8}, r"BLOCK must be at least 64"),
    "`with` statement": (B.with_statement, (f32(),), {}, r"unsupported syntax: With"),
    "lambda": (B.lambda_in_kernel, (f32(),), {}, r"unsupported syntax: Lambda"),
    "try/except": (B.try_except, (f32(),), {}, r"unsupported syntax: Try"),
    "list comprehension": (B.list_comprehension, (f32(),), {}, r"unsupported syntax: ListComp"),
    "recursion": (B.recursive, (f32(), 3), {}, r"'recursive' calls itself"),
    "numpy function on blocks": (B.numpy_on_blocks, (f32(),), {"BLOCK": 8}, r"cannot call 'sum' on blocks"),
    "global numpy array": (B.reads_global_array, (f32(),), {}, r"global variable 'GLOBAL_ARRAY' \(ndarray\)"),
    "assignment into a block": (B.subscript_assignment, (f32(),), {"BLOCK": 8}, r"blocks are immutable"),
    "program_id(3)": (B.program_id_3, (f32(),), {}, r"program_id axis must be a constexpr 0, 1 or 2"),
    "undefined name": (B.undefined_name, (f32(),), {}, r"name 'not_defined_anywhere' is not defined"),
    "unknown block method": (B.missing_attribute, (f32(),), {"BLOCK": 8}, r"no attribute 'no_such_method'"),
    "kernel returning a value": (B.returns_value, (f32(),), {}, r"a kernel cannot return a value"),
    "`%` on a pointer": (B.mod_on_pointer, (f32(),), {}, r"unsupported operand types \*fp32"),
    "exp of a pointer": (B.exp_of_pointer, (f32(),), {}, r"expected a floating-point operand, got \*fp32"),
    "join of two dtypes": (B.join_dtypes, (f32(),), {"BLOCK": 8}, r"join needs two blocks of one dtype"),
    "split of a dim that is not 2": (B.split_not_two, (f32(),), {"BLOCK": 8}, r"last dimension is 2"),
    "sort along dim 0": (B.sort_not_last, (f32(),), {"BLOCK": 8}, r"last dimension only .*inside tl.sort"),
    "gather of two ranks": (B.gather_rank, (f32(),), {"BLOCK": 8}, r"blocks of one rank"),
    "histogram of floats": (B.histogram_float, (f32(),), {"BLOCK": 8}, r"histogram needs a 1-D integer block"),
    "cat without can_reorder": (B.cat_without_reorder, (f32(),), {"BLOCK": 8}, r"cat needs can_reorder=True"),
    "mask with a block pointer": (B.block_ptr_with_mask, (f32(), 8), {"BLOCK": 8},
                                  r"`mask` and `other` cannot be given .* block pointer"),
    "boundary_check out of range": (B.block_ptr_bad_check, (f32(), 8), {"BLOCK": 8},
                                    r"boundary_check dimension 1 is out of range"),
    "atomic_and on floats": (B.atomic_on_float_and, (f32(),), {}, r"atomic_and needs an integer pointer"),
    "map_elementwise": (B.mapped_selu, (f32(),), {"BLOCK": 8}, r"map_elementwise \(_selu_scalar .*tl.where"),
    "inline PTX": (B.inline_ptx, (f32(),), {"BLOCK": 8}, r"inline_asm_elementwise is not supported"),
    "constexpr given an array": (B.copy, (f32(), f32(), 64), {"BLOCK": np.zeros(2)}, r"cannot use a value of type"),
    "constexpr given a float": (B.copy, (f32(), f32(), 64), {"BLOCK": 64.0}, r"constexpr integers"),
    "pointer given None": (B.copy, (None, f32(), 64), {"BLOCK": 64}, r"NoneType"),
    "scalar given an array": (B.copy, (f32(), f32(), f32()), {"BLOCK": 64}, r"unsupported operand types int32"),
}


def _ids(table):
    return [re.sub(r"[^a-z0-9]+", "-", k.lower()).strip("-") for k in table]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", list(COMPILE), ids=_ids(COMPILE))
def test_mistake_in_the_kernel(case, target):
    kernel, args, meta, match = COMPILE[case]
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises(CompilationError) as info:
        xblock.jit(kernel)[(1,)](*args, target=target, **meta)
    err = info.value
    assert re.search(match, err.message), f"{case}: {match!r} not in {err.message!r}"
    assert err.file == source_file(kernel), str(err)
    if "# ERR" in "".join(inspect.getsourcelines(kernel.fn)[0]):
        assert err.line == line_of(kernel), f"{case}: reported line {err.line}:\n{err}"
    assert_clean(str(err))
    for a, b in zip(args, before):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------- mistakes at the launch
def _readonly():
    a = f32()
    a.flags.writeable = False
    return a


# (grid, args factory, meta, message): the error names the kernel's file and `def` line
LAUNCH = {
    "missing argument": ((1,), lambda: (f32(), f32()), {"BLOCK": 64}, r"missing argument 'n'"),
    "extra argument": ((1,), lambda: (f32(), f32(), 64, 5), {"BLOCK": 64}, r"multiple values for argument 'BLOCK'"),
    "unknown keyword": ((1,), lambda: (f32(), f32(), 64), {"BLOCK": 64, "COLOR": 1}, r"unexpected argument 'COLOR'"),
    "misspelt launch option": ((1,), lambda: (f32(), f32(), 64), {"BLOCK": 64, "num_wraps": 4},
                               r"unexpected argument 'num_wraps'"),
    "missing constexpr": ((1,), lambda: (f32(), f32(), 64), {}, r"missing argument 'BLOCK'"),
    "pointer given an int": ((1,), lambda: (5, f32(), 64), {"BLOCK": 64}, r"'x_ptr' is used as a pointer but got int"),
    "pointer given a list": ((1,), lambda: ([1.0] * 64, f32(), 64), {"BLOCK": 64}, r"'x_ptr' has type list"),
    "int given a string": ((1,), lambda: (f32(), f32(), "64"), {"BLOCK": 64}, r"'n' has type str"),
    "read-only output": ((1,), lambda: (f32(), _readonly(), 64), {"BLOCK": 64}, r"'y_ptr' is read-only"),
    "strided view as output": ((1,), lambda: (f32(), np.zeros(128, np.float32)[::2], 64), {"BLOCK": 64},
                               r"'y_ptr' is not contiguous"),
    "complex array": ((1,), lambda: (f32().astype(np.complex64), f32(), 64), {"BLOCK": 64}, r"dtype complex64"),
    "object array": ((1,), lambda: (np.array([None] * 64, object), f32(), 64), {"BLOCK": 64}, r"dtype object"),
    "negative grid": ((-1,), lambda: (f32(), f32(), 64), {"BLOCK": 64}, r"non-negative sizes"),
    "float grid": ((1.5,), lambda: (f32(), f32(), 64), {"BLOCK": 64}, r"grid sizes must be integers"),
    "four grid axes": ((1, 1, 1, 1), lambda: (f32(), f32(), 64), {"BLOCK": 64}, r"1 to 3 non-negative sizes"),
    "grid over CUDA's limits": ((1, 65536, 65536), lambda: (f32(), f32(), 64), {"BLOCK": 64},
                                r"grid axis 1 has 65536 programs"),
    "grid function returning a string": (lambda meta: "x", lambda: (f32(), f32(), 64), {"BLOCK": 64},
                                         r"grid must be 1 to 3 non-negative integers"),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", list(LAUNCH), ids=_ids(LAUNCH))
def test_mistake_at_the_launch(case, target):
    grid, make, meta, match = LAUNCH[case]
    args = make()
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kernel = xblock.jit(B.copy)
    for _ in range(2):  # the second launch takes the warm fast path where there is one
        with pytest.raises(LaunchError) as info:
            kernel[grid](*args, target=target, **meta)
        text = str(info.value)
        assert re.search(match, text), f"{case}: {match!r} not in {text!r}"
        assert text.startswith(f"{source_file(B.copy)}:"), text
        assert_clean(text)
    for a, b in zip(args, before):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


def test_unknown_target_suggests_one():
    with pytest.raises(XBlockError, match=r"unknown target 'cpux' .*did you mean 'cpu'"):
        xblock.jit(B.copy)[(1,)](f32(), f32(), 64, BLOCK=64, target="cpux")


# --------------------------------------------------------------------------- mistakes found running
RUN = {  # (kernel, grid, args factory, meta, message on sim/cpu)
    "unmasked load past the end": (B.unmasked_copy, (2,), lambda: (f32(40), np.zeros(128, np.float32)),
                                   {"BLOCK": 32}, r"out-of-bounds load in program \(1, 0, 0\)"),
    "n larger than the array": (B.copy, (1,), lambda: (f32(10), np.zeros(64, np.float32), 64), {"BLOCK": 64},
                                r"out-of-bounds load in program \(0, 0, 0\)"),
    "int32 offset overflow": (B.wrapping_offsets, (3,), lambda: (f32(), np.zeros(64, np.float32)), {"BLOCK": 64},
                              r"out-of-bounds load in program \(1, 0, 0\)"),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", list(RUN), ids=_ids(RUN))
def test_mistake_found_running(case, target):
    kernel, grid, make, meta, match = RUN[case]
    args = make()
    with pytest.raises(ExecutionError) as info:
        xblock.jit(kernel)[grid](*args, target=target, **meta)
    text = str(info.value)
    assert text.startswith(f"{source_file(kernel)}:"), text
    if target == "ascend":  # the model names the copy that would read outside the argument on a 910B
        assert re.search(r"the AscendC model stopped the kernel: block \d+: DataCopy\w*\(GM->UB\): reads", text), text
    else:
        assert re.search(match, text), text
        assert f":{line_of(kernel) if kernel is not B.copy else 17}: " in text, text
    assert_clean(text)


# --------------------------------------------------------------------------- unusual but valid
@pytest.mark.parametrize("target", TARGETS)
def test_fp64_bool_empty_inplace_and_zero_grid(target):
    x = f32().astype(np.float64)
    y = np.zeros(64)
    xblock.jit(B.copy)[(1,)](x, y, 64, BLOCK=64, target=target)
    np.testing.assert_array_equal(y, x)
    b = np.arange(64) % 3 == 0
    out = np.zeros(64, bool)
    xblock.jit(B.copy)[(1,)](b, out, 64, BLOCK=64, target=target)
    np.testing.assert_array_equal(out, b)
    xblock.jit(B.copy)[(1,)](np.zeros(0, np.float32), np.zeros(0, np.float32), 0, BLOCK=64, target=target)
    a, c = f32(), np.full(64, 2.0, np.float32)
    xblock.jit(B.in_place_add)[(1,)](a, c, 64, BLOCK=64, target=target)  # output aliases an input
    np.testing.assert_array_equal(a, f32() + 2)
    untouched = np.full(64, 7.0, np.float32)
    xblock.jit(B.copy)[(0,)](f32(), untouched, 64, BLOCK=64, target=target)  # a zero grid runs nothing
    np.testing.assert_array_equal(untouched, 7.0)


@pytest.mark.parametrize("target", TARGETS)
def test_nan_and_inf_through_reductions(target):
    x = np.zeros(64, np.float32)
    x[:4] = [1.0, np.inf, -np.inf, 2.0]
    out = np.zeros(2, np.float32)
    xblock.jit(B.row_sum)[(1,)](x, out, 4, BLOCK=64, target=target)
    assert np.isnan(out[0]) and out[1] == np.inf  # inf + -inf; max sees +inf
    x[:4] = [1.0, np.nan, 3.0, 2.0]
    xblock.jit(B.row_sum)[(1,)](x, out, 4, BLOCK=64, target=target)
    assert np.isnan(out[0]) and out[1] == 3.0  # max skips NaN unless all are NaN (Triton's rule)


@pytest.mark.parametrize("target", TARGETS)
def test_a_good_launch_after_every_mistake(target):
    """Nothing above corrupted the cache or the process: the plain kernel still compiles and runs."""
    x, y = f32(), np.zeros(64, np.float32)
    xblock.jit(B.copy)[(1,)](x, y, 64, BLOCK=64, target=target)
    np.testing.assert_array_equal(y, x)


def test_cuda_needs_power_of_two_blocks():
    from xblock.backends.cuda.precompile import precompile

    with pytest.raises(CompilationError, match=r"cuda: Triton needs block dimensions that are powers of 2"):
        precompile(B.arange_not_pow2, (f32(),), {})
