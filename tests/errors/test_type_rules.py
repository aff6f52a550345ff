"""Triton 3.6's type rules, enforced where Triton enforces them: one kernel per rule, each refused at
the user's line with xblock's message and no compiler-internal frame (xblock/frontend/type_rules.py
names the Triton source of each rule). What Triton accepts, and what xblock deliberately accepts
beyond it (docs/LANGUAGE.md, "Where xblock differs from Triton"), still compiles. Kernels:
type_rule_kernels.py."""

from __future__ import annotations

import traceback

import numpy as np
import pytest

import xblock

from . import type_rule_kernels as K
from ._helpers import compile_error

F32 = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}
I32 = {"x_ptr": "*i32", "y_ptr": "*i32", "n": "i32"}
INTERNAL_DIRS = ("/xblock/frontend/", "/xblock/language/", "/xblock/sim/", "/xblock/passes/", "/xblock/dialects/")


EXPECT_FLOAT = r"expected a floating-point operand, got int32 \(as in Triton, math functions do not take integers\)"
POINTERS = r"is not defined for pointers \(\*fp32\), as in Triton"
# id: (kernel, signature, what the message says); the Triton 3.6 source of each rule is in type_rules.py
CASES = {
    "tl.exp of int32": (K.exp_of_int, I32, "exp: " + EXPECT_FLOAT),
    "xl.exp of int32": (K.xl_exp_of_int, I32, "exp: " + EXPECT_FLOAT),
    "x.sqrt() of int32": (K.sqrt_method_of_int, I32, "sqrt: " + EXPECT_FLOAT),
    "tl.math.floor of int32": (K.floor_of_int, I32, "floor: " + EXPECT_FLOAT),
    "tl.log of an int32 scalar": (K.log_of_int_scalar, I32, "log: " + EXPECT_FLOAT),
    "tl.sigmoid of int32": (K.sigmoid_of_int, I32, "sigmoid: " + EXPECT_FLOAT),
    "tl.softmax of int32": (K.softmax_of_int, I32, "exp: " + EXPECT_FLOAT + r".* \(inside tl.softmax"),
    "libdevice.tanh of int32": (K.libdevice_of_int, I32, "tanh: " + EXPECT_FLOAT),
    "libdevice.pow of an int32 base": (K.pow_of_int_base, I32, "pow: " + EXPECT_FLOAT),
    "div_rn of int32": (K.div_rn_of_ints, I32, "div_rn: " + EXPECT_FLOAT),
    "sqrt_rn of int32": (K.sqrt_rn_of_int, I32, "sqrt_rn: " + EXPECT_FLOAT),
    "fdiv by a Python int": (K.fdiv_by_python_int, F32, r"fdiv needs floating-point operands, got float32 and int32"),
    "fdiv of int32": (K.fdiv_of_ints, I32, r"fdiv needs floating-point operands, got int32 and int32"),
    "umulhi of int16": (K.umulhi_of_int16, I32, r"umulhi needs int32, int64, uint32 or uint64 operands .*got int16"),
    "atomic_add of int16": (K.atomic_add_int16, F32, r"atomic_add does not support int16 \(as in Triton\)"),
    "atomic_max of float16": (K.atomic_max_fp16, F32, r"atomic_max does not support float16 .*only atomic_add"),
    "atomic_xchg of bfloat16": (K.atomic_xchg_bf16, F32, r"atomic_xchg does not support bfloat16"),
    "atomic_cas of uint8": (K.atomic_cas_uint8, F32, r"atomic_cas does not support uint8 .*16, 32 or 64 bits"),
    "atomic int32 mask": (K.atomic_int_mask, F32, r"atomic_add's mask must be a bool block .*got int32"),
    "load int32 mask": (K.load_int_mask, F32, r"a load's mask must be a bool block .*got int32"),
    "scalar-pointer load, block mask": (K.load_scalar_pointer_block_mask, F32,
                                        r"a load through a scalar pointer cannot take a block mask"),
    "`not` of int32": (K.not_of_int, I32, r"`not` needs bool \(int1\) operands, got int32"),
    "`and` of int32 blocks": (K.and_of_ints, I32, r"`and` needs bool \(int1\) operands, got int32"),
    "`or` of int32 scalars": (K.or_of_int_scalars, I32, r"`or` needs bool \(int1\) operands, got int32"),
    "sum of pointers": (K.sum_of_pointers, {**F32, "y_ptr": "*i64"}, "sum " + POINTERS),
    "argmax of pointers": (K.argmax_of_pointers, F32, "argmax " + POINTERS),
    "cumsum of pointers": (K.cumsum_of_pointers, F32, "cumsum " + POINTERS),
    "abs of pointers": (K.abs_of_pointers, F32, "abs " + POINTERS),
    "unary minus of a pointer": (K.negated_pointer, F32, "unary minus " + POINTERS),
    "tl.full of int32 with 1.5": (K.full_int_with_float, I32, r"cannot fill a block of int32 with the float 1.5"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_triton_type_rule_is_enforced_at_the_line(case, monkeypatch):
    monkeypatch.delenv("XBLOCK_DEBUG", raising=False)
    kernel, sig, says = CASES[case]
    err = compile_error(kernel, sig, match=says)  # file:line:col, the line, the caret; nothing internal
    frames = [f.filename for f in traceback.extract_tb(err.__traceback__)]
    assert not [f for f in frames if any(d in f for d in INTERNAL_DIRS)], frames
    shown = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    assert "During handling" not in shown and "SemanticError" not in shown, shown


def test_what_triton_accepts_still_compiles():
    xblock.compile(K.accepted, target="sim",
                   signature={"x_ptr": "*fp32", "h_ptr": "*fp16", "i_ptr": "*i32", "y_ptr": "*fp32", "n": "i32"})


@pytest.mark.parametrize("target", ["sim", "cpu"])
def test_where_on_a_pointer_condition_runs(target):
    x, y = np.zeros(8, np.float32), np.zeros(8, np.float32)
    xblock.jit(K.pointer_condition)[(1,)](x, y, target=target)
    np.testing.assert_array_equal(y, np.ones(8, np.float32))
