"""What a user meets in the first hour (issue 32, item 8): a short repr of a compiled kernel, a clear
error for a kernel whose source cannot be read."""

import subprocess
import sys

import numpy as np
import pytest

import xblock
import xblock.language as xl

try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None


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


def _error(kernel, *args, **kw):
    with pytest.raises(xblock.CompilationError) as info:
        xblock.jit(kernel)[(1,)](*args, target="sim", **kw)
    return str(info.value)


@xblock.jit
def misspelled_xl(x_ptr, BLOCK: xl.constexpr):
    xl.store(x_ptr + xl.arange(0, BLOCK), xl.zeross((BLOCK,), xl.float32))


@xblock.jit
def misspelled_method(x_ptr, BLOCK: xl.constexpr):
    x = xl.load(x_ptr + xl.arange(0, BLOCK))
    xl.store(x_ptr + xl.arange(0, BLOCK), x.too(xl.float32))


@xblock.jit
def runtime_block(x_ptr, n):
    xl.store(x_ptr + xl.arange(0, n), 1.0)


if triton is not None:
    @triton.jit
    def misspelled_tl(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.laod(x_ptr + offs))


def test_misspelled_names_get_a_suggestion_naming_the_module_written():
    if triton is None:
        pytest.skip("Triton is not installed")
    x = np.zeros(8, np.float32)
    assert "module 'triton.language' has no attribute 'laod'; did you mean 'load'?" in _error(misspelled_tl, x, BLOCK=8)
    assert "module 'xblock.language' has no attribute 'zeross'; did you mean 'zeros'?" in \
        _error(misspelled_xl, x, BLOCK=8)
    assert "a block has no attribute 'too'; did you mean 'to'?" in _error(misspelled_method, x, BLOCK=8)


def test_a_runtime_block_size_gets_the_constexpr_hint():
    msg = _error(runtime_block, np.zeros(8, np.float32), 8)
    assert "arange's start and end must be constexpr integers" in msg and "`NAME: tl.constexpr`" in msg, msg
