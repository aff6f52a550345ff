"""The exported checker's tolerances (export/project/tolerance.py): derived from the classes of floating-point
ops in the kernel's xb IR, written into kernel.json and stated in the README, exact where the kernel computes
nothing inexact, and loose enough for an NPU's hardware math (1-ulp Exp/Div, another summation order) while
still catching a real error.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.backends.ascend.export.project import tolerance as T
from xblock.cli import main

F32 = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}


@xblock.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs, mask=offs < n, other=0.0)
    xl.store(y_ptr + offs, xl.maximum(x, 0.0), mask=offs < n)


@xblock.jit
def axpy_kernel(x_ptr, y_ptr, n, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs, mask=offs < n, other=0.0)
    xl.store(y_ptr + offs, x * 2.0 + 1.0, mask=offs < n)


@xblock.jit
def exp_div_kernel(x_ptr, y_ptr, n, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs, mask=offs < n, other=0.0)
    xl.store(y_ptr + offs, xl.exp(x) / (x + 3.0), mask=offs < n)


@xblock.jit
def sum_kernel(x_ptr, y_ptr, n, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs, mask=offs < n, other=0.0)
    xl.store(y_ptr, xl.sum(x, axis=0))


@xblock.jit
def atomic_kernel(x_ptr, y_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs, mask=offs < n, other=0.0)
    xl.atomic_add(y_ptr, xl.sum(x, axis=0))


def _budget(kernel, scale=1.0, programs=1, block=256) -> T.Budget:
    ck = xblock.compile(kernel, target="sim", signature=F32, constexprs={"BLOCK": block})
    return T.budget(ck.asm["xb"], scale, programs)


def test_copies_and_max_are_exact():
    b = _budget(copy_kernel)
    assert not b.inexact and T.output_tolerance(b, "float32", np.ones(4)) == (0.0, 0.0)
    assert T.describe(b) == "no inexact floating-point op: compared exactly"


def test_add_and_mul_cost_an_ulp_each():
    b = _budget(axpy_kernel)
    assert b.basis == {"mulf": 1, "addf": 1} and b.rel == 2 * T.EPS["f32"] and b.absolute == 0
    atol, rtol = T.output_tolerance(b, "float32", np.array([-3.0, 0.5]))
    assert rtol == 3 * T.EPS["f32"] and atol == 2 * T.EPS["f32"] * 3.0  # scaled by the largest golden magnitude
    # the same budget on a half output: the output's own rounding dominates
    assert T.output_tolerance(b, "float16", np.array([0.5]))[1] == pytest.approx(2 ** -10, rel=1e-3)
    assert T.output_tolerance(b, "float16", np.array([0.5]))[0] >= 2 ** -14  # subnormals flush to zero


def test_exp_amplifies_the_error_of_its_argument_and_div_costs_two():
    small, large = _budget(exp_div_kernel, scale=1.0), _budget(exp_div_kernel, scale=8.0)
    assert small.basis == {"exp": 1, "addf": 1, "divf": 1}
    e = T.EPS["f32"]
    assert small.rel == pytest.approx((0 * 1 + 4 * e) + e + 2 * e)
    assert large.rel == small.rel  # exp's argument is an input: no error yet to amplify


def test_reductions_grow_with_their_length():
    short, long = _budget(sum_kernel, block=64), _budget(sum_kernel, block=4096)
    assert short.basis == {"reduction": [64]} and long.basis == {"reduction": [4096]}
    e = T.EPS["f32"]
    assert short.rel == 2 * 6 * e and long.rel == 2 * 12 * e
    assert long.absolute == 4096 * e and long.absolute > 10 * short.absolute


def test_atomic_adds_count_the_programs_of_the_launch():
    b = _budget(atomic_kernel, programs=40)
    assert b.basis == {"reduction": [256], "atomic add": [40]}


# ----- the export -----------------------------------------------------------------------------------------

pytestmark_model = pytest.mark.skipif(shutil.which("g++") is None, reason="the AscendC model is built with g++")


def _export(tmp_path, target: str, case: str):
    out = tmp_path / "proj"
    assert main(["export", target, "-o", str(out), "--case", case]) == 0
    return out, json.loads((out / "kernel.json").read_text())["launch"]


def _verify(proj) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(proj / "scripts" / "verify_result.py")], capture_output=True,
                          text=True)


@pytestmark_model
def test_a_softmax_export_accepts_hardware_math_and_catches_a_real_error(tmp_path):
    proj, launch = _export(tmp_path, "examples/softmax.py:softmax_kernel", "float32-3x127")
    out = next(b for b in launch["buffers"] if b["role"] == "output")
    assert out["tolerance"] == "1 x subf; 1 x exp; reduction of 128; 1 x divf", out
    assert 1e-6 < out["rtol"] < 1e-5 and out["atol"] < 1e-4
    readme = (proj / "README.md").read_text()
    assert "### How the outputs are compared" in readme and "This kernel: 1 x subf; 1 x exp" in readme
    assert subprocess.run([sys.executable, str(proj / "scripts" / "gen_data.py")], capture_output=True).returncode == 0
    x = np.fromfile(proj / "input" / "x_ptr.bin", np.float32).reshape(3, 130)[:, :127]  # rows padded to 130
    # an NPU's way: Exp off by up to an ulp, the row summed sequentially in reverse, Div off by an ulp
    z = x - x.max(axis=1, keepdims=True)
    rng = np.random.default_rng(1)
    e = np.exp(z).astype(np.float32)
    e = np.where(rng.random(e.shape) < 0.5, np.nextafter(e, np.float32(np.inf)), np.nextafter(e, np.float32(0)))
    s = np.zeros((3, 1), np.float32)
    for j in reversed(range(127)):
        s[:, 0] += e[:, j]
    y = np.nextafter(e / s, np.float32(np.inf)).astype(np.float32)
    (proj / "output").mkdir()
    y.tofile(proj / "output" / "out_ptr.bin")
    ok = _verify(proj)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    wrong = y.copy()
    wrong[1, 5] += 1e-3  # a real error (an eighth of the value), far beyond the budget
    wrong.tofile(proj / "output" / "out_ptr.bin")
    bad = _verify(proj)
    assert bad.returncode == 1 and "at (1, 5)" in bad.stdout, bad.stdout


@pytestmark_model
def test_an_integer_export_is_compared_exactly(tmp_path):
    _, launch = _export(tmp_path, "examples/transpose.py:transpose_kernel", "int8-63x31")
    out = next(b for b in launch["buffers"] if b["role"] == "output")
    assert (out["atol"], out["rtol"], out["tolerance"]) == (0.0, 0.0, "integer or bool: compared exactly")
