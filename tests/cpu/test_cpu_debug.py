"""device_print and device_assert on the cpu target: the same output and the same error text as
the sim, the lowest failing program whatever the threads did, and a failed top-level assert
stops its program there."""

import numpy as np
import pytest

import xblock
import xblock.language as xl
from tests.errors._helpers import assert_clean, line_of, source_file


@xblock.jit
def _printing(x_ptr, h_ptr, BLOCK: xl.constexpr):
    pid = xl.program_id(0)
    x = xl.load(x_ptr + pid * BLOCK + xl.arange(0, BLOCK))
    h = xl.load(h_ptr + xl.arange(0, 2))
    xl.device_print("x", x, pid, x > 2.0)
    xl.device_print("h", h, xl.sum(x, axis=0), (x * 2).to(xl.int16))


def test_device_print_matches_the_sim(capsys):
    x = np.arange(12, dtype=np.float32) / 2
    h = np.array([0.5, -1.25], np.float16)
    _printing[(3,)](x, h, BLOCK=4, target="sim")
    sim = capsys.readouterr().out.splitlines()
    _printing[(3,)](x, h, BLOCK=4, target="cpu")
    cpu = capsys.readouterr().out.splitlines()
    assert "pid (2, 0, 0) x [4.  4.5 5.  5.5] 2 [ True  True  True  True]" in cpu
    assert sorted(cpu) == sorted(sim)  # the sim prints op by op; the cpu program by program
    assert cpu[:2] == [ln for ln in sim if ln.startswith("pid (0, 0, 0)")]


@xblock.jit
def _checked(x_ptr, out_ptr, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs)
    xl.store(out_ptr + offs, x * 2)
    xl.device_assert(x >= 0, "x must be non-negative")  # ERR
    xl.store(out_ptr + offs, x * 3)


def _error(kernel, grid, args, meta, target):
    with pytest.raises(xblock.ExecutionError) as info:
        kernel[grid](*args, target=target, **meta)
    return str(info.value)


@pytest.mark.parametrize("bad", [[20], [20, 40, 1000], [1000, 4000]])
def test_device_assert_failure_is_the_sims(bad):
    x = np.arange(64 * 80, dtype=np.float32)
    x[bad] = -1
    out = np.zeros_like(x)
    cpu = _error(_checked, (80,), (x, out), {"BLOCK": 64}, "cpu")
    sim = _error(_checked, (80,), (x, out.copy()), {"BLOCK": 64}, "sim")
    assert cpu == sim  # the lowest failing program, at the assert's line
    assert cpu.startswith(f"{source_file(_checked)}:{line_of(_checked, '# ERR')}: device_assert failed in program "
                          f"({bad[0] // 64}, 0, 0): x must be non-negative")
    assert_clean(cpu)
    first = bad[0] // 64 * 64
    np.testing.assert_array_equal(out[first : first + 64], 2 * x[first : first + 64])  # stopped at the assert
    np.testing.assert_array_equal(out[:first], 3 * x[:first])  # every program before it ran whole


def test_device_assert_passing():
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    _checked[(4,)](x, out, BLOCK=16, target="cpu")
    np.testing.assert_array_equal(out, 3 * x)


@xblock.jit
def _nested(x_ptr, n, BLOCK: xl.constexpr):
    pid = xl.program_id(1)
    assert pid < 3, "at most 3 rows"  # a scalar condition
    for i in range(0, n, BLOCK):
        x = xl.load(x_ptr + pid * n + i + xl.arange(0, BLOCK))
        if i > 0:
            xl.device_assert(x != 7, "no sevens")  # LOOP


def test_assert_in_a_loop_and_scalar_conditions():
    x = np.zeros((3, 64), np.int32)
    _nested[(1, 3)](x, 64, BLOCK=16, target="cpu")
    x[2, 40] = 7
    x[1, 3] = 7  # in the first chunk: not checked
    cpu = _error(_nested, (1, 3), (x, 64), {"BLOCK": 16}, "cpu")
    assert cpu == _error(_nested, (1, 3), (x, 64), {"BLOCK": 16}, "sim")
    assert f":{line_of(_nested, '# LOOP')}: device_assert failed in program (0, 2, 0): no sevens" in cpu
    x[2, 40] = 0
    assert "program (0, 3, 0): at most 3 rows" in _error(_nested, (1, 4), (x, 64), {"BLOCK": 16}, "cpu")
