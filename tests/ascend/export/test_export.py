"""The exported CANN project: `xblock export` needs the specialization, the launch header model, the host
check (main.cpp against its kernel), the project's files (no absolute path, the README's facts), the
data scripts and the ACL model's checks. tests/ascend/export/test_export_run.py builds and runs every example.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import xblock
import xblock.language as xl
from examples import add
from xblock.backends.ascend.export.hostcheck import (
    HostCheckError,
    KernelSignatureError,
    check_host,
    launch_header,
    model_toolkit,
    parse_entries,
    run_project,
)
from xblock.backends.ascend.export.project import gen_data
from xblock.backends.ascend.plan.plan import AscendPlan
from xblock.cli import main
from xblock.exporting import case_name, export_with_case, grid_formula
from xblock.testing import Case

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the AscendC model is built with g++")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ADD = "examples/add.py:add_kernel"


def _export(tmp_path, *extra, name="proj"):
    out = tmp_path / name
    assert main(["export", ADD, "-o", str(out), *extra]) == 0
    return out


@pytest.fixture(scope="module")
def add_project(tmp_path_factory):
    """add_kernel exported for its case float32-1024 (n divisible by 16: main.cpp checks it)."""
    return _export(tmp_path_factory.mktemp("add"), "--case", "float32-1024")


@pytest.fixture(scope="module")
def toolkit(tmp_path_factory):
    return model_toolkit(tmp_path_factory.mktemp("toolkit"))


# ------------------------------------------------------------------------------ the command line
def test_export_without_a_specialization_names_what_to_pass(tmp_path, capsys):
    assert main(["export", ADD, "-o", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert "needs the specialization" in err and "--case NAME" in err and "--size SIZE" in err
    assert "--signature with -D" in err and "float32-1023" in err  # the file's cases, by name
    assert not (tmp_path / "p").exists()


def test_export_of_an_unknown_case_lists_the_cases(tmp_path, capsys):
    assert main(["export", ADD, "-o", str(tmp_path / "p"), "--case", "float32-7"]) == 2
    err = capsys.readouterr().err
    assert "no case 'float32-7' in add.py" in err and "bfloat16-98432" in err


def test_export_with_case_and_size_is_refused(tmp_path, capsys):
    assert main(["export", ADD, "-o", str(tmp_path / "p"), "--case", "float32-1023", "--size", "5"]) == 2
    assert "--case names the size and dtype" in capsys.readouterr().err


def test_export_from_a_signature_needs_every_constexpr(tmp_path, capsys):
    sig = "x_ptr=*fp32,y_ptr=*fp32,out_ptr=*fp32,n=i32"
    assert main(["export", ADD, "-o", str(tmp_path / "p"), "-s", sig]) == 3
    assert "constexpr parameter 'BLOCK' needs a value" in capsys.readouterr().err


def test_case_names_follow_size_and_dtype():
    assert case_name(98432, np.float32) == "float32-98432" and case_name((823, 781), "bfloat16") == "bfloat16-823x781"
    assert grid_formula(add.case) == "(xblock.cdiv(size, BLOCK),)"


# ------------------------------------------------------------------------------ launch header model
KERNEL = """#include "kernel_operator.h"
#include "t.h"
// extern "C" __global__ __aicore__ void commented_out(GM_ADDR x)
extern "C" __global__ __aicore__ void k(GM_ADDR x, __gm__ float* __restrict__ y, uint32_t stream,
                                        const Tiling tiling)
{
}
"""

HEADER = """// aclrtlaunch_k.h: the launch function of kernel k, declared as CANN's
// ascendc_library() declares it. Written by xblock's host check, not by CANN.
#ifndef XBLOCK_MODEL_ACLRTLAUNCH_K_H
#define XBLOCK_MODEL_ACLRTLAUNCH_K_H
#include "acl/acl_base.h"

#ifndef ACLRT_LAUNCH_KERNEL
#define ACLRT_LAUNCH_KERNEL(kernel_func) aclrtlaunch_##kernel_func
#endif

