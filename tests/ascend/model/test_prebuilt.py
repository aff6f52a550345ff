"""The parts every kernel build on the model shares (model/launch.py `_prebuilt`): built once per model
version into the cache, used by generated kernels, and the same program as a kernel built whole."""

import subprocess

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
    include = ["-I", str(folders[0] / launch.INCLUDE)]  # the headers without the runtime's definitions
    # gold links where the toolchain has it
    link = [str(folders[0] / launch.RUNTIME_NAME), *(folders[0] / launch.LINK_NAME).read_text().split()]
    assert link[1:] in ([], ["-fuse-ld=gold"])
    pre, objects = launch.prebuilt_flags('// a comment\n#include "kernel_operator.h"\n')
    assert pre == [launch.PREBUILT, *include, "-include", str(folders[0] / launch.PCH_NAME)]
    assert objects == link
    # a kernel that includes something else first is not given the precompiled header (the order of
    # its includes is its own), only the runtime object and its headers
    pre, objects = launch.prebuilt_flags('#include <cmath>\n#include "kernel_operator.h"\n')
    assert pre == [launch.PREBUILT, *include] and objects == link
    assert sorted(p.name for p in (folders[0] / launch.INCLUDE).glob("*.h")) == sorted(
        p.name for p in launch.EMU_DIR.glob("*.h"))


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


def test_elided_headers_declare_the_runtime_functions_on_the_same_lines():
    """`elide_runtime`: an XBEMU_RT definition becomes its declaration (a member function's nothing: its
    class declares it); braces in comments and literals do not end a body; every line keeps its number
    (a compiler message about a kernel build points at the model's own header lines)."""
    src = ('// XBEMU_RT in a comment {\n'
           'XBEMU_RT int f(int a, Site s = Site{}) {\n'
           '    const char* t = "}{\\"}";  // }\n'
           "    char c = '{', d = '\\'';\n"
           '    /* } */\n'
           '    return a;\n'
           '}\n'
           'XBEMU_RT void g(int);\n'
           'struct K {\n    K();\n    ~K();\n};\n'
           'XBEMU_RT K::K() {\n    f(1);\n}\n'
           'XBEMU_RT K::~K() noexcept(false) { f(2); }\n'
           'XBEMU_RT __attribute__((noreturn)) void h(const char* m,\n'
           '                                         int n) {\n'
           '    throw m;\n'
           '}\n'
           'template <typename T> inline T id(T x) { return x; }\n')
    out = launch.elide_runtime(src)
    assert out.count("\n") == src.count("\n")
    lines = out.splitlines()
    assert lines[1] == "XBEMU_RT int f(int a, Site s = Site{});" and lines[2:7] == [""] * 5
    assert lines[7] == "XBEMU_RT void g(int);"
    assert "K::" not in out and "f(1)" not in out and "f(2)" not in out
    assert lines[16:18] == ["XBEMU_RT __attribute__((noreturn)) void h(const char* m,",
                            "                                         int n);"]
    assert "throw" not in out and lines[-1] == src.splitlines()[-1]
    for h in launch.EMU_DIR.glob("*.h"):
        text = h.read_text()
        assert launch.elide_runtime(text).count("\n") == text.count("\n"), h.name


def test_a_kernel_build_compiles_none_of_the_runtime(tmp_path, monkeypatch):
    """The kernel's object leaves the XBEMU_RT functions (and the templates only their bodies use) to the
    runtime object: it defines no symbol that the runtime object defines, but those both may (weak ones)."""
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path))
    ck = xblock.compile(scaled_rows, target="ascend", signature=SIG, constexprs={"BLOCK": 128})
    pre, objects = launch.prebuilt_flags(ck.asm["cpp"])
    meta = ck.metadata
    (tmp_path / "kernel.cpp").write_text(ck.asm["cpp"])
    (tmp_path / f"{meta['name']}_tiling.h").write_text(launch.tiling_header(meta["name"], meta["tiling_fields"], 0))
    (tmp_path / "shim.cpp").write_text(launch.shim_source(meta))
    flags = [f for f in launch.CXXFLAGS if f != "-shared"]
    subprocess.run([launch.CXX, *flags, *pre, "-I", str(launch.EMU_DIR), "-I", str(tmp_path), "-c",
                    str(tmp_path / "shim.cpp"), "-o", str(tmp_path / "k.o")], check=True)

    def strong(path):
        out = subprocess.run(["nm", "--defined-only", str(path)], capture_output=True, text=True, check=True).stdout
        return {line.split()[2] for line in out.splitlines() if line.split()[1] == "T"}

    kernel, runtime = strong(tmp_path / "k.o"), strong(objects[0])
    assert len(runtime) > 100 and not kernel & runtime
    assert "_ZN5xbemu4failERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEES7_" in runtime
