"""The fuzzer's newer language features: shape ops, sort/topk, block pointers, tensor descriptors, dots.

`tools/fuzz_gen.py` calls `extend` after it has drawn everything else of a kernel. `extend` only
appends statements, with outputs and inputs of their own (the inputs drawn from a second random
stream), so the kernel's own statements, grid and data stay those that earlier versions of the
generator gave: the campaigns and replay commands of docs/RELIABILITY.md still reproduce. What a new
statement may hold (each is a feature name in the campaign summary):

- shape ops on a 1-D block or a 2-D tile, chained: `tl.join`, `tl.split` (of a join or of a loaded
  [.., 2] block), `tl.interleave`, `tl.cat(can_reorder=True)` (only under an order-insensitive
  consumer: sort, topk or a reduction), `tl.gather` (indices brought into range with `%`),
  `tl.histogram` (with and without `mask=`), `tl.flip`, `tl.permute`/`tl.trans` of 2-D and 3-D
  blocks, `tl.sort` (ascending, descending), `tl.topk`, reductions of rank-3 blocks; stored through
  the kernel's ordinary masked stores, or densely, one block per program;
- block pointers (`tl.make_block_ptr`, `tl.advance`, `boundary_check`, `padding_option`) and tensor
  descriptors (`tl.make_tensor_descriptor`, `desc.load/store`) in place of masked loads and stores of
  2-D tiles and 1-D blocks (the same elements, so the model is the same), a block pointer advanced
  by a K loop, a descriptor made before it, and windows shifted up-left so that a tile starts
  before the tensor;
- dots: every `input_precision` of fp32 operands (and the default, tf32, and `allow_tf32`),
  `out_dtype` (fp16 results), precisions that fp16/bf16 dots ignore, batched (3-D) dots and K loops
  of dots, on small and ragged shapes.

Shapes beyond fuzz_gen's tags are spelled out: '@BM,BN,2' is a (BM, BN, 2) block, '@2*BLOCK' a
(2 * BLOCK,) one. New sizes: KK (topk's k), BINS (histogram), BB/NB (batch block and batch count).
"""

from __future__ import annotations

import numpy as np

G = None  # tools/fuzz_gen.py, set by install()

P_EXTEND = 0.4          # chance of the newer features in a kernel
P_EXTEND_DOT = 0.8      # in a kernel of the dot template
SORT_MAX = 32           # longest sorted dim (ascend's model runs a bitonic network of scalar loops)
PRECISIONS = ("ieee", "tf32", "tf32x3", "bf16x3", "bf16x6", "default", "allow_tf32", "no_tf32")
PRECISION_W = (1, 3, 2, 2, 2, 1, 0.5, 0.5)
EFFECTIVE = {"default": "tf32", "allow_tf32": "tf32", "no_tf32": "ieee"}

LOAD_PATTERNS = ("pairs", "a3", "b3")
STORE_PATTERNS = ("dense", "tile3")
BASIC_DIMS = {"B": ["BLOCK"], "S": [], "T": ["BM", "BN"], "TT": ["BN", "BM"], "R": ["BM"], "C": ["BN"],
              "R1": ["BM", "1"], "C1": ["1", "BN"], "A": ["BM", "BK"], "K": ["BK", "BN"]}
NEW_CONST = ("KK", "BINS", "BB", "ER")


def install(gen_module):
    """Called by fuzz_gen once it is loaded (it passes itself)."""
    global G
    G = gen_module


# ========================================================================================= shapes
def dims_of(tag):
    if tag[0] != "@":
        return list(BASIC_DIMS[tag])
    return tag[1:].split(",") if len(tag) > 1 else []


def tag_of(dims):
    """The tag of a shape: fuzz_gen's own name when it has one, else the spelled-out shape."""
    for t, ds in BASIC_DIMS.items():
        if ds == list(dims) and t not in ("R1", "C1"):
            return t
    return "@" + ",".join(dims)


def dim_value(dim, z):
    if "*" in dim:
        f, key = dim.split("*")
        return int(f) * int(z[key])
    return int(dim) if dim.isdigit() else int(z[dim])


def shape_of(tag, k):
    return tuple(dim_value(d, k.sizes) for d in dims_of(tag))


def dim_src(dim):
    return dim.replace("*", " * ")


def shape_src(tag):
    dims = [dim_src(d) for d in dims_of(tag)]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def _pow2(n):
    return n >= 1 and n & (n - 1) == 0


def _size_keys(dim):
    return [dim.split("*")[-1]] if not dim.isdigit() else []


# ========================================================================================= model
def _bc(model, val, child, shape):
    src = G.shape_of(child.tag, model.k)
    return G.expand_to(val.v, src, shape), G.expand_to(val.d, src, shape)


def _val(node, v, d, exact, mag, prec, red):
    return G.Val(np.ascontiguousarray(v).astype(G.NP[node.dtype]), np.ascontiguousarray(d), exact, mag, prec, red)


def _ev_join(m, node, kids, exact, mag, prec, red):
    shape = G.shape_of(node.tag, m.k)[:-1]
    (x, xd), (y, yd) = (_bc(m, kids[i], node.kids[i], shape) for i in range(2))
    return _val(node, np.stack([x, y], -1), np.stack([xd, yd], -1), exact, mag, prec, red)


def _ev_split(m, node, kids, exact, mag, prec, red):
    h = node.a["half"]
    return _val(node, kids[0].v[..., h], kids[0].d[..., h], exact, mag, prec, red)


def _ev_interleave(m, node, kids, exact, mag, prec, red):
    shape = G.shape_of(node.kids[0].tag, m.k)
    (x, xd), (y, yd) = (_bc(m, kids[i], node.kids[i], shape) for i in range(2))
    out = (m.P,) + G.shape_of(node.tag, m.k)
    return _val(node, np.stack([x, y], -1).reshape(out), np.stack([xd, yd], -1).reshape(out), exact, mag, prec, red)


def _ev_cat(m, node, kids, exact, mag, prec, red):
    v = np.concatenate([kids[0].v, kids[1].v], 1)
    return _val(node, v, np.concatenate([kids[0].d, kids[1].d], 1), exact, mag, prec, red)


