"""atomic_cas on ascend, and kernels whose programs wait for one another.

asc-devkit documents the scalar AtomicCas and AtomicExch for Ascend 950PR/950DT only, not for Atlas A2
(910B) (docs/zh/api/SIMD-API/基础API/原子操作/AtomicCas.md, AtomicExch.md), so a spin lock cannot be
built there: atomic_cas is a CompilationError at its line that says so (the same kernel runs on the
sim, against numpy). The AscendC model runs blocks one after another, so a program that waits for a
flag another program sets would spin forever: the model stops it and names the line."""

from __future__ import annotations

import numpy as np
import pytest

import xblock
import xblock.language as xl


@xblock.jit
def locked_add(lock_ptr, acc_ptr, x_ptr):
    """A spin lock around a read-modify-write of one counter."""
    pid = xl.program_id(0)
    while xl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    total = xl.load(acc_ptr)
    xl.store(acc_ptr, total + xl.load(x_ptr + pid))
    xl.atomic_xchg(lock_ptr, 0)


@xblock.jit
def waiter(flag_ptr, out_ptr):
    """Program 0 waits for a flag that program 1 sets."""
    pid = xl.program_id(0)
    if pid == 1:
        xl.store(flag_ptr, 1)
    else:
        while xl.load(flag_ptr, volatile=True) == 0:
            pass
        xl.store(out_ptr, 7)


def test_spin_lock_runs_on_the_sim():
    x = np.arange(1, 8, dtype=np.int32)
    lock, acc = np.zeros(1, np.int32), np.zeros(1, np.int32)
    locked_add[(7,)](lock, acc, x, target="sim")
    assert acc[0] == x.sum() and lock[0] == 0


def test_atomic_cas_is_a_clear_error_naming_the_missing_api():
    with pytest.raises(xblock.CompilationError) as e:
        xblock.compile(locked_add, target="ascend", signature={"lock_ptr": "*i32", "acc_ptr": "*i32", "x_ptr": "*i32"})
    msg = str(e.value)
    assert "test_atomic_cas.py:22:" in msg and "while xl.atomic_cas(lock_ptr, 0, 1) == 1:" in msg
    assert "AscendC's scalar AtomicCas" in msg and "Ascend 950PR/950DT only, not for Atlas A2 (910B)" in msg
    assert "docs/zh/api/SIMD-API/基础API/原子操作/AtomicCas.md" in msg
    assert "SetAtomicAdd/SetAtomicMax/SetAtomicMin" in msg
    assert "Traceback" not in msg and "xblock/backends" not in msg


def test_a_wait_for_another_program_stops_the_model():
    flag, out = np.zeros(1, np.int32), np.zeros(1, np.int32)
    with pytest.raises(xblock.ExecutionError) as e:
        waiter[(2,)](flag, out, target="ascend")
    msg = str(e.value)
    assert "test_atomic_cas.py:36:" in msg and "block 0 cannot make progress" in msg, msg
    assert "runs the blocks one after another" in msg
