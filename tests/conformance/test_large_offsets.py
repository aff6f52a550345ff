"""Offsets past 2**31 elements: with int64 program ids and offsets (`.to(tl.int64)`, as real kernels
write them) every target reads the right bytes of a 2 GiB buffer; in int32 the same offset wraps as
in Triton, and the sim says where when XBLOCK_SIM_OVERFLOW=1 (off by default: hashes and random
number generators wrap on purpose)."""

import warnings

import numpy as np
import pytest

import xblock
from xblock.errors import XBlockWarning

triton = pytest.importorskip("triton")
tl = triton.language

BIG = 2**31 + 4096  # elements of a uint8 buffer: calloc'd, so untouched pages cost nothing


@triton.jit
def copy_far(x_ptr, o_ptr, base, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = base.to(tl.int64) * 2 + pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(o_ptr + pid * BLOCK + tl.arange(0, BLOCK), tl.load(x_ptr + offs))


@triton.jit
def wraps(o_ptr, s, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    far = tl.program_id(0) * s  # int32: wraps past 2**31
    tl.store(o_ptr + tl.program_id(0) * BLOCK + offs, far + offs)


@pytest.fixture(scope="module")
def far_buffer():
    x = np.zeros(BIG, np.uint8)
    x[2**31:2**31 + 256] = np.arange(256) % 251 + 1
    return x


@pytest.mark.parametrize("target", ["sim", "cpu", "ascend"])
def test_int64_offsets_past_2_31(far_buffer, target):
    o = np.zeros(256, np.uint8)
    xblock.jit(copy_far)[(4,)](far_buffer, o, 2**30, BLOCK=64, target=target)
    np.testing.assert_array_equal(o, far_buffer[2**31:2**31 + 256])


def test_int32_wraps_as_in_triton_and_the_sim_can_say_where(monkeypatch):
    o = np.zeros(48, np.int32)
    monkeypatch.delenv("XBLOCK_SIM_OVERFLOW", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", XBlockWarning)  # silent by default
        xblock.jit(wraps)[(3,)](o, 2**30, BLOCK=16, target="sim")
    want = np.int64(2) * 2**30 + np.arange(16)  # program 2's offsets, wrapped to int32
    np.testing.assert_array_equal(o[32:], ((want + 2**31) % 2**32 - 2**31).astype(np.int32))
    monkeypatch.setenv("XBLOCK_SIM_OVERFLOW", "1")
    with pytest.warns(XBlockWarning, match=r"int32 `\*` overflows here and wraps") as rec:
        xblock.jit(wraps)[(3,)](o, 2**30, BLOCK=16, target="sim")
    assert rec[0].filename == __file__ and rec[0].lineno == wraps.fn.__code__.co_firstlineno + 3