def _ev_gidx(m, node, kids, exact, mag, prec, red):
    n = dim_value(node.a["dim"], m.k.sizes)
    if n < 1:
        raise G.EvalError("gather/histogram range below 1")
    v = np.mod(kids[0].v.astype(np.int64), n)  # = ((x % n) + n) % n in C
    return _val(node, v, kids[0].d, exact, mag, prec, red)


def _ev_gather(m, node, kids, exact, mag, prec, red):
    src, idx = kids
    ax = node.a["axis"] + 1
    i = idx.v.astype(np.int64)
    if i.size and (i.min() < 0 or i.max() >= src.v.shape[ax]):
        raise G.EvalError("gather index out of range")
    v = np.take_along_axis(src.v, i, ax)
    d = np.take_along_axis(src.d, i, ax) & idx.d
    return _val(node, v, d, exact, mag, prec, red)


def _mask_named(m, name):
    z = m.k.sizes
    return {"mask": lambda: m.offs < z["n"], "rmask": lambda: m.rows < z["M"],
            "cmask": lambda: m.cols < z["N"]}[name]()


def _ev_hist(m, node, kids, exact, mag, prec, red):
    x = kids[0]
    bins = dim_value("BINS", m.k.sizes)
    inc = np.ones(x.v.shape, bool) if node.a.get("mask") is None else _mask_named(m, node.a["mask"])
    v = np.zeros((m.P, bins), np.int64)
    d = np.ones((m.P, bins), bool)
    for p in range(m.P):
        vals = x.v[p][inc[p]].astype(np.int64)
        if (vals < 0).any() or (vals >= bins).any():
            raise G.EvalError("histogram value out of range")
        v[p] = np.bincount(vals, minlength=bins)
        d[p] = x.d[p][inc[p]].all()
    return _val(node, v, d, True, mag, prec, red)


def _ev_flip(m, node, kids, exact, mag, prec, red):
    ax = node.a["dim"] if node.a["dim"] is not None else len(G.shape_of(node.tag, m.k)) - 1
    return _val(node, np.flip(kids[0].v, ax + 1), np.flip(kids[0].d, ax + 1), exact, mag, prec, red)


def _ev_permute(m, node, kids, exact, mag, prec, red):
    order = (0,) + tuple(p + 1 for p in node.a["perm"])
    return _val(node, np.transpose(kids[0].v, order), np.transpose(kids[0].d, order), exact, mag, prec, red)


def _sorted(x, descending):
    v = x.v.astype(np.float64) if x.v.dtype.kind == "f" or x.v.dtype == G.BF16 else x.v.astype(np.int64)
    v = np.sort(v, axis=-1)
    if descending:
        v = np.flip(v, -1)
    d = np.broadcast_to(x.d.all(-1, keepdims=True), x.d.shape)
    return v, d


def _ev_sort(m, node, kids, exact, mag, prec, red):
    v, d = _sorted(kids[0], node.a["descending"])
    return _val(node, v, d, exact, mag, prec, red)


def _ev_topk(m, node, kids, exact, mag, prec, red):
    kk = dim_value("KK", m.k.sizes)
    v, d = _sorted(kids[0], True)
    return _val(node, v[..., :kk], d[..., :kk], exact, mag, prec, red)


EVAL = {"join": _ev_join, "split": _ev_split, "interleave": _ev_interleave, "cat": _ev_cat,
        "gidx": _ev_gidx, "gather": _ev_gather, "hist": _ev_hist, "flip": _ev_flip,
        "permute": _ev_permute, "sort": _ev_sort, "topk": _ev_topk}


# -- dots with a precision, an out_dtype or a batch
def _f32_bits(x):
    return np.ascontiguousarray(x, np.float32).view(np.uint32)


def _tf32(x, add):
    """fp32 values kept to tf32's 10 mantissa bits: truncated (add 0) or rounded half away (add 0x1000)."""
    x = np.asarray(x, np.float32)
    kept = ((_f32_bits(x) + np.uint32(add)) & np.uint32(0xFFFFE000)).view(np.float32)
    return np.where(np.isfinite(x), kept, x)


def _parts(x, precision):
    """The operand parts an H200 multiplies for each precision (docs/LANGUAGE.md, "dot precision")."""
    x = np.asarray(x, np.float32)
    if precision == "tf32":
        return [_tf32(x, 0)]
    if precision == "tf32x3":
        big = _tf32(x, 0x1000)
        return [big, _tf32(x - big, 0)]
    parts = []
    for _ in range(2 if precision == "bf16x3" else 3):
        parts.append(x.astype(G.BF16).astype(np.float32))
        x = x - parts[-1]
    return parts


PAIRS = {"tf32": (), "tf32x3": ((1, 0), (0, 1)), "bf16x3": ((1, 0), (0, 1)),
         "bf16x6": ((1, 1), (2, 0), (0, 2), (1, 0), (0, 1))}


def dot_f64(a, b, precision):
    """a @ b over the last two axes, in float64, with the operands rounded as `precision` says."""
    def mm(x, y):
        return np.matmul(x.astype(np.float64), y.astype(np.float64))

    if precision == "ieee":
        return mm(a, b)
    pa, pb = _parts(a, precision), _parts(b, precision)
    small = 0.0
    for i, j in PAIRS[precision]:
        small = small + mm(pa[i], pb[j])
    return mm(pa[0], pb[0]) + small


def eval_dot(m, node, kids, exact, mag, prec, red):
    x, y = kids[0], kids[1]
    src, d = node.kids[0].dtype, node.dtype
    with np.errstate(all="ignore"):
        if G.is_int(src):
            v = np.matmul(x.v.astype(np.int64), y.v.astype(np.int64))
            if len(kids) > 2:
                v = v + kids[2].v.astype(np.int64)
        else:
            p = node.a.get("prec") or "ieee"
            p = EFFECTIVE.get(p, p) if src == "f32" else "ieee"  # fp16/bf16 products are exact anyway
            if p == "tf32":  # 10-bit operands: a target may round them as the H200 does or not at all
                prec = G.lower_prec(prec, "f16")  # (ascend multiplies fp32 in full): tf32's tolerance
            v = dot_f64(x.v, y.v, p)
            if len(kids) > 2:
                v = v + kids[2].v.astype(np.float64)
            exact = False
    dd = np.matmul((~x.d).astype(np.int64), np.ones(y.d.shape, np.int64)) == 0
    dd &= np.matmul(np.ones(x.d.shape, np.int64), (~y.d).astype(np.int64)) == 0
    if len(kids) > 2:
        dd &= np.broadcast_to(kids[2].d, dd.shape)
    return G.Val(v.astype(G.NP[d]), dd, exact, mag, prec, max(red, x.v.shape[-1]))


