"""Plans that overflow the unified buffer are split (issue #30, item 2): the query rows of a prompt-cache
attention (128 x 128 blocks, head dim 128: the online-softmax loop with its two dots runs whole for each
chunk of rows, `q`'s rows times the whole key block) and the rows of an AWQ dequantization (128 x 256
fp16 tiles unpacked with interleaves and a reshaped row of shifts), against numpy and the sim; the plan
records the split. A kernel too big even one row at a time keeps the unified-buffer error, at its line,
with the bytes needed and available."""

from __future__ import annotations

import numpy as np
import pytest

import xblock
import xblock.language as xl
from tests._pkg import mentions_package
from tests.conformance.test_ub_split import (
    attention_case,
    attention_grid,
    awq_case,
    awq_dequantize,
    awq_grid,
    context_attention_fwd,
)

attention = xblock.jit(context_attention_fwd)
awq = xblock.jit(awq_dequantize)


def _on(kernel, grid, args, target, **meta):
    a = [v.copy() if isinstance(v, np.ndarray) else v for v in args]
    kernel[grid](*a, target=target, **meta)
    return a


def _plan(kernel, grid, args, **meta) -> dict:
    md = kernel.warmup(*args, grid=grid, target="ascend", **meta).metadata
    assert md["plan"]["split"] == md["split"]["factor"] > 1  # what the planner kept, and what it did
    return md


def test_prompt_cache_attention_is_split_along_the_query_rows():
    seqs, caches = (200, 130, 128), (60, 0, 1)  # new tokens: 140, 130, 127
    args, out, rows, want = attention_case(seqs, caches, seed=3)
    grid = attention_grid(seqs, caches)
    meta = dict(BLOCK_M=128, BLOCK_DMODEL=128, BLOCK_N=128)
    got = {t: _on(attention, grid, args, t, **meta)[3][rows].astype(np.float32) for t in ("sim", "ascend")}
    np.testing.assert_allclose(got["ascend"], want, atol=1e-2, rtol=1e-2)
    np.testing.assert_allclose(got["ascend"], got["sim"], atol=2e-3, rtol=2e-3)
    md = _plan(attention, grid, args, **meta)
    assert md["split"]["rows"] and md["split"]["extent"] == 128 and md["split"]["loops"] == 1


def test_grouped_query_attention_is_split_too():
    seqs, caches = (70,), (5,)
    args, out, rows, want = attention_case(seqs, caches, heads=4, kv_group=2, seed=4)
    got = _on(attention, attention_grid(seqs, caches, heads=4), args, "ascend", BLOCK_M=128, BLOCK_DMODEL=128,
              BLOCK_N=128)[3][rows]
    np.testing.assert_allclose(got.astype(np.float32), want, atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("n_rows, n_words", [(128, 32), (250, 33)])
def test_awq_dequantization_is_split_along_its_rows(n_rows, n_words):
    args, out, want = awq_case(n_rows, n_words)
    grid = awq_grid(n_rows, n_words)
    for target in ("sim", "ascend"):
        np.testing.assert_array_equal(_on(awq, grid, args, target, BLOCK_R=128, BLOCK_W=32)[3], want)
    md = _plan(awq, grid, args, BLOCK_R=128, BLOCK_W=32)
    assert md["split"]["rows"] and md["split"]["chunk"] * md["split"]["factor"] == 128


def test_awq_too_big_even_one_row_at_a_time_says_how_much_it_needs():
    args, _, _ = awq_case(16, 2048)
    with pytest.raises(xblock.CompilationError) as e:
        awq.warmup(*args, grid=awq_grid(16, 2048, 16, 2048), target="ascend", BLOCK_R=16, BLOCK_W=2048)
    msg = str(e.value)
    start = awq_dequantize.fn.__code__.co_firstlineno
    line = int(msg.split("test_ub_split.py:")[1].split(":")[0])
    assert start < line < start + 40 and "ascend: this kernel's blocks need " in msg
    assert "more than the 188416 B usable on Ascend910B" in msg
    assert "in 16 chunks of 1 row they still need " in msg and " B)" in msg
    assert "^" in msg and not mentions_package(msg) and "Traceback" not in msg


@xblock.jit
def dot_over_the_split_axis(a_ptr, b_ptr, c_ptr, BM: xl.constexpr, BK: xl.constexpr):
    ks = xl.arange(0, BK)
    rows = xl.arange(0, BM)
    acc = xl.zeros((BM, BM), dtype=xl.float32)
    for i in range(2):
        a = xl.load(a_ptr + i * BK * BM + ks[:, None] * BM + rows[None, :]) * 2.0  # [BK, BM]: K first
        b = xl.load(b_ptr + i * BK * BM + ks[:, None] * BM + rows[None, :]) * 2.0
        acc += xl.dot(xl.trans(a), b) * 0.5
    xl.store(c_ptr + rows[:, None] * BM + rows[None, :], acc)


def test_a_dot_that_contracts_the_split_axis_keeps_the_error_with_the_reason():
    """The largest blocks are the [BK, BM] operands (scaled on the vector core, so in the unified buffer),
    so the axis split is K, which the dot sums over: splitting it would need partial products; the error
    says so at the dot's line."""
    a = np.zeros((2, 4032, 16), np.float16)
    with pytest.raises(xblock.CompilationError) as e:
        dot_over_the_split_axis.warmup(a, a, np.zeros((16, 16), np.float32), BM=16, BK=4032, grid=(1,),
                                       target="ascend")
    msg = str(e.value)
    line = dot_over_the_split_axis.fn.__code__.co_firstlineno + 8
    assert "ascend: this kernel's blocks need " in msg and "cannot split this kernel's" in msg
    assert f"tl.dot multiplies whole blocks (only its rows, or its batch, can be split) (line {line})" in msg
