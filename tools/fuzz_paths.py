"""The fuzzer's "paths" family: kernels shaped to reach the ascend target's newer lowering paths.

`tools/fuzz_gen.py` draws a kernel of this family instead of a classic one for about P_PATHS of the
indices of a seed >= FIRST_SEED (from a random stream of its own, so the other indices, and every kernel of
the seeds of earlier campaigns, stay what they were); `tools/fuzz.py --family paths` draws only these,
`--family classic` none. Four forms, each a feature name in the campaign summary:

- `paths:cube` (mode "cube", its own template, source and numpy model here): Cube program joining
  (lower/ops/dot.py `_joinable`): the kernel's only dot, an fp16/bf16 K loop `acc = tl.dot(a, b, acc)` or
  `acc += tl.dot(a, b)` (fp32 accumulator), small tiles (16/32/64), many programs (up to some hundreds, and
  a few launches of more than 16 groups a core); program-id maps: grouped (GROUP_M), row-major,
  column-major, scrambled (`pid * 7 % tiles`) and a 2-D grid; pointers advanced each step or recomputed
  from the loop index; rows and columns masked, or wrapped (`% M`, as Triton's tutorial) with only K
  masked; epilogues none, ReLU (`maximum`, `where`), leaky ReLU, a scale; fp32, fp16 or bf16 results
  (explicit `.to` or the store's cast); from seed VARIANTS_SEED on also K loops over offsets
  (`range(0, K, BK)`) and `tl.range`, row strides of their own (LDA/LDB/LDC arguments, padded rows) and
  tiles dividing M, N and K loaded and stored without masks; from seed POOL_SEED on, a quarter of them fill
  the pooled join's groups of 8 with B tiles wider than A's in row-major order (feature `cube:pool-wide`).
  Its model is a float64 matmul: compared
  within fp32 tolerances (fp16/bf16 products are exact in fp32; only the order of the fp32 sums
  differs), or the result type's.
- `paths:stream` (a classic 1-D kernel): streaming elementwise kernels whose inputs every program reads
  its own block of, once (plan/streaming.py, the L2 bypass): contiguous masked loads only, blocks of at
  least 512 B, and in about BIG of them a launch that moves more than the 910B's L2 (192 MB), so that the
  model runs the `SetL2CacheHint` guard taken.
- `paths:permute` (a classic 2-D kernel): 2-D permutes on the vector unit (vector/permute.py,
  vector/transpose.py): transposed loads and stores (`ptr + rows[:, None] + cols[None, :] * M`,
  `tl.trans(tl.load(ptr + cols[:, None] * M + rows[None, :]))`), `tl.trans`/`tl.permute` of (BM, BN) and
  (BN, BM) tiles, chains of them, and a join -> permute(1, 0, 2) -> split chain; only data movement and
  exact combinations (max/min, integer +, selects), so every output is exact.

- `paths:attn` (mode "attn", from seed ATTN_SEED on; template, source and numpy model in
  `tools/fuzz_attn.py`): attention forward, a dot, vector work on the score tile (online softmax) and a
  second dot in each key step, for ascend's row split (cube/rowsplit.py): each score tile's rows over both
  vector cores; ragged lengths, causal or not, exp/exp2, fp16/bf16, and kernels the split refuses.

`fuzz.py`'s worker reports which of these paths an ascend compile took (`ascend_paths`), and the campaign
summary counts them.
"""

from __future__ import annotations

import math
import re

import numpy as np

try:
    from . import fuzz_attn as A
except ImportError:
    import fuzz_attn as A

G = None  # tools/fuzz_gen.py, set by install()

FIRST_SEED = 78        # the first seed whose default mix draws this family (campaign 30)
VARIANTS_SEED = 80     # from this seed on, cube kernels also draw LOOPS, row strides and unmasked tiles
POOL_SEED = 86         # from this seed on, a quarter of them fill groups of 8 with B tiles wider than A's
ATTN_SEED = 82         # from this seed on, the form "attn" is drawn too (campaign 34)
P_PATHS = 0.3          # the share of a seed's kernels drawn from this family
FORMS = ("cube", "stream", "permute")
FORM_W = (4, 3, 3)
ATTN_W = 5             # the weight of "attn" beside FORM_W, from ATTN_SEED on
BIG = 0.1              # stream kernels whose launch moves more than L2
L2_BYTES = 192 * 2 ** 20
MODES = ("cube", "attn")  # the kernel modes this module renders and models itself