# -- loads and stores
def layout(m, node, env):
    """(index array, mask) of the load patterns and shifted windows this module adds."""
    z, a, pat = m.k.sizes, node.a, node.a["pattern"]
    w = a.get("win", 0)
    if m.k.mode == "1d":
        offs, n = m.offs, z["n"]
        if pat == "contig":
            o = offs - w
            return o, (o >= 0) & (o < n)
        if pat == "pairs":
            return offs[:, :, None] * 2 + np.arange(2), (offs < n)[:, :, None]
        raise KeyError(pat)
    M, N = z["M"], z["N"]
    r, c = m.rows - (w if pat == "rowmajor" else 0), m.cols - (w if pat == "rowmajor" else 0)
    rm, cm = (r >= 0) & (r < M), (c >= 0) & (c < N)
    if pat == "rowmajor":
        return r[:, :, None] * z[a["stride"]] + c[:, None, :], rm[:, :, None] & cm[:, None, :]
    if pat == "pairs":
        base = (r[:, :, None] * N + c[:, None, :]) * 2
        return base[..., None] + np.arange(2), (rm[:, :, None] & cm[:, None, :])[..., None]
    K, NB = z["K"], z["NB"]
    bb, ks = np.arange(z["BB"]), np.arange(z["BK"])
    bm = (bb < NB)[None, :, None, None]
    if pat == "a3":
        idx = bb[None, :, None, None] * (M * K) + r[:, None, :, None] * K + ks[None, None, None, :]
        return idx, bm & rm[:, None, :, None] & (ks < K)[None, None, None, :]
    if pat == "b3":
        idx = bb[None, :, None, None] * (K * N) + ks[None, None, :, None] * N + c[:, None, None, :]
        return idx, bm & (ks < K)[None, None, :, None] & cm[:, None, None, :]
    raise KeyError(pat)


def input_shape(a, k):
    z, pat = k.sizes, a["pattern"]
    if pat == "pairs":
        return (z["n"], 2) if k.mode == "1d" else (z["M"], z["N"], 2)
    if pat == "a3":
        return (z["NB"], z["M"], z["K"])
    if pat == "b3":
        return (z["NB"], z["K"], z["N"])
    raise KeyError(pat)


def store_layout(m, st):
    z = m.k.sizes
    if st.a["pattern"] == "dense":
        shape = G.shape_of(st.a["tag"], m.k)
        size = int(np.prod(shape))
        return (m.pid[:, None] * size + np.arange(size)[None, :]).reshape((m.P,) + shape), None
    M, N, NB = z["M"], z["N"], z["NB"]
    bb = np.arange(z["BB"])[None, :, None, None]
    r, c = m.rows[:, None, :, None], m.cols[:, None, None, :]
    return bb * (M * N) + r * N + c, (bb < NB) & (r < M) & (c < N)


def output_shape(st, k, P):
    if st.a["pattern"] == "dense":
        return (P,) + shape_of(st.a["tag"], k)
    return (k.sizes["NB"], k.sizes["M"], k.sizes["N"])


def _parents(k):
    out = []

    def walk(node, parent):
        out.append((node, parent))
        for c in node.kids:
            walk(c, node)
    for s in k.stmts:
        walk(s.value, None)
    return out


def check_kernel(k):
    """EvalError when a (possibly shrunk) kernel breaks a rule of the features this module adds."""
    z = k.sizes
    for node, parent in _parents(k):
        kd = node.kind
        if kd == "cat" and (parent is None or parent.kind not in ("sort", "topk", "reduce")):
            raise G.EvalError("tl.cat(can_reorder=True) outside an order-insensitive consumer")
        if kd in ("sort", "topk", "flip"):
            dims = G.shape_of(node.kids[0].tag, k)
            n = dims[-1] if kd != "flip" or node.a["dim"] is None else dims[node.a["dim"]]
            if not _pow2(n) or (kd != "flip" and n > SORT_MAX):
                raise G.EvalError(f"{kd} of a dim of {n}")
            if kd == "topk" and not (_pow2(z["KK"]) and z["KK"] <= n):
                raise G.EvalError("topk k")
        if kd == "hist" and not _pow2(z["BINS"]):
            raise G.EvalError("bins")
        if kd == "load" and node.a.get("access") in ("desc", "hoisted"):
            _check_desc(node.a, node.dtype, k)
    for st in k.stmts:
        if st.a.get("access") == "desc":
            _check_desc(st.a, st.a["out_dtype"], k)
    if "BB" in z and (z["BB"] < 1 or z["NB"] < 1):
        raise G.EvalError("batch")


def _check_desc(a, dtype, k):
    geo = geometry(a, k.mode)
    last = dim_value(geo["block"][-1], k.sizes)
    if last * G.BITS[dtype] // 8 < 16 or geo["strides"][-1] != "1":
        raise G.EvalError("a descriptor's block spans less than 16 bytes")


# ========================================================================================= render
def dot_kwargs(dtype, a):
    """The keyword arguments of a dot whose node carries `prec` (fp32: the precision) or `out`."""
    if dtype.startswith(("i", "u")):
        return ", out_dtype=tl.int32"
    p, out = a.get("prec"), a.get("out")
    s = ""
    if p in ("allow_tf32", "no_tf32"):
        s += f", allow_tf32={p == 'allow_tf32'}"
    elif p and p != "default":
        s += f", input_precision=\"{p}\""
    if out:
        s += f", out_dtype={G.TL[out]}"
    return s


