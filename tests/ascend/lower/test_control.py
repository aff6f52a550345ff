"""Runtime control flow on the ascend target: an `if` whose branches yield blocks and a `while`
loop carrying blocks and scalars, each plain C++ control flow inside the grid loop (divergence is
per program), against the sim."""

from __future__ import annotations

import numpy as np

import xblock
import xblock.language as xl


@xblock.jit
def if_kernel(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    pid = xl.program_id(0)
    offs = pid * BLOCK + xl.arange(0, BLOCK)
    mask = offs < n
    x = xl.load(x_ptr + offs, mask=mask, other=0.0)
    if pid % 2 == 0:
        y = x * 2.0 + 1.0
    else:
        y = xl.exp(x)
    xl.store(out_ptr + offs, y, mask=mask)


@xblock.jit
def while_kernel(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    pid = xl.program_id(0)
    offs = pid * BLOCK + xl.arange(0, BLOCK)
    mask = offs < n
    x = xl.load(x_ptr + offs, mask=mask, other=0.0)
    acc = xl.zeros((BLOCK,), xl.float32)
    i = 0
    while i < pid + 1:  # a trip count that differs per program
        acc = acc * 0.5 + x
        i += 1
    xl.store(out_ptr + offs, acc, mask=mask)


@xblock.jit
def row_sum_while(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    row = xl.program_id(0)
    acc = xl.zeros((BLOCK,), xl.float32)
    start = 0
    while start < n:  # loads inside the loop, at the carried scalar offset
        offs = start + xl.arange(0, BLOCK)
        acc += xl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
        start += BLOCK
    xl.store(out_ptr + row, xl.sum(acc, axis=0))


@xblock.jit
def nested_kernel(x_ptr, out_ptr, idx_ptr, n, BLOCK: xl.constexpr):
    pid = xl.program_id(0)
    offs = pid * BLOCK + xl.arange(0, BLOCK)
    mask = offs < n
    x = xl.load(x_ptr + offs, mask=mask, other=0.0)
    s = 1.0
    if pid > 0:  # an integer block and a scalar out of one `if`
        idx = offs * 2
        s = 3.0
    else:
        idx = offs + 1
    i = 0
    acc = x
    while i < 3:
        if i == pid:  # an `if` yielding a block inside a `while`
            acc = acc + s
        else:
            acc = acc * 0.5
        i += 1
    xl.store(out_ptr + offs, acc, mask=mask)
    xl.store(idx_ptr + offs, idx, mask=mask)


@xblock.jit
def for_if_kernel(x_ptr, out_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs)
    acc = xl.zeros((BLOCK,), xl.float32)
    t = xl.zeros((BLOCK,), xl.float32)
    for i in range(4):
        if i % 2 == 0:  # reads the accumulator inside an `if`, before it is updated in place
            t = acc * 2.0
        else:
            t = acc + 1.0
        acc = acc + x + t
    xl.store(out_ptr + offs, acc)


def _both(kernel, n, block, dtype=np.float32):
    x = np.random.default_rng(0).standard_normal(n).astype(dtype)
    res = {}
    for target in ("sim", "ascend"):
        out = np.zeros(n, dtype)
        kernel[(xblock.cdiv(n, block),)](x, out, n, BLOCK=block, target=target)
        res[target] = out
    return res


def test_if_yielding_blocks_matches_the_sim():
    for n in (1, 255, 257):
        res = _both(if_kernel, n, 128)
        np.testing.assert_allclose(res["ascend"], res["sim"], rtol=1e-5, atol=1e-6)


def test_if_yielding_fp16_blocks_matches_the_sim():
    res = _both(if_kernel, 300, 128, np.float16)
    np.testing.assert_allclose(res["ascend"].astype(np.float32), res["sim"].astype(np.float32), rtol=2e-3,
                               atol=2e-3)


def test_while_carrying_blocks_matches_the_sim():
    for n in (1, 129, 500):
        res = _both(while_kernel, n, 128)
        np.testing.assert_allclose(res["ascend"], res["sim"], rtol=1e-5, atol=1e-6)


def test_while_loading_at_a_carried_offset_matches_the_sim():
    for n in (1, 100, 300):
        x = np.random.default_rng(n).standard_normal((3, n)).astype(np.float32)
        res = {}
        for target in ("sim", "ascend"):
            out = np.zeros(3, np.float32)
            row_sum_while[(3,)](x, out, n, BLOCK=64, target=target)
            res[target] = out
        np.testing.assert_allclose(res["ascend"], res["sim"], rtol=1e-5, atol=1e-5)


def test_nested_if_in_while_and_integer_yields_match_the_sim():
    n = 300
    x = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    res = {}
    for target in ("sim", "ascend"):
        out, idx = np.zeros(n, np.float32), np.zeros(n, np.int32)
        nested_kernel[(3,)](x, out, idx, n, BLOCK=128, target=target)
        res[target] = (out, idx)
    np.testing.assert_allclose(res["ascend"][0], res["sim"][0], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(res["ascend"][1], res["sim"][1])


def test_an_accumulator_read_inside_an_if_matches_the_sim():
    x = np.random.default_rng(6).standard_normal(64).astype(np.float32)
    res = {}
    for target in ("sim", "ascend"):
        out = np.zeros(64, np.float32)
        for_if_kernel[(1,)](x, out, BLOCK=64, target=target)
        res[target] = out
    np.testing.assert_allclose(res["ascend"], res["sim"], rtol=1e-6, atol=1e-6)


def test_control_flow_is_plain_cpp():
    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    cpp = xblock.compile(while_kernel, target="ascend", signature=sig, constexprs={"BLOCK": 128}).asm["cpp"]
    assert "while (true) {" in cpp and "break;" in cpp
    cpp = xblock.compile(if_kernel, target="ascend", signature=sig, constexprs={"BLOCK": 128}).asm["cpp"]
    assert "} else {" in cpp


@xblock.jit
def pointer_loop_kernel(x_ptr, out_ptr, BLOCK: xl.constexpr):
    ptrs = x_ptr + xl.arange(0, BLOCK)
    acc = xl.zeros((BLOCK,), xl.float32)
    for _ in range(4):
        acc += xl.load(ptrs)
        ptrs += BLOCK
    xl.store(out_ptr + xl.arange(0, BLOCK), acc)


def test_a_loop_carrying_pointer_blocks():
    """Pointer blocks advanced by the same step every iteration stay symbolic (start + iteration * step)."""
    x = np.arange(4 * 64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    pointer_loop_kernel[(1,)](x, out, BLOCK=64, target="ascend")
    np.testing.assert_array_equal(out, x.reshape(4, 64).sum(0))
