"""Golden TTIR (the text `lowering.emit_ttir` gives Triton's parser) of four examples, with filecheck.

Each `cuda/<example>.ttir` opens with a sentence on what it protects. The kernels are specialized
as a launch on torch CUDA tensors specializes them (TensorSpec arguments), with Triton 3.6's
spellings; the same text must also parse in the installed Triton.
"""

import importlib

import pytest

from tests.cuda.support import fake_args
from xblock.backends.cuda.emit import TTIRDialect
from xblock.backends.cuda.lowering import emit_ttir
from xblock.dialects import xb
from xblock.runtime.compiler import compile_specialization

from .golden import HERE, filecheck, strip_locs

GOLDEN = {"add": (1024, "float32"), "softmax": ((4, 781), "float32"), "matmul": ((64, 64, 64), "float16"),
          "argmax": ((5, 300), "float32")}


def _xb_module(name):
    from mlir import ir

    case = importlib.import_module("examples." + name).case(*GOLDEN[name])
    _, spec, _ = case.kernel.specialize(case.kernel.bind(fake_args(case.args), case.meta))
    ck = compile_specialization(case.kernel.source, spec, "sim", {})
    return ir.Module.parse(ck.asm["xb"], xb.context())


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_ttir_golden(name):
    text = emit_ttir(_xb_module(name), TTIRDialect(cache_policy=False))
    filecheck(HERE / "cuda" / f"{name}.ttir", strip_locs(text))


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_ttir_parses_in_installed_triton(name):
    pytest.importorskip("triton")
    from xblock.backends.cuda.pipeline import _context, _parse, ttir_dialect

    text = emit_ttir(_xb_module(name), ttir_dialect())
    module = _parse(text, _context(), name)
    assert f"tt.func public @{name}_kernel" in str(module)