def _arange_nd(dims):
    """Source of the row-major element index of a block of `dims` (each a size spelled in the kernel)."""
    n = len(dims)
    terms = []
    for i, dim in enumerate(dims):
        ar = f"tl.arange(0, {dim_src(dim)})"
        if n > 1:
            ar += "[" + ", ".join(":" if j == i else "None" for j in range(n)) + "]"
        stride = _numel_src(dims[i + 1:])
        terms.append(f"{ar} * {stride}" if stride else ar)
    return " + ".join(terms)


def _numel_src(dims):
    return " * ".join(f"({dim_src(d)})" if "*" in d else d for d in dims)


def geometry(a, mode):
    """The tensor a load or store pattern reads as a block pointer or descriptor sees it: base, shape,
    strides, tile offsets, block shape and order (source strings)."""
    pat, p, w, lp = a["pattern"], a.get("arg") or a.get("out"), a.get("win", 0), a.get("loop")
    sub = f" - {w}" if w else ""
    if mode == "1d":
        base = {"contig": p, "loopcontig": f"{p} + {lp} * n"}[pat]
        return {"base": base, "shape": ["n"], "strides": ["1"], "offsets": [f"pid * BLOCK{sub}"],
                "block": ["BLOCK"], "order": "(0,)"}
    s, om, on = a.get("stride"), f"pid_m * BM{sub}", f"pid_n * BN{sub}"
    rows = {"base": p, "shape": ["M", "N"], "strides": [s, "1"], "offsets": [om, on], "block": ["BM", "BN"],
            "order": "(1, 0)"}
    if pat == "rowmajor":
        return rows
    if pat == "looptile":
        return {**rows, "base": f"{p} + {lp} * M * {s}"}
    if pat == "colmajor":
        return {**rows, "strides": ["1", "M"], "order": "(0, 1)"}
    if pat in ("ttile", "transload"):
        return {**rows, "shape": ["N", "M"], "strides": ["M", "1"], "offsets": [on, om], "block": ["BN", "BM"]}
    kk = f"{lp} * BK" if pat.startswith("loop") else "0"
    if pat in ("atile", "loopatile"):
        return {**rows, "shape": ["M", "K"], "strides": ["K", "1"], "offsets": [om, kk], "block": ["BM", "BK"]}
    if pat in ("btile", "loopbtile"):
        return {**rows, "shape": ["K", "N"], "strides": ["N", "1"], "offsets": [kk, on], "block": ["BK", "BN"]}
    raise KeyError(pat)


def _tuple(xs):
    return "(" + ", ".join(xs) + ("," if len(xs) == 1 else "") + ")"


def _make_block_ptr(r, a, geo, ind, offsets=None):
    """Emits `bp = tl.make_block_ptr(...)` (and an advance to the tile, for some kernels); its name."""
    name = r.var()
    offs = geo["offsets"] if offsets is None else offsets
    via_advance = a.get("bp_form") == "advance"
    start = ["0"] * len(offs) if via_advance else offs
    args = [geo["base"], _tuple(geo["shape"]), _tuple(geo["strides"]), _tuple(start), _tuple(geo["block"]),
            geo["order"]]
    if a.get("bp_kw"):
        keys = ("base", "shape", "strides", "offsets", "block_shape", "order")
        args = [f"{k}={v}" for k, v in zip(keys, args)]
    r.emit(f"{name} = tl.make_block_ptr({', '.join(args)})", ind)
    if via_advance:
        r.emit(f"{name} = tl.advance({name}, {_tuple(offs)})" if a.get("bp_kw") else
               f"{name} = {name}.advance({_tuple(offs)})", ind)
    return name


def _make_descriptor(r, a, geo, ind):
    name = r.var()
    pad = ", padding_option=\"nan\"" if a.get("padding") == "nan" else ""
    r.emit(f"{name} = tl.make_tensor_descriptor({geo['base']}, shape=[{', '.join(geo['shape'])}], "
           f"strides=[{', '.join(geo['strides'])}], block_shape=[{', '.join(geo['block'])}]{pad})", ind)
    return name


def _check_src(a, rank):
    return "(0,)" if rank == 1 else ("(1, 0)" if a.get("check_rev") else "(0, 1)")


def _bp_load(name, a, rank):
    pad = a.get("padding", "zero")
    return f"tl.load({name}, boundary_check={_check_src(a, rank)}" + (f", padding_option=\"{pad}\")" if pad else ")")


def _desc_load(name, a, offsets):
    offs = "[" + ", ".join(offsets) + "]"
    return f"tl.load_tensor_descriptor({name}, {offs})" if a.get("desc_fn") else f"{name}.load({offs})"


def load_src(r, node, ind):
    a, pat = node.a, node.a["pattern"]
    access = a.get("access")
    if access:
        geo = geometry(a, r.k.mode)
        if access in ("carried", "hoisted"):
            name = r.ext_names[id(node)]
        elif access == "bp":
            name = _make_block_ptr(r, a, geo, ind)
        else:
            name = _make_descriptor(r, a, geo, ind)
        src = _bp_load(name, a, len(geo["block"])) if access in ("bp", "carried") else \
            _desc_load(name, a, geo["offsets"])
        return f"tl.trans({src})" if pat == "transload" else src
    p = a["arg"]
    if pat == "pairs":
        if r.k.mode == "1d":
            ptr, mask = f"{p} + offs[:, None] * 2 + tl.arange(0, 2)[None, :]", "mask[:, None]"
        else:
            ptr = f"{p} + (rows[:, None] * N + cols[None, :])[:, :, None] * 2 + tl.arange(0, 2)[None, None, :]"
            mask = "mask2[:, :, None]"
    elif pat == "a3":
        ptr = f"{p} + tl.arange(0, BB)[:, None, None] * (M * K) + rows[None, :, None] * K + ks[None, None, :]"
        mask = "(tl.arange(0, BB) < NB)[:, None, None] & rmask[None, :, None] & (ks < K)[None, None, :]"
    else:  # b3
        ptr = f"{p} + tl.arange(0, BB)[:, None, None] * (K * N) + ks[None, :, None] * N + cols[None, None, :]"
        mask = "(tl.arange(0, BB) < NB)[:, None, None] & (ks < K)[None, :, None] & cmask[None, None, :]"
    if a.get("other") is None:
        return f"tl.load({ptr}, mask={mask})"
    return f"tl.load({ptr}, mask={mask}, other={r.lit(a['other'], node.dtype)})"


