"""Hand-off kernels on both vector cores of an AI Core (cube/rowsplit.py, issue 31): fused attention
(examples/triton/attention.py, unmodified) with its rows split between the two AIVs (MIX_AIC_1_2), the
Cube running each dot for both halves. Numerics on the ascend CPU model against a float64 softmax
attention (causal or not, ragged sequence ends, BLOCK_M 32 and 64, fp16); that the split is taken
(kernel type, plan, the emitted sub-block offsets); and the cases it refuses, which stay on one vector
core with the same answers: the option off, halves that are not whole 16-row fractals, a reduction over
the rows. The planner's row-split steps are checked on made-up outcomes."""

from __future__ import annotations

import numpy as np
import pytest

import xblock
from xblock.backends.ascend.options import MIX_AIC_1_1, MIX_AIC_1_2
from xblock.backends.ascend.plan import planner
from xblock.backends.ascend.plan.plan import AscendPlan, Fits, Overflow

triton = pytest.importorskip("triton")
tl = triton.language

from examples.triton.attention import attention_fwd, grid  # noqa: E402

attention = xblock.jit(attention_fwd)


def _reference(q, k, v, scale, causal):
    """softmax(q k^T * scale [+ causal mask]) v in float64."""
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
    s = np.einsum("zhmd,zhnd->zhmn", q, k) * scale
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("zhmn,zhnd->zhmd", p / p.sum(-1, keepdims=True), v)


def _case(seq, head_dim=64, heads=2, seed=0):
    rng = np.random.default_rng(seed + seq)
    shape = (1, heads, seq, head_dim)
    q, k, v = (rng.standard_normal(shape).astype(np.float16) for _ in range(3))
    args = (q, k, v, np.zeros(shape, np.float16), float(1 / np.sqrt(head_dim)), heads * seq * head_dim,
            seq * head_dim, head_dim, heads, seq)
    return args


def _run(seq, bm, bn, causal, head_dim=64, **opts):
    args = _case(seq, head_dim)
    g = grid(seq, 1, args[8], bm)
    meta = dict(HEAD_DIM=head_dim, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, **opts)
    attention[g](*args, target="ascend", **meta)
    got = args[3].astype(np.float64)
    want = _reference(args[0], args[1], args[2], args[4], causal)
    md = attention.warmup(*args, grid=g, target="ascend", **meta)
    return got, want, md


# causal runs BLOCK_N = BLOCK_M (the kernel's causal stages assume BLOCK_N divides BLOCK_M)
@pytest.mark.parametrize("seq", [100, 200])
@pytest.mark.parametrize("bm,bn,causal", [(32, 64, False), (64, 64, False), (32, 32, True), (64, 64, True)])
def test_attention_rows_on_both_vector_cores(seq, bm, bn, causal):
    got, want, compiled = _run(seq, bm, bn, causal)
    np.testing.assert_allclose(got, want, atol=1e-2, rtol=1e-2)
    md = compiled.metadata
    assert md["kernel_type"] == MIX_AIC_1_2
    assert md["plan"]["row_split"] and md["plan"]["split"] % 2 == 0
    assert md["split"]["rows"] and md["split"]["chunk"] * md["split"]["factor"] == bm
    assert all(c["vector_cores"] == 2 and c["block"][0] == 2 * md["split"]["chunk"] for c in md["cube"])
    assert "one per vector core" in AscendPlan.from_dict(md["plan"]).describe()
    cpp = compiled.asm["cpp"]
    assert "KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2)" in cpp
    # the AIVs' index read in an AIV section (0 on the AIC), then AIV k's chunks k, k + 2, ...
    assert "if ASCEND_IS_AIV {\n        sec = GetSubBlockIdx();" in cpp
    assert f"chunk = static_cast<int32_t>(sec); chunk < {md['split']['factor']}; chunk += 2" in cpp
    assert "(GetSubBlockIdx() * " in cpp  # each vector core's half of the output and input slots


def test_head_dim_128_block_32x128_takes_the_split():
    """The benchmark's shape (docs/BENCHMARKS.md, published 910B times) at a ragged length."""
    got, want, compiled = _run(100, 32, 128, False, head_dim=128)
    np.testing.assert_allclose(got, want, atol=1e-2, rtol=1e-2)
    assert compiled.metadata["kernel_type"] == MIX_AIC_1_2


def test_causal_head_dim_128_block_64_fits_split():
    """Whole, this overflows UB: the planner tries the rows split between the vector cores first (without the
    option the chunks run on one vector core)."""
    got, want, compiled = _run(130, 64, 64, True, head_dim=128)
    np.testing.assert_allclose(got, want, atol=1e-2, rtol=1e-2)
    md = compiled.metadata
    assert md["kernel_type"] == MIX_AIC_1_2 and md["plan"]["row_split"]


