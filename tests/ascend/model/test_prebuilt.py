"""The parts every kernel build on the model shares (model/launch.py `_prebuilt`): built once per model
version into the cache, used by generated kernels, and the same program as a kernel built whole."""

import numpy as np

import xblock
import xblock.language as xl
from xblock.backends.ascend.model import launch


@xblock.jit
def scaled_rows(x_ptr, y_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs, mask=offs < n, other=0.0)
    xl.store(y_ptr + offs, xl.exp(x) * 3 - x, mask=offs < n)


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
    assert (folders[0] / launch.RUNTIME_NAME).is_file() and (folders[0] / (launch.PCH_NAME + ".gch")).is_file()
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
