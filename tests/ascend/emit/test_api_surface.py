"""The AscendC calls of the kernels tests/ascend adds (control flow, device_assert, scalar-loop
reductions) are ones shared/ascendc/REFERENCE.md documents, like the examples' (tests/lit); those of
the integer bit operations are documented there or in docs/DESIGN.md's "Integer bit operations",
which records their asc-devkit facts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import xblock
from tests.ascend.lower.test_bitwise import logic_kernel, mask_xor_kernel, shift_kernel, umulhi_kernel
from tests.ascend.lower.test_control import if_kernel, row_sum_while, while_kernel
from tests.ascend.lower.test_debug import assert_kernel, scalar_assert_kernel
from tests.ascend.lower.test_reductions import axis_kernel, rows_kernel
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


I32 = "*i32"
BIT_CASES = [
    (logic_kernel, {"a_ptr": "*i8", "b_ptr": "*i8", "out_ptr": "*i8", "s": "i32"}, {"BLOCK": 64}),
    (shift_kernel, {"a_ptr": "*i16", "c_ptr": "*i16", "out_ptr": "*i16", "s": "i32"}, {"BLOCK": 64, "K": 3}),
    (umulhi_kernel, {"a_ptr": I32, "b_ptr": I32, "out_ptr": I32, "s": "i32"}, {"BLOCK": 64, "C": 7}),
    (mask_xor_kernel, {"a_ptr": F32, "b_ptr": F32, "out_ptr": F32}, {"BLOCK": 64}),
]
DESIGN = Path(__file__).resolve().parents[3] / "docs" / "DESIGN.md"


def _calls(cases) -> set:
    called = set()
    for kernel, sig, consts in cases:
        src = xblock.compile(kernel, target="ascend", signature=sig, constexprs=consts).asm["cpp"]
        called |= set(re.findall(r"\b([A-Z][A-Za-z]+)(?:<[^<>()]*>)?\(", src))
        called |= set(re.findall(r"\.([A-Z][A-Za-z]+)(?:<[^<>()]*>)?\(", src))
    return called


def test_every_api_call_is_in_the_reference():
    ref = REFERENCE.read_text() if REFERENCE.exists() else None
    if ref is None:
        pytest.skip("shared/ascendc/REFERENCE.md is not next to this checkout")
    called = _calls(CASES)
    missing = sorted(n for n in called - _TYPES - _NOT_IN_REFERENCE if n not in ref)
    assert not missing, f"AscendC calls not documented in REFERENCE.md: {missing}"
    assert {"Select", "ReduceMin", "GetValue", "SetValue", "DataCacheCleanAndInvalid"} <= called


def test_the_bit_operations_call_documented_apis():
    ref = REFERENCE.read_text() if REFERENCE.exists() else None
    if ref is None:
        pytest.skip("shared/ascendc/REFERENCE.md is not next to this checkout")
    text = DESIGN.read_text()
    start = text.index("### Integer bit operations")
    section = text[start:text.index("\n#", start + 1)]
    called = _calls(BIT_CASES)
    missing = sorted(n for n in called - _TYPES if n not in ref and f"`{n}`" not in section)
    assert not missing, f"AscendC calls documented neither in REFERENCE.md nor in DESIGN.md: {missing}"
    assert {"And", "Or", "Not", "Sub", "ShiftLeft", "ShiftRight", "Mul", "Muls", "Select", "Cast",
            "ReinterpretCast"} <= called
    for name in ("ShiftLeft", "ShiftRight", "Not", "And", "Or", "Mul"):  # each with its asc-devkit fact
        assert f"`{name}`" in section, name
