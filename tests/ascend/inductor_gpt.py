"""A GPT block's forward and backward as TorchInductor writes its Triton kernels: flattened `xindex`
with `x0 = xindex % n` / `x1 = xindex // n`, sizes baked into the source, persistent (`per`) and looped
(`red`) reductions over `r0_` blocks, Welford combines, `tl.where` masks, `device_assert` on gathered
indices, `libdevice` math. The matrix products between them are plain numpy, as Inductor calls an
external GEMM for them. Written for this project in Inductor's style; sizes: batch 2, sequence 13,
model width 32, 2 heads of 16, MLP width 128, vocabulary 61.

Kernels take their sizes as literals, as Inductor's do; the module-level constants below only
document them and size the numpy side."""

from __future__ import annotations

import triton
import triton.language as tl
from triton.language.extra import libdevice

B, T, C, H, D, F, V = 2, 13, 32, 2, 16, 128, 61
N = B * T  # token rows
EPS = 1e-5
SMOOTH = 0.1
IGNORE = -100


# ----- helpers in the style of Inductor's triton_helpers -------------------------------------------

@triton.jit
def welford_reduce(value, mean, m2, weight, first_iteration):
    if first_iteration:
        new_weight = tl.full(weight.shape, 1, weight.dtype)
        new_mean = value
        new_m2 = tl.zeros_like(m2)
    else:
        delta = value - mean
        new_weight = weight + 1
        new_mean = mean + delta / new_weight
        new_m2 = m2 + delta * (value - new_mean)
    return new_mean, new_m2, new_weight


@triton.jit
def welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    delta = mean_2 - mean_1
    new_weight = weight_1 + weight_2
    w2_over_w = tl.where(new_weight == 0.0, 0.0, weight_2 / new_weight)
    return mean_1 + delta * w2_over_w, m2_1 + m2_2 + delta * delta * weight_1 * w2_over_w, new_weight


@triton.jit
def welford(mean, m2, weight, dim):
    return tl.reduce((mean, m2, weight), dim, welford_combine)


@triton.jit
def maximum(a, b):
    mask = a > b
    if tl.constexpr(a.dtype.is_floating()):
        mask |= a != a
    return tl.where(mask, a, b)


@triton.jit
def max2(a, dim):
    return tl.reduce(a, dim, maximum)


# ----- forward ------------------------------------------------------------------------------------

@triton.jit
def triton_poi_fused_add_embedding_0(in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    # x = wte[idx] + wpe[pos]; idx: int64 [N], wte [61, 32], wpe [13, 32]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x1 = xindex // 32
    x0 = xindex % 32
    x2 = xindex
    x3 = (xindex // 32) % 13
    tmp0 = tl.load(in_ptr0 + (x1), xmask, eviction_policy='evict_last')
    tmp1 = tl.full([XBLOCK], 61, tl.int32)
    tmp2 = tmp0 + tmp1
    tmp3 = tmp0 < 0
    tmp4 = tl.where(tmp3, tmp2, tmp0)
    tl.device_assert(((0 <= tmp4) & (tmp4 < 61)) | ~(xmask), "index out of bounds: 0 <= tmp4 < 61")
    tmp6 = tl.load(in_ptr1 + (x0 + 32 * tmp4), xmask)
    tmp7 = tl.load(in_ptr2 + (x0 + 32 * x3), xmask)
    tmp8 = tmp6 + tmp7
    tl.store(out_ptr0 + (x2), tmp8, xmask)


@triton.jit
def triton_per_fused_native_layer_norm_1(in_ptr0, in_ptr1, in_ptr2, out_ptr0, out_ptr1, out_ptr2, xnumel, r0_numel,
                                         XBLOCK: tl.constexpr):
    # persistent layer norm over rows of 32: saves mean and rstd for the backward
    R0_BLOCK: tl.constexpr = 32
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 32 * x0), xmask, other=0.0)
    tmp21 = tl.load(in_ptr1 + (r0_1), None, eviction_policy='evict_last')
    tmp23 = tl.load(in_ptr2 + (r0_1), None, eviction_policy='evict_last')
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.where(xmask, tmp1, 0)
    tmp4 = tl.sum(tmp3, 1)[:, None]
    tmp5 = tl.full([XBLOCK, 1], 32, tl.int32)
    tmp6 = tmp5.to(tl.float32)
    tmp7 = tmp4 / tmp6
    tmp8 = tmp1 - tmp7
    tmp9 = tmp8 * tmp8
    tmp10 = tl.broadcast_to(tmp9, [XBLOCK, R0_BLOCK])
    tmp12 = tl.where(xmask, tmp10, 0)
    tmp13 = tl.sum(tmp12, 1)[:, None]
    tmp14 = tmp13 / 32.0
    tmp15 = 1e-05
    tmp16 = tmp14 + tmp15
    tmp17 = libdevice.rsqrt(tmp16)
    tmp18 = tmp0 - tmp7
    tmp19 = tmp18 * tmp17
    tmp22 = tmp19 * tmp21
    tmp24 = tmp22 + tmp23
    tl.store(out_ptr0 + (r0_1 + 32 * x0), tmp24, xmask)
    tl.store(out_ptr1 + (x0), tmp7, xmask)
    tl.store(out_ptr2 + (x0), tmp17, xmask)