extern "C" uint32_t aclrtlaunch_k(uint32_t numBlocks, aclrtStream _stream, void* x, void* y, uint32_t stream, \
const Tiling* tiling);

#endif  // XBLOCK_MODEL_ACLRTLAUNCH_K_H
"""


def test_launch_header_of_each_parameter_kind(tmp_path):
    # GM pointers -> void*, a struct from an included header -> pointer, a scalar as is; a kernel
    # parameter named `stream` renames the launch's own
    (tmp_path / "t.h").write_text("struct Tiling {\n    int32_t n;\n};\n")
    (tmp_path / "k.cpp").write_text(KERNEL)
    (entry,) = parse_entries(tmp_path / "k.cpp")
    assert [(p.name, p.kind) for p in entry.params] == [("x", "gm"), ("y", "gm"), ("stream", "scalar"),
                                                        ("tiling", "struct")]
    assert launch_header(entry) == HEADER


def test_a_struct_the_sources_do_not_define_is_passed_by_value(tmp_path):
    (tmp_path / "k.cpp").write_text(KERNEL.replace('#include "t.h"\n', ""))
    (entry,) = parse_entries(tmp_path / "k.cpp")
    assert entry.params[-1].kind == "scalar" and "const Tiling tiling);" in launch_header(entry)


@pytest.mark.parametrize("params,message", [
    ("float* x", "a pointer outside global memory"),
    ("GM_ADDR x, int32_t& n", "cannot be passed by a kernel launch"),
])
def test_launch_header_refuses_parameters_a_launch_cannot_pass(tmp_path, params, message):
    (tmp_path / "k.cpp").write_text(f'extern "C" __global__ __aicore__ void k({params}) {{}}\n')
    with pytest.raises(KernelSignatureError, match=message):
        parse_entries(tmp_path / "k.cpp")


def test_a_source_without_an_entry_is_an_error(tmp_path):
    (tmp_path / "k.cpp").write_text('__aicore__ void helper(GM_ADDR x) {}\n')
    with pytest.raises(KernelSignatureError, match='no extern "C" __global__ __aicore__ void entry'):
        parse_entries(tmp_path / "k.cpp")


# ------------------------------------------------------------------------------ host check
def test_main_includes_the_tiling_header_first_and_passes_its_address(add_project):
    host = (add_project / "main.cpp").read_text()
    assert host.index('#include "add_kernel_tiling.h"') < host.index('#include "aclrtlaunch_add_kernel.h"')
    assert ("ACLRT_LAUNCH_KERNEL(add_kernel)(blockDim, stream, x_ptrDevice, y_ptrDevice, out_ptrDevice, &tiling);"
            in host)
    check_host(add_project)  # compiles against the launch header derived from kernel.cpp


@pytest.mark.parametrize("old,new,message", [
    ("&tiling);", "tiling);", "cannot convert 'AddKernelTilingData'"),  # the defect every export had
    ('#include "add_kernel_tiling.h"  // before the launch header: that header declares no struct type\n'
     '#include "aclrtlaunch_add_kernel.h"\n',
     '#include "aclrtlaunch_add_kernel.h"\n#include "add_kernel_tiling.h"\n', "AddKernelTilingData' has not been"),
    ("ACL_MEMCPY_HOST_TO_DEVICE", "ACL_MEMCPY_HOST_TO_DEV", "ACL_MEMCPY_HOST_TO_DEV' was not declared"),
    # the precompiled header holds main.cpp's own leading includes: one it lacks is still missing
    ("#include <vector>\n", "", "'vector' in namespace 'std' does not name a template type"),
])
def test_host_check_catches_a_host_program_that_cannot_build(add_project, tmp_path, old, new, message):
    proj = tmp_path / "p"
    shutil.copytree(add_project, proj)
    host = (proj / "main.cpp").read_text()
    assert old in host
    (proj / "main.cpp").write_text(host.replace(old, new))
    with pytest.raises(HostCheckError) as e:
        check_host(proj)
    assert message in str(e.value)


def test_host_check_precompiles_main_cpps_leading_includes(add_project, tmp_path, monkeypatch):
    from xblock.backends.ascend.export.hostcheck import check

    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path / "cache"))
    host = (add_project / "main.cpp").read_text()
    pch = check._host_pch(host)
    assert pch is not None and pch.with_name(pch.name + ".gch").is_file()
    included = [line for line in pch.read_text().splitlines()]
    assert included[0] == "#include <cerrno>" and included[-1] == '#include "acl/acl.h"'
    assert all(line in host for line in included) and "tiling.h" not in pch.read_text()
    assert check._host_pch(host.replace("#include <cmath>\n", "")) != pch  # other includes, another header
    assert check._host_pch("int main() { return 0; }\n") is None


def test_host_check_reads_the_kernel_not_the_metadata(add_project, tmp_path):
    # a kernel.cpp with one more GM argument than main.cpp passes: the launch header follows kernel.cpp
    proj = tmp_path / "p"
    shutil.copytree(add_project, proj)
    cpp = (proj / "kernel.cpp").read_text().replace("GM_ADDR out_ptr,", "GM_ADDR out_ptr, GM_ADDR extra,")
    (proj / "kernel.cpp").write_text(cpp)
    with pytest.raises(HostCheckError, match="too few arguments to function"):
        check_host(proj)


# ------------------------------------------------------------------------------ the project's files
def _text_files(d):
    return [p for p in d.rglob("*") if p.is_file() and p.suffix != ".bin"]


def test_an_export_names_no_absolute_path(add_project):
    assert sorted(p.relative_to(add_project).as_posix() for p in add_project.rglob("*") if p.is_file()) == [
        "CMakeLists.txt", "README.md", "add_kernel_tiling.h", "golden/out_ptr.bin", "kernel.cpp", "kernel.json",
        "main.cpp", "run.sh", "scripts/gen_data.py", "scripts/verify_result.py"]
    machine = [ROOT, os.path.expanduser("~"), str(add_project.parent), os.getcwd(), sys.prefix]
    for p in _text_files(add_project):
        text = p.read_text()
        for path in machine:
            assert path not in text, (p.name, path)
        body = text.split("\n", 1)[1] if text.startswith("#!") else text  # a shebang is not this machine's
        assert not re.search(r"(?<![\w.<])/(usr|home|tmp|work|root|opt)/", body), p.name


def test_line_directives_name_the_file_only(tmp_path):
    ck = xblock.compile(add.add_kernel, target="ascend", signature={"x_ptr": "*fp32", "y_ptr": "*fp32",
                        "out_ptr": "*fp32", "n": "i32"}, constexprs={"BLOCK": 256}, line_directives=True)
    assert f'"{add.__file__}"' in ck.asm["cpp"]
    ck.export(tmp_path / "p")
    cpp = (tmp_path / "p" / "kernel.cpp").read_text()
    assert re.search(r'#line \d+ "add.py"', cpp) and ROOT not in cpp
    readme = " ".join((tmp_path / "p" / "README.md").read_text().split())
    assert "(divisible by 16, equal to 1) is not recorded" in readme  # ck.export() knows no launch


def test_readme_and_kernel_json_state_the_specialization(add_project):
    readme = " ".join((add_project / "README.md").read_text().split())
    assert "No CANN toolkit built or ran this project" in readme
    for fact in ("constexprs: `BLOCK = 1024`", "| `x_ptr` | GM buffer of float32 |", "| `n` | int32 scalar",
                 "`n` divisible by 16", "grid is `(1, 1, 1)` in the exported case",
                 "`(xblock.cdiv(size, BLOCK),)`", "case `float32-1024` of `examples/add.py`",
                 "./build/add_kernel 1 1 1 4096 4096 4096 1024", "cmake -B build -DSOC_VERSION=Ascend910B3"):
        assert fact in readme, fact
    info = json.loads((add_project / "kernel.json").read_text())
    assert info["specialization"]["constexprs"] == {"BLOCK": 1024}
    plan = AscendPlan.from_dict(info["plan"])  # the plan the planner kept, in kernel.json and the README
    # the kernel as written; its inputs are streamed (plan/streaming.py): out of L2 on launches larger than it
    assert plan == AscendPlan(l2_bypass=("x_ptr", "y_ptr")) and f"the plan: {plan.describe()}" in readme
    assert info["specialization"]["divisible_by_16"] == ["n", "out_ptr", "x_ptr", "y_ptr"]
    launch = info["launch"]
    assert launch["grid"] == [1, 1, 1] and launch["scalars"] == {"n": 1024}
    assert [(b["name"], b["role"], b["shape"]) for b in launch["buffers"]] == [
        ("x_ptr", "input", [1024]), ("y_ptr", "input", [1024]), ("out_ptr", "output", [1024])]
    out = launch["buffers"][2]  # x + y in float32: one IEEE add, and the output's own rounding
    assert out["tolerance"] == "1 x addf" and out["rtol"] == 2.39e-7 and 2.39e-7 < out["atol"] < 1e-6, out
    assert "This kernel: 1 x addf." in readme and "needs a CANN toolkit, 8.0 to 9.1" in readme
    host = (add_project / "main.cpp").read_text()
    assert "if (tiling.n % 16 != 0) {" in host  # main.cpp refuses what the build assumed


def test_an_export_without_a_case_builds_but_has_no_data(tmp_path):
    out = _export(tmp_path, "-s", "x_ptr=*fp32,y_ptr=*fp32,out_ptr=*fp32,n=i32", "-D", "BLOCK=256")
    assert not (out / "run.sh").exists() and not (out / "golden").exists()
    readme = " ".join((out / "README.md").read_text().split())
    assert "This export has no launch case" in readme and "constexprs: `BLOCK = 256`" in readme
    assert "nothing about the values of the arguments" in readme  # a signature compiles no integer facts
    info = json.loads((out / "kernel.json").read_text())
    assert "launch" not in info and info["specialization"]["divisible_by_16"] == []
    check_host(out)


# ------------------------------------------------------------------------------ data scripts
def _splitmix(i: int, seed: int) -> float:
    """The generator gen_data.py documents, in Python integers."""
    mask = (1 << 64) - 1
    z = (i + seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return ((z ^ (z >> 31)) >> 11) / 2.0**53


def test_generated_inputs_do_not_depend_on_numpy_random():
    # the golden was computed from these exact values: they must not change with numpy's version
    assert gen_data._uniform(6, 3).tolist() == [_splitmix(i, 3) for i in range(6)]
    buf = {"name": "x", "dtype": "float32", "shape": [4], "role": "input", "low": -1.0, "high": 1.0}
    assert gen_data.generate(buf, 0).tolist() == [-0.14285917580127716, -0.1285802572965622, 0.16926424205303192,
                                                  -0.2097170352935791]
    assert gen_data.generate(dict(buf, dtype="int8", low=-3, high=3), 1).tolist() == [-1, -2, -2, -3]
    assert gen_data.generate(dict(buf, dtype="bfloat16"), 0).tolist() == [48658, 48644, 15917, 48727]  # bits
    assert gen_data.generate(dict(buf, role="output"), 0).tolist() == [0, 0, 0, 0]


# runs a script with xblock and ml_dtypes made unimportable: the project's scripts need numpy only
NUMPY_ONLY = ("import runpy, sys; sys.modules['xblock'] = sys.modules['ml_dtypes'] = None; sys.argv = sys.argv[1:]; "
              "runpy.run_path(sys.argv[0], run_name='__main__')")


def _script(proj, name):
    return subprocess.run([sys.executable, "-c", NUMPY_ONLY, str(proj / "scripts" / name)], capture_output=True,
                          text=True)


def test_gen_data_and_verify_result_run_with_numpy_only(add_project, tmp_path):
    proj = tmp_path / "p"
    shutil.copytree(add_project, proj)
    gen = _script(proj, "gen_data.py")
    assert gen.returncode == 0, gen.stderr
    (proj / "output").mkdir()
    x, y = (np.fromfile(proj / "input" / f"{n}.bin", np.float32) for n in ("x_ptr", "y_ptr"))
    (x + y).tofile(proj / "output" / "out_ptr.bin")  # what the kernel computes
    ok = _script(proj, "verify_result.py")
    assert ok.returncode == 0 and "PASS: 1 of 1 outputs" in ok.stdout, ok.stdout + ok.stderr
    (x + y + np.float32(1e-3) * (np.arange(x.size) == 7)).tofile(proj / "output" / "out_ptr.bin")
    bad = _script(proj, "verify_result.py")
    assert bad.returncode == 1 and "1 of 1024 elements differ" in bad.stdout and "at (7,)" in bad.stdout


def test_gen_data_refuses_inputs_that_are_not_the_golden_ones(add_project, tmp_path):
    proj = tmp_path / "p"
    shutil.copytree(add_project, proj)
    info = json.loads((proj / "kernel.json").read_text())
    info["launch"]["buffers"][0]["low"] = -2.0
    (proj / "kernel.json").write_text(json.dumps(info))
    res = subprocess.run([sys.executable, str(proj / "scripts" / "gen_data.py")], capture_output=True, text=True)
    assert res.returncode == 1 and "x_ptr differ from the data the golden was computed from" in res.stderr


# ------------------------------------------------------------------------------ on the model toolkit
def test_main_refuses_values_the_build_assumed_otherwise(add_project, toolkit, tmp_path):
    proj = tmp_path / "p"
    shutil.copytree(add_project, proj)
    res = run_project(proj, toolkit)
    assert res.returncode == 0 and "PASS" in res.stdout, res.stdout + res.stderr
    bad = subprocess.run(["./build/add_kernel", "1", "1", "1", "4092", "4092", "4092", "1023"], cwd=proj,
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "n = 1023: this build assumes n is a multiple of 16" in bad.stderr


def test_the_acl_model_refuses_reading_results_before_synchronizing(add_project, toolkit, tmp_path):
    proj = tmp_path / "p"
    shutil.copytree(add_project, proj)
    host = (proj / "main.cpp").read_text()
    (proj / "main.cpp").write_text(host.replace("        CHECK_ACL(aclrtSynchronizeStream(stream));\n", ""))
    res = run_project(proj, toolkit)
    assert res.returncode != 0
    assert "device memory copied while a launched kernel may still run: aclrtSynchronizeStream first" in res.stderr


@xblock.jit
def checked_copy_kernel(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs, mask=offs < n, other=0.0)
    xl.device_assert(x < 100.0, "x too large")
    xl.store(out_ptr + offs, x, mask=offs < n)


def test_device_asserts_reach_main_through_the_status_buffer(toolkit, tmp_path):
    x = np.linspace(-1.0, 50.0, 300).astype(np.float32)
    case = Case(checked_copy_kernel, (3,), (x, np.zeros_like(x), 300), dict(BLOCK=128), outputs={"out": 1},
                expected={"out": x})
    ck = case.kernel.warmup(*case.args, target="ascend", **case.meta)
    proj = tmp_path / "p"
    export_with_case(ck, proj, case, name="linspace")
    assert "assertStatusDevice, &tiling);" in (proj / "main.cpp").read_text()
    res = run_project(proj, toolkit)
    assert res.returncode == 0 and "PASS" in res.stdout, res.stdout + res.stderr
    x[200] = 500.0  # program 1 (BLOCK 128) fails its assert
    x.tofile(proj / "input" / "x_ptr.bin")
    bad = subprocess.run(["./build/checked_copy_kernel", *json.loads((proj / "kernel.json").read_text())["launch"][
        "command"]], cwd=proj, capture_output=True, text=True)
    assert bad.returncode == 1 and "device_assert 0 failed in program 1" in bad.stderr, bad.stderr
