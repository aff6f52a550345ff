"""A GPT block's forward and backward from TorchInductor-style kernels (tests/ascend/inductor_gpt.py),
chained with numpy matrix products as Inductor chains them with an external GEMM, on every target that
runs here, against the same block computed in float64 numpy. Issue #18 asks for exactly this on ascend:
layer norm (persistent and looped Welford), causal softmax, GELU in erf and tanh forms, residual adds,
cross-entropy with label smoothing and ignored rows, embedding gathers, scatter-add, argmax with
cumsum, and layout transposes."""

from __future__ import annotations

import numpy as np
import pytest

import xblock

from .. import inductor_gpt as K

TARGETS = ["sim", "cpu", "ascend"]
B, T, C, H, D, F, V, N = K.B, K.T, K.C, K.H, K.D, K.F, K.V, K.N
f32 = np.float32


def _cdiv(a, b):
    return -(-a // b)


class Runner:
    """Launches Inductor's kernels on one target, as Inductor's wrapper code does: grid from numel."""

    def __init__(self, target):
        self.target = target

    def __call__(self, kernel, grid, *args, **meta):
        xblock.jit(kernel)[grid](*args, target=self.target, **meta)


def _params(seed=0):
    rng = np.random.default_rng(seed)
    p = {
        "wte": rng.standard_normal((V, C)) * 0.5, "wpe": rng.standard_normal((T, C)) * 0.5,
        "ln1_w": 1 + 0.1 * rng.standard_normal(C), "ln1_b": 0.1 * rng.standard_normal(C),
        "w_qkv": rng.standard_normal((C, 3 * C)) / np.sqrt(C), "b_qkv": 0.1 * rng.standard_normal(3 * C),
        "w_o": rng.standard_normal((C, C)) / np.sqrt(C), "b_o": 0.1 * rng.standard_normal(C),
        "ln2_w": 1 + 0.1 * rng.standard_normal(C), "ln2_b": 0.1 * rng.standard_normal(C),
        "w_1": rng.standard_normal((C, F)) / np.sqrt(C), "b_1": 0.1 * rng.standard_normal(F),
        "w_2": rng.standard_normal((F, C)) / np.sqrt(F), "b_2": 0.1 * rng.standard_normal(C),
    }
    p = {k: v.astype(f32) for k, v in p.items()}
    p["idx"] = rng.integers(0, V, N).astype(np.int64)
    labels = rng.integers(0, V, N).astype(np.int64)
    labels[[3, 17]] = K.IGNORE
    p["labels"] = labels
    return p


# ----- the block in float64 numpy -----------------------------------------------------------------

def _ln(x, w, b):
    mean = x.mean(1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(1, keepdims=True) + K.EPS)
    return (x - mean) * rstd * w + b, mean[:, 0], rstd[:, 0]


def _ln_bwd(dy, x, w, mean, rstd):
    xhat = (x - mean[:, None]) * rstd[:, None]
    g = dy * w
    dx = rstd[:, None] * (g - g.mean(1, keepdims=True) - xhat * (g * xhat).mean(1, keepdims=True))
    return dx, (dy * xhat).sum(0), dy.sum(0)


def _erf(x):
    from math import erf
    return np.vectorize(erf)(x)


def _gelu(u):
    return 0.5 * u * (1 + _erf(u / np.sqrt(2)))


def _dgelu(u):
    return 0.5 * (1 + _erf(u / np.sqrt(2))) + u * np.exp(-0.5 * u * u) / np.sqrt(2 * np.pi)


def _heads(x, off=0, stride=C):
    """[N, stride] columns off..off+C as [B, H, T, D]."""
    return x[:, off:off + C].reshape(B, T, H, D).transpose(0, 2, 1, 3)


def _merge(y):
    return y.transpose(0, 2, 1, 3).reshape(N, C)


def reference(p):
    p = {k: v.astype(np.float64) if v.dtype == f32 else v for k, v in p.items()}
    r = {}
    x = p["wte"][p["idx"]] + p["wpe"][np.arange(N) % T]
    r["x"] = x
    h1, r["mean1"], r["rstd1"] = _ln(x, p["ln1_w"], p["ln1_b"])
    r["h1"] = h1
    qkv = h1 @ p["w_qkv"] + p["b_qkv"]
    q, k, v = (_heads(qkv, o) for o in (0, C, 2 * C))
    s = (q @ k.transpose(0, 1, 3, 2)) * 0.25
    s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
    prob = np.exp(s - s.max(-1, keepdims=True))
    prob /= prob.sum(-1, keepdims=True)
    r["prob"] = prob.reshape(-1, T)
    y = _merge(prob @ v)
    x2 = x + y @ p["w_o"] + p["b_o"]
    r["x2"] = x2
    h2, r["mean2"], r["rstd2"] = _ln(x2, p["ln2_w"], p["ln2_b"])
    r["h2"] = h2
    u = h2 @ p["w_1"] + p["b_1"]
    m = _gelu(u)
    r["m"] = m
    x3 = x2 + m @ p["w_2"] + p["b_2"]
    r["x3"] = x3
    logits = x3 @ p["wte"].T
    lse = np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1)) + logits.max(1)
    logp = logits - lse[:, None]
    valid = p["labels"] != K.IGNORE
    lab = np.where(valid, p["labels"], 0)
    loss = (1 - K.SMOOTH) * -logp[np.arange(N), lab] + K.SMOOTH * -logp.mean(1)
    r["loss"] = np.where(valid, loss, 0.0)
    r["lse"] = lse
    n_valid = valid.sum()
    # backward of mean(loss over valid rows)
    onehot = np.zeros_like(logits)
    onehot[np.arange(N), lab] = 1
    dlogits = (np.exp(logp) - (1 - K.SMOOTH) * onehot - K.SMOOTH / V) * (valid / n_valid)[:, None]
    r["dlogits"] = dlogits
    dx3 = dlogits @ p["wte"]
    dwte = dlogits.T @ x3
    du = (dx3 @ p["w_2"].T) * _dgelu(u)
    r["du"] = du
    dh2 = du @ p["w_1"].T
    dx2, r["dln2_w"], r["dln2_b"] = _ln_bwd(dh2, x2, p["ln2_w"], r["mean2"], r["rstd2"])
    dx2 = dx2 + dx3
    r["dx2"] = dx2
    dy = _heads(dx2 @ p["w_o"].T)
    dprob = dy @ v.transpose(0, 1, 3, 2)
    ds = prob * (dprob - (dprob * prob).sum(-1, keepdims=True)) * 0.25
    r["ds"] = ds.reshape(-1, T)
    dq, dk, dv = ds @ k, ds.transpose(0, 1, 3, 2) @ q, prob.transpose(0, 1, 3, 2) @ dy
    dqkv = np.concatenate([_merge(dq), _merge(dk), _merge(dv)], 1)
    dh1 = dqkv @ p["w_qkv"].T
    dx, _, _ = _ln_bwd(dh1, x, p["ln1_w"], r["mean1"], r["rstd1"])
    dx = dx + dx2
    r["dx"] = dx
    np.add.at(dwte, p["idx"], dx)
    r["dwte"] = dwte
    return r


