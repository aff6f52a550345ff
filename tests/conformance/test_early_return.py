"""Early `return` inside a runtime `if`, as compiled Triton accepts it: unmodified @triton.jit kernels
against numpy on every target that runs here, and compiled to cubin for cuda."""

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile

triton = pytest.importorskip("triton")
tl = triton.language

RUN_TARGETS = ["sim", "cpu", "ascend"]


@triton.jit
def _relu_gap(a, b):
    if a > b:
        return a - b
    return tl.zeros_like(a)


@triton.jit
def _min_max(a, b):
    if a < b:
        return a, b
    else:
        return b, a


@triton.jit
def cross_entropy_fwd(logits_ptr, labels_ptr, loss_ptr, n_cols, stride, IGNORE: tl.constexpr,
                      BLOCK: tl.constexpr):
    row = tl.program_id(0)
    label = tl.load(labels_ptr + row)
    if label == IGNORE:
        tl.store(loss_ptr + row, 0.0)
        return
    cols = tl.arange(0, BLOCK)
    x = tl.load(logits_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
    m = tl.max(x, 0)
    lse = m + tl.log(tl.sum(tl.exp(x - m), 0))
    target = tl.load(logits_ptr + row * stride + label).to(tl.float32)
    tl.store(loss_ptr + row, lse - target)


@triton.jit
def guarded_tail(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if pid % 2 == 0:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
        return
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


@triton.jit
def helpers_returning(x_ptr, y_ptr, gap_ptr, lo_ptr, hi_ptr):
    i = tl.program_id(0)
    a = tl.load(x_ptr + i)
    b = tl.load(y_ptr + i)
    tl.store(gap_ptr + i, _relu_gap(a, b))
    lo, hi = _min_max(a, b)
    tl.store(lo_ptr + i, lo)
    tl.store(hi_ptr + i, hi)


def _xent_case(rows=37, cols=100):
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((rows, cols)).astype(np.float32)
    labels = rng.integers(0, cols, rows).astype(np.int32)
    labels[::3] = -100
    ref = np.log(np.exp(logits.astype(np.float64)).sum(1)) - logits[np.arange(rows), np.maximum(labels, 0)]
    ref[labels == -100] = 0
    return logits, labels, ref


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_cross_entropy_with_ignored_rows(target):
    logits, labels, ref = _xent_case()
    loss = np.full(len(labels), 7, np.float32)
    xblock.jit(cross_entropy_fwd)[(len(labels),)](logits, labels, loss, logits.shape[1], logits.shape[1],
                                                  IGNORE=-100, BLOCK=128, target=target)
    np.testing.assert_allclose(loss, ref, rtol=1e-5, atol=1e-5)
    assert (loss[labels == -100] == 0).all()


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("n", [1, 63, 64, 65, 257])
def test_return_before_and_inside_branches(target, n):
    x = np.arange(n, dtype=np.float32)
    out = np.full(n, -1, np.float32)
    grid = (triton.cdiv(n, 64) + 2,)  # programs past the end return at once
    xblock.jit(guarded_tail)[grid](x, out, n, BLOCK=64, target=target)
    block = np.arange(n) // 64
    np.testing.assert_array_equal(out, np.where(block % 2 == 0, x * 2, x + 1))


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_helpers_return_from_both_branches(target):
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal(33).astype(np.float32), rng.standard_normal(33).astype(np.float32)
    gap, lo, hi = (np.zeros(33, np.float32) for _ in range(3))
    xblock.jit(helpers_returning)[(33,)](x, y, gap, lo, hi, target=target)
    np.testing.assert_array_equal(gap, np.where(x > y, x - y, 0))
    np.testing.assert_array_equal(lo, np.minimum(x, y))
    np.testing.assert_array_equal(hi, np.maximum(x, y))


def test_early_returns_compile_for_cuda():
    logits, labels, _ = _xent_case()
    loss = np.zeros(len(labels), np.float32)
    ck = precompile(cross_entropy_fwd, (logits, labels, loss, 100, 100), {"IGNORE": -100, "BLOCK": 128})
    assert "cubin" in ck.asm and "scf.if" in ck.asm["xb"]
    x = np.zeros(8, np.float32)
    assert "cubin" in precompile(helpers_returning, (x, x, x, x, x)).asm


@triton.jit
def return_in_loop(x_ptr, n):
    for i in range(n):
        if tl.load(x_ptr + i) > 0:
            return
        tl.store(x_ptr + i, 1.0)


@triton.jit
def return_value_on_one_path(x_ptr, out_ptr):
    v = _one_sided(tl.load(x_ptr))
    tl.store(out_ptr, v)


@triton.jit
def _one_sided(a):
    if a > 0:
        return a
    a = a + 1


def test_return_inside_a_loop_is_a_clear_error():
    with pytest.raises(xblock.CompilationError, match=r"test_early_return.py:\d+:\d+: `return` inside a `for` "
                       r"or `while` loop is not supported \(as in Triton"):
        xblock.jit(return_in_loop)[(1,)](np.zeros(4, np.float32), 4, target="sim")


def test_a_value_returned_on_one_path_only_is_a_clear_error():
    with pytest.raises(xblock.CompilationError, match="only one branch of the `if` returns a value"):
        xblock.jit(return_value_on_one_path)[(1,)](np.zeros(1, np.float32), np.zeros(1, np.float32),
                                                   target="sim")


@triton.jit
def return_in_constexpr_if(x_ptr, FLAG: tl.constexpr):
    if FLAG:
        tl.store(x_ptr, 1.0)
        return
    tl.store(x_ptr, 2.0)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("flag", [True, False])
def test_return_inside_a_constexpr_if(target, flag):
    x = np.zeros(1, np.float32)
    xblock.jit(return_in_constexpr_if)[(1,)](x, FLAG=flag, target=target)
    assert x[0] == (1.0 if flag else 2.0)
