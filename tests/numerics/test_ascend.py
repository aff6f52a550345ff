"""Every example on the ascend target (generated AscendC run on xblock's CPU model).

Each example runs at 1, BLOCK-1, BLOCK+1 and a multi-block size in its first dtype, and at BLOCK+1
and the multi-block size in a second one (a half type; bf16 where the example has it), against
numpy and the sim. Most sizes change BLOCK (a constexpr), so each case is one g++ build of about a
second; the full matrix of sizes and dtypes runs with XBLOCK_ASCEND_FULL=1. `matmul` and
`triton.matmul` go through the Cube unit (fp16 and bf16 inputs; fp32 inputs are a CompilationError
at the dot, tested below).
"""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest

from tests.numerics.base import ExampleNumerics
from xblock.testing import bf16

# example -> dtypes; sizes are picked from the example's SIZES by `_boundary_sizes`
SUBSET = {
    "add": [np.float32, "bfloat16"],
    "softmax": [np.float32, np.float16],
    "layernorm": [np.float32, "bfloat16"],
    "rmsnorm": [np.float16, "bfloat16"],
    "matmul": [np.float16, bf16()],  # the dtype object: examples/matmul.py takes np.dtype(dtype)
    "gelu": [np.float16, "bfloat16"],
    "argmax": [np.float32, np.float16],
    "cumsum": [np.float32],
    "transpose": [np.float32, np.int8],
    "colsum": [np.float16],
    "triton.add": [np.float32],
    "triton.softmax": [np.float32],
    "triton.layernorm": [np.float32],
    "triton.matmul": [np.float16],  # `% M` / `% N` wrapped offsets on the Cube path
}
# the Cube unit takes 16-bit inputs only (cube_plan.plan_cube); XBLOCK_ASCEND_FULL runs the rest
FULL_DTYPES = {"matmul": [np.float16, bf16()]}
# (example, size) -> why it does not run yet (only XBLOCK_ASCEND_FULL reaches these)
SKIPPED = {("triton.matmul", (1, 1, 1)): "M = N = 1 folds `% M` to 0, so B's columns are one column "
                                          "broadcast (stride 0), which the Cube path cannot load yet"}


def _boundary_sizes(sizes: list) -> list:
    """1, BLOCK-1, BLOCK+1 and the multi-block size: SIZES is [1, B-1, B, B+1, prime, multi]."""
    return [sizes[0], sizes[1], sizes[3], sizes[-1]] if len(sizes) >= 5 else list(sizes)


def _params():
    params = []
    full = os.environ.get("XBLOCK_ASCEND_FULL", "") not in ("", "0")
    for name, dtypes in SUBSET.items():
        mod = importlib.import_module("examples." + name)
        if full:
            dtypes = FULL_DTYPES.get(name, mod.DTYPES)
        for k, dt in enumerate(dtypes):
            sizes = mod.SIZES if full else _boundary_sizes(mod.SIZES)
            if not full and (k > 0 or name.startswith("triton.")):
                sizes = sizes[2:] if not name.startswith("triton.") else sizes[-1:]
            for size in sizes:
                dname = dt if isinstance(dt, str) else np.dtype(dt).name
                why = SKIPPED.get((name, size))
                params.append(pytest.param(name, size, dt, id=f"{name}-{dname}-{size}",
                                           marks=[pytest.mark.skip(reason=why)] if why else []))
    return params


class TestAscendExamples(ExampleNumerics):
    TARGET = "ascend"

    def skip_reason(self):
        import shutil

        if shutil.which("g++") is None:
            return "the ascend target's CPU model is compiled with g++, which is not installed"
        return None

    @pytest.mark.parametrize("name,size,dtype", _params())
    def test_example(self, name, size, dtype):
        if name.startswith("triton."):
            pytest.importorskip("triton")
        ExampleNumerics.test_example(self, name, size, dtype)


def test_matmul_fp32_inputs_run_on_the_cube():
    """fp32 operands (the example's leaky-ReLU epilogue on the vector core): B reaches L0B through
    LoadDataWithTranspose's b32 squares (tests/ascend/cube/test_cube_dtypes.py)."""
    from examples import matmul
    from xblock.testing import check

    case = matmul.case((70, 50, 90), np.float32)
    got = case.copy_args()
    case.run("ascend", got)
    check(case, got)