# ----- the block from Inductor's kernels ----------------------------------------------------------

def run_block(run, p):
    r = {}
    e = lambda *s: np.empty(s, f32)  # noqa: E731
    x = e(N, C)
    run(K.triton_poi_fused_add_embedding_0, (_cdiv(N * C, 128),), p["idx"], p["wte"], p["wpe"], x, N * C,
        XBLOCK=128)
    r["x"] = x
    h1, mean1, rstd1 = e(N, C), e(N), e(N)
    run(K.triton_per_fused_native_layer_norm_1, (_cdiv(N, 8),), x, p["ln1_w"], p["ln1_b"], h1, mean1, rstd1, N, C,
        XBLOCK=8)
    r.update(h1=h1, mean1=mean1, rstd1=rstd1)
    qkv = (h1 @ p["w_qkv"] + p["b_qkv"]).astype(f32)
    heads = []
    for off in (0, C, 2 * C):
        out = e(B, H, T, D)
        run(K.triton_poi_fused_clone_2, (_cdiv(out.size, 256),), qkv.reshape(-1)[off:], out, out.size, XBLOCK=256)
        heads.append(out)
    q, k, v = heads
    scores = (q @ k.transpose(0, 1, 3, 2)).astype(f32).reshape(-1, T)
    prob = e(B * H * T, T)
    run(K.triton_per_fused__softmax_masked_fill_3, (_cdiv(B * H * T, 8),), scores, prob, B * H * T, T, XBLOCK=8)
    r["prob"] = prob
    yh = (prob.reshape(B, H, T, T) @ v).astype(f32)
    y = e(N, C)
    run(K.triton_poi_fused_clone_15, (_cdiv(N * C, 256),), yh, y, N * C, XBLOCK=256)
    attn = (y @ p["w_o"]).astype(f32)
    x2, h2, mean2, rstd2 = x.copy(), e(N, C), e(N), e(N)
    run(K.triton_red_fused_add_native_layer_norm_4, (_cdiv(N, 4),), x2, attn + p["b_o"], p["ln2_w"], p["ln2_b"],
        h2, mean2, rstd2, N, C, XBLOCK=4, R0_BLOCK=16)
    r.update(x2=x2, h2=h2, mean2=mean2, rstd2=rstd2)
    u0 = (h2 @ p["w_1"]).astype(f32)
    m = e(N, F)
    run(K.triton_poi_fused_gelu_5, (_cdiv(N * F, 512),), u0, p["b_1"], m, N * F, XBLOCK=512)
    r["m"] = m
    x3 = x2.copy()
    run(K.triton_poi_fused_add_7, (_cdiv(N * C, 128),), x3, (m @ p["w_2"]).astype(f32), p["b_2"], N * C, XBLOCK=128)
    r["x3"] = x3
    logits = (x3 @ p["wte"].T).astype(f32)
    loss, lse, valid = e(N), e(N), e(N)
    run(K.triton_red_fused_nll_loss_label_smoothing_8, (_cdiv(N, 4),), logits, p["labels"], loss, lse, valid, N, V,
        XBLOCK=4, R0_BLOCK=16)
    r.update(loss=loss, lse=lse)
    n_valid = np.array([valid.sum()], f32)
    dlogits = e(N, V)
    run(K.triton_red_fused_nll_loss_backward_10, (_cdiv(N, 4),), logits, p["labels"], lse, n_valid, dlogits, N, V,
        XBLOCK=4, R0_BLOCK=16)
    r["dlogits"] = dlogits
    dx3 = (dlogits @ p["wte"]).astype(f32)
    dwte = (dlogits.T @ x3).astype(f32)
    du = e(N, F)
    run(K.triton_poi_fused_gelu_backward_11, (_cdiv(N * F, 512),), (dx3 @ p["w_2"].T).astype(f32), u0, p["b_1"], du,
        N * F, XBLOCK=512)
    r["du"] = du
    dh2 = (du @ p["w_1"].T).astype(f32)
    dx2 = e(N, C)
    run(K.triton_per_fused_native_layer_norm_backward_12, (_cdiv(N, 8),), dh2, p["ln2_w"], x2, mean2, rstd2, dx3, dx2,
        N, C, XBLOCK=8)
    r["dx2"] = dx2
    dln2_w, dln2_b = e(C), e(C)
    run(K.triton_red_fused_native_layer_norm_backward_13, (_cdiv(C, 8),), dh2, x2, mean2, rstd2, dln2_w, dln2_b, C, N,
        XBLOCK=8, R0_BLOCK=8)
    r.update(dln2_w=dln2_w, dln2_b=dln2_b)
    dyh = (dx2 @ p["w_o"].T).astype(f32).reshape(B, T, H, D).transpose(0, 2, 1, 3)
    dprob = (dyh @ v.transpose(0, 1, 3, 2)).astype(f32).reshape(-1, T)
    ds = e(B * H * T, T)
    run(K.triton_per_fused__softmax_backward_data_14, (_cdiv(B * H * T, 8),), dprob, prob, ds, B * H * T, T, XBLOCK=8)
    r["ds"] = ds
    ds4, p4 = ds.reshape(B, H, T, T), prob.reshape(B, H, T, T)
    merged = []
    for g in (ds4 @ k, ds4.transpose(0, 1, 3, 2) @ q, p4.transpose(0, 1, 3, 2) @ dyh):
        out = e(N, C)
        run(K.triton_poi_fused_clone_15, (_cdiv(N * C, 256),), np.ascontiguousarray(g, f32), out, N * C, XBLOCK=256)
        merged.append(out)
    dh1 = (np.concatenate(merged, 1) @ p["w_qkv"].T).astype(f32)
    dx = e(N, C)
    run(K.triton_per_fused_native_layer_norm_backward_12, (_cdiv(N, 8),), dh1, p["ln1_w"], x, mean1, rstd1, dx2, dx,
        N, C, XBLOCK=8)
    r["dx"] = dx
    run(K.triton_poi_fused_embedding_dense_backward_16, (_cdiv(N * C, 128),), p["idx"], dx, dwte, N * C, XBLOCK=128)
    r["dwte"] = dwte
    return r


