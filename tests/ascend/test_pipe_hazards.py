"""Hazards inside one core that the compiler's auto-sync does not fix, on generated kernels (issue 29, 3 and 4).

- Write-after-read in UB: a handed-off dot's result comes back from the GM workspace into reused
  VECCALC scratch; MTE2 must wait for the vector instructions (and copy-outs) still reading those
  bytes, since `CrossCoreWaitFlag` drains neither. Attention's update (`acc = acc * alpha + dot`) has
  the hand-off in a loop. The model refuses the copy without the V->MTE2 sync.
- Write-after-write to GM: a cross-entropy kernel writes the gradient into its own logits row chunk by
  chunk, then corrects the label's element. The two copies to GM overlap, and copies of one DMA pipe
  may complete out of order (ADK docs/api/context/基础数据搬运.md, constraints): the generator puts
  PipeBarrier<PIPE_MTE3> before the correction only, and the model refuses the kernel without it.
Both kernels run against numpy. docs/ASCEND_MODEL.md 4 and 4a say what the model checks.
"""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.runtime import compiler

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the AscendC model is built with g++")
B = 32


@xblock.jit
def rescaled_acc(a_ptr, b_ptr, s_ptr, c_ptr, M, N, K, BM: xl.constexpr, BN: xl.constexpr, BK: xl.constexpr):
    """Attention's update: the running tile rescaled per row, then the next product added."""
    offs_m = xl.program_id(0) * BM + xl.arange(0, BM)
    offs_n = xl.program_id(1) * BN + xl.arange(0, BN)
    acc = xl.zeros((BM, BN), dtype=xl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + xl.arange(0, BK)
        a = xl.load(a_ptr + offs_m[:, None] * K + ks[None, :], mask=(offs_m[:, None] < M) & (ks[None, :] < K),
                    other=0.0)
        b = xl.load(b_ptr + ks[:, None] * N + offs_n[None, :], mask=(ks[:, None] < K) & (offs_n[None, :] < N),
                    other=0.0)
        alpha = xl.load(s_ptr + offs_m, mask=offs_m < M, other=1.0)
        acc = acc * alpha[:, None] + xl.dot(a, b)
    xl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@xblock.jit
def xent_inplace(logits, targets, losses, stride, n_cols, n_rows, BLOCK: xl.constexpr):
    """Softmax cross-entropy of a row; the row's logits are overwritten with d(mean loss)/d(logits)."""
    row = xl.program_id(0)
    base = logits + row * stride
    label = xl.load(targets + row)
    picked = xl.load(base + label)
    run_max = -float("inf")
    run_sum = 0.0
    for start in range(0, n_cols, BLOCK):  # pass 1: the row's max and sum, online
        cols = start + xl.arange(0, BLOCK)
        v = xl.load(base + cols, mask=cols < n_cols, other=-float("inf"))
        new_max = xl.maximum(run_max, xl.max(v, 0))
        run_sum = run_sum * xl.exp(run_max - new_max) + xl.sum(xl.exp(v - new_max), 0)
        run_max = new_max
    lse = run_max + xl.log(run_sum)
    for start in range(0, n_cols, BLOCK):  # pass 2: softmax / n_rows back into the row, chunk by chunk
        cols = start + xl.arange(0, BLOCK)
        v = xl.load(base + cols, mask=cols < n_cols, other=-float("inf"))
        xl.store(base + cols, xl.exp(v - lse) / n_rows, mask=cols < n_cols)
    xl.store(base + label, xl.exp(picked - lse) / n_rows - 1.0 / n_rows)  # over a byte pass 2 wrote
    xl.store(losses + row, lse - picked)


XENT_SIG = dict(logits="*fp32", targets="*i32", losses="*fp32", stride="i32", n_cols="i32", n_rows="i32")
ATT_SIG = dict(a_ptr="*fp16", b_ptr="*fp16", s_ptr="*fp32", c_ptr="*fp32", M="i32", N="i32", K="i32")


def _xent_ref(x, y):
    x = x.astype(np.float64)
    m = x.max(1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(x - m).sum(1))
    g = np.exp(x - lse[:, None]) / len(y)
    g[np.arange(len(y)), y] -= 1.0 / len(y)
    return g, lse - x[np.arange(len(y)), y]


def _cpp(kernel, sig, **constexprs) -> str:
    return xblock.compile(kernel, target="ascend", signature=sig, constexprs=constexprs).asm["cpp"]


@pytest.fixture
def override(monkeypatch, tmp_path):
    """fn(kernel, cpp): launches of `kernel` run `cpp` (a hand-edited kernel.cpp, XBLOCK_OVERRIDE_DIR) in place
    of the generated one until the test ends."""
    touched = []

    def use(kernel, cpp: str) -> None:
        (tmp_path / f"{kernel.__name__}.cpp").write_text(cpp)
        monkeypatch.setenv("XBLOCK_OVERRIDE_DIR", str(tmp_path))
        compiler._MEMORY.clear()
        kernel.kernels.clear()
        kernel._fast.clear()
        touched.append(kernel)

    yield use
    monkeypatch.delenv("XBLOCK_OVERRIDE_DIR", raising=False)
    compiler._MEMORY.clear()
    for kernel in touched:  # the next launch builds the generated kernel again
        kernel.kernels.clear()
        kernel._fast.clear()


def _without_sync(cpp: str, event: str, before: str) -> str:
    """`cpp` less the `event` sync (FetchEventID, SetFlag, WaitFlag) between the last CrossCoreWaitFlag above
    `before` and `before`."""
    at = cpp.index(before)
    start = cpp.rindex("CrossCoreWaitFlag(", 0, at)
    window = cpp[start:at]
    kept = "".join(s for s in window.splitlines(keepends=True) if f"HardEvent::{event}" not in s)
    assert kept != window, f"no {event} sync above {before!r}"
    return cpp[:start] + kept + cpp[at:]


# ----- write-after-read: the Cube hand-off's copy into scratch --------------------------------------

def _handoff_cpp() -> str:
    return _cpp(rescaled_acc, ATT_SIG, BM=B, BN=B, BK=B)


def _workspace_copy(cpp: str) -> str:
    """The AIV's copy of the dot's result from the workspace into UB."""
    return re.search(r"DataCopy\(\w+, workspaceGm\[[^\n]*", cpp).group(0)


def test_handoff_copy_waits_for_the_vector_unit():
    cpp = _handoff_cpp()
    copy = _workspace_copy(cpp)
    before = cpp[:cpp.index(copy)]
    wait = before.rindex("CrossCoreWaitFlag(")  # the AIC's "result ready"
    between = before[wait:]
    for sync in ("SetFlag<HardEvent::V_MTE2>", "WaitFlag<HardEvent::V_MTE2>", "WaitFlag<HardEvent::MTE3_MTE2>"):
        assert sync in between, (sync, between)


def _att_data(m, n, k):
    rng = np.random.default_rng(m * n + k)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    alpha = rng.choice([0.5, 1.0, 2.0], m).astype(np.float32)
    want = np.zeros((m, n), np.float32)
    for k0 in range(0, k, B):
        want = want * alpha[:, None] + a[:, k0:k0 + B].astype(np.float32) @ b[k0:k0 + B].astype(np.float32)
    return a, b, alpha, want


@pytest.mark.parametrize("m,n,k", [(B + 1, B - 1, 3 * B + 5), (B, B, 4 * B)])
def test_handoff_in_a_loop_matches_numpy(m, n, k):
    a, b, alpha, want = _att_data(m, n, k)
    c = np.zeros((m, n), np.float32)
    rescaled_acc[(xblock.cdiv(m, B), xblock.cdiv(n, B))](a, b, alpha, c, m, n, k, BM=B, BN=B, BK=B, target="ascend")
    np.testing.assert_array_equal(c, want)


def test_model_refuses_the_handoff_copy_without_its_syncs(override):
    cpp = _handoff_cpp()
    copy = _workspace_copy(cpp)
    bad = _without_sync(_without_sync(cpp, "MTE3_MTE2", copy), "V_MTE2", copy)
    override(rescaled_acc, bad)
    a, b, alpha, _ = _att_data(B, B, 4 * B)
    c = np.zeros((B, B), np.float32)
    with pytest.raises(xblock.ExecutionError) as e:
        rescaled_acc[(1, 1)](a, b, alpha, c, B, B, 4 * B, BM=B, BN=B, BK=B, target="ascend")
    msg = str(e.value)
    assert "DataCopy(GM->UB): writes UB+0x" in msg and "which an earlier V instruction reads" in msg, msg
    assert "write-after-read" in msg and "V_MTE2" in msg, msg
    assert msg.startswith(f"{__file__}:"), msg  # at a line of the kernel


# ----- write-after-write: a gradient written into its own logits row --------------------------------

def _xent_cpp() -> str:
    return _cpp(xent_inplace, XENT_SIG, BLOCK=256)


def test_overlapping_store_has_a_barrier_and_the_chunks_do_not():
    cpp = _xent_cpp()
    assert cpp.count("PipeBarrier<PIPE_MTE3>();") == 1, cpp
    barrier = cpp.index("PipeBarrier<PIPE_MTE3>();")
    chunk_store = cpp.index("xl.store(base + cols")  # its comment line: the chunk loop's store is above
    label_store = cpp.index("xl.store(base + label")
    assert chunk_store < label_store < barrier < cpp.index("DataCopyPad(logitsGm", barrier), cpp[label_store:]


@pytest.mark.parametrize("n_cols, labels", [
    (1000, [764, 0, 999, 500]),  # the last chunk short, labels at its edges
    (1, [0, 0]),
    (255, [254, 3]), (256, [255, 128]), (257, [256, 0]),
])
def test_inplace_gradient_matches_numpy(n_cols, labels):
    rng = np.random.default_rng(n_cols)
    y = np.array(labels, np.int32)
    x = rng.standard_normal((len(y), n_cols)).astype(np.float32)
    g, loss_ref = _xent_ref(x, y)
    loss = np.zeros(len(y), np.float32)
    xent_inplace[(len(y),)](x, y, loss, n_cols, n_cols, len(y), BLOCK=256, target="ascend")
    np.testing.assert_allclose(x, g, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(loss, loss_ref, rtol=1e-5, atol=1e-6)


def test_model_refuses_the_overlapping_store_without_the_barrier(override):
    override(xent_inplace, _xent_cpp().replace("PipeBarrier<PIPE_MTE3>();", ""))
    y = np.array([999, 3], np.int32)
    x = np.ones((2, 1000), np.float32)
    with pytest.raises(xblock.ExecutionError) as e:
        xent_inplace[(2,)](x, y, np.zeros(2, np.float32), 1000, 1000, 2, BLOCK=256, target="ascend")
    msg = str(e.value)
    assert "DataCopyPad(UB->GM): writes bytes [3996, 4000) of 'logits', which an earlier copy to GM (MTE3) also " \
           "writes" in msg and "PipeBarrier<PIPE_MTE3>" in msg, msg
