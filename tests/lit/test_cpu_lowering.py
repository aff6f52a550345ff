"""Golden cpu lowering (upstream MLIR before the LLVM conversion) of three examples, with filecheck.

Each `cpu/<example>.mlir` opens with a sentence on what it protects. The LLVM-dialect stage of
each must also parse back and name the native entry point.
"""

import importlib

import pytest

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