def store_src(r, st, val, ind):
    a, pat = st.a, st.a["pattern"]
    o = a["out"]
    if pat == "dense":
        dims = dims_of(a["tag"])
        return f"tl.store({o} + pid * {_numel_src(dims)} + {_arange_nd(dims)}, {val})"
    if pat == "tile3":
        ptr = f"{o} + tl.arange(0, BB)[:, None, None] * (M * N) + rows[None, :, None] * N + cols[None, None, :]"
        mask = "(tl.arange(0, BB) < NB)[:, None, None] & rmask[None, :, None] & cmask[None, None, :]"
        return f"tl.store({ptr}, {val}, mask={mask})"
    geo = geometry(a, r.k.mode)
    if st.value.tag != a["tag"]:
        val = f"tl.broadcast_to({val}, {G.SHAPE_SRC[a['tag']]})"
    if a["access"] == "desc":
        name = _make_descriptor(r, a, geo, ind)
        offs = "[" + ", ".join(geo["offsets"]) + "]"
        if a.get("desc_fn"):
            return f"tl.store_tensor_descriptor({name}, {offs}, {val})"
        return f"{name}.store({offs}, {val})"
    if st.value.dtype != a["out_dtype"]:  # a block pointer store does not cast (as in Triton)
        val = f"{val}.to({G.TL[a['out_dtype']]})"
    name = _make_block_ptr(r, a, geo, ind)
    return f"tl.store({name}, {val}, boundary_check={_check_src(a, len(geo['block']))})"


def loop_pre(r, node, ind):
    """Before a K loop of dots: the block pointers it advances and the descriptors it reads."""
    if not hasattr(r, "ext_names"):
        r.ext_names = {}
    for kid in node.kids[:2]:
        a = kid.a
        if a.get("access") == "carried":
            geo = geometry(a, r.k.mode)
            start = [o.replace(f"{a['loop']} * BK", "0") for o in geo["offsets"]]
            r.ext_names[id(kid)] = _make_block_ptr(r, {**a, "bp_form": None}, geo, ind, offsets=start)
        elif a.get("access") == "hoisted":
            r.ext_names[id(kid)] = _make_descriptor(r, a, geometry(a, r.k.mode), ind)


def loop_post(r, node, ind):
    for kid in node.kids[:2]:
        if kid.a.get("access") == "carried":
            name = r.ext_names[id(kid)]
            step = "(0, BK)" if kid.a["pattern"] == "loopatile" else "(BK, 0)"
            r.emit(f"{name} = tl.advance({name}, {step})", ind)


def render(r, node, ks, v, ind):
    """The source of a node this module adds, or None when it emitted its own lines."""
    kd, a = node.kind, node.a
    if kd == "join":
        return f"tl.join({ks[0]}, {ks[1]})"
    if kd == "split":
        call = f"{ks[0]}.split()" if a.get("method") else f"tl.split({ks[0]})"
        pair = f"{v}, {v}_" if a["half"] == 0 else f"{v}_, {v}"
        r.emit(f"{pair} = {call}", ind, node)
        return None
    if kd == "interleave":
        return f"tl.interleave({ks[0]}, {ks[1]})"
    if kd == "cat":
        return f"tl.cat({ks[0]}, {ks[1]}, can_reorder=True)"
    if kd == "gidx":
        n = dim_src(a["dim"])
        return f"({ks[0]} % {n} + {n}) % {n}"
    if kd == "gather":
        if a.get("method"):
            return f"{ks[0]}.gather({ks[1]}, axis={a['axis']})"
        return f"tl.gather({ks[0]}, {ks[1]}, {a['axis']})"
    if kd == "hist":
        mask = f", mask={a['mask']}" if a.get("mask") else ""
        return f"{ks[0]}.histogram(BINS{mask})" if a.get("method") else f"tl.histogram({ks[0]}, BINS{mask})"
    if kd == "flip":
        dim = "" if a["dim"] is None else str(a["dim"])
        if a.get("method"):
            return f"{ks[0]}.flip({dim})"
        return f"tl.flip({ks[0]}, {dim})" if dim else f"tl.flip({ks[0]})"
    if kd == "permute":
        perm = ", ".join(map(str, a["perm"]))
        return {"tuple": f"tl.permute({ks[0]}, ({perm}))", "args": f"tl.permute({ks[0]}, {perm})",
                "trans": f"tl.trans({ks[0]}, {perm})", "method": f"{ks[0]}.permute({perm})",
                "trans2": f"tl.trans({ks[0]})"}[a["form"]]
    if kd == "sort":
        desc = ", descending=True" if a["descending"] else ""
        if a.get("form") == "dim":
            return f"tl.sort({ks[0]}, dim={len(dims_of(node.tag)) - 1}{desc})"
        return f"tl.sort({ks[0]}{desc})"
    if kd == "topk":
        return f"tl.topk({ks[0]}, KK)"
    raise KeyError(kd)


def params(k):
    """The extra (runtime scalars, constexprs) a kernel with these features takes."""
    keys, scal = set(), []
    for node in G.kernel_nodes(k):
        for dim in dims_of(node.tag):
            keys.update(_size_keys(dim))
        if node.kind == "gidx":
            keys.update(_size_keys(node.a["dim"]))
        if node.kind == "topk":
            keys.add("KK")
        if node.kind == "load" and node.a["pattern"] in ("a3", "b3"):
            scal = ["NB"]
    for st in k.stmts:
        for dim in dims_of(st.a["tag"]):
            keys.update(_size_keys(dim))
        if st.a["pattern"] == "tile3":
            scal = ["NB"]
        if st.a.get("guard"):
            keys.add("ER")
    return scal, sorted(x for x in keys if x in NEW_CONST)


