"""Numerics of every example at boundary sizes and dtypes; one subclass per target re-runs it.

The sim is checked against numpy references; every other target is checked against the sim
(and numpy) at the same sizes. A target that cannot run here skips with the reason.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from xblock.testing import check

EXAMPLES = ["add", "softmax", "layernorm", "rmsnorm", "matmul", "gelu", "argmax", "cumsum", "transpose",
            "colsum", "triton.add", "triton.softmax", "triton.matmul", "triton.layernorm"]


def example_params(names=EXAMPLES):
    params = []
    for name in names:
        mod = importlib.import_module("examples." + name)
        for dt in mod.DTYPES:
            for size in mod.SIZES:
                dname = dt if isinstance(dt, str) else np.dtype(dt).name
                params.append(pytest.param(name, size, dt, id=f"{name}-{dname}-{size}"))
    return params


class ExampleNumerics:
    """Subclass with TARGET = "..."; override `skip_reason()` when the target cannot run here."""

    TARGET = "sim"

    def skip_reason(self) -> str | None:
        return None

    @pytest.mark.parametrize("name,size,dtype", example_params())
    def test_example(self, name, size, dtype):
        reason = self.skip_reason()
        if reason:
            pytest.skip(reason)
        mod = importlib.import_module("examples." + name)
        case = mod.case(size, dtype)
        args = case.copy_args()
        case.run(self.TARGET, args)
        check(case, args)
        if self.TARGET != "sim":
            ref = case.copy_args()
            case.run("sim", ref)
            for out_name, idx in case.outputs.items():
                got, want = args[idx], ref[idx]
                if got.dtype.kind in "iub":
                    np.testing.assert_array_equal(got, want, err_msg=f"{out_name}: {self.TARGET} vs sim")
                else:
                    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                               atol=case.atol, rtol=case.rtol,
                                               err_msg=f"{out_name}: {self.TARGET} vs sim")
