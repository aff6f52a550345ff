"""The parts every kernel build on the model shares (model/launch.py `_prebuilt`): built once per model
version into the cache, used by generated kernels, and the same program as a kernel built whole."""

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.backends.ascend.model import launch
from xblock.errors import ExecutionError


@xblock.jit
def scaled_rows(x_ptr, y_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs, mask=offs < n, other=0.0)
    xl.store(y_ptr + offs, xl.exp(x) * 3 - x, mask=offs < n)


@xblock.jit
def leaky_rows(x_ptr, y_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs, mask=offs < n, other=0.0)
    xl.store(y_ptr + offs, xl.where(x > 0, x, x * 0.01), mask=offs < n)


SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}
N = 300


def _build_and_run():
    """The kernel's library built now (not taken from this process's launchers), run on N elements."""
    ck = xblock.compile(scaled_rows, target="ascend", signature=SIG, constexprs={"BLOCK": 128})
    so = launch.build_emulator_library(ck.asm["cpp"], ck.metadata)
    run = launch.load({"so": so, "cpp": ck.asm["cpp"]}, ck.metadata)
    x = np.linspace(-4, 4, N, dtype=np.float32)
    y = np.zeros(N, np.float32)
    run((3, 1, 1), [x, y, N])
    return x, y


def test_built_once_into_the_cache_and_used_by_generated_kernels(tmp_path, monkeypatch):
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path))
    _build_and_run()
    _build_and_run()
    folders = list((tmp_path / launch.KIND).glob("prebuilt-*"))
    assert len(folders) == 1
    for name in (launch.RUNTIME_NAME, launch.PCH_NAME + ".gch", launch.PCH8_NAME + ".gch"):
        assert (folders[0] / name).is_file(), name
    pre, objects = launch.prebuilt_flags('// a comment\n#include "kernel_operator.h"\n')
    assert pre == [launch.PREBUILT, "-include", str(folders[0] / launch.PCH_NAME)]
    assert objects == [str(folders[0] / launch.RUNTIME_NAME)]
    # a kernel that includes something else first is not given the precompiled header (the order of
    # its includes is its own), only the runtime object
    pre, objects = launch.prebuilt_flags('#include <cmath>\n#include "kernel_operator.h"\n')
    assert pre == [launch.PREBUILT] and objects == [str(folders[0] / launch.RUNTIME_NAME)]


def test_a_kernel_built_whole_gives_the_same_numbers(tmp_path, monkeypatch):
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path / "shared"))
    x, want = _build_and_run()
    np.testing.assert_allclose(want, np.exp(x) * 3 - x, rtol=1e-5, atol=1e-5)
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path / "whole"))
    monkeypatch.setattr(launch, "prebuilt_flags", lambda cpp: ([], []))
    _, whole = _build_and_run()
    np.testing.assert_array_equal(whole, want)
    assert not list((tmp_path / "whole" / launch.KIND).glob("prebuilt-*"))
    assert list((tmp_path / "whole" / launch.KIND).glob("*.so"))  # built here, whole



def test_the_cann8_check_uses_its_own_precompiled_header(tmp_path, monkeypatch):
    """A kernel that calls a CANN 9 name is checked again as a CANN 8 build (syntax only), with the
    precompiled header of that API generation (a header built with other macros would be ignored);
    a kernel that names one in a comment only is not checked."""
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path))
    commands = []
    real = launch.subprocess.run

    def run(cmd, *a, **k):
        commands.append([str(c) for c in cmd])
        return real(cmd, *a, **k)

    monkeypatch.setattr(launch.subprocess, "run", run)
    ck = xblock.compile(leaky_rows, target="ascend", signature=SIG, constexprs={"BLOCK": 128})
    cpp = ck.asm["cpp"]
    assert "CompareScalar(" in cpp and "Compares" in cpp  # the call, and a comment naming CANN 9's spelling
    assert not launch._differs_on_cann8(cpp)
    launch.build_emulator_library(cpp, ck.metadata)
    assert not [c for c in commands if "-DXBEMU_CANN_VERSION=8" in c and "-fsyntax-only" in c]
    cann9 = cpp.replace("CompareScalar(", "Compares(")  # what a CANN 9 only kernel calls
    assert launch._differs_on_cann8(cann9)
    with pytest.raises(ExecutionError, match="as a CANN 8 build"):
        launch.build_emulator_library(cann9, ck.metadata)
    checks = [c for c in commands if "-DXBEMU_CANN_VERSION=8" in c and "-fsyntax-only" in c]
    assert len(checks) == 1
    folder = next((tmp_path / launch.KIND).glob("prebuilt-*"))
    assert checks[0][checks[0].index("-include") + 1] == str(folder / launch.PCH8_NAME)