# ========================================================================================= generator
def extend(g, k):
    """Appends statements with the newer features to kernel k, drawn after every other draw of g's
    random stream. The kernel's own statements, grid and inputs stay as they were: the new statements
    store to outputs of their own, read inputs of their own (drawn from a second random stream, see
    `fuzz_gen.make_inputs`), and never store the row or column vectors that shrink the grid."""
    dot_template = "BK" in k.sizes
    if not g.chance(P_EXTEND_DOT if dot_template else P_EXTEND):
        return
    n_in, n_out = g.n_in, g.n_out
    opts = {"shape": 5, "access": 4, "dot": 5 if dot_template else (2.5 if k.mode == "2d" else 0)}
    for _ in range(1 if g.chance(0.7) else 2):
        what = g.pick(list(opts), list(opts.values()))
        g.feat(f"ext:{what}")
        make = {"shape": shape_statement, "dot": dot_statement, "access": access_statement}[what]
        k.stmts.append(make(g, k))
    k.ext_args = {f"in{i}" for i in range(n_in, g.n_in)} | {f"out{i}" for i in range(n_out, g.n_out)}


def is_extended(k):
    """Whether kernel k has any of the features this module draws."""
    return any(f.startswith("ext:") for f in k.features)


# -- shape ops
SHAPE_DTYPES = ("i1", "i8", "i16", "i32", "i64", "f16", "bf16", "f32")
SHAPE_W = (0.3, 1, 0.5, 4, 1, 2, 1, 4)


def _gen(g, d, tag, exact=False):
    return g.gen(d, tag, int(g.pick([0, 1, 2], [2, 3, 2])), {"exact": True} if exact else {})


def _sortable(k, node):
    dims = dims_of(node.tag)
    n = dim_value(dims[-1], k.sizes) if dims else 0
    return node.dtype != "i1" and _pow2(n) and n <= SORT_MAX


def shape_statement(g, k):
    one = k.mode == "1d"
    base = "B" if one else "T"
    d = g.pick(SHAPE_DTYPES, SHAPE_W)
    n = dim_value(dims_of(base)[-1], k.sizes)
    sortable = d != "i1" and _pow2(n) and n <= SORT_MAX
    firsts = {"join": 2, "pairs": 1.5, "interleave": 1.5, "cat": 1.5 if one and d != "i1" else 0, "gather": 2,
              "histogram": 1.5, "flip": 1.5 if _pow2(n) else 0, "permute": 1.5, "sort": 2.5 if sortable else 0,
              "topk": 1.5 if sortable else 0}
    first = g.pick(list(firsts), list(firsts.values()))
    if first == "histogram":
        x = _histogram(g, k, g.pick(["i8", "i32", "i64"], [1, 4, 1]))
    elif first == "cat":
        x = _cat(g, k, d)
    else:
        x = _gen(g, d, base)
        x = _apply(g, k, first if first != "pairs" else "split", x)
    for _ in range(int(g.pick([0, 1, 2], [4, 4, 2]))):
        ops = _follow_ops(k, x)
        if not ops:
            break
        x = _apply(g, k, g.pick(list(ops), list(ops.values())), x)
    return _store(g, k, x)


def _follow_ops(k, x):
    dims = dims_of(x.tag)
    ops = {}
    if not dims:
        return ops
    if any(_pow2(dim_value(dm, k.sizes)) for dm in dims):
        ops["flip"] = 2
    if len(dims) >= 2:
        ops["permute"] = 2
    if _sortable(k, x):
        ops["sort"] = 2
        ops["topk"] = 1
    if dims[-1] == "2":
        ops["split"] = 3
    if x.dtype not in ("i1",):
        ops["reduce"] = 1.5
        ops["lit"] = 1
    if x.tag in ("B", "T"):
        ops["join"] = 1
        ops["gather"] = 1
    if len(dims) == 1 and G.is_int(x.dtype):
        ops["histogram"] = 0.7
    return ops


def _apply(g, k, op, x):  # noqa: C901 - one branch per shape op
    """Node op(x), with fresh operands where op takes more than x."""
    d, dims = x.dtype, dims_of(x.tag)
    if op == "join" or op == "interleave":
        if x.tag not in ("B", "T"):
            return x
        y = _gen(g, d, x.tag)
        if op == "join":
            g.feat(f"shape:join:{len(dims)}d")
            return G.Node("join", d, tag_of(dims + ["2"]), [x, y])
        g.feat(f"shape:interleave:{len(dims)}d")
        return G.Node("interleave", d, tag_of(dims[:-1] + ["2*" + dims[-1]]), [x, y])
    if op == "split":
        if dims[-1] != "2":  # the first op: a (.., 2) block loaded from memory, or a join
            if g.chance(0.5) and x.tag in ("B", "T"):
                return _apply(g, k, "split", _apply(g, k, "join", x))
            x = _pairs_load(g, k, d, dims)
            dims = dims_of(x.tag)
        g.feat("shape:split")
        return G.Node("split", d, tag_of(dims[:-1]), [x], {"half": int(g.pick([0, 1])), "method": g.chance(0.3)})
    if op == "gather":
        if x.tag not in ("B", "T"):
            return x
        axis = int(g.pick(range(len(dims))))
        idt = g.pick(["i32", "i64", "i8"], [5, 1, 1])
        raw = _gen(g, "i32" if idt == "i8" and dim_value(dims[axis], k.sizes) > 32 else idt, x.tag, exact=True)
        idx = G.Node("gidx", raw.dtype, raw.tag, [raw], {"dim": dims[axis]})
        g.feat(f"shape:gather:{len(dims)}d:axis{axis}")
        return G.Node("gather", d, x.tag, [x, idx], {"axis": axis, "method": g.chance(0.3)})
    if op == "flip":
        ok = [i for i, dm in enumerate(dims) if _pow2(dim_value(dm, k.sizes))]
        if not ok:
            return x
        dim = int(g.pick(ok))
        form = g.pick(["fn", "method", "default"], [3, 1, 1])
        g.feat(f"shape:flip:{len(dims)}d")
        return G.Node("flip", d, x.tag, [x], {"dim": None if form == "default" and dim == len(dims) - 1 else dim,
                                              "method": form == "method"})
    if op == "permute":
        if len(dims) < 2 or (x.tag == "T" and g.chance(0.5)):  # a rank-3 block: (BM, BN, 2)
            x = _apply(g, k, "join", x)
            dims = dims_of(x.tag)
            if len(dims) < 2:
                return x
        perms = [p for p in _permutations(len(dims)) if list(p) != list(range(len(dims)))]
        perm = tuple(perms[int(g.rng.integers(len(perms)))])
        forms = ["tuple", "args", "trans", "method"] + (["trans2"] if len(dims) == 2 else [])
        g.feat(f"shape:permute:{len(dims)}d")
        return G.Node("permute", d, tag_of([dims[i] for i in perm]), [x],
                      {"perm": perm, "form": g.pick(forms)})
    if op in ("sort", "topk"):
        if not _sortable(k, x):
            return x
        n = dim_value(dims[-1], k.sizes)
        if op == "topk":
            k.sizes.setdefault("KK", int(g.pick([v for v in (1, 2, 4, 8) if v <= n])))
            if k.sizes["KK"] > n:
                return x
            g.feat(f"topk:{len(dims)}d")
            return G.Node("topk", d, tag_of(dims[:-1] + ["KK"]), [x])
        desc = g.chance(0.5)
        g.feat(f"sort:{len(dims)}d:{'desc' if desc else 'asc'}")
        return G.Node("sort", d, x.tag, [x], {"descending": desc, "form": g.pick(["fn", "dim"], [3, 1])})
    if op == "reduce":
        return _reduce(g, k, x)
    if op == "lit":
        lit = g.lit_for(d)
        opx = g.pick(["+", "*"]) if G.is_float(d) else g.pick(["+", "*", "^"])
        if G.weak_type(d, lit) != d:
            return x
        return G.Node("binlit", d, x.tag, [x], {"op": opx, "lit": lit, "ct": d})
    if op == "histogram":
        return _histogram(g, k, d, x)
    raise KeyError(op)


