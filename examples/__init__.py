"""Example kernels in the xblock language; each module exposes a kernel, SIZES, DTYPES and case().

`examples/triton/` holds unmodified `@triton.jit` versions of some of them, with the same
convention. That folder deliberately has no `__init__.py`: as a regular package it would shadow
the real `triton` whenever `examples/` is on `sys.path` (e.g. `python examples/add.py`).
"""

EXAMPLES = [
    "add",
    "softmax",
    "layernorm",
    "rmsnorm",
    "matmul",
    "gelu",
    "argmax",
    "cumsum",
    "transpose",
    "colsum",
]
TRITON_EXAMPLES = ["add", "softmax", "matmul", "layernorm"]
