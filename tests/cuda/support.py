"""Shared by the cuda tests: example launches specialized as on a GPU, without one.

`TensorSpec` describes an argument the way a torch CUDA tensor does (dtype name, an aligned
data_ptr), so specializations and cache keys computed here are those a GPU launch of the same
example computes; that is how kernels are precompiled here and carried to a GPU machine.
"""

from __future__ import annotations

import importlib

import numpy as np

from xblock.backends.cuda.precompile import TensorSpec, precompile

EXAMPLES = ["add", "softmax", "layernorm", "rmsnorm", "matmul", "gelu", "argmax", "cumsum", "transpose",
            "colsum", "triton.add", "triton.softmax", "triton.matmul", "triton.layernorm"]

def fake_args(args):
    """Numpy arrays -> TensorSpec: the launch arguments as a GPU launch on torch tensors sees them."""
    return tuple(TensorSpec.like(a) if isinstance(a, np.ndarray) else a for a in args)


def example_case(name, size=None, dtype=None):
    mod = importlib.import_module("examples." + name)
    size = mod.SIZES[-1] if size is None else size
    dtype = mod.DTYPES[0] if dtype is None else dtype
    return mod.case(size, dtype)


def compile_case(case, options=None, args=None):
    """Compile a case's kernel for cuda exactly as `kernel[grid](*cuda_tensors)` would (no launch)."""
    return precompile(case.kernel, fake_args(case.args) if args is None else args, case.meta, **(options or {}))


def all_cases():
    """(example, size, dtype) of every numerics case."""
    out = []
    for name in EXAMPLES:
        mod = importlib.import_module("examples." + name)
        for dt in mod.DTYPES:
            for size in mod.SIZES:
                out.append((name, size, dt))
    return out