def _permutations(n):
    if n == 1:
        return [(0,)]
    out = []
    for p in _permutations(n - 1):
        for i in range(n):
            out.append(p[:i] + (n - 1,) + p[i:])
    return sorted(out)


def _reduce(g, k, x):
    d, dims = x.dtype, dims_of(x.tag)
    ops = ["max", "min"] + (["sum"] if d in ("i32", "i64", "f32") else [])
    op = g.pick(ops)
    axis = int(g.pick(range(len(dims))))
    rd = "f32" if d == "bf16" else d  # Triton reduces bf16 max/min in fp32
    g.feat(f"shape:reduce:{len(dims)}d")
    return G.Node("reduce", rd, tag_of(dims[:axis] + dims[axis + 1:]), [x],
                  {"op": op, "axis": axis, "keep_dims": False, "method": False})


def _pairs_load(g, k, d, dims):
    g.loads += 1
    other = None if g.chance(0.3) else g.other_for(d)
    g.feat("shape:load-pairs")
    return G.Node("load", d, tag_of(dims + ["2"]), a={"pattern": "pairs", "arg": g.new_in(), "masked": True,
                                                        "other": other, "profile": g.profile(d)})


def _cat(g, k, d):
    x, y = _gen(g, d, "B"), _gen(g, d, "B")
    c = G.Node("cat", d, "@2*BLOCK", [x, y])
    g.feat("shape:cat")
    if _sortable(k, c) and g.chance(0.6):
        return _apply(g, k, g.pick(["sort", "topk"], [2, 1]), c)
    return _reduce(g, k, c)


def _histogram(g, k, d, x=None):
    if x is None:
        tag = "B" if k.mode == "1d" else g.pick(["R", "C"])
        x = _gen(g, d, tag, exact=True)
    k.sizes.setdefault("BINS", int(g.pick([1, 2, 4, 8, 16, 32], [0.5, 1, 2, 2, 1, 1])))
    idx = G.Node("gidx", x.dtype, x.tag, [x], {"dim": "BINS"})
    mask = {"B": "mask", "R": "rmask", "C": "cmask"}.get(x.tag) if g.chance(0.6) else None
    g.feat("shape:histogram" + (":mask" if mask else ""))
    return G.Node("hist", "i32", "@BINS", [idx], {"mask": mask, "method": g.chance(0.3)})


def _store(g, k, x):
    """x through the kernel's own stores (not row or column vectors: they would change the grid) or
    densely, one block per program."""
    if x.tag == "S" or (x.tag == ("B" if k.mode == "1d" else "T") and g.chance(0.6)):
        return g.store(x, x.tag)
    g.feat("store:dense")
    return G.Stmt("store", x, {"out": g.new_out(), "tag": x.tag, "pattern": "dense", "out_dtype": x.dtype})


# -- dots
def _dots(k, stmts):
    return [n for st in stmts for n in G.walk(st.value) if n.kind == "dot"
            or (n.kind == "loop" and n.a["combine"] == "dot")]


def dot_statement(g, k):
    """A dot of its own, small and ragged: one 2-D dot, a batched (3-D) one, or a K loop of dots;
    every input_precision of fp32 operands, precisions fp16/bf16 dots ignore, fp16 results."""
    z = k.sizes
    if "BK" not in z:
        z["BK"] = int(g.pick([1, 2, 4, 8, 16], [0.5, 1, 2, 2, 1]))
        z["K"] = G.boundary_sizes(z["BK"], g.rng)
    form = g.pick(["dot2", "dot3", "loop"], [2, 2, 1.5])
    if form == "loop":
        return _matmul_statement(g, k)
    src = g.pick(["f16", "bf16", "f32", "i8"], [3, 2, 3, 1])
    a = {}
    if src == "f32":
        a["prec"] = g.pick(PRECISIONS, PRECISION_W)
    elif src == "f16" and g.chance(0.4):
        a["out"] = "f16"
    elif src != "i8" and g.chance(0.4):
        a["prec"] = g.pick(["tf32", "ieee", "bf16x6"])
    rd = "i32" if src == "i8" else a.get("out") or "f32"
    if form == "dot3":
        z.setdefault("BB", int(g.pick([1, 2, 4])))
        z.setdefault("NB", int(g.pick(sorted({max(1, z["BB"] - 1), z["BB"], z["BB"] + 1}))))
        kids = [_tile3(g, src, "a3", "@BB,BM,BK"), _tile3(g, src, "b3", "@BB,BK,BN")]
        tag = "@BB,BM,BN"
    else:
        kids = [_gen(g, src, "A", exact=True), _gen(g, src, "K", exact=True)]
        tag = "T"
    if g.chance(0.3):
        kids.append(G.Node("full", rd, tag, a={"value": g.other_for(rd), "zeros": False}))
    g.feat(f"{form}:{src}" + (f":{a['prec']}" if a.get("prec") else "") + (":out-f16" if a.get("out") else "")
           + (":acc" if len(kids) > 2 else ""))
    node = G.Node("dot", rd, tag, kids, a)
    if form == "dot2":
        return g.store(node, "T")
    pattern = "tile3" if g.chance(0.6) else "dense"
    return G.Stmt("store", node, {"out": g.new_out(), "tag": tag, "pattern": pattern, "out_dtype": rd})


