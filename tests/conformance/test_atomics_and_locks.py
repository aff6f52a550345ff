"""Spin locks and loops around atomics, as public Triton kernels write them (a layernorm-backward
style accumulation under a per-group lock): run to completion on sim and cpu against numpy, a loop
that cannot make progress is a clear error in the sim, and ascend names what 910B lacks."""

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile

triton = pytest.importorskip("triton")
tl = triton.language


@triton.jit
def partial_sums_under_lock(x_ptr, acc_ptr, lock_ptr, count_ptr, n_cols, GROUP: tl.constexpr,
                            BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    part = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    slot = row % GROUP
    lock = lock_ptr + slot
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    count = tl.load(count_ptr + slot)
    if count == 0:
        tl.atomic_xchg(count_ptr + slot, 1)
    else:
        part += tl.load(acc_ptr + slot * n_cols + cols, mask=mask)
    tl.store(acc_ptr + slot * n_cols + cols, part, mask=mask)
    tl.atomic_xchg(lock, 0)


@triton.jit
def count_up(ctr_ptr):
    pid = tl.program_id(0)
    steps = 0
    while tl.atomic_add(ctr_ptr + pid, 1) < pid:
        steps += 1
    tl.store(ctr_ptr + tl.num_programs(0) + pid, steps)


@triton.jit
def wait_forever(flag_ptr, out_ptr):
    pid = tl.program_id(0)
    while tl.load(flag_ptr, volatile=True) == 0:
        pass
    tl.store(out_ptr + pid, pid)


@pytest.mark.parametrize("target", ["sim", "cpu"])
@pytest.mark.parametrize("rows,group", [(1, 1), (20, 4), (33, 8)])
def test_lock_protected_accumulation(target, rows, group):
    cols = 37
    x = np.random.default_rng(rows).standard_normal((rows, cols)).astype(np.float32)
    acc = np.full((group, cols), 9, np.float32)
    lock, count = np.zeros(group, np.int32), np.zeros(group, np.int32)
    xblock.jit(partial_sums_under_lock)[(rows,)](x, acc, lock, count, cols, GROUP=group, BLOCK=64,
                                                 target=target)
    ref = np.stack([x[g::group].sum(0) if g < rows else np.full(cols, 9, np.float32) for g in range(group)])
    np.testing.assert_allclose(acc, ref, rtol=1e-5, atol=1e-5)
    assert not lock.any()
    np.testing.assert_array_equal(count, (np.arange(group) < rows).astype(np.int32))


@pytest.mark.parametrize("target", ["sim", "cpu"])
def test_atomics_in_a_divergent_loop_condition_run_once_per_iteration(target):
    n = 6
    ctr = np.zeros(2 * n, np.int32)
    xblock.jit(count_up)[(n,)](ctr, target=target)
    np.testing.assert_array_equal(ctr[:n], np.arange(n) + 1)
    np.testing.assert_array_equal(ctr[n:], np.arange(n))


def test_a_loop_that_cannot_progress_is_an_error_at_its_line():
    flag, out = np.zeros(1, np.int32), np.full(4, 7, np.int32)
    with pytest.raises(xblock.ExecutionError, match=r"test_atomics_and_locks.py:\d+: this loop cannot make "
                       r"progress: program 0"):
        xblock.jit(wait_forever)[(4,)](flag, out, target="sim")
    assert (out == 7).all(), "a failed launch must leave the arrays untouched"


def test_ascend_names_the_missing_compare_and_swap():
    x = np.zeros((4, 8), np.float32)
    with pytest.raises(xblock.CompilationError, match=r"test_atomics_and_locks.py:\d+:\d+: ascend: "
                       r"atomic_cas \(xb.atomic_cas\) is not supported on ascend: it needs AscendC's scalar AtomicCas"):
        xblock.jit(partial_sums_under_lock)[(4,)](x, np.zeros((2, 8), np.float32), np.zeros(2, np.int32),
                                                  np.zeros(2, np.int32), 8, GROUP=2, BLOCK=8, target="ascend")


def test_lock_kernel_compiles_for_cuda():
    x = np.zeros((4, 8), np.float32)
    ck = precompile(partial_sums_under_lock, (x, np.zeros((2, 8), np.float32), np.zeros(2, np.int32),
                                              np.zeros(2, np.int32), 8), {"GROUP": 2, "BLOCK": 8})
    assert "atom" in ck.asm["ptx"]
