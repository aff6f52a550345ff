"""int32 arithmetic wraps as Triton's does (two's complement) on every target, offsets included.

`pid * (1 << 30)` is -2**31 in program 2: the load through it is out of bounds on every target (ascend
once computed offsets in 64 bits, found the lanes masked off by `offs < n` and read `other` silently).
Values stored after an int32 overflow equal numpy's int32 wrap."""

import warnings

import numpy as np
import pytest

import xblock
from xblock.errors import ExecutionError

triton = pytest.importorskip("triton")
tl = triton.language

TARGETS = ["sim", "cpu", "ascend"]


@triton.jit
def far_tile(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * (1 << 30) + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=float("nan"))  # FAR_TILE
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), x)


@triton.jit
def far_base(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    base = pid * (1 << 30)
    x = tl.load(x_ptr + base + tl.arange(0, BLOCK), mask=base < n, other=float("nan"))  # FAR_BASE
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), x)


@triton.jit
def wrapping_values(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, x * 65536 * 65536 + x * 1000003 * 7919, mask=m)


def _line(marker: str) -> int:
    with open(__file__) as f:
        return next(i for i, text in enumerate(f, 1) if text.rstrip().endswith(f"# {marker}"))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kernel,marker", [(far_tile, "FAR_TILE"), (far_base, "FAR_BASE")])
def test_a_wrapped_offset_is_out_of_bounds(kernel, marker, target):
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(48, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ascend: far_base's mask is uniform data, a lane-by-lane load
        with pytest.raises(ExecutionError) as e:
            xblock.jit(kernel)[(3,)](x, out, 16, BLOCK=16, target=target)
    text = str(e.value)
    assert f"test_int32_wrap.py:{_line(marker)}" in text and "x_ptr" in text
    assert "2" in text.split("x_ptr")[0]  # program or block 2, where the offset is -2**31
    if target != "cpu":  # the cpu target's message has no offset
        assert "-" in text.split("x_ptr")[0]  # a negative element or byte offset, not 2**31


@pytest.mark.parametrize("target", TARGETS)
def test_stored_values_wrap_as_numpy_int32(target):
    x = np.array([1, -1, 3, 70000, 2**31 - 1, -2**31, 123456789, 5, 46341, -46341, 0], np.int32)
    out = np.zeros_like(x)
    xblock.jit(wrapping_values)[(2,)](x, out, x.size, BLOCK=8, target=target)
    with np.errstate(over="ignore"):
        want = x * np.int32(65536) * np.int32(65536) + x * np.int32(1000003) * np.int32(7919)
    np.testing.assert_array_equal(out, want)
