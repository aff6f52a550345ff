"""The AscendC calls of the kernels tests/ascend adds (control flow, device_assert, scalar-loop
reductions) are ones shared/ascendc/REFERENCE.md documents, like the examples' (tests/lit)."""

from __future__ import annotations

import re

import pytest

import xblock
from tests.ascend.test_control import if_kernel, row_sum_while, while_kernel
from tests.ascend.test_debug import assert_kernel, scalar_assert_kernel
from tests.ascend.test_reductions import axis_kernel, rows_kernel
from tests.lit.test_ascend_golden import _NOT_IN_REFERENCE, _TYPES, REFERENCE

F32 = "*fp32"
XO = {"x_ptr": F32, "out_ptr": F32, "n": "i32"}
CASES = [
    (if_kernel, XO, {"BLOCK": 128}),
    (while_kernel, XO, {"BLOCK": 128}),
    (row_sum_while, XO, {"BLOCK": 64}),
    (assert_kernel, XO, {"BLOCK": 128}),
    (scalar_assert_kernel, {"x_ptr": F32, "n": "i32"}, {"LIMIT": 3}),
    (rows_kernel, {"x_ptr": F32, "i_ptr": "*i32", "p_ptr": F32, "x_out_ptr": "*i32", "g_ptr": "*i32",
                   "f_ptr": F32, "n": "i32"}, {"COLS": 64}),
    (axis_kernel, {"x_ptr": "*i32", "out_ptr": "*i32"}, {"R": 8, "C": 16}),
]


def test_every_api_call_is_in_the_reference():
    ref = REFERENCE.read_text() if REFERENCE.exists() else None
    if ref is None:
        pytest.skip("shared/ascendc/REFERENCE.md is not next to this checkout")
    called = set()
    for kernel, sig, consts in CASES:
        src = xblock.compile(kernel, target="ascend", signature=sig, constexprs=consts).asm["cpp"]
        called |= set(re.findall(r"\b([A-Z][A-Za-z]+)(?:<[^<>()]*>)?\(", src))
        called |= set(re.findall(r"\.([A-Z][A-Za-z]+)(?:<[^<>()]*>)?\(", src))
    missing = sorted(n for n in called - _TYPES - _NOT_IN_REFERENCE if n not in ref)
    assert not missing, f"AscendC calls not documented in REFERENCE.md: {missing}"
    assert {"Select", "ReduceMin", "GetValue", "SetValue", "DataCacheCleanAndInvalid"} <= called