@pytest.mark.parametrize("target", TARGETS)
def test_gpt_block_forward_and_backward(target):
    p = _params()
    want = reference(p)
    got = run_block(Runner(target), p)
    for name, g in got.items():
        w = want[name].reshape(g.shape)
        scale = max(1.0, float(np.abs(w).max()))
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5 * scale, err_msg=f"{name} on {target}")


@pytest.mark.parametrize("target", TARGETS)
def test_gelu_tanh_form(target):
    u = np.random.default_rng(1).standard_normal(1000).astype(f32) * 3
    out = np.empty_like(u)
    Runner(target)(K.triton_poi_fused_gelu_tanh_6, (_cdiv(u.size, 256),), u, out, u.size, XBLOCK=256)
    u64 = u.astype(np.float64)
    want = 0.5 * u64 * (1 + np.tanh(np.sqrt(2 / np.pi) * (u64 + 0.044715 * u64 ** 3)))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_argmax_and_position_ids_from_cumsum(target):
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((N, V)).astype(f32)
    logits[5, [7, 40]] = 9.0  # a tie: the first index wins
    mask = (rng.random((N, T)) < 0.7).astype(np.int32)
    tok, pos = np.empty(N, np.int64), np.empty((N, T), np.int64)
    Runner(target)(K.triton_red_fused_argmax_cumsum_9, (_cdiv(N, 4),), logits, mask, tok, pos, N, V, XBLOCK=4,
                   R0_BLOCK=64)
    np.testing.assert_array_equal(tok, logits.argmax(1))
    np.testing.assert_array_equal(pos, np.maximum(np.cumsum(mask, 1) - 1, 0))


@pytest.mark.parametrize("target", TARGETS)
def test_conv_layout_transpose(target):
    x = np.random.default_rng(3).standard_normal((4, 6, 5, 7)).astype(f32)
    out = np.empty((4, 5, 7, 6), f32)
    Runner(target)(K.triton_poi_fused_convolution_nchw_to_nhwc_17, (_cdiv(35, 16), _cdiv(24, 8)), x, out, 24, 35,
                   YBLOCK=8, XBLOCK=16)
    np.testing.assert_array_equal(out, x.transpose(0, 2, 3, 1))
