"""The simulator runs huge launches in chunks of programs with the same results and checks."""

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.sim import executor


@xblock.jit
def add_one(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    xl.store(out_ptr + offs, xl.load(x_ptr + offs, mask=m) + 1, mask=m)


@xblock.jit
def racy_across_programs(out_ptr, BLOCK: xl.constexpr):
    xl.store(out_ptr + xl.arange(0, BLOCK), xl.program_id(0).to(xl.float32))


def test_chunked_launch_matches(monkeypatch):
    monkeypatch.setattr(executor, "CHUNK_ELEMENTS", 64)  # 2 programs of 32 lanes per chunk
    x = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(x)
    add_one[(xblock.cdiv(1000, 32),)](x, out, 1000, BLOCK=32, target="sim")
    np.testing.assert_array_equal(out, x + 1)


def test_race_is_found_across_chunks(monkeypatch):
    monkeypatch.setattr(executor, "CHUNK_ELEMENTS", 16)  # one program per chunk
    out = np.zeros(16, np.float32)
    with pytest.raises(xblock.ExecutionError, match="write-write race"):
        racy_across_programs[(3,)](out, BLOCK=16, target="sim")
    assert not out.any()  # the failed launch left the array untouched


@xblock.jit
def pick_block(x_ptr, out_ptr, flag, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    v = xl.load(x_ptr + offs)
    if flag > xl.program_id(0):
        w = v * 2
    else:
        w = v + 1
    xl.store(out_ptr + xl.program_id(0) * BLOCK + offs, w)


def test_block_values_chosen_by_a_scalar_condition():
    # canonicalization may turn this `if` into an arith.select with a scalar i1 and block operands
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(24, np.float32)
    pick_block[(3,)](x, out, 1, BLOCK=8, target="sim")
    np.testing.assert_array_equal(out, np.concatenate([x * 2, x + 1, x + 1]))
