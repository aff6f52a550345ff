"""Every supported CANN builds the same kernel.cpp (issue 29, item 1), checked on xblock's AscendC model.

The model's CANN 8 build (XBEMU_CANN_VERSION=8) is a CANN 8.3/8.5 compiler: only the old API names, and
`__NPU_ARCH__` predefined as those releases' compilers do. The old `#if defined(__NPU_ARCH__)` switch
picked CANN 9's `Compares` there and did not compile; the generated kernels with comparisons, `where`
and atomics now use the names every release declares and build as CANN 8 and as CANN 9.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

import xblock
import xblock.language as xl
from tests.ascend.model.test_model_fidelity import PLANTED, build, kernel_source, metadata
from xblock.backends.ascend.emit.cpp import tiling_header
from xblock.backends.ascend.model.launch import CXX, CXXFLAGS, EMU_DIR, shim_source
from xblock.errors import ExecutionError

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the AscendC model is built with g++")

OLD_SWITCH = """#ifndef XBLOCK_CANN_API
#if defined(__NPU_ARCH__)
#define XBLOCK_CANN_API 9
#else
#define XBLOCK_CANN_API 8
#endif
#endif
"""
BODY = """    TBuf<TPosition::VECCALC> calc;
    pipe.InitBuffer(calc, 1024);
    LocalTensor<float> v = calc.Get<float>(64);
    LocalTensor<uint8_t> m = calc.GetWithOffset<uint8_t>(32, 512);
    Duplicate(v, 1.0f, 64);
    // planted.py:6: m = v < 2.0
#if XBLOCK_CANN_API >= 9
    Compares(m, v, 2.0f, CMPMODE::LT, 64);
#else
    CompareScalar(m, v, 2.0f, CMPMODE::LT, 64);
#endif
"""


def test_the_old_npu_arch_switch_fails_the_cann_8_build():
    src = kernel_source("switched", "GM_ADDR y", BODY).replace("using namespace AscendC;",
                                                              OLD_SWITCH + "\nusing namespace AscendC;")
    with pytest.raises(ExecutionError) as e:
        build("switched", src, metadata("switched", ["y"], [], [0]))
    msg = str(e.value)
    assert "as a CANN 8 build" in msg and "Compares" in msg and msg.startswith(f"{PLANTED}:6: "), msg[:600]


@xblock.jit
def where_kernel(x_ptr, y_ptr, n, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs, mask=offs < n, other=0.0)
    xl.store(y_ptr + offs, xl.where(x > 0.5, x, 0.0), mask=offs < n)


@xblock.jit
def atomic_kernel(x_ptr, y_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs, mask=offs < n, other=0.0)
    xl.atomic_add(y_ptr + xl.arange(0, BLOCK), x)


@pytest.mark.parametrize("kernel,call", [(where_kernel, "CompareScalar("), (atomic_kernel, "SetAtomicNone();")],
                         ids=["where", "atomic"])
def test_generated_comparisons_and_atomics_build_as_cann_8(kernel, call, tmp_path):
    ck = xblock.compile(kernel, target="ascend", signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"},
                        constexprs={"BLOCK": 256})
    cpp, meta = ck.asm["cpp"], ck.metadata
    assert call in cpp and "#if" not in cpp
    name = meta["name"]
    (tmp_path / "kernel.cpp").write_text(cpp)
    (tmp_path / f"{name}_tiling.h").write_text(tiling_header(name, meta["tiling_fields"],
                                                             meta.get("workspace_bytes", 0)))
    (tmp_path / "shim.cpp").write_text(shim_source(meta))
    for version in ("8", "9"):
        res = subprocess.run([CXX, *CXXFLAGS[:3], "-fsyntax-only", f"-DXBEMU_CANN_VERSION={version}", "-I",
                              str(EMU_DIR), "-I", str(tmp_path), str(tmp_path / "shim.cpp")],
                             capture_output=True, text=True)
        assert res.returncode == 0, f"CANN {version}: {res.stderr[-2000:]}"
