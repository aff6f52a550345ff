"""tl.assume as TorchInductor's matmul templates emit it (LLVM's assume on cuda, checked by the sim,
a hint elsewhere) and tl.umulhi, bit-exact against numpy."""

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile

triton = pytest.importorskip("triton")
tl = triton.language


@triton.jit
def scaled_copy(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    tl.assume(n > 0)
    tl.assume(stride >= 1)
    pid = tl.program_id(0)
    tl.assume(pid >= 0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs * stride, mask=mask) * 2, mask=mask)


@triton.jit
def high_words(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.umulhi(tl.load(a_ptr + offs, mask=mask), tl.load(b_ptr + offs, mask=mask)),
             mask=mask)


@pytest.mark.parametrize("target", ["sim", "cpu", "ascend"])
def test_assumptions_that_hold(target):
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(100, np.float32)
    xblock.jit(scaled_copy)[(1,)](x, out, 100, 1, BLOCK=128, target=target)
    np.testing.assert_array_equal(out, x * 2)


def test_the_sim_checks_assumptions():
    x = np.arange(4, dtype=np.float32)
    with pytest.raises(xblock.ExecutionError, match=r"test_assume_and_umulhi.py:\d+: .*assume"):
        xblock.jit(scaled_copy)[(1,)](x, np.zeros(4, np.float32), 4, 0, BLOCK=4, target="sim")


def test_cuda_passes_assumptions_to_llvm():
    x = np.zeros(128, np.float32)
    ck = precompile(scaled_copy, (x, x, 128, 3), {"BLOCK": 128})
    assert ck.asm["ttir"].count("llvm.intr.assume") == 3 and "cubin" in ck.asm


@pytest.mark.parametrize("target", ["sim", "cpu"])
@pytest.mark.parametrize("dtype", [np.uint32, np.int32])
def test_umulhi(target, dtype):
    rng = np.random.default_rng(7)
    a = rng.integers(0, 2**32, 300, dtype=np.uint64).astype(np.uint32).view(dtype)
    b = rng.integers(0, 2**32, 300, dtype=np.uint64).astype(np.uint32).view(dtype)
    a[:3] = np.array([0xFFFFFFFF, 0, 0x80000000], np.uint32).view(dtype)
    b[:3] = np.array([0xFFFFFFFF, 5, 2], np.uint32).view(dtype)
    out = np.zeros(300, dtype)
    xblock.jit(high_words)[(3,)](a, b, out, 300, BLOCK=128, target=target)
    # Triton's umulhi is the high word of the unsigned 64-bit product, whatever the signedness
    want = ((a.view(np.uint32).astype(np.uint64) * b.view(np.uint32).astype(np.uint64)) >> 32).astype(np.uint32)
    np.testing.assert_array_equal(out.view(np.uint32), want)