@triton.jit
def triton_poi_fused_clone_2(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    # q, k or v of qkv [B, T, 3, H, D] (the offset picks one) to [B, H, T, D]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex % 16
    x1 = (xindex // 16) % 13
    x2 = (xindex // 208) % 2
    x3 = xindex // 416
    x4 = xindex
    tmp0 = tl.load(in_ptr0 + (x0 + 16 * x2 + 96 * x1 + 1248 * x3), xmask)
    tl.store(out_ptr0 + (x4), tmp0, xmask)


@triton.jit
def triton_per_fused__softmax_masked_fill_3(in_ptr0, out_ptr2, xnumel, r0_numel, XBLOCK: tl.constexpr):
    # causal softmax of scores [B*H*T, T] scaled by 1/sqrt(16)
    R0_BLOCK: tl.constexpr = 16
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_mask = r0_index < r0_numel
    r0_2 = r0_index
    x0 = xindex % 13
    x3 = xindex
    tmp0 = r0_2
    tmp1 = x0
    tmp2 = tmp0 <= tmp1
    tmp3 = tl.load(in_ptr0 + (r0_2 + 13 * x3), r0_mask & xmask, other=0.0)
    tmp4 = 0.25
    tmp5 = tmp3 * tmp4
    tmp6 = float("-inf")
    tmp7 = tl.where(tmp2, tmp5, tmp6)
    tmp8 = tl.broadcast_to(tmp7, [XBLOCK, R0_BLOCK])
    tmp10 = tl.where(r0_mask & xmask, tmp8, float("-inf"))
    tmp11 = max2(tmp10, 1)[:, None]
    tmp12 = tmp7 - tmp11
    tmp13 = tl.exp(tmp12)
    tmp14 = tl.broadcast_to(tmp13, [XBLOCK, R0_BLOCK])
    tmp16 = tl.where(r0_mask & xmask, tmp14, 0)
    tmp17 = tl.sum(tmp16, 1)[:, None]
    tmp18 = tmp13 / tmp17
    tl.store(out_ptr2 + (r0_2 + 13 * x3), tmp18, r0_mask & xmask)


@triton.jit
def triton_red_fused_add_native_layer_norm_4(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, out_ptr0, out_ptr1, out_ptr2,
                                             xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    # x2 = x + attn_out (stored in place), then a looped Welford layer norm of x2
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    x0 = xindex
    tmp4_mean = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    tmp4_m2 = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    tmp4_weight = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        r0_1 = r0_index
        tmp0 = tl.load(in_out_ptr0 + (r0_1 + 32 * x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        tmp1 = tl.load(in_ptr0 + (r0_1 + 32 * x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        tmp2 = tmp0 + tmp1
        tmp3 = tl.broadcast_to(tmp2, [XBLOCK, R0_BLOCK])
        tmp4_mean_next, tmp4_m2_next, tmp4_weight_next = welford_reduce(tmp3, tmp4_mean, tmp4_m2, tmp4_weight,
                                                                       r0_offset == 0)
        tmp4_mean = tl.where(r0_mask & xmask, tmp4_mean_next, tmp4_mean)
        tmp4_m2 = tl.where(r0_mask & xmask, tmp4_m2_next, tmp4_m2)
        tmp4_weight = tl.where(r0_mask & xmask, tmp4_weight_next, tmp4_weight)
        tl.store(in_out_ptr0 + (r0_1 + 32 * x0), tmp2, r0_mask & xmask)
    tmp5, tmp6, tmp7 = welford(tmp4_mean, tmp4_m2, tmp4_weight, 1)
    tmp4 = tmp5[:, None]
    tmp8 = tmp6[:, None]
    tmp9 = tmp8 / 32.0
    tmp10 = 1e-05
    tmp11 = tmp9 + tmp10
    tmp12 = libdevice.rsqrt(tmp11)
    tl.store(out_ptr1 + (x0), tmp4, xmask)
    tl.store(out_ptr2 + (x0), tmp12, xmask)
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        r0_1 = r0_index
        tmp13 = tl.load(in_out_ptr0 + (r0_1 + 32 * x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        tmp16 = tl.load(in_ptr1 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp18 = tl.load(in_ptr2 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp14 = tmp13 - tmp4
        tmp15 = tmp14 * tmp12
        tmp17 = tmp15 * tmp16
        tmp19 = tmp17 + tmp18
        tl.store(out_ptr0 + (r0_1 + 32 * x0), tmp19, r0_mask & xmask)


@triton.jit
def triton_poi_fused_gelu_5(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    # gelu (erf form) of h @ W1 + b1, b1 a row vector of 128
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x2 = xindex
    x0 = xindex % 128
    tmp0 = tl.load(in_ptr0 + (x2), xmask)
    tmp1 = tl.load(in_ptr1 + (x0), xmask, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tmp3 = 0.5
    tmp4 = tmp2 * tmp3
    tmp5 = 0.7071067811865476
    tmp6 = tmp2 * tmp5
    tmp7 = libdevice.erf(tmp6)
    tmp8 = 1.0
    tmp9 = tmp7 + tmp8
    tmp10 = tmp4 * tmp9
    tl.store(out_ptr0 + (x2), tmp10, xmask)


@triton.jit
def triton_poi_fused_gelu_tanh_6(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    # gelu, tanh approximation
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), xmask)
    tmp1 = 0.5
    tmp2 = tmp0 * tmp1
    tmp3 = tmp0 * tmp0
    tmp4 = tmp3 * tmp0
    tmp5 = 0.044715
    tmp6 = tmp4 * tmp5
    tmp7 = tmp0 + tmp6
    tmp8 = 0.7978845608028654
    tmp9 = tmp7 * tmp8
    tmp10 = libdevice.tanh(tmp9)
    tmp11 = 1.0
    tmp12 = tmp10 + tmp11
    tmp13 = tmp2 * tmp12
    tl.store(out_ptr0 + (x0), tmp13, xmask)


@triton.jit
def triton_poi_fused_add_7(in_out_ptr0, in_ptr0, in_ptr1, xnumel, XBLOCK: tl.constexpr):
    # x3 = x2 + (m @ W2 + b2), in place
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x2 = xindex
    x0 = xindex % 32
    tmp0 = tl.load(in_out_ptr0 + (x2), xmask)
    tmp1 = tl.load(in_ptr0 + (x2), xmask)
    tmp2 = tl.load(in_ptr1 + (x0), xmask, eviction_policy='evict_last')
    tmp3 = tmp1 + tmp2
    tmp4 = tmp0 + tmp3
    tl.store(in_out_ptr0 + (x2), tmp4, xmask)


@triton.jit
def triton_red_fused_nll_loss_label_smoothing_8(in_ptr0, in_ptr1, out_ptr0, out_ptr1, out_ptr2, xnumel, r0_numel,
                                                 XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    # per-row log-sum-exp of logits [N, 61], then (1 - 0.1) * nll + 0.1 * mean(-logprobs); rows whose label
    # is -100 give 0 and count out of the mean
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    x0 = xindex
    _tmp2 = tl.full([XBLOCK, R0_BLOCK], float("-inf"), tl.float32)
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        r0_1 = r0_index
        tmp0 = tl.load(in_ptr0 + (r0_1 + 61 * x0), r0_mask & xmask, eviction_policy='evict_last', other=0.0)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
        tmp3 = triton_helpers_maximum(_tmp2, tmp1)
        _tmp2 = tl.where(r0_mask & xmask, tmp3, _tmp2)
    tmp2 = max2(_tmp2, 1)[:, None]
    _tmp8 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    _tmp10 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        r0_1 = r0_index
        tmp4 = tl.load(in_ptr0 + (r0_1 + 61 * x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        tmp5 = tmp4 - tmp2
        tmp6 = tl.exp(tmp5)
        tmp7 = tl.broadcast_to(tmp6, [XBLOCK, R0_BLOCK])
        tmp9 = _tmp8 + tmp7
        _tmp8 = tl.where(r0_mask & xmask, tmp9, _tmp8)
        tmp11 = _tmp10 + tl.broadcast_to(tmp5, [XBLOCK, R0_BLOCK])
        _tmp10 = tl.where(r0_mask & xmask, tmp11, _tmp10)
    tmp8 = tl.sum(_tmp8, 1)[:, None]
    tmp10 = tl.sum(_tmp10, 1)[:, None]
    tmp12 = tl.log(tmp8)
    tmp13 = tl.load(in_ptr1 + (x0), xmask, eviction_policy='evict_last')
    tmp14 = tl.full([1, 1], -100, tl.int64)
    tmp15 = tmp13 != tmp14
    tmp16 = tl.full([1, 1], 0, tl.int64)
    tmp17 = tl.where(tmp15, tmp13, tmp16)
    tmp18 = tmp17 + 61
    tmp19 = tmp17 < 0
    tmp20 = tl.where(tmp19, tmp18, tmp17)
    tl.device_assert(((0 <= tmp20) & (tmp20 < 61)) | ~(xmask), "index out of bounds: 0 <= tmp20 < 61")
    tmp22 = tl.load(in_ptr0 + (tmp20 + 61 * x0), xmask, eviction_policy='evict_last')
    tmp23 = tmp22 - tmp2
    tmp24 = tmp23 - tmp12
    tmp25 = -tmp24
    tmp26 = tmp10 - 61.0 * tmp12
    tmp27 = -tmp26 / 61.0
    tmp28 = 0.9 * tmp25 + 0.1 * tmp27
    tmp29 = 0.0
    tmp30 = tl.where(tmp15, tmp28, tmp29)
    tl.store(out_ptr0 + (x0), tmp30, xmask)
    tl.store(out_ptr1 + (x0), tmp2 + tmp12, xmask)
    tl.store(out_ptr2 + (x0), tmp15.to(tl.float32), xmask)


@triton.jit
def triton_helpers_maximum(a, b):
    return maximum(a, b)


@triton.jit
def triton_red_fused_argmax_cumsum_9(in_ptr0, in_ptr1, out_ptr0, out_ptr1, xnumel, r0_numel, XBLOCK: tl.constexpr,
                                    R0_BLOCK: tl.constexpr):
    # greedy next token (argmax over the vocabulary, first index on ties) and position ids from an
    # attention mask (cumsum - 1, clamped at 0), one row each
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_mask = r0_index < r0_numel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_index + 61 * x0), r0_mask & xmask, other=float("-inf"))
    tmp1 = tl.argmax(tmp0, 1)[:, None]
    tl.store(out_ptr0 + (x0), tmp1.to(tl.int64), xmask)
    tmp2 = tl.load(in_ptr1 + (r0_index + 13 * x0), (r0_index < 13) & xmask, other=0)
    tmp3 = tl.cumsum(tmp2, 1)
    tmp4 = tmp3 - 1
    tmp5 = tl.maximum(tmp4, 0)
    tl.store(out_ptr1 + (r0_index + 13 * x0), tmp5.to(tl.int64), (r0_index < 13) & xmask)


# ----- backward -----------------------------------------------------------------------------------

@triton.jit
def triton_red_fused_nll_loss_backward_10(in_ptr0, in_ptr1, in_ptr2, in_ptr3, out_ptr0, xnumel, r0_numel,
                                          XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    # dlogits = (softmax - 0.9 * onehot(label) - 0.1 / 61) * valid / n_valid; in_ptr2 holds lse, in_ptr3 n_valid
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    x0 = xindex
    tmp0 = tl.load(in_ptr1 + (x0), xmask, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr2 + (x0), xmask, eviction_policy='evict_last')
    tmp2 = tl.load(in_ptr3 + (0))
    tmp3 = tl.broadcast_to(tmp2, [XBLOCK, 1])
    tmp4 = tmp0 != -100
    tmp5 = tl.where(tmp4, 1.0, 0.0) / tmp3
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        r0_1 = r0_index
        tmp6 = tl.load(in_ptr0 + (r0_1 + 61 * x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        tmp7 = tl.exp(tmp6 - tmp1)
        tmp8 = r0_1 == tmp0
        tmp9 = tl.where(tmp8, 0.9, 0.0)
        tmp10 = (tmp7 - tmp9 - 0.1 / 61.0) * tmp5
        tl.store(out_ptr0 + (r0_1 + 61 * x0), tmp10, r0_mask & xmask)


@triton.jit
def triton_poi_fused_gelu_backward_11(in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    # d(pre-activation) = dgelu(u) * dm, u = h @ W1 + b1 (erf form)
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x2 = xindex
    x0 = xindex % 128
    tmp0 = tl.load(in_ptr0 + (x2), xmask)
    tmp1 = tl.load(in_ptr1 + (x2), xmask)
    tmp2 = tl.load(in_ptr2 + (x0), xmask, eviction_policy='evict_last')
    tmp3 = tmp1 + tmp2
    tmp4 = 0.7071067811865476
    tmp5 = tmp3 * tmp4
    tmp6 = libdevice.erf(tmp5)
    tmp7 = 1.0
    tmp8 = tmp6 + tmp7
    tmp9 = 0.5
    tmp10 = tmp8 * tmp9
    tmp11 = tmp3 * tmp3
    tmp12 = -0.5
    tmp13 = tmp11 * tmp12
    tmp14 = tl.exp(tmp13)
    tmp15 = 0.3989422804014327
    tmp16 = tmp14 * tmp15
    tmp17 = tmp3 * tmp16
    tmp18 = tmp10 + tmp17
    tmp19 = tmp0 * tmp18
    tl.store(out_ptr0 + (x2), tmp19, xmask)


@triton.jit
def triton_per_fused_native_layer_norm_backward_12(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, in_ptr5, out_ptr0,
                                                   xnumel, r0_numel, XBLOCK: tl.constexpr):
    # dx = rstd * (dy*w - mean(dy*w) - xhat * mean(dy*w*xhat)) + residual grad (in_ptr5)
    R0_BLOCK: tl.constexpr = 32
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 32 * x0), xmask, other=0.0)
    tmp1 = tl.load(in_ptr1 + (r0_1), None, eviction_policy='evict_last')
    tmp7 = tl.load(in_ptr2 + (r0_1 + 32 * x0), xmask, other=0.0)
    tmp8 = tl.load(in_ptr3 + (x0), xmask, eviction_policy='evict_last')
    tmp10 = tl.load(in_ptr4 + (x0), xmask, eviction_policy='evict_last')
    tmp2 = tmp0 * tmp1
    tmp3 = tl.broadcast_to(tmp2, [XBLOCK, R0_BLOCK])
    tmp5 = tl.where(xmask, tmp3, 0)
    tmp6 = tl.sum(tmp5, 1)[:, None]
    tmp9 = tmp7 - tmp8
    tmp11 = tmp9 * tmp10
    tmp12 = tmp2 * tmp11
    tmp13 = tl.broadcast_to(tmp12, [XBLOCK, R0_BLOCK])
    tmp15 = tl.where(xmask, tmp13, 0)
    tmp16 = tl.sum(tmp15, 1)[:, None]
    tmp17 = 0.03125
    tmp18 = tmp10 * tmp17
    tmp19 = 32.0
    tmp20 = tmp2 * tmp19
    tmp21 = tmp20 - tmp6
    tmp22 = tmp11 * tmp16
    tmp23 = tmp21 - tmp22
    tmp24 = tmp18 * tmp23
    tmp25 = tl.load(in_ptr5 + (r0_1 + 32 * x0), xmask, other=0.0)
    tmp26 = tmp24 + tmp25
    tl.store(out_ptr0 + (r0_1 + 32 * x0), tmp26, xmask)


@triton.jit
def triton_red_fused_native_layer_norm_backward_13(in_ptr0, in_ptr1, in_ptr2, in_ptr3, out_ptr0, out_ptr1, xnumel,
                                                   r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    # dw = sum over rows of dy * xhat, db = sum over rows of dy: x runs over the 32 columns, r0 over the rows
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    x0 = xindex
    _tmp7 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    _tmp10 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        r0_1 = r0_index
        tmp0 = tl.load(in_ptr0 + (x0 + 32 * r0_1), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        tmp1 = tl.load(in_ptr1 + (x0 + 32 * r0_1), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        tmp2 = tl.load(in_ptr2 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp4 = tl.load(in_ptr3 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp3 = tmp1 - tmp2
        tmp5 = tmp3 * tmp4
        tmp6 = tmp0 * tmp5
        tmp8 = _tmp7 + tmp6
        _tmp7 = tl.where(r0_mask & xmask, tmp8, _tmp7)
        tmp9 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
        tmp11 = _tmp10 + tmp9
        _tmp10 = tl.where(r0_mask & xmask, tmp11, _tmp10)
    tmp7 = tl.sum(_tmp7, 1)[:, None]
    tmp10 = tl.sum(_tmp10, 1)[:, None]
    tl.store(out_ptr0 + (x0), tmp7, xmask)
    tl.store(out_ptr1 + (x0), tmp10, xmask)


@triton.jit
def triton_per_fused__softmax_backward_data_14(in_ptr0, in_ptr1, out_ptr1, xnumel, r0_numel, XBLOCK: tl.constexpr):
    # dscores = 0.25 * P * (dP - sum(dP * P)) over rows of 13
    R0_BLOCK: tl.constexpr = 16
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_mask = r0_index < r0_numel
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 13 * x0), r0_mask & xmask, other=0.0)
    tmp1 = tl.load(in_ptr1 + (r0_1 + 13 * x0), r0_mask & xmask, other=0.0)
    tmp2 = tmp0 * tmp1
    tmp3 = tl.broadcast_to(tmp2, [XBLOCK, R0_BLOCK])
    tmp5 = tl.where(r0_mask & xmask, tmp3, 0)
    tmp6 = tl.sum(tmp5, 1)[:, None]
    tmp7 = tmp1 * tmp6
    tmp8 = tmp2 - tmp7
    tmp9 = 0.25
    tmp10 = tmp8 * tmp9
    tl.store(out_ptr1 + (r0_1 + 13 * x0), tmp10, r0_mask & xmask)


@triton.jit
def triton_poi_fused_clone_15(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    # [B, H, T, D] back to [B, T, H*D]: the inverse of the head split
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex % 16
    x1 = (xindex // 16) % 2
    x2 = (xindex // 32) % 13
    x3 = xindex // 416
    x4 = xindex
    tmp0 = tl.load(in_ptr0 + (x0 + 16 * x2 + 208 * x1 + 416 * x3), xmask)
    tl.store(out_ptr0 + (x4), tmp0, xmask)


@triton.jit
def triton_poi_fused_embedding_dense_backward_16(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    # dwte[idx[i], :] += dx[i, :]: a scatter-add at gathered rows
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x1 = xindex // 32
    x2 = xindex
    x0 = xindex % 32
    tmp0 = tl.load(in_ptr0 + (x1), xmask, eviction_policy='evict_last')
    tmp7 = tl.load(in_ptr1 + (x2), xmask)
    tmp1 = tl.full([XBLOCK], 61, tl.int32)
    tmp2 = tmp0 + tmp1
    tmp3 = tmp0 < 0
    tmp4 = tl.where(tmp3, tmp2, tmp0)
    tl.device_assert(((0 <= tmp4) & (tmp4 < 61)) | ~(xmask), "index out of bounds: 0 <= tmp4 < 61")
    tl.atomic_add(out_ptr0 + (x0 + 32 * tmp4), tmp7, xmask, sem='relaxed')


@triton.jit
def triton_poi_fused_convolution_nchw_to_nhwc_17(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr,
                                                  XBLOCK: tl.constexpr):
    # a conv layout change as Inductor tiles it: [4, 6, 5, 7] NCHW to NHWC, y over (n, c), x over h*w
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[None, :]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    x2 = xindex
    y0 = yindex % 6
    y1 = yindex // 6
    y3 = yindex
    tmp0 = tl.load(in_ptr0 + (x2 + 35 * y3), xmask & ymask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 6 * x2 + 210 * y1), tmp0, xmask & ymask)