def test_option_off_keeps_one_vector_core():
    got, want, compiled = _run(100, 32, 64, False, row_split=False)
    np.testing.assert_allclose(got, want, atol=1e-2, rtol=1e-2)
    md = compiled.metadata
    assert md["kernel_type"] == MIX_AIC_1_1 and not md["plan"]["row_split"] and md["plan"]["split"] == 1


def test_halves_of_less_than_a_fractal_are_refused():
    """BLOCK_M 16: 8 rows a vector core are not whole 16-row fractals of the Cube's A tile."""
    got, want, compiled = _run(100, 16, 64, False)
    np.testing.assert_allclose(got, want, atol=1e-2, rtol=1e-2)
    md = compiled.metadata
    assert md["kernel_type"] == MIX_AIC_1_1 and not md["plan"]["row_split"]
    assert md["row_split"] == {"taken": False, "why": "8 rows a vector core are not whole 16-row fractals of the "
                                                      "Cube's A tile"}


@triton.jit
def column_sums(a_ptr, b_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, BK: tl.constexpr):
    """Column sums of exp(a) @ b, the dot handed off in a K loop: a reduction over the dot's rows, which a
    row split cannot halve (the chunk loop would carry the partial sums from one vector core to the other)."""
    rows, cols, ks = tl.arange(0, M), tl.arange(0, N), tl.arange(0, BK)
    acc = tl.zeros([M, N], tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rows[:, None] * K + k0 + ks[None, :])
        b = tl.load(b_ptr + (k0 + ks[:, None]) * N + cols[None, :])
        acc += tl.dot(tl.exp(a.to(tl.float32)).to(tl.float16), b)
    tl.store(out_ptr + cols, tl.sum(acc, 0))


def test_a_reduction_over_the_rows_is_refused():
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((64, 64)) * 0.5).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    out = np.zeros(64, np.float32)
    kernel = xblock.jit(column_sums)
    meta = dict(M=64, N=64, K=64, BK=32)
    kernel[(1,)](a, b, out, target="ascend", **meta)
    want = (np.exp(a.astype(np.float64)).astype(np.float16).astype(np.float64) @ b.astype(np.float64)).sum(0)
    np.testing.assert_allclose(out, want, rtol=2e-3, atol=1e-1)
    md = kernel.warmup(a, b, out, grid=(1,), target="ascend", **meta).metadata
    assert md["kernel_type"] == MIX_AIC_1_1 and not md["plan"]["row_split"]
    assert md["row_split"]["taken"] is False and "carries a value" in md["row_split"]["why"]


# ----- the planner's steps, on made-up outcomes -------------------------------------------------

def _drive(start, outcomes):
    """The plans the planner yields, answering each with the next outcome; (plans, verdict)."""
    gen, seen = planner.plans(start), []
    plan = next(gen)
    try:
        for got in outcomes:
            seen.append(plan)
            plan = gen.send(got)
    except StopIteration as stop:
        return seen, stop.value
    raise AssertionError(f"the planner asked for more plans: {plan}")


def test_planner_tries_the_row_split_after_a_hand_off_kernel_fits():
    whole = Fits(kernel_type=MIX_AIC_1_1, handoff=True)
    both = Fits(kernel_type=MIX_AIC_1_2, handoff=True)
    seen, verdict = _drive(planner.Start(row_split=True), [whole, both])
    assert seen[1].row_split and seen[1].split == 2 and verdict.plan == seen[1]
    # the lowering refused it (one vector core again): the kernel as written
    seen, verdict = _drive(planner.Start(row_split=True), [whole, whole])
    assert verdict.plan == seen[0]
    # it fits only single-buffered where the kernel as written fits double-buffered
    seen, verdict = _drive(planner.Start(row_split=True), [whole, Fits(kernel_type=MIX_AIC_1_2, single_buffered=True)])
    assert verdict.plan == seen[0]
    # the option off: nothing more is tried
    seen, verdict = _drive(planner.Start(row_split=False), [whole])
    assert verdict.plan == seen[0] and len(seen) == 1


def test_planner_tries_row_splits_first_when_the_kernel_overflows():
    over = Overflow(total=300000, handoff=True)
    both = Fits(kernel_type=MIX_AIC_1_2, handoff=True)
    seen, verdict = _drive(planner.Start(row_split=True), [over, over, both])
    assert [p.split for p in seen] == [1, 2, 4] and all(p.row_split for p in seen[1:]) and verdict.plan == seen[2]
    # a kernel without handed-off dots: the plain split to fit at once
    seen, verdict = _drive(planner.Start(row_split=True), [Overflow(total=300000), Fits()])
    assert [(p.split, p.row_split) for p in seen] == [(1, False), (2, False)]
    # refused by the lowering: the plain split to fit follows
    seen, verdict = _drive(planner.Start(row_split=True), [over, Fits(kernel_type=MIX_AIC_1_1), Fits()])
    assert seen[2].split == 2 and not seen[2].row_split and verdict.plan == seen[2]
