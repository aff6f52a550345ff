"""Fused attention and a persistent matmul (examples/triton/) unmodified, against numpy, at boundary
sizes: sequence lengths 1, 63, 64, 65 and 1000, head dims 64 and 128, fp16 and bf16, causal or not."""

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile
from xblock.testing import bf16

pytest.importorskip("triton")
from examples.triton.attention import attention_fwd, grid, reference  # noqa: E402
from examples.triton.persistent_matmul import matmul_persistent  # noqa: E402

TARGETS = ["sim", "cpu"]


def _attention(target, seq, head_dim, causal, dtype="fp16", block=64, heads=2):
    rng = np.random.default_rng(seq * 7 + head_dim)
    shape = (1, heads, seq, head_dim)
    q, k, v = (rng.standard_normal(shape).astype(np.float32) for _ in range(3))
    if dtype == "fp16":
        q, k, v = (t.astype(np.float16) for t in (q, k, v))
        o = np.zeros(shape, np.float16)
    else:
        q, k, v = (t.astype(bf16()) for t in (q, k, v))
        o = np.zeros(shape, bf16())
    scale = float(1.0 / np.sqrt(head_dim))
    xblock.jit(attention_fwd)[grid(seq, 1, heads, block)](
        q, k, v, o, scale, heads * seq * head_dim, seq * head_dim, head_dim, heads, seq,
        HEAD_DIM=head_dim, BLOCK_M=block, BLOCK_N=block, CAUSAL=causal, target=target)
    return o.astype(np.float32), reference(q, k, v, scale, causal)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seq", [1, 63, 64, 65, 1000])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_fp16(target, seq, causal):
    head_dim = 64 if seq != 65 else 128
    got, want = _attention(target, seq, head_dim, causal)
    np.testing.assert_allclose(got, want, atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("target", TARGETS)
def test_attention_bf16_head128(target):
    got, want = _attention(target, 100, 128, True, dtype="bf16", block=32)
    np.testing.assert_allclose(got, want, atol=4e-2, rtol=4e-2)


def test_attention_compiles_for_cuda():
    x = np.zeros((1, 2, 128, 64), np.float16)
    for causal in (False, True):
        assert "cubin" in precompile(attention_fwd, (x, x, x, x, 0.125, 2 * 128 * 64, 128 * 64, 64, 2, 128),
                                     {"HEAD_DIM": 64, "BLOCK_M": 64, "BLOCK_N": 64, "CAUSAL": causal,
                                      "WARP_SPECIALIZE": False}).asm


@pytest.mark.parametrize("seq", [1, 63, 64, 65, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_on_ascend(seq, causal):
    """Both dots of each step on the Cube (K^T read transposed from GM, p handed over through the
    workspace), the online softmax on the vector core. Causal runs 32-row blocks here (at 64 its
    diagonal mask needs more unified buffer: the rows are split, below)."""
    got, want = _attention("ascend", seq, 64, causal, block=32 if causal else 64)
    np.testing.assert_allclose(got, want, atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("seq,head_dim,causal", [(1000, 64, True), (65, 128, True), (1000, 64, False),
                                                 (65, 128, False), (1, 128, False)])
def test_attention_on_ascend_long_and_wide(seq, head_dim, causal):
    got, want = _attention("ascend", seq, head_dim, causal, block=32)
    np.testing.assert_allclose(got, want, atol=1e-2, rtol=1e-2)


def test_attention_on_ascend_bf16_head128():
    got, want = _attention("ascend", 100, 128, True, dtype="bf16", block=32)
    np.testing.assert_allclose(got, want, atol=4e-2, rtol=4e-2)


@pytest.mark.parametrize("seq", [64, 130])
def test_causal_attention_on_ascend_with_64_blocks_runs_in_row_chunks(seq):
    """Its diagonal mask needs more unified buffer at 64 than there is: the planner splits the query
    rows, each chunk running the whole key loop (issue #30; it was a clear error)."""
    got, want = _attention("ascend", seq, 64, True)
    np.testing.assert_allclose(got, want, atol=1e-2, rtol=1e-2)


def _persistent(target, M, N, K, subtile, dtype=np.float16, num_sms=4):
    rng = np.random.default_rng(M + N + K)
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    c = np.zeros((M, N), np.float32)
    xblock.jit(matmul_persistent)[(num_sms,)](
        a, b, c, M, N, K, K, 1, N, 1, N, 1, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=2, NUM_SMS=num_sms,
        EPILOGUE_SUBTILE=subtile, target=target)
    return c, a.astype(np.float32) @ b.astype(np.float32)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", [(1, 1, 1), (70, 50, 40), (64, 96, 33)])
@pytest.mark.parametrize("subtile", [False, True])
def test_persistent_matmul(target, shape, subtile):
    got, want = _persistent(target, *shape, subtile)
    np.testing.assert_allclose(got, want, atol=1e-2, rtol=1e-3)


@pytest.mark.parametrize("shape", [(1, 1, 1), (70, 50, 40), (64, 96, 33)])  # K == 1 folds the K loop away
@pytest.mark.parametrize("subtile", [False, True])
def test_persistent_matmul_on_ascend(shape, subtile):
    """The whole-tile epilogue keeps the Cube K loop and its Fixpipe store; the subtile epilogue (split
    on the vector core) inside the persistent tile loop hands each K step's dot to the vector core."""
    got, want = _persistent("ascend", *shape, subtile)
    np.testing.assert_allclose(got, want, atol=1e-2, rtol=1e-3)


def test_persistent_matmul_compiles_for_cuda():
    a = np.zeros((256, 256), np.float16)
    c = np.zeros((256, 256), np.float32)
    for subtile in (False, True):
        assert "cubin" in precompile(matmul_persistent, (a, a, c, 256, 256, 256, 256, 1, 256, 1, 256, 1),
                                     {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "NUM_SMS": 132,
                                      "EPILOGUE_SUBTILE": subtile}).asm
