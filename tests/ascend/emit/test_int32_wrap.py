"""int32 scalar arithmetic wraps on ascend as in Triton (two's complement), and the C++ has no undefined
behaviour: a signed overflow is undefined in C++, so `+ - * <<` of int32 scalars are printed as wrapAdd /
wrapSub / wrapMul / wrapShl, which compute in uint32_t (emit/cpp.py). Checked against numpy's int32, with
the model built at -O0 and at -O2 under UndefinedBehaviorSanitizer."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xblock

triton = pytest.importorskip("triton")
tl = triton.language

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the AscendC model is built with g++")


@triton.jit
def wrap_kernel(out_ptr, a, b, s):
    p = a * b
    tl.store(out_ptr + 0, p)
    tl.store(out_ptr + 1, a + b)
    tl.store(out_ptr + 2, -a - b)
    tl.store(out_ptr + 3, a << s)
    tl.store(out_ptr + 4, p * 3 + (b << s) - a)


def _want(a: int, b: int, s: int) -> np.ndarray:
    A, B, S = np.int32(a), np.int32(b), np.int32(s)
    with np.errstate(over="ignore"):
        return np.array([A * B, A + B, -A - B, A << S, (A * B) * np.int32(3) + (B << S) - A], np.int32)


CASES = [(2_000_000_000, 1_500_000_007, 5), (-2**31, -1, 31), (123, -456, 3), (2**31 - 1, 2**31 - 1, 1)]


def _ubsan_works(tmp_path) -> bool:
    """UBSan is installed and flags a plain int32 overflow (the control for the check below)."""
    src = tmp_path / "o.cpp"
    src.write_text("#include <cstdint>\nint main(int c, char**) { int32_t x = 2147483647; x += c; return x == 0; }\n")
    exe = tmp_path / "o"
    if subprocess.run(["g++", "-O2", "-fsanitize=undefined", str(src), "-o", str(exe)], capture_output=True).returncode:
        return False
    r = subprocess.run([str(exe)], capture_output=True, text=True)
    return "signed integer overflow" in r.stderr


SIG = {"out_ptr": "*i32", "a": "i32", "b": "i32", "s": "i32"}


def test_the_cpp_prints_wrapping_helpers():
    ck = xblock.compile(wrap_kernel, target="ascend", signature=SIG, constexprs={})
    cpp = ck.asm["cpp"]
    assert "const int32_t p = wrapMul(a, b);" in cpp
    for w in ("wrapAdd", "wrapSub", "wrapMul", "wrapShl"):
        assert f"__aicore__ inline int32_t {w}(int32_t a, int32_t b)" in cpp, w
    assert "(a * b)" not in cpp and "(a + b)" not in cpp


@pytest.mark.parametrize("a, b, s", CASES)
def test_int32_scalar_overflow_wraps_like_numpy(a, b, s):
    out = np.zeros(8, np.int32)
    xblock.jit(wrap_kernel)[(1,)](out, a, b, s, target="ascend")
    np.testing.assert_array_equal(out[:5], _want(a, b, s))


UBSAN_RUN = """
import sys
import numpy as np
import xblock
from xblock.backends.ascend.model import launch
from tests.ascend.emit.test_int32_wrap import CASES, SIG, _want, wrap_kernel
launch.CXXFLAGS = ["-std=c++17", "-Wall", "-Werror", "-O2", "-fsanitize=undefined", "-shared", "-fPIC"]
ck = xblock.compile(wrap_kernel, target="ascend", signature=SIG, constexprs={})
so = launch.build_emulator_library(ck.asm["cpp"], ck.metadata)
assert b"__ubsan" in so  # built with the sanitizer
run = launch.load({"so": so, "cpp": ck.asm["cpp"]}, ck.metadata)
for a, b, s in CASES:
    out = np.zeros(8, np.int32)
    run((1, 1, 1), [out, a, b, s])
    np.testing.assert_array_equal(out[:5], _want(a, b, s))
print("ran", len(CASES))
"""


def test_no_undefined_behaviour_at_o2_under_ubsan(tmp_path):
    """The kernel built at -O2 with -fsanitize=undefined, in a process of its own (UBSan reports on stderr)."""
    if not _ubsan_works(tmp_path):
        pytest.skip("g++ has no working UndefinedBehaviorSanitizer here")
    root = Path(__file__).resolve().parents[3]
    r = subprocess.run([sys.executable, "-c", UBSAN_RUN], cwd=root, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and f"ran {len(CASES)}" in r.stdout, r.stderr[-3000:]
    assert "runtime error" not in r.stderr, r.stderr[-3000:]
