"""A dot whose operand rows lie more than 65535 elements apart (an LM head's [K, 131072] weight): the Cube's
GM -> L1 copy (Nd2NzParams.srcDValue, a uint16_t in [1, 65535]) goes one row at a time, and the result is
right. Before, the stride wrapped to its low 16 bits and every column came out wrong."""

from __future__ import annotations

import numpy as np

import xblock
from tests.ascend.cube.kernels import dot_kernel

META = dict(BLOCK_M=16, BLOCK_N=128, BLOCK_K=32, RELU=0)


def _run(M, N, K, b_cols, seed=0):
    """C = A @ B[:, :N] for B stored [K, b_cols] row-major (row stride b_cols), on the ascend target."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K), dtype=np.float32).astype(np.float16)
    b = (rng.standard_normal((K, b_cols), dtype=np.float32) / np.sqrt(K)).astype(np.float16)
    c = np.full((M, N), 7, np.float32)
    grid = (xblock.cdiv(M, 16), xblock.cdiv(N, 128))
    dot_kernel[grid](a, b, c, M, N, K, K, b_cols, N, target="ascend", **META)
    ref = a.astype(np.float64) @ b[:, :N].astype(np.float64)
    np.testing.assert_allclose(c, ref, atol=2e-2, rtol=2e-2)


def test_lm_head_131072_vocabulary():
    """The whole LM head: N = 131072 columns, B's row stride 131072 (K and M small)."""
    _run(M=5, N=131072, K=40, b_cols=131072)


def test_strided_view_beyond_the_field():
    """A narrow view of a wide B: N = 200 columns whose rows are 70001 elements apart; K across two steps."""
    _run(M=17, N=200, K=45, b_cols=70001, seed=1)


def test_both_paths_in_the_kernel_and_the_short_one_runs():
    """A runtime stride picks the path at run time: the generated kernel has the one-copy Nd2Nz and the row
    loop; a stride that fits takes one copy per operand and K step."""
    from xblock.backends.ascend.model.launch import cube_counters

    sig = dict(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp32", M="i32", N="i32", K="i32", stride_am="i32",
               stride_bk="i32", stride_cm="i32")
    ck = xblock.compile(dot_kernel, target="ascend", signature=sig, constexprs=META)
    cpp = ck.asm["cpp"]
    assert "<= 65535" in cpp and "static_cast<uint16_t>" not in cpp, cpp
    M, N, K = 16, 128, 32
    a = np.ones((M, K), np.float16)
    b = np.ones((K, N), np.float16)
    c = np.zeros((M, N), np.float32)
    ck[(1, 1)](a, b, c, M, N, K, K, N, N)
    assert (c == K).all()
    assert cube_counters(ck)["gm_to_l1_calls"] == 2  # A and B, one Nd2Nz each
    wide = np.ones((K, 70000), np.float16)
    ck[(1, 1)](a, wide, c, M, N, K, K, 70000, N)
    assert (c == K).all()
    assert cube_counters(ck)["gm_to_l1_calls"] == 1 + K  # A whole, B one row at a time


def test_cube_queues_keep_inside_the_event_pool():
    """The AIC's pipe holds 3 M_MTE1 ids; double-buffered L0A and L0B plus the BiasTable's queue take the other
    5 (the bias kernels fill the pool exactly); one more buffer would need a ninth id."""
    from xblock.backends.ascend.cube.tiling import event_ids_over

    assert event_ids_over({"A1": 2, "B1": 2, "C1": 1, "A2": 2, "B2": 2, "C2": 1, "CO1": 1}) == {}
    assert event_ids_over({"A2": 3, "B2": 2, "C2": 1}) == {"M_MTE1": 9}
    assert event_ids_over({"A1": 4, "B1": 4, "C1": 1}) == {"MTE1_MTE2": 9}
