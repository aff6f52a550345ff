"""Golden cpu lowering (upstream MLIR before the LLVM conversion) of three examples, with filecheck,
and of device_print / device_assert.

Each `cpu/<example>.mlir` opens with a sentence on what it protects. The LLVM-dialect stage of
each must also parse back and name the native entry point.
"""

import importlib

import pytest

import xblock
import xblock.language as xl
from xblock.backends.cpu.pipeline import lower_kernel, make_llvm_mlir
from xblock.dialects import xb
from xblock.runtime.compiler import compile_specialization

from .golden import HERE, filecheck

GOLDEN = {"add": (1024, "float32"), "softmax": ((4, 781), "float32"), "matmul": ((64, 64, 64), "float16")}


def _xb_module(name):
    """The xb of the example, specialized as a launch specializes it (strides equal to 1...)."""
    from mlir import ir

    case = importlib.import_module("examples." + name).case(*GOLDEN[name])
    _, spec, _ = case.kernel.specialize(case.kernel.bind(case.args, case.meta))
    ck = compile_specialization(case.kernel.source, spec, "sim", {})
    return ir.Module.parse(ck.asm["xb"], xb.context())


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_cpu_lowering_golden(name):
    module = _xb_module(name)
    with module.context:
        text = lower_kernel(module)
    filecheck(HERE / "cpu" / f"{name}.mlir", text)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_llvm_dialect_stage(name):
    text = make_llvm_mlir(_xb_module(name), {"name": name})
    assert "llvm.func @xb_launch" in text
    assert "scf." not in text and "vector.load" not in text and "memref." not in text


_DEBUG_CHECKS = """
// The device_print call goes through the print slot (after the kernel's 2 arguments) with the
// addresses of the printed buffers; a failing device_assert records (program << 16 | id) with an
// atomic unsigned min in the status slot, and the rest of the program runs under its condition.
// xb_launch skips the programs after a recorded failure; xb_run hands out ranges of programs.
// CHECK-LABEL: func.func private @xb_program
// CHECK: llvm.getelementptr %args[3]
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: llvm.call %{{.*}}(%{{.*}}, %pid0, %pid1, %pid2, %{{.*}}) : !llvm.ptr, (i32, i32, i32, i32, !llvm.ptr) -> ()
// CHECK: vector.reduction <and>
// CHECK: scf.if
// CHECK: llvm.atomicrmw umin
// CHECK: scf.if %[[OK:.*]] {
// CHECK: llvm.store
// CHECK-LABEL: func.func @xb_launch
// CHECK: llvm.load %st atomic monotonic
// CHECK: scf.if %before
// CHECK-LABEL: func.func @xb_run
// CHECK: llvm.atomicrmw add
"""


@xblock.jit
def _debugged(x_ptr, out_ptr, BLOCK: xl.constexpr):
    x = xl.load(x_ptr + xl.arange(0, BLOCK))
    xl.device_print("x", x)
    xl.device_assert(x > 0, "positive")
    xl.store(out_ptr + xl.arange(0, BLOCK), x)


def test_print_and_assert_lowering(tmp_path):
    from mlir import ir

    ck = xblock.compile(_debugged, target="sim", signature={"x_ptr": "*fp32", "out_ptr": "*fp32"},
                        constexprs={"BLOCK": 64})
    module = ir.Module.parse(ck.asm["xb"], xb.context())
    meta = {}
    with module.context:
        text = lower_kernel(module, meta)
    checks = tmp_path / "debug.mlir"
    checks.write_text(_DEBUG_CHECKS)
    filecheck(checks, text)
    assert meta["prints"] == [{"prefix": "x", "values": [[[64], "f32"]]}]
    asserts = [a for a in meta["asserts"] if a.get("kind") != "bounds"]  # bounds checks share the table
    assert [a["message"] for a in asserts] == ["positive"]
    assert [a["what"] for a in meta["asserts"] if a.get("kind") == "bounds"] == ["load", "store"]