def install(gen_module):
    global G
    G = gen_module
    A.install(gen_module)


def drawn(seed, index):
    """Whether kernel `index` of `seed` is of this family in the default mix (a stream of its own; `generate`
    draws from another: numpy's SeedSequence takes [s, i, t, 0] as [s, i, t], so the same tag would tie the
    first draw of the kernel's stream to this one)."""
    return seed >= FIRST_SEED and np.random.default_rng([seed, index, 0x9A7]).random() < P_PATHS


def generate(seed, index):
    """Kernel `index` of this family for `seed` (model-checked: redrawn while the model rejects it)."""
    for attempt in range(50):
        g = G.Gen(np.random.default_rng([seed, index, 0x9A8, attempt]), index, extensions=False)
        form = g.pick(*forms(seed))
        k = {"cube": cube_kernel, "stream": stream_kernel, "permute": permute_kernel,
             "attn": A.attn_kernel}[form](g, seed)
        k.features = set(g.features) | {f"paths:{form}", "template:paths"}
        try:
            G.Model(k, G.make_inputs(k)).run()
        except G.EvalError:
            continue
        return k
    raise RuntimeError(f"no valid paths kernel for seed {seed} index {index}")


def forms(seed):
    """(forms, weights) of the kernels of `seed`: "attn" only from ATTN_SEED on, so the earlier seeds' kernels
    stay what they were (one draw of the same stream either way)."""
    return (FORMS, FORM_W) if seed < ATTN_SEED else (FORMS + ("attn",), FORM_W + (ATTN_W,))


# the template modes ("cube" here, "attn" in tools/fuzz_attn.py): what tools/fuzz_gen.py and fuzz.py call
def grid(k):
    return cube_grid(k) if k.mode == "cube" else A.attn_grid(k)


def specs(k):
    return cube_specs(k) if k.mode == "cube" else A.attn_specs(k)


def model(m):
    return cube_model(m) if m.k.mode == "cube" else A.attn_model(m)


def source(k):
    return cube_source(k) if k.mode == "cube" else A.attn_source(k)


def launch(k, inputs):
    return cube_launch(k, inputs) if k.mode == "cube" else A.attn_launch(k, inputs)


def shrink(k):
    return cube_shrink(k) if k.mode == "cube" else A.attn_shrink(k)


# ========================================================================================= cube
PIDMAPS = ("grouped", "rowmajor", "colmajor", "scrambled", "grid2d")
PIDMAP_W = (4, 2, 1.5, 1, 1.5)
EPILOGUES = ("none", "relu", "relu_where", "leaky", "scale")
EPILOGUE_W = (3, 2, 1, 2, 1)


