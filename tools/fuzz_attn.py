"""The "paths:attn" form of tools/fuzz_paths.py: attention-forward kernels, for ascend's row split.

A kernel of this form (mode "attn": its own template, source writer and float64 numpy model here) is the
shape of fused attention's forward pass: per program BLOCK_M query rows of one (batch, head); a loop over
BLOCK_N key blocks with `qk = tl.dot(q, k)`, an online softmax on the score tile (row max, exp or exp2,
row sum, the rescale `alpha` of the running output) and `acc = acc * alpha + tl.dot(p.to(...), v)`; the
output `acc / l_i`. The ascend backend hands both dots to the Cube and, where it can, splits each tile's
rows over the two vector cores (cube/rowsplit.py, "cube:row-split" in `fuzz_paths.ascend_paths`).

Drawn at random: query and key lengths (ragged: masked tails), BLOCK_M (16/32/64), BLOCK_N (16..128),
the head dim (16..128), batch and heads (a 2-D grid (m blocks, Z * H) or a 1-D one), [Z, H, S, D] or
[Z, S, H, D] layouts, causal or not (one masked loop up to the diagonal, or two stages: the blocks left
of it unmasked, the diagonal one masked), sm_scale, `exp` or `exp2` with the scale folded into log2(e),
the scale on the scores or on q (rounded to the input type once), masks of -inf or -1e6, k loaded
transposed or `tl.trans`-ed, pointers advanced or recomputed, `tl.dot(p, v, acc)` or `acc += tl.dot`,
fp16/bf16 inputs, fp16/bf16/fp32 outputs, optionally the log-sum-exp of each row (fp32). Some kernels are
meant to be refused by the row split: BLOCK_M 16 (halves of 8 rows), and a reduction over the rows (each
program also stores its output's column sums).

The model is float64 softmax attention (q rounded as the kernel rounds it where the scale is folded into
q); the outputs are compared within the input type's tolerances (the softmax weights `p` go to the Cube
in fp16/bf16), fp32's for the log-sum-exp.
"""

from __future__ import annotations

import math

import numpy as np

G = None  # tools/fuzz_gen.py, set by install()

LOG2E = 1.4426950408889634


def install(gen_module):
    global G
    G = gen_module


# ========================================================================================= draw
def attn_kernel(g, seed):
    z = {"BM": int(g.pick([16, 32, 64], [1, 3, 2])), "BN": int(g.pick([16, 32, 64, 128], [2, 3, 3, 1])),
         "D": int(g.pick([16, 32, 64, 128], [1, 2, 3, 2])), "Z": int(g.pick([1, 2], [3, 1])),
         "H": int(g.pick([1, 2, 3], [2, 2, 1]))}
    a = {"causal": g.pick(["none", "loop", "stages"], [3, 2, 2]), "exp": g.pick(["exp2", "exp"], [3, 2]),
         "scale": g.pick(["qk", "q"], [3, 1]), "neg": g.pick(["inf", "big"]), "kload": g.pick(["ptr", "trans"], [3, 1]),
         "ptr": g.pick(["advance", "index"], [1, 2]), "acc": g.pick(["acc", "pluseq"], [3, 2]),
         "pcast": g.pick(["vdtype", "src"]), "src": g.pick(["f16", "bf16"], [3, 2]),
         "grid": g.pick(["2d", "1d"], [3, 2]), "layout": g.pick(["bhsd", "bshd"], [3, 1]),
         "loop": g.pick(["range", "tlrange"], [3, 1]), "cast": g.pick(["to", "store"]),
         "lse": bool(g.chance(0.3)), "colsum": bool(g.chance(0.15))}
    if a["causal"] == "stages" and z["BM"] % z["BN"]:  # the unmasked stage needs whole key blocks left of the diagonal
        z["BN"] = z["BM"]
    if z["D"] * max(z["BM"], z["BN"]) > 64 * 128:  # tiles of at most 32 KB of fp32
        z["D"] = 64
    z["M"] = _length(g, z["BM"])
    z["N"] = z["M"] if a["causal"] != "none" else _length(g, z["BN"])
    z["scale"] = float(np.float32(g.rng.uniform(0.3, 1.6) / math.sqrt(z["D"])))
    od = g.pick(["f16", "bf16", "f32"], [3, 1, 3])
    for f in (f"causal:{a['causal']}", f"{a['src']}:{a['exp']}:scale-{a['scale']}", f"k:{a['kload']}:{a['ptr']}",
              f"grid:{a['grid']}", f"layout:{a['layout']}", f"BM{z['BM']}", f"out:{od}", f"mask:{a['neg']}"):
        g.feat(f"attn:{f}")
    if a["lse"]:
        g.feat("attn:lse")
    if a["colsum"]:
        g.feat("attn:colsum")  # a reduction over the rows: the row split refuses it
    node = G.Node("attn", "f32", "@M,D", a=a)
    return G.Kernel("attn", z, [G.Stmt("store", node, {"out": "out0", "tag": "@M,D", "pattern": "attn",
                                                        "out_dtype": od})],
                    seed=int(g.rng.integers(2 ** 31)), index=g.index)


