"""Without XBLOCK_DEBUG, a user-facing error carries no compiler-internal frames or chained context."""

import traceback

import numpy as np
import pytest

import xblock
import xblock.language as xl
from tests._pkg import in_package

INTERNAL_DIRS = ("/xblock/frontend/", "/xblock/sim/", "/xblock/passes/", "/xblock/dialects/")


@xblock.jit
def bad(x_ptr, n):
    x = xl.load(x_ptr + xl.arange(0, 16))
    xl.store(x_ptr + xl.arange(0, 16), x & 1)


@xblock.jit
def oob(x_ptr, BLOCK: xl.constexpr):
    xl.store(x_ptr + xl.arange(0, BLOCK), 1.0)


def _frames(err):
    return [f.filename for f in traceback.extract_tb(err.__traceback__)]


def _shown(err) -> str:
    return "".join(traceback.format_exception(type(err), err, err.__traceback__))


def test_compile_error_has_no_frontend_frames(monkeypatch):
    monkeypatch.delenv("XBLOCK_DEBUG", raising=False)
    with pytest.raises(xblock.CompilationError) as info:
        xblock.compile(bad, target="sim", signature={"x_ptr": "*fp32", "n": "i32"})
    err = info.value
    assert err.__suppress_context__ and err.__cause__ is None
    assert not [f for f in _frames(err) if any(d in f for d in INTERNAL_DIRS)], _frames(err)
    shown = _shown(err)
    assert "During handling" not in shown and "SemanticError" not in shown


def test_launch_compile_error_has_no_frontend_frames(monkeypatch):
    monkeypatch.delenv("XBLOCK_DEBUG", raising=False)
    x = np.zeros(16, np.float32)
    with pytest.raises(xblock.CompilationError) as info:
        bad[(1,)](x, 16, target="sim")
    err = info.value
    assert err.__suppress_context__
    assert not [f for f in _frames(err) if any(d in f for d in INTERNAL_DIRS)], _frames(err)


def test_execution_error_has_no_simulator_frames(monkeypatch):
    monkeypatch.delenv("XBLOCK_DEBUG", raising=False)
    x = np.zeros(8, np.float32)
    with pytest.raises(xblock.ExecutionError) as info:
        oob[(1,)](x, BLOCK=16, target="sim")
    err = info.value
    assert err.__suppress_context__
    assert not [f for f in _frames(err) if any(d in f for d in INTERNAL_DIRS)], _frames(err)
    np.testing.assert_array_equal(x, 0)


def test_debug_mode_keeps_internal_frames(monkeypatch):
    # XBLOCK_DEBUG=1 is for compiler developers: the failure surfaces with the frontend's frames
    monkeypatch.setenv("XBLOCK_DEBUG", "1")
    with pytest.raises(Exception) as info:
        xblock.compile(bad, target="sim", signature={"x_ptr": "*fp32", "n": "i32"})
    assert any("/xblock/frontend/" in f for f in _frames(info.value)), _frames(info.value)


@xblock.autotune(configs=[xblock.Config({"BLOCK": 16}), xblock.Config({"BLOCK": 32})], key=[])
@xblock.jit
def tuned_oob(x_ptr, BLOCK: xl.constexpr):
    xl.store(x_ptr + xl.arange(0, BLOCK), 1.0)


def test_an_autotuned_launch_error_has_no_runtime_frames(monkeypatch):
    monkeypatch.delenv("XBLOCK_DEBUG", raising=False)
    x = np.zeros(8, np.float32)
    with pytest.raises(xblock.XBlockError) as info:
        tuned_oob[(1,)](x, target="sim")
    err = info.value
    assert err.__suppress_context__
    frames = _frames(err)
    assert not [f for f in frames if in_package(f) and not f.endswith("autotune.py")], frames
    assert len([f for f in frames if f.endswith("autotune.py")]) <= 1, frames
