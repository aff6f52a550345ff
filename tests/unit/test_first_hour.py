"""What a user meets in the first hour (issue 32, item 8): a short repr of a compiled kernel, a clear
error for a kernel whose source cannot be read."""

import subprocess
import sys

import numpy as np

import xblock
import xblock.language as xl


@xblock.jit
def fill(x_ptr, BLOCK: xl.constexpr):
    xl.store(x_ptr + xl.arange(0, BLOCK), 1.0)


def test_a_compiled_kernel_has_a_short_repr():
    ck = fill[(1,)](np.zeros(8, np.float32), BLOCK=8, target="cpu")
    text = repr(ck)
    assert len(text) < 400 and "fill" in text and "'cpu'" in text and "test_first_hour.py" in text, text
    assert "so: " in text and "\\x" not in text


def test_a_kernel_without_source_is_a_clear_error():
    code = ("import numpy as np, xblock, xblock.language as xl\n@xblock.jit\ndef k(x, BLOCK: xl.constexpr):\n"
            "    xl.store(x + xl.arange(0, BLOCK), 1.0)\n"
            "k[(1,)](np.zeros(8, np.float32), BLOCK=8, target='sim')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    last = r.stderr.strip().splitlines()[-1]
    assert r.returncode == 1 and last.startswith("xblock.errors.CompilationError: <string>:2:1: cannot read the "
                                                 "source of kernel 'k'"), r.stderr[-2000:]  # 2: the decorator
    assert "OSError" not in r.stderr and "define it in a .py file" in last
