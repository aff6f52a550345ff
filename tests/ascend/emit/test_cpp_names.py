"""A kernel's names that are C++ keywords, or types the AscendC source spells, still give compilable AscendC:
a local `do` (a gradient's usual name in attention backward kernels), `new`, `half`, `int`, an argument
`delete` or `half`, a kernel named `new`. The emitter gives such locals a trailing "_" (emit/cpp.py `fresh`),
the pipeline gives it to such kernel and argument names (pipeline.py `_cpp_names`); checked against numpy,
and an exported project's host check (main.cpp against the launch header) passes."""

from __future__ import annotations

import shutil
import textwrap

import numpy as np
import pytest

import xblock
from xblock.cli import main

triton = pytest.importorskip("triton")
tl = triton.language

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the AscendC model is built with g++")


@triton.jit
def keyword_locals(x, y, n, B: tl.constexpr):
    o = tl.arange(0, B)
    for i in range(2):  # a loop: the loads go through queues named after the values
        do = tl.load(x + i * B + o, mask=o < n, other=0.0)
        half = do * 2.0
        new = tl.load(x + i * B + o, mask=o < n, other=1.0)
        int = half + new
        tl.store(y + i * B + o, int, mask=o < n)


def test_locals_named_like_cpp_keywords():
    x = np.random.default_rng(0).standard_normal(32).astype(np.float32)
    y = np.zeros_like(x)
    xblock.jit(keyword_locals)[(1,)](x, y, 13, B=16, target="ascend")
    want = np.zeros_like(x)
    for i in range(2):
        v = x[i * 16:i * 16 + 13]
        want[i * 16:i * 16 + 13] = v * np.float32(2) + v
    np.testing.assert_array_equal(y, want)
    cpp = xblock.compile(keyword_locals, target="ascend", signature={"x": "*fp32", "y": "*fp32", "n": "i32"},
                         constexprs={"B": 16}).asm["cpp"]
    assert "LocalTensor<float> do_ " in cpp or "LocalTensor<float> do_=" in cpp.replace(" = ", "=")
    assert " do," not in cpp and "(do)" not in cpp


KERNEL = textwrap.dedent('''
    import triton
    import triton.language as tl


    @triton.jit
    def new(delete, half, int, B: tl.constexpr):
        o = tl.arange(0, B)
        for i in range(2):
            v = tl.load(delete + i * B + o, mask=o < int, other=0.0)
            tl.store(half + i * B + o, v * 2.0, mask=o < int)
''')


def test_a_kernel_and_arguments_named_like_cpp_keywords(tmp_path):
    src = tmp_path / "names.py"
    src.write_text(KERNEL)
    ns: dict = {}
    exec(compile(KERNEL, str(src), "exec"), ns)
    x = np.random.default_rng(1).standard_normal(32).astype(np.float32)
    y = np.zeros_like(x)
    xblock.jit(ns["new"])[(1,)](x, y, 11, B=16, target="ascend")
    want = np.zeros_like(x)
    for i in range(2):
        want[i * 16:i * 16 + 11] = 2 * x[i * 16:i * 16 + 11]
    np.testing.assert_array_equal(y, want)
    proj = tmp_path / "p"
    assert main(["export", f"{src}:new", "-o", str(proj), "-s", "delete=*fp32,half=*fp32,int=i32", "-D", "B=16"]) == 0
    assert "At export, main.cpp compiled cleanly" in (proj / "README.md").read_text()
    kernel_cpp = "".join(p.read_text() for p in proj.rglob("*.cpp"))
    assert "void new_(GM_ADDR delete_, GM_ADDR half_" in kernel_cpp
