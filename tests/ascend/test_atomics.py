"""Atomics on ascend: only atomic_add has a documented AscendC path (SetAtomicAdd on the copy out);
every other atomic is a CompilationError at the kernel line naming the op."""

from __future__ import annotations

import pytest

import xblock
import xblock.language as xl

SIG = {"x_ptr": "*fp32", "out_ptr": "*fp32"}


@xblock.jit
def rmw_kernel(x_ptr, out_ptr, KIND: xl.constexpr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs)
    if KIND == 0:
        xl.atomic_max(out_ptr + offs, x)
    elif KIND == 1:
        xl.atomic_min(out_ptr + offs, x)
    else:
        xl.atomic_xchg(out_ptr + offs, x)


@xblock.jit
def cas_kernel(x_ptr, out_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs)
    xl.atomic_cas(out_ptr + offs, 0.0, x)


@pytest.mark.parametrize("kind,name", [(0, "atomic_max"), (1, "atomic_min"), (2, "atomic_xchg")])
def test_atomics_other_than_add_are_clear_errors(kind, name):
    with pytest.raises(xblock.CompilationError) as e:
        xblock.compile(rmw_kernel, target="ascend", signature=SIG, constexprs={"KIND": kind, "BLOCK": 64})
    msg = str(e.value)
    assert "test_atomics.py:" in msg and f"{name} (xb.atomic_rmw" in msg and "SetAtomicAdd" in msg
    assert "Traceback" not in msg and "xblock/backends" not in msg


def test_atomic_cas_is_a_clear_error():
    with pytest.raises(xblock.CompilationError) as e:
        xblock.compile(cas_kernel, target="ascend", signature=SIG, constexprs={"BLOCK": 64})
    msg = str(e.value)
    assert "test_atomics.py:30:" in msg and "atomic_cas" in msg and "xl.atomic_cas(out_ptr + offs, 0.0, x)" in msg
    assert "Traceback" not in msg and "xblock/backends" not in msg