def _matmul_statement(g, k):
    """A K loop of dots (fuzz_gen's matmul) with a precision, or an explicit fp32 out_dtype."""
    loop = g.matmul(g.pick(["f32", "i32"], [4, 1]))
    src = loop.kids[0].dtype
    if src == "f32":
        loop.a["prec"] = g.pick(PRECISIONS, PRECISION_W)
        g.feat(f"dot-precision:loop:{loop.a['prec']}")
    elif src in ("f16", "bf16"):
        loop.a["prec"] = g.pick(["tf32", "tf32x3", "bf16x3", "bf16x6", "ieee"])
        loop.a["out"] = "f32" if g.chance(0.5) else None
        g.feat(f"dot-precision:loop:{src}-ignored")
    return g.store(loop, "T")


def _tile3(g, d, pat, tag):
    g.loads += 1
    other = None if g.chance(0.2) else (0 if G.is_int(d) else 0.0)
    return G.Node("load", d, tag, a={"pattern": pat, "arg": g.new_in(), "masked": True, "other": other,
                                     "profile": "ints" if G.is_float(d) and g.chance(0.5) else g.profile(d)})


# -- block pointers and tensor descriptors
GEOMETRY_LOADS = {"1d": ("contig", "loopcontig"),
                  "2d": ("rowmajor", "looptile", "colmajor", "ttile", "transload", "atile", "btile", "loopatile",
                         "loopbtile")}
GEOMETRY_STORES = {"1d": ("contig",), "2d": ("rowmajor", "colmajor")}


def _access_candidates(k, stmts):
    if k.mode == "1d" and not _pow2(k.sizes["BLOCK"]):  # a block pointer's block is a power of 2
        return []
    loads = [n for st in stmts for n in G.walk(st.value) if n.kind == "load"
             and n.a["pattern"] in GEOMETRY_LOADS[k.mode] and n.dtype != "i1" and n.a.get("masked", True)
             and n.a.get("other") in (0, 0.0, None)]
    stores = [s for s in stmts if s.kind == "store" and s.a["pattern"] in GEOMETRY_STORES[k.mode]
              and s.a["out_dtype"] != "i1"]
    return loads + stores


def _desc_ok(a, dtype, k):
    try:
        _check_desc(a, dtype, k)
        return True
    except G.EvalError:
        return False


def access_statement(g, k):
    """A statement whose tile loads and store go through block pointers or tensor descriptors: the same
    elements as the masked loads and stores they replace, or a window shifted up-left, partly before
    the tensor; in the dot template, sometimes a K loop of dots whose block pointers it advances."""
    if "BK" in k.sizes and g.chance(0.4):
        st = g.store(g.matmul(g.pick(["f32", "i32"], [3, 1])), "T")
    else:
        t = "B" if k.mode == "1d" else "T"
        v = _gen(g, g.pick(SHAPE_DTYPES[1:], SHAPE_W[1:]), t)
        st = g.store(v, t)
    for node in G.walk(st.value):  # most tile loads read zeros (or nothing defined) outside the tensor
        if node.kind == "load" and node.a["pattern"] in GEOMETRY_LOADS[k.mode] and g.chance(0.8):
            node.a["other"] = None if g.chance(0.25) else (False if node.dtype == "i1" else 0)
    cands = _access_candidates(k, [st])
    if not cands:
        return st
    matmul_kids = {id(c) for n in _dots(k, [st]) if n.kind == "loop" for c in n.kids[:2]}
    for c in [c for c in cands if g.chance(0.7)] or [cands[int(g.rng.integers(len(cands)))]]:
        _convert(g, k, c, id(c) in matmul_kids)
    return st


def _convert(g, k, c, in_matmul):
    store = isinstance(c, G.Stmt)
    a = c.a
    dtype = a["out_dtype"] if store else c.dtype
    kind = g.pick(["bp", "desc"] + (["carried", "hoisted"] if in_matmul else []))
    if a["pattern"] in ("rowmajor", "contig") and g.chance(0.3):
        a["win"] = int(g.pick([1, 2, 3]))
    if kind in ("desc", "hoisted") and not _desc_ok(a, dtype, k):
        kind = "bp" if kind == "desc" else "carried"
    a["access"] = kind
    if kind in ("bp", "carried"):
        a["bp_kw"] = g.chance(0.5)
        a["bp_form"] = "advance" if kind == "bp" and g.chance(0.3) else None
        a["check_rev"] = g.chance(0.3)
    else:
        a["desc_fn"] = g.chance(0.3)
    if not store:
        if a.get("other") is None:
            pads = ["", "zero"] + (["nan"] if G.is_float(dtype) else [])
            a["padding"] = g.pick(pads) if kind in ("bp", "carried") else g.pick(["zero"] + pads[2:])
        else:
            a["padding"] = "zero"
    name = {"bp": "blockptr", "carried": "blockptr", "desc": "tdesc", "hoisted": "tdesc"}[kind]
    g.feat(f"{name}:{'store' if store else 'load'}:{a['pattern']}" + (":advance-loop" if kind == "carried" else "")
           + (":hoisted" if kind == "hoisted" else "") + (":window" if a.get("win") else ""))


if G is None:  # imported on its own: load the generator, which installs itself here
    try:
        from . import fuzz_gen  # noqa: F401
    except ImportError:
        import fuzz_gen  # noqa: F401
