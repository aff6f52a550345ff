"""Golden xb for every example: the frontend and passes must keep emitting the same ops.

Each `xb/<example>.mlir` opens with a sentence on what it protects; regenerate deliberately with
`python tests/lit/regen_xb.py` and review the diff.
"""

import importlib

import pytest

from xblock.cli import signature_from_case
from xblock.runtime.compiler import compile as xcompile

from .golden import HERE, filecheck, strip_locs

GOLDEN = {  # example -> (size, dtype) the golden was made with
    "add": (1024, "float32"), "softmax": ((4, 781), "float32"), "layernorm": ((4, 3001), "float32"),
    "rmsnorm": ((4, 1000), "float16"), "matmul": ((64, 64, 64), "float16"), "gelu": (1024, "float16"),
    "argmax": ((4, 1000), "float32"), "cumsum": ((4, 1000), "float32"), "transpose": ((64, 64), "float32"),
    "colsum": ((64, 64), "float32"),
}


def emitted_xb(name: str) -> str:
    mod = importlib.import_module("examples." + name)
    size, dtype = GOLDEN[name]
    case = mod.case(size, dtype)
    sig, consts = signature_from_case(case.kernel, case)
    return strip_locs(xcompile(case.kernel, target="sim", signature=sig, constexprs=consts).asm["xb"])


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_xb_golden(name):
    filecheck(HERE / "xb" / f"{name}.mlir", emitted_xb(name))