def _length(g, b):
    """A sequence length around block b: boundaries (1, b - 1, b + 1, ...) or any up to 4 blocks."""
    return int(G.boundary_sizes(b, g.rng)) if g.chance(0.5) else int(g.rng.integers(1, 4 * b + 1))


# ========================================================================================= layout
def _num_m(z):
    return -(-z["M"] // z["BM"])


def attn_grid(k):
    z, a = k.sizes, k.stmts[0].value.a
    hz = z["Z"] * z["H"]
    return (_num_m(z), hz) if a["grid"] == "2d" else (_num_m(z) * hz,)


def _shape(z, a, s):
    return (z["Z"], z["H"], s, z["D"]) if a["layout"] == "bhsd" else (z["Z"], s, z["H"], z["D"])


def _strides(z, a, s):
    """(batch, head, row) strides in elements of a contiguous array of sequence length s."""
    d, h = z["D"], z["H"]
    return (h * s * d, s * d, d) if a["layout"] == "bhsd" else (s * h * d, d, h * d)


def attn_specs(k):
    z, st = k.sizes, k.stmts[0]
    a = st.value.a
    specs = {"in0": (a["src"], _shape(z, a, z["M"]), "uniform"), "in1": (a["src"], _shape(z, a, z["N"]), "uniform"),
             "in2": (a["src"], _shape(z, a, z["N"]), "uniform"),
             "out0": (st.a["out_dtype"], _shape(z, a, z["M"]), "fill")}
    if a["lse"]:
        specs["out1"] = ("f32", (z["Z"] * z["H"], z["M"]), "fill")
    if a["colsum"]:
        specs["out2"] = ("f32", (z["Z"] * z["H"], _num_m(z), z["D"]), "fill")
    return specs


def _outs(a):
    return ["out0"] + (["out1"] if a["lse"] else []) + (["out2"] if a["colsum"] else [])


# ========================================================================================= model
def _bhsd(x, a):
    x = x.astype(np.float64)
    return x if a["layout"] == "bhsd" else x.transpose(0, 2, 1, 3)


def _as_layout(x, a):
    return x if a["layout"] == "bhsd" else x.transpose(0, 2, 1, 3)


def _round(x, d):
    """float64 -> the kernel's dtype d and back (bf16 through fp32, as numpy's cast needs)."""
    return x.astype(np.float32).astype(G.NP[d]).astype(np.float64)


def attn_model(m):
    """{out: (array, defined, written, exact, Val)}: float64 softmax attention, the log-sum-exp per row and the
    column sums of each program's rows."""
    k = m.k
    z, st = k.sizes, k.stmts[0]
    a, od = st.value.a, st.a["out_dtype"]
    if a["causal"] != "none" and z["M"] != z["N"]:
        raise G.EvalError("causal attention of unequal lengths")
    if a["causal"] == "stages" and z["BM"] % z["BN"]:
        raise G.EvalError("causal stages with key blocks across the diagonal")
    q, kk, v = (_bhsd(m.inputs[n], a) for n in ("in0", "in1", "in2"))
    base = np.float64(np.float32(z["scale"] * LOG2E)) if a["exp"] == "exp2" else np.float64(z["scale"])
    if a["scale"] == "q":  # q * scale rounded to the input type once, before the loop
        unit = math.log(2.0) if a["exp"] == "exp2" else 1.0  # base-2 scores in natural units
        s = np.einsum("zhmd,zhnd->zhmn", _round(q * base, a["src"]), kk) * unit
    else:
        s = np.einsum("zhmd,zhnd->zhmn", q, kk) * z["scale"]
    if a["causal"] != "none":
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    mx = s.max(-1, keepdims=True)
    p = np.exp(s - mx)
    lsum = p.sum(-1, keepdims=True)
    o = np.einsum("zhmn,zhnd->zhmd", p / lsum, v)
    mag = max(1.0, float(np.abs(v).max(initial=0.0)))
    hz, prec = z["Z"] * z["H"], a["src"]
    ov = _as_layout(o, a)
    outs = {"out0": _result(ov.astype(np.float32).astype(G.NP[od]),
                            G.Val(ov[None], np.ones((1,) + ov.shape, bool), False, mag, prec, 1))}
    if a["lse"]:
        lse = (mx + np.log(lsum))[..., 0].reshape(hz, z["M"])
        lse = lse * LOG2E if a["exp"] == "exp2" else lse
        outs["out1"] = _result(lse.astype(np.float32), G.Val(lse[None], np.ones((1,) + lse.shape, bool), False,
                                                             max(1.0, float(np.abs(lse).max())), "f32", z["N"]))
    if a["colsum"]:
        nm = _num_m(z)
        pad = np.zeros((z["Z"], z["H"], nm * z["BM"], z["D"]))
        pad[:, :, :z["M"]] = o
        cs = pad.reshape(hz, nm, z["BM"], z["D"]).sum(2)
        outs["out2"] = _result(cs.astype(np.float32), G.Val(cs[None], np.ones((1,) + cs.shape, bool), False,
                                                            mag * min(z["BM"], z["M"]), prec, z["BM"]))
    return outs


def _result(arr, val):
    ones = np.ones(arr.size, bool)
    return arr, ones, ones.copy(), False, val


# ========================================================================================= source
def _pid_lines(a):
    if a["grid"] == "2d":
        lines = ["start_m = tl.program_id(0)", "off_hz = tl.program_id(1)"]
    else:
        lines = ["pid = tl.program_id(0)", "start_m = pid % tl.cdiv(M_CTX, BLOCK_M)",
                 "off_hz = pid // tl.cdiv(M_CTX, BLOCK_M)"]
    return lines + ["off_z = (off_hz // H).to(tl.int64)", "off_h = (off_hz % H).to(tl.int64)",
                    "q_off = off_z * stride_qz + off_h * stride_qh", "k_off = off_z * stride_kz + off_h * stride_kh"]


def _step_lines(a, lo, hi, masked, causal):
    """One loop over key blocks [lo, hi): the score tile, the online softmax, the second dot."""
    exp = "tl.math.exp2" if a["exp"] == "exp2" else "tl.exp"
    neg = 'float("-inf")' if a["neg"] == "inf" else "-1.0e6"
    rng = "tl.range" if a["loop"] == "tlrange" else "range"
    kmask = ", mask=cols[None, :] < N_CTX, other=0.0" if masked else ""
    if a["kload"] == "trans":
        kmask = kmask.replace("cols[None, :]", "cols[:, None]")
    vmask = ", mask=cols[:, None] < N_CTX, other=0.0" if masked else ""
    body = []
    if a["ptr"] == "advance":
        kp = ("k_ptrs = K + k_off + (lo + offs_n)[:, None] * stride_kn + offs_d[None, :]" if a["kload"] == "trans" else
              "k_ptrs = K + k_off + offs_d[:, None] + (lo + offs_n)[None, :] * stride_kn")
        body += [f"lo = {lo}", kp, "v_ptrs = V + k_off + (lo + offs_n)[:, None] * stride_kn + offs_d[None, :]"]
        head, kptr, vptr = f"for start_n in {rng}(lo, {hi}, BLOCK_N):", "k_ptrs", "v_ptrs"
    else:
        head = f"for start_n in {rng}({lo}, {hi}, BLOCK_N):"
        kptr = ("K + k_off + cols[:, None] * stride_kn + offs_d[None, :]" if a["kload"] == "trans" else
                "K + k_off + offs_d[:, None] + cols[None, :] * stride_kn")
        vptr = "V + k_off + cols[:, None] * stride_kn + offs_d[None, :]"
    loop = ["cols = start_n + offs_n"]
    if a["kload"] == "trans":
        loop += [f"kt = tl.load({kptr}{kmask})", "qk = tl.dot(q, tl.trans(kt))"]
    else:
        loop += [f"k = tl.load({kptr}{kmask})", "qk = tl.dot(q, k)"]
    if a["scale"] == "qk":
        loop.append("qk = qk * qk_scale")
    if causal:
        loop.append(f"qk = tl.where(offs_m[:, None] >= cols[None, :], qk, {neg})")
    if masked:
        loop.append(f"qk = tl.where(cols[None, :] < N_CTX, qk, {neg})")
    pdt = "v.dtype" if a["pcast"] == "vdtype" else G.TL[a["src"]]
    dot = (f"acc = tl.dot(p.to({pdt}), v, acc)" if a["acc"] == "acc" else f"acc += tl.dot(p.to({pdt}), v)")
    loop += ["m_ij = tl.maximum(m_i, tl.max(qk, 1))", f"p = {exp}(qk - m_ij[:, None])",
             f"alpha = {exp}(m_i - m_ij)", "l_i = l_i * alpha + tl.sum(p, 1)", "acc = acc * alpha[:, None]",
             f"v = tl.load({vptr}{vmask})", dot, "m_i = m_ij"]
    if a["ptr"] == "advance":
        loop += ["k_ptrs += BLOCK_N * stride_kn", "v_ptrs += BLOCK_N * stride_kn"]
    return body + [head] + ["    " + x for x in loop]


def attn_source(k):
    st = k.stmts[0]
    a, od = st.value.a, st.a["out_dtype"]
    name = f"fuzz_kernel_{k.index}"
    body = _pid_lines(a)
    body += ["offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)", "offs_n = tl.arange(0, BLOCK_N)",
             "offs_d = tl.arange(0, HEAD_DIM)",
             "q = tl.load(Q + q_off + offs_m[:, None] * stride_qm + offs_d[None, :], mask=offs_m[:, None] < M_CTX, "
             "other=0.0)",
             "qk_scale = sm_scale * 1.4426950408889634" if a["exp"] == "exp2" else "qk_scale = sm_scale"]
    if a["scale"] == "q":
        body.append("q = (q * qk_scale).to(Q.dtype.element_ty)")
    body += ['m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)', "l_i = tl.zeros([BLOCK_M], dtype=tl.float32)",
             "acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)"]
    if a["causal"] == "none":
        body += _step_lines(a, "0", "N_CTX", True, False)
    elif a["causal"] == "loop":
        body += _step_lines(a, "0", "tl.minimum((start_m + 1) * BLOCK_M, N_CTX)", True, True)
    else:  # left of the diagonal every key precedes every query of the block: no mask; then the diagonal block
        body += _step_lines(a, "0", "start_m * BLOCK_M", False, False)
        body += _step_lines(a, "start_m * BLOCK_M", "tl.minimum((start_m + 1) * BLOCK_M, N_CTX)", True, True)
    body.append("out = acc / l_i[:, None]")
    val = "out.to(Out.dtype.element_ty)" if a["cast"] == "to" and od != "f32" else "out"
    body.append(f"tl.store(Out + q_off + offs_m[:, None] * stride_qm + offs_d[None, :], {val}, "
                "mask=offs_m[:, None] < M_CTX)")
    if a["lse"]:
        log = "tl.math.log2" if a["exp"] == "exp2" else "tl.log"
        body.append(f"tl.store(Lse + off_hz * M_CTX + offs_m, m_i + {log}(l_i), mask=offs_m < M_CTX)")
    if a["colsum"]:  # a reduction over the block's rows
        body += ["sums = tl.sum(tl.where(offs_m[:, None] < M_CTX, out, 0.0), 0)",
                 "tl.store(Colsum + (off_hz * tl.cdiv(M_CTX, BLOCK_M) + start_m) * HEAD_DIM + offs_d, sums)"]
    sig = ", ".join(_arg_names(a) + ["HEAD_DIM: tl.constexpr", "BLOCK_M: tl.constexpr", "BLOCK_N: tl.constexpr"])
    lines = ["import triton", "import triton.language as tl", "", "", "@triton.jit", f"def {name}({sig}):"]
    lines += ["    " + b for b in body]
    return "\n".join(lines) + "\n", name


def _arg_names(a):
    return (["Q", "K", "V", "Out"] + (["Lse"] if a["lse"] else []) + (["Colsum"] if a["colsum"] else [])
            + ["sm_scale", "stride_qz", "stride_qh", "stride_qm", "stride_kz", "stride_kh", "stride_kn", "H",
               "M_CTX", "N_CTX"])


def attn_launch(k, inputs):
    z, a = k.sizes, k.stmts[0].value.a
    args = [inputs[n] for n in ["in0", "in1", "in2"] + _outs(a)]
    args += [float(z["scale"]), *_strides(z, a, z["M"]), *_strides(z, a, z["N"]), int(z["H"]), int(z["M"]),
             int(z["N"])]
    names = ["in0", "in1", "in2"] + _outs(a) + _arg_names(a)[len(_outs(a)) + 3:]
    return args, {"HEAD_DIM": int(z["D"]), "BLOCK_M": int(z["BM"]), "BLOCK_N": int(z["BN"])}, names


# ========================================================================================= shrink
def attn_shrink(k):
    """Smaller variants of an attention kernel (fuzz.py's shrinker): sizes, then plainer choices."""
    z, a = k.sizes, k.stmts[0].value.a
    causal = a["causal"] != "none"
    for key in ("M", "N"):
        if causal and key == "N":
            continue
        for v in sorted({1, z[key] // 2, z[key] - 1}):
            if 1 <= v < z[key]:
                c = k.clone()
                c.sizes[key] = v
                if causal:
                    c.sizes["N"] = v
                yield c
    for key, lo in (("Z", 1), ("H", 1), ("D", 16), ("BN", 16), ("BM", 16)):
        if z[key] > lo:
            c = k.clone()
            c.sizes[key] = lo if key in ("Z", "H") else z[key] // 2
            if key == "BM" and a["causal"] == "stages" and c.sizes["BM"] % c.sizes["BN"]:
                c.sizes["BN"] = c.sizes["BM"]
            yield c
    plain = {"causal": "none", "exp": "exp2", "scale": "qk", "neg": "inf", "kload": "ptr", "ptr": "index",
             "acc": "acc", "pcast": "vdtype", "grid": "2d", "layout": "bhsd", "loop": "range", "cast": "to",
             "lse": False, "colsum": False}
    for key, v in plain.items():
        if a[key] != v:
            c = k.clone()
            c.stmts[0].value.a[key] = v
            yield c
    if k.stmts[0].a["out_dtype"] != "f32":
        c = k.clone()
        c.stmts[0].a["out_dtype"] = "f32"
        yield c