def cube_kernel(g, seed):
    z = {}
    z["BM"], z["BN"] = int(g.pick([16, 32, 64], [3, 3, 2])), int(g.pick([16, 32, 64], [3, 3, 2]))
    z["BK"] = int(g.pick([16, 32, 64], [2, 3, 1]))
    if g.chance(0.08):  # a launch of more than ALIGNED_GROUPS (16) groups of 4 a core (20 AICs): aligned groups
        z["BM"] = z["BN"] = 16
        z["M"], z["N"] = int(g.pick([41, 43]) * 16 - g.rng.integers(0, 5)), 512 + int(g.rng.integers(0, 9))
        z["K"] = int(g.pick([16, 24, 32, 40]))
    else:
        tiles_m, tiles_n = int(g.rng.integers(1, 13)), int(g.rng.integers(1, 13))
        z["M"] = max(1, tiles_m * z["BM"] - int(g.pick([0, 0, 1, z["BM"] // 2, z["BM"] - 1])))
        z["N"] = max(1, tiles_n * z["BN"] - int(g.pick([0, 0, 1, z["BN"] // 2, z["BN"] - 1])))
        z["K"] = int(G.boundary_sizes(z["BK"], g.rng)) if g.chance(0.7) else int(g.rng.integers(1, 4 * z["BK"] + 1))
    a = {"pidmap": g.pick(PIDMAPS, PIDMAP_W), "acc": g.pick(["acc", "pluseq"], [3, 2]),
         "ptr": g.pick(["advance", "index"], [3, 2]), "src": g.pick(["f16", "bf16"], [3, 2]),
         "epilogue": g.pick(EPILOGUES, EPILOGUE_W), "rows": g.pick(["mask", "wrap"], [3, 1]),
         "profile": g.pick(["uniform", "ints"], [3, 1]), "cast": g.pick(["to", "store"])}
    tiles = -(-z["M"] // z["BM"]) * -(-z["N"] // z["BN"])
    if a["pidmap"] == "scrambled" and math.gcd(tiles, 7) != 1:
        a["pidmap"] = "rowmajor"
    if a["pidmap"] == "grouped":
        z["GM"] = int(g.pick([1, 2, 4, 8], [1, 2, 2, 2]))
    od = g.pick(["f32", "f16", "bf16"], [4, 3, 1])
    if seed >= VARIANTS_SEED:  # drawn last: the cube kernels of seeds 78 and 79 (campaigns 30, 31) stay the same
        _cube_variants(g, z, a)
    if seed >= POOL_SEED and g.chance(0.25):  # drawn after: the kernels of earlier seeds stay the same
        _pool_case(g, z, a)
    g.feat(f"cube:pid:{a['pidmap']}")
    g.feat(f"cube:{a['src']}:{a['acc']}:{a['ptr']}:{a['rows']}")
    g.feat(f"cube:epilogue:{a['epilogue']}")
    g.feat(f"cube:out:{od}")
    node = G.Node("cube", "f32", "@M,N", a=a)
    return G.Kernel("cube", z, [G.Stmt("store", node, {"out": "out0", "tag": "@M,N", "pattern": "cube",
                                                        "out_dtype": od})],
                    seed=int(g.rng.integers(2 ** 31)), index=g.index)


LOOPS = ("cdiv", "step", "tlrange")


def _cube_variants(g, z, a):
    """The K loop's form (`range(0, tl.cdiv(K, BK))` over step indices, `range(0, K, BK)` over offsets,
    `tl.range`), row strides of their own (LDA, LDB, LDC: runtime arguments, rows padded), and tiles that
    divide M, N and K, loaded and stored without masks (`rows` "none")."""
    a["loop"] = g.pick(LOOPS, [3, 2, 1])
    if g.chance(0.35):
        for key, base in (("LDA", "K"), ("LDB", "N"), ("LDC", "N")):
            z[key] = z[base] + int(g.pick([0, 1, 8, 16]))
        g.feat("cube:row-strides")
    if a["rows"] == "mask" and g.chance(0.2):
        for key, b in (("M", "BM"), ("N", "BN"), ("K", "BK")):
            z[key] = max(z[b], -(-z[key] // z[b]) * z[b])
        for key, base in (("LDA", "K"), ("LDB", "N"), ("LDC", "N")):
            if key in z:
                z[key] = max(z[key], z[base])
        a["rows"] = "none"
    g.feat(f"cube:loop:{a['loop']}")


def _pool_case(g, z, a):
    """Full groups of 8 of the pooled join (lower/ops/dot.py `_pooled_step`) whose B tiles are larger than their A
    tiles (the pool then holds a fractional number of B tiles) in row-major order (consecutive programs share A: 4
    distinct B tiles a pass): 160 to 320 programs in 1 or 2 rows, at least 8 a core on 20 AICs. Row strides
    of their own keep their padding; tiles stay whole where the loads have no masks."""
    pads = {key: z[key] - z[base] for key, base in (("LDA", "K"), ("LDB", "N"), ("LDC", "N")) if key in z}
    z["BM"], z["BN"] = g.pick([(16, 64), (16, 128), (32, 128)])
    tm = int(g.rng.integers(1, 3))
    tn = int(g.rng.integers(160 // tm, 320 // tm + 1))
    cut = a["rows"] != "none"
    z["M"] = tm * z["BM"] - (int(g.pick([0, 1, z["BM"] // 2])) if cut else 0)
    z["N"] = tn * z["BN"] - (int(g.pick([0, 1, z["BN"] // 2])) if cut else 0)
    for key, base in (("LDA", "K"), ("LDB", "N"), ("LDC", "N")):
        if key in pads:
            z[key] = z[base] + pads[key]
    a["pidmap"] = "rowmajor"
    z.pop("GM", None)
    g.feat("cube:pool-wide")


def _ld(z, key, base):
    return key if key in z else base


def cube_grid(k):
    z, a = k.sizes, k.stmts[0].value.a
    tm, tn = -(-z["M"] // z["BM"]), -(-z["N"] // z["BN"])
    return (tm, tn) if a["pidmap"] == "grid2d" else (tm * tn,)


def cube_specs(k):
    z, st = k.sizes, k.stmts[0]
    src, prof = st.value.a["src"], st.value.a["profile"]
    return {"in0": (src, (z["M"], z.get("LDA", z["K"])), prof), "in1": (src, (z["K"], z.get("LDB", z["N"])), prof),
            "out0": (st.a["out_dtype"], (z["M"], z.get("LDC", z["N"])), "fill")}


def _epilogue_np(name, c):
    if name == "relu" or name == "relu_where":
        return np.maximum(c, 0.0)
    if name == "leaky":
        return np.where(c >= 0, c, c * 0.01)
    if name == "scale":
        return c * 0.5
    return c


def cube_model(m):
    """{out0: (array, defined, written, exact, Val)}: the float64 product, its epilogue, the store's cast."""
    k = m.k
    st = k.stmts[0]
    a = st.value.a
    z = k.sizes
    if a["rows"] == "none" and any(z[n] % z[b] for n, b in (("M", "BM"), ("N", "BN"), ("K", "BK"))):
        raise G.EvalError("unmasked tiles that do not divide M, N, K")
    if any(z[ld] < z[b] for ld, b in (("LDA", "K"), ("LDB", "N"), ("LDC", "N")) if ld in z):
        raise G.EvalError("a row stride below the row")
    x = m.inputs["in0"].astype(np.float64)[:, :z["K"]]
    y = m.inputs["in1"].astype(np.float64)[:, :z["N"]]
    c = _epilogue_np(a["epilogue"], x @ y)
    od = st.a["out_dtype"]
    mag = float(np.abs(c).max(initial=0.0))
    if mag > (2000.0 if od != "f32" else 1e7):
        raise G.EvalError("cube result too large")
    v = c.astype(np.float32).astype(G.NP[od]) if od == "bf16" else c.astype(G.NP[od])
    out = m.inputs["out0"].copy()
    out[:, :z["N"]] = v
    written = np.zeros(out.shape, bool)
    written[:, :z["N"]] = True
    # fp16/bf16 products are exact in fp32; the fp32 sums may run in another order: fp32's tolerance
    val = G.Val(v.reshape(1, *v.shape), np.ones((1,) + v.shape, bool), False, max(1.0, mag), None,
                max(1, k.sizes["K"]))
    return {"out0": (out, np.ones(out.size, bool), written.reshape(-1), False, val)}


def _pid_lines(a):
    if a["pidmap"] == "grid2d":
        return ["pid_m = tl.program_id(0)", "pid_n = tl.program_id(1)"]
    head = ["pid = tl.program_id(0)", "num_m = tl.cdiv(M, BM)", "num_n = tl.cdiv(N, BN)"]
    if a["pidmap"] == "grouped":
        return head + ["in_group = GM * num_n", "first_m = (pid // in_group) * GM",
                       "size_m = tl.minimum(num_m - first_m, GM)", "pid_m = first_m + (pid % in_group) % size_m",
                       "pid_n = (pid % in_group) // size_m"]
    if a["pidmap"] == "scrambled":
        head.append("pid = (pid * 7) % (num_m * num_n)")
    if a["pidmap"] == "colmajor":
        return head + ["pid_m = pid % num_m", "pid_n = pid // num_m"]
    return head + ["pid_m = pid // num_n", "pid_n = pid % num_n"]


def cube_source(k):
    st = k.stmts[0]
    a, od = st.value.a, st.a["out_dtype"]
    name = f"fuzz_kernel_{k.index}"
    const = ["BM", "BN", "BK"] + (["GM"] if a["pidmap"] == "grouped" else [])
    body = _pid_lines(a)
    body += ["rows = pid_m * BM + tl.arange(0, BM)", "cols = pid_n * BN + tl.arange(0, BN)", "ks = tl.arange(0, BK)"]
    z = k.sizes
    lda, ldb, ldc = _ld(z, "LDA", "K"), _ld(z, "LDB", "N"), _ld(z, "LDC", "N")
    wrap, bare = a["rows"] == "wrap", a["rows"] == "none"
    ra, cb = ("ra", "cb") if wrap else ("rows", "cols")
    if wrap:
        body += ["ra = rows % M", "cb = cols % N"]
    rm, cm = ("", "") if wrap else ("(rows[:, None] < M) & ", " & (cols[None, :] < N)")
    loop = a.get("loop", "cdiv")
    head = {"cdiv": "for k in range(0, tl.cdiv(K, BK)):", "tlrange": "for k in tl.range(0, tl.cdiv(K, BK)):",
            "step": "for k in range(0, K, BK):"}[loop]
    koff = "k" if loop == "step" else "k * BK"

    def load(ptr, mask):
        return f"tl.load({ptr})" if bare else f"tl.load({ptr}, mask={mask}, other=0.0)"

    body.append("acc = tl.zeros((BM, BN), dtype=tl.float32)")
    if a["ptr"] == "advance":
        body += [f"a_ptrs = in0 + {ra}[:, None] * {lda} + ks[None, :]",
                 f"b_ptrs = in1 + ks[:, None] * {ldb} + {cb}[None, :]", head,
                 f"    a = {load('a_ptrs', f'{rm}(ks[None, :] < K - {koff})')}",
                 f"    b = {load('b_ptrs', f'(ks[:, None] < K - {koff}){cm}')}"]
    else:
        body += [head, f"    kk = {koff} + ks",
                 f"    a = {load(f'in0 + {ra}[:, None] * {lda} + kk[None, :]', f'{rm}(kk[None, :] < K)')}",
                 f"    b = {load(f'in1 + kk[:, None] * {ldb} + {cb}[None, :]', f'(kk[:, None] < K){cm}')}"]
    body.append("    acc = tl.dot(a, b, acc)" if a["acc"] == "acc" else "    acc += tl.dot(a, b)")
    if a["ptr"] == "advance":
        body += ["    a_ptrs += BK", f"    b_ptrs += BK * {ldb}"]
    c = {"none": "acc", "relu": "tl.maximum(acc, 0.0)", "relu_where": "tl.where(acc > 0, acc, 0.0)",
         "leaky": "tl.where(acc >= 0, acc, acc * 0.01)", "scale": "acc * 0.5"}[a["epilogue"]]
    if od != "f32" and a["cast"] == "to":
        c = f"({c}).to({G.TL[od]})" if a["epilogue"] != "none" else f"acc.to({G.TL[od]})"
    smask = "" if bare else ", mask=(rows[:, None] < M) & (cols[None, :] < N)"
    body += [f"c = {c}", f"tl.store(out0 + rows[:, None] * {ldc} + cols[None, :], c{smask})"]
    sig = ", ".join(["in0", "in1", "out0", "M", "N", "K"] + [x for x in ("LDA", "LDB", "LDC") if x in z]
                    + [f"{x}: tl.constexpr" for x in const])
    lines = ["import triton", "import triton.language as tl", "", "", "@triton.jit", f"def {name}({sig}):"]
    lines += ["    " + b for b in body]
    return "\n".join(lines) + "\n", name


def cube_launch(k, inputs):
    const = ["BM", "BN", "BK"] + (["GM"] if k.stmts[0].value.a["pidmap"] == "grouped" else [])
    lds = [x for x in ("LDA", "LDB", "LDC") if x in k.sizes]
    names = ["in0", "in1", "out0", "M", "N", "K"] + lds
    args = [inputs["in0"], inputs["in1"], inputs["out0"]] + [int(k.sizes[x]) for x in names[3:]]
    return args, {c: int(k.sizes[c]) for c in const}, names


def cube_shrink(k):
    """Smaller variants of a cube kernel (fuzz.py's shrinker): sizes, then plainer choices."""
    z, a = k.sizes, k.stmts[0].value.a
    if a["rows"] == "none":  # masks first: the sizes may then shrink
        c = k.clone()
        c.stmts[0].value.a["rows"] = "mask"
        yield c
        return
    for key, lo in (("M", 1), ("N", 1), ("K", 1)):
        for v in sorted({lo, z[key] // 2, z[key] - 1, z["B" + key] if key != "K" else z["BK"]}):
            if lo <= v < z[key]:
                c = k.clone()
                c.sizes[key] = v
                yield c
    for key in ("BM", "BN", "BK"):
        if z[key] > 16:
            c = k.clone()
            c.sizes[key] = z[key] // 2
            yield c
    for key in ("LDA", "LDB", "LDC"):
        if key in z:
            c = k.clone()
            del c.sizes[key]
            yield c
    plain = {"pidmap": "rowmajor", "acc": "acc", "ptr": "advance", "epilogue": "none", "rows": "mask",
             "profile": "ints", "cast": "store", "loop": "cdiv"}
    for key, v in plain.items():
        if k.stmts[0].value.a.get(key, v) != v:
            c = k.clone()
            c.stmts[0].value.a[key] = v
            c.sizes.pop("GM", None) if key == "pidmap" else None
            yield c
    if k.stmts[0].a["out_dtype"] != "f32":
        c = k.clone()
        c.stmts[0].a["out_dtype"] = "f32"
        yield c


# ========================================================================================= stream
def stream_kernel(g, seed):
    """A classic 1-D kernel whose leaves are contiguous masked loads (each input read by one load, at the
    top level) on blocks of 128 to 8192 elements; in BIG of them a launch of more than L2."""
    g.mode = "1d"
    z = {}
    g.sizes = z
    big = g.chance(BIG)
    if big:
        z["BLOCK"] = int(g.pick([4096, 8192]))
        d = g.pick(["f32", "i32"])
        z["n"] = L2_BYTES // 8 + int(g.rng.integers(1, 3 * z["BLOCK"]))  # one 4-byte input, one output: > L2
        n_st, depth = 1, 1
        g.feat("stream:big")
    else:
        z["BLOCK"] = int(g.pick([128, 256, 512, 1024, 2048], [1, 1, 3, 3, 2]))
        z["n"] = z["BLOCK"] * int(g.rng.integers(2, 41)) - int(g.pick([0, 0, 1, 7, z["BLOCK"] // 2]))
        d = None
        n_st, depth = int(g.pick([1, 2], [3, 1])), int(g.pick([1, 2, 3], [3, 3, 1]))
    stmts = []
    for _ in range(n_st):
        dt = d or g.pick(["f32", "f16", "bf16", "i32", "i16", "i8"], [4, 3, 1, 3, 1, 1])
        v = g.gen(dt, "B", depth, {"stream": True, "exact": big, "flat": big, "in_if": int(big)})
        st = g.store(v, "B")
        g.features.discard(f"store:{st.a['pattern']}")
        g.feat("store:contig")
        st.a.update(pattern="contig")
        st.a.pop("stride", None)
        if big:
            st.a["out_dtype"] = dt
        stmts.append(st)
    return G.Kernel("1d", z, stmts, seed=int(g.rng.integers(2 ** 31)), index=g.index)


# ========================================================================================= permute
PERM_DTYPES = ("f32", "f16", "bf16", "i32", "i16", "i8")
PERM_W = (4, 3, 1.5, 3, 1, 1)


def permute_kernel(g, seed):
    """A classic 2-D kernel of data movement: transposed loads and stores, trans/permute chains."""
    g.mode = "2d"
    z = {}
    g.sizes = z
    z["BM"], z["BN"] = int(g.pick([8, 16, 32, 64], [1, 4, 3, 1])), int(g.pick([8, 16, 32, 64], [1, 4, 3, 1]))
    if g.chance(0.3):
        z["BN"] = z["BM"]
    z["M"], z["N"] = G.boundary_sizes(z["BM"], g.rng), G.boundary_sizes(z["BN"], g.rng)
    stmts = []
    for _ in range(int(g.pick([1, 2], [3, 1]))):
        d = g.pick(PERM_DTYPES, PERM_W)
        tag = g.pick(["T", "TT"], [3, 2])
        v = _pvalue(g, d, tag, int(g.pick([1, 2, 3], [2, 3, 2])))
        if tag == "TT":
            v = _trans(g, v, "T")
        st = g.store(v, "T")
        if g.chance(0.4):  # a transposed store: out + rows[:, None] + cols[None, :] * M
            st.a["pattern"] = "colmajor"
            st.a.pop("stride", None)
        if st.a["pattern"] == "colmajor":
            g.feat("permute:store-colmajor")
        if st.a["out_dtype"] != v.dtype and not (G.is_int(st.a["out_dtype"]) == G.is_int(v.dtype)):
            st.a["out_dtype"] = v.dtype
        stmts.append(st)
    k = G.Kernel("2d", z, stmts, seed=int(g.rng.integers(2 ** 31)), index=g.index)
    return k


def _trans(g, x, tag):
    form = g.pick(["trans", "permute"], [3, 1])
    g.feat(f"permute:trans:{form}")
    return G.Node("trans", x.dtype, tag, [x], {"form": form})


def _pleaf(g, d, tag):
    g.loads += 1
    if tag == "T":
        pat = g.pick(["rowmajor", "colmajor", "transload"], [1, 3, 2])
    else:
        pat = "ttile"
    a = {"pattern": pat, "arg": g.new_in(), "masked": True, "profile": g.profile(d),
         "other": None if g.chance(0.2) else g.other_for(d)}
    if pat == "rowmajor":
        a["stride"] = g.stride_param()
    g.feat(f"permute:load:{pat}")
    return G.Node("load", d, tag, a=a)


def _pvalue(g, d, tag, depth):
    """A (BM, BN) ('T') or (BN, BM) ('TT') block of dtype d made of moves and exact combinations."""
    other = "TT" if tag == "T" else "T"
    if depth <= 0:
        return _pleaf(g, d, tag)
    what = g.pick(["leaf", "trans", "chain", "combine", "joinperm", "cast"], [1.5, 4, 1.5, 2, 1, 0.7])
    if what == "leaf":
        return _pleaf(g, d, tag)
    if what == "trans":
        return _trans(g, _pvalue(g, d, other, depth - 1), tag)
    if what == "chain":  # trans(trans(x)): a chain that composes to the identity
        g.feat("permute:chain")
        return _trans(g, _trans(g, _pvalue(g, d, tag, depth - 1), other), tag)
    if what == "joinperm":  # (x, y) -> (A, B, 2) -> permute (1, 0, 2) -> split: a rank-3 permute
        x, y = _pvalue(g, d, other, depth - 1), _pvalue(g, d, other, depth - 1)
        dims = G._ext.dims_of(other)
        j = G.Node("join", d, G._ext.tag_of(dims + ["2"]), [x, y])
        p = G.Node("permute", d, G._ext.tag_of([dims[1], dims[0], "2"]), [j],
                   {"perm": (1, 0, 2), "form": g.pick(["tuple", "args", "trans", "method"])})
        g.feat("permute:join-permute-split")
        return G.Node("split", d, tag, [p], {"half": int(g.pick([0, 1])), "method": g.chance(0.3)})
    if what == "cast":
        src = {"f32": "f16", "i32": "i16", "i16": "i8", "f16": "i8", "bf16": "i8", "i8": "i16"}[d]
        if src == "i16" and d == "i8":
            return _pvalue(g, d, tag, depth - 1)
        g.feat(f"permute:cast:{src}->{d}")
        return G.Node("cast", d, tag, [_pvalue(g, src, tag, depth - 1)], {"form": "to"})
    # combine two moved blocks exactly
    x, y = _pvalue(g, d, tag, depth - 1), _pvalue(g, d, tag, depth - 1)
    if d in ("i32", "i16") and g.chance(0.5):
        g.feat("permute:combine:add")
        return G.Node("bin", d, tag, [x, y], {"op": g.pick(["+", "^"]), "ct": d})
    if d in ("f32", "f16", "i32", "i16"):
        g.feat("permute:combine:minmax")
        return G.Node("minmax", d, tag, [x, y], {"op": g.pick(["max", "min"])})
    g.feat("permute:combine:where")
    c = G.Node("cmplit", "i1", tag, [_pleaf(g, "i32" if d != "i8" else "i8", tag)], {"op": ">", "lit": 0})
    return G.Node("where", d, tag, [c, x, y])


# ========================================================================================= reached paths
def ascend_paths(ck, grid):
    """The newer ascend paths a compiled kernel takes (those that apply): "cube:joined" (its dot's programs
    joined; "cube:pooled" too when 8 of them share a pool of tiles), "cube:row-split" (its handed-off dots'
    vector work split by rows over both vector cores; "cube:row-groups" too when a program's chunk pairs may
    spread over AI Cores; else "cube:row-split-refused:WHY" where the lowering said why not),
    "l2:planned" (inputs kept out of L2 when the launch exceeds it), "l2:taken" (this launch does),
    and "permute:INSTR:WHAT", a vector move (INSTR transdata5hd, gather or gathermask) of the C++ lowering a
    source line that is a trans/permute, a split/join, a load, a store or other (the source-line comments
    above each statement of the generated C++)."""
    out = []
    md = getattr(ck, "metadata", None) or {}
    if any(int(e.get("join", 1)) > 1 for e in md.get("cube") or []):
        out.append("cube:joined")
    if any(int(e.get("join", 1)) > 4 for e in md.get("cube") or []):
        out.append("cube:pooled")  # 8 programs whose tiles share a pool (lower/ops/dot.py _pooled_step)
    split = md.get("row_split") or {}
    if split.get("taken"):
        out.append("cube:row-split")
        if md.get("row_groups"):
            out.append("cube:row-groups")  # a program's chunk pairs may spread over AI Cores (cube/rowsplit.py)
    elif split.get("why"):  # a hand-off kernel the row split refused (it stays on one vector core)
        out.append("cube:row-split-refused:" + re.sub(r"\bline \d+", "line N", split["why"]))  # one key a reason
    plan = md.get("plan") or {}
    if plan.get("l2_bypass"):
        out.append("l2:planned")
        per = int((md.get("streamed") or {}).get("program_bytes") or 0) * int(plan.get("rows") or 1)
        if int(np.prod(grid)) * per > L2_BYTES:
            out.append("l2:taken")
    cpp = (getattr(ck, "asm", None) or {}).get("cpp") or ""
    moves = set()
    line = ""
    for text in cpp.splitlines():
        t = text.strip()
        if t.startswith("// ") and re.match(r"// \S+:\d+: ", t):
            line = t  # the source line the instructions below it lower
            continue
        instr = "transdata5hd" if "TransDataTo5HD" in t else "gathermask" if "GatherMask(" in t else \
            "gather" if re.search(r"\bGather\(", t) else None
        if instr is None:
            continue
        what = "trans" if re.search(r"tl\.trans\(|permute\(", line) else "split-join" if \
            re.search(r"split\(|tl\.join\(", line) else "load" if "tl.load(" in line else \
            "store" if "tl.store(" in line else "other"
        moves.add(f"permute:{instr}:{what}")
    return out + sorted(moves)


if G is None:  # imported on its own: load the generator, which installs itself here
    try:
        from . import fuzz_gen  # noqa: F401
    except ImportError:
        import fuzz_gen  # noqa: F401
