"""device_assert and device_print on the ascend target: a failing assert is an ExecutionError at the
kernel's line naming the program, worded as the sim words it; print is a clear CompilationError."""

from __future__ import annotations

import numpy as np
import pytest

import xblock
import xblock.language as xl


@xblock.jit
def assert_kernel(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    mask = offs < n
    x = xl.load(x_ptr + offs, mask=mask, other=0.0)
    xl.device_assert(x >= 0.0, "x must be non-negative")
    xl.store(out_ptr + offs, xl.sqrt(x), mask=mask)


@xblock.jit
def scalar_assert_kernel(x_ptr, n, LIMIT: xl.constexpr):
    pid = xl.program_id(0)
    xl.device_assert(pid < LIMIT, "pid out of range")
    xl.store(x_ptr + pid, pid * 1.0, mask=pid < n)


@xblock.jit
def print_kernel(x_ptr, BLOCK: xl.constexpr):
    x = xl.load(x_ptr + xl.arange(0, BLOCK))
    xl.device_print("x", x)


def _messages(kernel, grid, *args, **kw):
    out = {}
    for target in ("sim", "ascend"):
        a = [v.copy() if isinstance(v, np.ndarray) else v for v in args]
        with pytest.raises(xblock.ExecutionError) as e:
            kernel[grid](*a, target=target, **kw)
        out[target] = str(e.value)
    return out


def test_failing_block_assert_names_the_line_and_program_like_the_sim():
    n = 300
    x = np.abs(np.random.default_rng(0).standard_normal(n)).astype(np.float32)
    out = np.zeros(n, np.float32)
    assert_kernel[(3,)](x, out, n, BLOCK=128, target="ascend")  # holds: runs through
    np.testing.assert_allclose(out, np.sqrt(x), rtol=1e-6)
    x[290] = -1.0  # program 2 fails; the masked-off lanes (other=0.0) do not
    msgs = _messages(assert_kernel, (3,), x, out, n, BLOCK=128)
    assert msgs["ascend"] == msgs["sim"]
    assert "test_debug.py:18: device_assert failed in program (2, 0, 0): x must be non-negative" in msgs["ascend"]


def test_failing_scalar_assert_reports_the_lowest_program():
    x = np.zeros(64, np.float32)
    msgs = _messages(scalar_assert_kernel, (64,), x, 64, LIMIT=37)
    assert msgs["ascend"] == msgs["sim"]
    assert "device_assert failed in program (37, 0, 0): pid out of range" in msgs["ascend"]


def test_device_print_is_a_clear_compilation_error():
    with pytest.raises(xblock.CompilationError) as e:
        xblock.compile(print_kernel, target="ascend", signature={"x_ptr": "*fp32"}, constexprs={"BLOCK": 32})
    msg = str(e.value)
    assert "test_debug.py:32:" in msg and "device_print is not supported on ascend" in msg
    assert "Traceback" not in msg and "xblock/backends" not in msg


def test_export_passes_the_assert_status_buffer(tmp_path):
    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    ck = xblock.compile(assert_kernel, target="ascend", signature=sig, constexprs={"BLOCK": 128})
    d = tmp_path / "proj"
    ck.export(d)
    main = (d / "main.cpp").read_text()
    assert "(blockDim, stream, x_ptrDevice, out_ptrDevice, assertStatusDevice, &tiling);" in main
    assert "std::vector<int64_t> assertStatusHost((blockDim ? blockDim : 1) * 8, -1);" in main  # 64 B a block
    assert "GM_ADDR assertStatus" in (d / "kernel.cpp").read_text()
