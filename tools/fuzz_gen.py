"""Random Triton-language kernels for the differential fuzzer (`tools/fuzz.py`).

A kernel is a small tree program (`Kernel`): statements (stores, atomics) whose values are
expression trees (`Node`). The same tree is

- rendered as the source text of an unmodified `@triton.jit` kernel (one line per node, so a
  traceback or an xblock error names the node's own line), and
- evaluated by a numpy model written here (`evaluate`), independent of xblock's simulator, with
  Triton 3.6's typing rules. Every value carries a leading program axis (all programs at once),
  a `defined` mask (lanes a block pointer loads with `padding_option="nan"` out of bounds are
  undefined and are not compared; a masked load without `other` reads 0, docs/LANGUAGE.md) and an
  `exact` flag: integer, boolean and data-movement results are exact (every
  target must match the model bit for bit); float arithmetic is not (targets are compared with
  the simulator within a tolerance scaled by the magnitudes involved).

Shapes are symbolic tags, so sizes can be shrunk without touching the tree:
1-D kernels: 'B' (BLOCK,), 'S' () ; 2-D kernels: 'T' (BM, BN), 'TT' (BN, BM), 'R' (BM,),
'C' (BN,), 'R1' (BM, 1), 'C1' (1, BN), 'A' (BM, BK), 'K' (BK, BN), 'S' ().
"""

from __future__ import annotations

import copy
import math
import sys
from dataclasses import dataclass, field

import numpy as np

# libdevice functions the generator calls (fp32 only): source spelling (with a safe domain) and
# the numpy model of the same expression
LIBDEVICE = {
    "tanh": ("libdevice.tanh({x})", np.tanh),
    "atan": ("libdevice.atan({x})", np.arctan),
    "expm1": ("libdevice.expm1(tl.where({x} < 3.0, {x}, 3.0))", lambda v: np.expm1(np.minimum(v, 3.0))),
    "log1p": ("libdevice.log1p(tl.abs({x}))", lambda v: np.log1p(np.abs(v))),
    "cbrt": ("libdevice.cbrt({x})", np.cbrt),
    "trunc": ("libdevice.trunc({x})", np.trunc),
    "rint": ("libdevice.rint({x})", np.rint),
}

try:
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    BF16 = None

# ---------------------------------------------------------------------------------------- dtypes
NP = {"i1": np.dtype(np.bool_), "i8": np.dtype(np.int8), "i16": np.dtype(np.int16),
      "i32": np.dtype(np.int32), "i64": np.dtype(np.int64), "f16": np.dtype(np.float16),
      "bf16": BF16, "f32": np.dtype(np.float32)}
TL = {"i1": "tl.int1", "i8": "tl.int8", "i16": "tl.int16", "i32": "tl.int32", "i64": "tl.int64",
      "f16": "tl.float16", "bf16": "tl.bfloat16", "f32": "tl.float32"}
BITS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "f16": 16, "bf16": 16, "f32": 32}
INTS = ("i8", "i16", "i32", "i64")
FLOATS = ("f16", "bf16", "f32")
MANT = {"f16": 11, "bf16": 8, "f32": 24}


def dtype_name(npdt):
    """The short name ('i8', 'bf16', ...) of a numpy dtype."""
    for k, v in NP.items():
        if v == np.dtype(npdt):
            return k
    raise KeyError(npdt)


def is_int(d):
    return d in INTS


def is_float(d):
    return d in FLOATS


def compute_type(a, b, div_or_mod=False):
    """Triton's computation_type_impl for two blocks (xblock/frontend/semantic.py)."""
    if "f32" in (a, b):
        return "f32"
    if "f16" in (a, b):
        return "f32" if div_or_mod else "f16"
    if a == b == "bf16":
        return "f32" if div_or_mod else "bf16"
    if "bf16" in (a, b):
        return "f32"
    if a == "i1" and b == "i1":
        return "i1"
    if a == "i1":
        return b
    if b == "i1":
        return a
    return a if BITS[a] >= BITS[b] else b


def weak_type(t, lit, div_or_mod=False):
    """Block of dtype `t` combined with the Python literal `lit` (a weak scalar)."""
    lit_float = isinstance(lit, float)
    if is_float(t):
        if div_or_mod and t in ("f16", "bf16"):
            return "f32"
        return t
    if lit_float:
        return compute_type(t, "f32", div_or_mod)
    if t == "i1":
        return "i32"
    return t


# ---------------------------------------------------------------------------------------- shapes
def shape_of(tag, k):
    """Concrete block shape of a tag for kernel `k`."""
    if tag[0] == "@":  # a shape spelled out: '@BM,BN,2' (tools/fuzz_ext.py)
        return _ext.shape_of(tag, k)
    z = k.sizes
    return {"B": (z["BLOCK"],) if "BLOCK" in z else None, "S": (),
            "T": (z.get("BM"), z.get("BN")), "TT": (z.get("BN"), z.get("BM")),
            "R": (z.get("BM"),), "C": (z.get("BN"),), "R1": (z.get("BM"), 1), "C1": (1, z.get("BN")),
            "A": (z.get("BM"), z.get("BK")), "K": (z.get("BK"), z.get("BN"))}[tag]


class _ShapeSrc(dict):
    def __missing__(self, tag):
        return _ext.shape_src(tag)


SHAPE_SRC = _ShapeSrc({"B": "(BLOCK,)", "T": "(BM, BN)", "TT": "(BN, BM)", "R": "(BM,)", "C": "(BN,)",
             "R1": "(BM, 1)", "C1": "(1, BN)", "A": "(BM, BK)", "K": "(BK, BN)"})


def bcast_tag(a, b):
    """Result tag of an elementwise op on tags a and b, or None when they do not broadcast."""
    if a == b:
        return a
    if a == "S":
        return b
    if b == "S":
        return a
    pair = {a, b}
    if pair in ({"R1", "C1"}, {"R1", "T"}, {"C1", "T"}, {"C", "T"}, {"C", "C1"}):
        return "T" if pair != {"C", "C1"} else "C1"
    return None


def expand_to(v, src_shape, dst_shape):
    """numpy value (P, *src_shape) -> broadcast to (P, *dst_shape) (right-aligned as Triton)."""
    P = v.shape[0]
    pad = len(dst_shape) - len(src_shape)
    v = v.reshape((P,) + (1,) * pad + tuple(src_shape))
    return np.broadcast_to(v, (P,) + tuple(dst_shape))


# ---------------------------------------------------------------------------------------- nodes

def _dot_kwargs(dtype: str, a=None) -> str:
    """fp32 dots in IEEE precision (exact to compare); integer dots name their int32 accumulator, as
    Triton 3.6 requires when one is passed. A dot node's `prec`/`out` attributes (drawn by
    tools/fuzz_ext.py) choose other spellings."""
    if a and (a.get("prec") or a.get("out")):
        return _ext.dot_kwargs(dtype, a)
    if dtype == "f32":
        return ", input_precision=\"ieee\""
    return ", out_dtype=tl.int32" if dtype.startswith(("i", "u")) else ""


@dataclass

class Node:
    kind: str                 # see the evaluator and the renderer
    dtype: str
    tag: str
    kids: list = field(default_factory=list)
    a: dict = field(default_factory=dict)  # attributes of the node


@dataclass
class Stmt:
    kind: str                 # "store" or "atomic"
    value: Node
    a: dict = field(default_factory=dict)


@dataclass
class Kernel:
    mode: str                 # "1d" or "2d"
    sizes: dict               # BLOCK / BM, BN, BK constexprs and n / M, N, K runtime sizes, R, ...
    stmts: list
    seed: int                 # the seed of the input data
    index: int = 0
    features: set = field(default_factory=set)
    early_return: bool = False  # 1-D: `if pid * BLOCK >= n: return` first (never taken: the grid covers n)
    ext_args: set = field(default_factory=set)  # arguments of the statements tools/fuzz_ext.py appended

    def clone(self):
        return copy.deepcopy(self)


def walk(node):
    yield node
    for k in node.kids:
        yield from walk(k)


def kernel_nodes(k):
    for s in k.stmts:
        yield from walk(s.value)
        if "cmp" in s.a:
            yield from walk(s.a["cmp"])


# ---------------------------------------------------------------------------------------- grid
def grid_of(k):
    if k.mode in _paths.MODES:
        return _paths.grid(k)
    z = k.sizes
    if k.mode == "1d":
        return (max(1, -(-z["n"] // z["BLOCK"])),)
    gm = 1 if z.get("one_m") else max(1, -(-z["M"] // z["BM"]))
    gn = 1 if z.get("one_n") else max(1, -(-z["N"] // z["BN"]))
    return (gm, gn)


def update_grid_flags(k):
    """2-D kernels that store row (column) vectors run one program along columns (rows)."""
    if k.mode != "2d":
        return
    tags = {s.a.get("pattern") for s in k.stmts}
    k.sizes["one_n"] = bool(tags & {"rowvec", "rowvec1"})
    k.sizes["one_m"] = bool(tags & {"colvec", "colvec1"})


# ---------------------------------------------------------------------------------------- loads
# Each load pattern: tags it yields, whether it may take a mask, and how inputs are laid out.
LOAD_PATTERNS = {
    "1d": {"B": ["contig", "strided", "rev", "shift", "mod", "wrap"], "S": ["scalar", "pid"]},
    "2d": {"T": ["rowmajor", "colmajor", "transload"], "TT": ["ttile"], "R": ["rowvec"], "C": ["colvec"],
           "R1": ["rowvec1"], "C1": ["colvec1"], "S": ["scalar", "pid"], "A": ["atile"], "K": ["btile"]},
}
PATTERN_WEIGHTS = {"contig": 5, "strided": 2, "rev": 1.5, "shift": 1.5, "mod": 1, "wrap": 0.7,
                   "rowmajor": 5, "colmajor": 1.5, "transload": 1}
LOOP_PATTERNS = {"1d": {"B": ["loopcontig"]}, "2d": {"T": ["looptile"], "A": ["loopatile"], "K": ["loopbtile"]}}


# ---------------------------------------------------------------------------------------- model
class EvalError(Exception):
    """The generated program is not valid for the model (out-of-range values, overflow...)."""


@dataclass
class Val:
    v: np.ndarray          # (P, *shape)
    d: np.ndarray          # defined mask, same shape
    exact: bool
    mag: float             # largest finite magnitude met in the tree
    prec: str | None       # lowest float precision met ('bf16' < 'f16' < 'f32'), None if none
    red: int = 1           # largest reduction length met (scales the tolerance)


PREC_ORDER = {"bf16": 0, "f16": 1, "f32": 2}


def lower_prec(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a if PREC_ORDER[a] <= PREC_ORDER[b] else b


def _tdiv(a, b):
    """C division (toward zero) of int64 arrays, b != 0."""
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def cast_np(v, src, dst):
    """numpy cast with Triton's semantics (int->bool is != 0; float->int truncates)."""
    if src == dst:
        return v
    if dst == "i1":
        return v != 0
    if is_float(src) and is_int(dst):
        return np.trunc(v.astype(np.float64)).astype(np.int64).astype(NP[dst])
    if src == "i1":
        return v.astype(np.int8).astype(NP[dst])
    if is_int(src) and is_float(dst):
        return v.astype(np.float64).astype(np.float32).astype(NP[dst]) if dst == "bf16" else \
            v.astype(np.float64).astype(NP[dst])
    if is_float(src) and is_float(dst):
        if {src, dst} == {"f16", "bf16"}:
            return v.astype(np.float32).astype(NP[dst])
        return v.astype(NP[dst])
    return v.astype(NP[dst])


class Model:
    """Evaluates a Kernel with numpy, one array per value with a leading program axis."""

    def __init__(self, k: Kernel, inputs: dict):
        self.k = k
        self.inputs = inputs
        if k.mode in _paths.MODES:  # tools/fuzz_paths.py models its own templates
            return
        z = k.sizes
        grid = grid_of(k)
        self.grid = grid
        if k.mode == "1d":
            P = grid[0]
            self.P = P
            self.pid = np.arange(P)
            self.offs = self.pid[:, None] * z["BLOCK"] + np.arange(z["BLOCK"])[None, :]
        else:
            gm, gn = grid
            P = gm * gn
            self.P = P
            p = np.arange(P)
            self.pm, self.pn = p // gn, p % gn
            self.pid = p  # linear: pid_m * num_programs(1) + pid_n
            self.rows = self.pm[:, None] * z["BM"] + np.arange(z["BM"])[None, :]
            self.cols = self.pn[:, None] * z["BN"] + np.arange(z["BN"])[None, :]
            if "BK" in z:
                self.ks = np.arange(z["BK"])
        self.mags = {}

    # -- loads
    def layout(self, node, env):
        """(index array (P,*shape), mask or None) of a load node; sizes of its input in node.a."""
        z, pat = self.k.sizes, node.a["pattern"]
        if node.a.get("win") or pat in _ext.LOAD_PATTERNS:
            return _ext.layout(self, node, env)
        if self.k.mode == "1d":
            n, offs = z["n"], self.offs
            m = offs < n
            if pat == "contig":
                return offs, m
            if pat == "strided":
                return offs * z[node.a["stride"]], m
            if pat == "rev":
                return n - 1 - offs, m
            if pat == "shift":
                return offs + node.a["shift"], offs + node.a["shift"] < n
            if pat == "mod":
                return offs % node.a["mod"], m
            if pat == "wrap":
                return offs % n, None
            if pat == "scalar":
                return np.zeros(self.P, np.int64), None
            if pat == "pid":
                return self.pid.copy(), None
            if pat == "loopcontig":
                return env[node.a["loop"]] * n + offs, m
        else:
            M, N = z["M"], z["N"]
            r, c = self.rows, self.cols
            rm, cm = r < M, c < N
            if pat in ("rowmajor", "looptile"):
                base = env[node.a["loop"]] * M * z[node.a["stride"]] if pat == "looptile" else 0
                return base + r[:, :, None] * z[node.a["stride"]] + c[:, None, :], rm[:, :, None] & cm[:, None, :]
            if pat == "colmajor":
                return r[:, :, None] + c[:, None, :] * M, rm[:, :, None] & cm[:, None, :]
            if pat in ("ttile", "transload"):
                return c[:, :, None] * M + r[:, None, :], cm[:, :, None] & rm[:, None, :]
            if pat == "rowvec":
                return r, rm
            if pat == "colvec":
                return c, cm
            if pat == "rowvec1":
                return r[:, :, None], rm[:, :, None]
            if pat == "colvec1":
                return c[:, None, :], cm[:, None, :]
            if pat == "scalar":
                return np.zeros(self.P, np.int64), None
            if pat == "pid":
                return self.pid.copy(), None
            K, ks = z["K"], self.ks
            kk = ks + (env[node.a["loop"]] * z["BK"] if pat.startswith("loop") else 0)
            if pat in ("atile", "loopatile"):
                return r[:, :, None] * K + kk[None, None, :], rm[:, :, None] & (kk < K)[None, None, :]
            if pat in ("btile", "loopbtile"):
                return kk[None, :, None] * N + c[:, None, :], (kk < K)[None, :, None] & cm[:, None, :]
        raise KeyError(pat)

    def load(self, node, env):
        arr = self.inputs[node.a["arg"]].reshape(-1)
        idx, m = self.layout(node, env)
        idx = np.asarray(idx, np.int64)
        if m is None or not node.a.get("masked", True):
            m = np.ones(idx.shape, bool)
        m = np.broadcast_to(m, idx.shape)
        if np.any(m & ((idx < 0) | (idx >= arr.size))):
            raise EvalError(f"load {node.a['arg']} out of bounds")
        safe = np.where(m, idx, 0)
        v = arr[safe]
        other = node.a.get("other")
        if other is None and node.a.get("padding") != "nan":
            other = 0  # masked-off lanes of a load without `other` read 0, as in Triton
        if node.a.get("masked", True) and other is not None:
            v = np.where(m, v, np.array(other).astype(NP[node.dtype]))
            d = np.ones(v.shape, bool)
        else:
            d = m.copy() if node.a.get("masked", True) else np.ones(v.shape, bool)
        if node.a["pattern"] == "transload":
            v, d = np.swapaxes(v, 1, 2), np.swapaxes(d, 1, 2)
        return v.astype(NP[node.dtype]), d

    # -- evaluation
    def ev(self, node, env):
        out = self._ev(node, env)
        v = out.v
        if v.dtype != NP[node.dtype]:
            raise AssertionError(f"model: a {node.kind} node of dtype {node.dtype} holds {v.dtype} values")
        if is_float(node.dtype):
            vv = v.astype(np.float64)[out.d] if out.d.any() else np.zeros(0)
            if vv.size and not np.all(np.isfinite(vv)):
                raise EvalError(f"non-finite value at a {node.kind} node")
            lim = {"f16": 2000.0, "bf16": 2000.0, "f32": 1e7}[node.dtype]
            mag = float(np.max(np.abs(vv))) if vv.size else 0.0
            if mag > lim:
                raise EvalError(f"|value| {mag:g} too large at a {node.kind} node")
            out.mag = max(out.mag, mag)
            out.prec = lower_prec(out.prec, node.dtype)
        return out

    def _ev(self, node, env):
        kd, d, a = node.kind, node.dtype, node.a
        shape = shape_of(node.tag, self.k)
        P = self.P
        if kd == "load":
            v, dm = self.load(node, env)
            return Val(v, dm, True, 0.0, None)
        if kd == "full":
            v = np.full((P,) + shape, a["value"]).astype(NP[d])
            return Val(v, np.ones(v.shape, bool), True, 0.0, None)
        if kd == "index":
            src = {"offs": getattr(self, "offs", None), "rows": getattr(self, "rows", None),
                   "cols": getattr(self, "cols", None)}.get(a["which"])
            if a["which"] == "pid":
                v = self.pid.astype(np.int32)
            elif a["which"] == "loopvar":
                v = np.full(P, env[a["loop"]], np.int32)
            elif a["which"] == "arange":
                v = np.broadcast_to(np.arange(shape[0], dtype=np.int32), (P,) + shape).copy()
            else:
                v = src.astype(np.int32)
            return Val(v, np.ones(v.shape, bool), True, 0.0, None)
        if kd == "lazyload":
            return self.lazyload(node)
        if kd == "countdown":
            return self.countdown(node)
        if kd == "ptrloop":
            return self.ptrloop(node)
        if kd == "ubsplit":
            return ub_model(self, node)
        kids = [self.ev(c, env) for c in node.kids] if kd not in ("if", "loop") else None
        if kids is not None:
            exact = all(c.exact for c in kids)
            mag = max([c.mag for c in kids] + [0.0])
            prec = None
            for c in kids:
                prec = lower_prec(prec, c.prec)
            red = max([c.red for c in kids] + [1])

        def bc(c, child):
            src = shape_of(child.tag, self.k)
            return expand_to(c.v, src, shape), expand_to(c.d, src, shape)

        with np.errstate(all="ignore"):
            if kd in ("bin", "binlit"):
                op = a["op"]
                if kd == "bin":
                    (x, xd), (y, yd) = bc(kids[0], node.kids[0]), bc(kids[1], node.kids[1])
                    ct = a["ct"]
                    x, y = cast_np(x, node.kids[0].dtype, ct), cast_np(y, node.kids[1].dtype, ct)
                    dd = xd & yd
                else:
                    x, xd = bc(kids[0], node.kids[0])
                    ct = a["ct"]
                    x = cast_np(x, node.kids[0].dtype, ct)
                    y = np.array(a["lit"]).astype(NP[ct])
                    dd = xd
                v = self.binop(op, x, y, ct)
                if op in ("fdiv",) or (is_float(ct) and op in ("+", "-", "*")):
                    exact = False
                return Val(v.astype(NP[d]), dd, exact, mag, prec, red)
            if kd == "cmp":
                (x, xd), (y, yd) = bc(kids[0], node.kids[0]), bc(kids[1], node.kids[1])
                x, y = self._cmpable(x, node.kids[0].dtype), self._cmpable(y, node.kids[1].dtype)
                v = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
                     "==": np.equal, "!=": np.not_equal}[a["op"]](x, y)
                return Val(v, xd & yd, exact, mag, prec, red)
            if kd == "cmplit":
                x, xd = bc(kids[0], node.kids[0])
                x = self._cmpable(x, node.kids[0].dtype)
                v = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
                     "==": np.equal, "!=": np.not_equal}[a["op"]](x, a["lit"])
                return Val(v, xd, exact, mag, prec, red)
            if kd == "logic":
                (x, xd), (y, yd) = bc(kids[0], node.kids[0]), bc(kids[1], node.kids[1])
                v = {"&": np.logical_and, "|": np.logical_or, "^": np.logical_xor}[a["op"]](x, y)
                return Val(v, xd & yd, exact, mag, prec, red)
            if kd == "wherelit":
                (c, cd), (x, xd) = bc(kids[0], node.kids[0]), bc(kids[1], node.kids[1])
                x = cast_np(x, node.kids[1].dtype, d)
                lit = np.array(a["lit"]).astype(NP[d])
                v = np.where(c, x, lit) if a.get("lit_first") is None else np.where(c, lit, x)
                return Val(v.astype(NP[d]), cd & xd, exact, mag, prec, red)
            if kd == "clamp":
                x, xd = bc(kids[0], node.kids[0])
                x = cast_np(x, node.kids[0].dtype, d)
                v = np.minimum(np.maximum(x, np.array(a["lo"]).astype(NP[d])), np.array(a["hi"]).astype(NP[d]))
                return Val(v.astype(NP[d]), xd, exact, mag, prec, red)
            if kd == "where":
                (c, cd), (x, xd), (y, yd) = (bc(kids[i], node.kids[i]) for i in range(3))
                x, y = cast_np(x, node.kids[1].dtype, d), cast_np(y, node.kids[2].dtype, d)
                v = np.where(c, x, y)
                return Val(v.astype(NP[d]), cd & np.where(c, xd, yd), exact, mag, prec, red)
            if kd == "cast":
                x, xd = bc(kids[0], node.kids[0])
                src = node.kids[0].dtype
                if is_float(src) and is_int(d):
                    lo, hi = -(2 ** (BITS[d] - 1)), 2 ** (BITS[d] - 1) - 1
                    xx = x.astype(np.float64)[xd]
                    if xx.size and (xx.min() <= lo - 1 or xx.max() >= hi + 1):
                        raise EvalError("float to int cast out of range")
                v = cast_np(x, src, d)
                if a.get("bitcast"):
                    v = np.ascontiguousarray(x).view(NP[d])
                return Val(np.asarray(v).astype(NP[d]), xd, exact, mag, prec, red)
            if kd == "unary":
                x, xd = bc(kids[0], node.kids[0])
                op = a["op"]
                if op == "neg":
                    v = -x if is_float(d) else (np.zeros_like(x) - x)
                elif op == "abs":
                    v = np.abs(x)
                elif op == "invert":
                    v = ~x
                return Val(np.asarray(v).astype(NP[d]), xd, exact, mag, prec, red)
            if kd == "minmax":
                (x, xd), (y, yd) = bc(kids[0], node.kids[0]), bc(kids[1], node.kids[1])
                x, y = cast_np(x, node.kids[0].dtype, d), cast_np(y, node.kids[1].dtype, d)
                v = np.maximum(x, y) if a["op"] == "max" else np.minimum(x, y)
                return Val(v.astype(NP[d]), xd & yd, exact, mag, prec, red)
            if kd == "math":
                x, xd = bc(kids[0], node.kids[0])
                x = cast_np(x, node.kids[0].dtype, d).astype(np.float64)
                v = self.mathfn(a["fn"], x)
                if a["fn"] not in ("floor", "ceil"):
                    exact = False
                return Val(v.astype(NP[d]), xd, exact, mag, prec, red)
            if kd == "fma":
                (x, xd), (y, yd), (z, zd) = (bc(kids[i], node.kids[i]) for i in range(3))
                v = x.astype(np.float64) * y.astype(np.float64) + z.astype(np.float64)
                return Val(v.astype(NP[d]), xd & yd & zd, False, mag, prec, red)
            if kd == "reduce":
                return self.reduce(node, kids[0], mag, prec, red)
            if kd == "scan":
                return self.scan(node, kids[0], mag, prec, red)
            if kd == "expand":
                x, xd = kids[0].v, kids[0].d
                if node.kids[0].tag == "R":  # (BM,) -> (BM, 1)
                    x, xd = x[..., None], xd[..., None]
                    return Val(x.copy(), xd.copy(), exact, mag, prec, red)
                return Val(expand_to(x, shape_of(node.kids[0].tag, self.k), shape).copy(),
                           expand_to(xd, shape_of(node.kids[0].tag, self.k), shape).copy(), exact, mag, prec, red)
            if kd == "trans":
                return Val(np.swapaxes(kids[0].v, 1, 2).copy(), np.swapaxes(kids[0].d, 1, 2).copy(),
                           exact, mag, prec, red)
            if kd == "dot" and (a.get("prec") or a.get("out") or len(shape) != 2):
                return _ext.eval_dot(self, node, kids, exact, mag, prec, red)
            if kd == "dot":
                x, y = kids[0], kids[1]
                acc = "i32" if is_int(node.kids[0].dtype) else "f32"
                if acc == "i32":
                    v = np.einsum("pik,pkj->pij", x.v.astype(np.int64), y.v.astype(np.int64))
                    v = v.astype(np.int32)
                else:
                    v = np.einsum("pik,pkj->pij", x.v.astype(np.float64), y.v.astype(np.float64)).astype(np.float32)
                    exact = False
                dd = np.einsum("pik,pkj->pij", (~x.d).astype(np.int64), np.ones(y.d.shape, np.int64)) == 0
                dd &= (np.einsum("pik,pkj->pij", np.ones(x.d.shape, np.int64), (~y.d).astype(np.int64)) == 0)
                if len(kids) > 2:
                    v = (v + kids[2].v).astype(NP[d])
                    dd &= kids[2].d
                return Val(v.astype(NP[d]), dd, exact, mag, prec, max(red, shape_of("A", self.k)[1]))
            if kd == "if":
                return self.ifnode(node, env)
            if kd == "loop":
                return self.loop(node, env)
            if kd in _ext.EVAL:
                return _ext.EVAL[kd](self, node, kids, exact, mag, prec, red)
        raise KeyError(kd)

    @staticmethod
    def _cmpable(x, dt):
        if dt == "i1":
            return x.astype(np.int64)
        return x.astype(np.float64) if is_float(dt) else x.astype(np.int64)

    @staticmethod
    def binop(op, x, y, ct):
        if op in ("+", "-", "*"):
            fn = {"+": np.add, "-": np.subtract, "*": np.multiply}[op]
            if ct == "bf16":  # computed in fp32 and rounded, as one bf16 operation
                return fn(x.astype(np.float32), y.astype(np.float32)).astype(BF16)
            return fn(x, y)
        if op in ("&", "|", "^"):
            return {"&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor}[op](x, y)
        if op in ("idiv", "imod"):
            x64, y64 = x.astype(np.int64), (y.astype(np.int64) & 7) + 1
            if np.max(np.abs(x64), initial=0) + 8 >= 2 ** 22:
                raise EvalError("integer division beyond ascend's documented exact range")
            q = _tdiv(x64, y64)
            return (q if op == "idiv" else x64 - q * y64).astype(NP[ct])
        if op == "cdiv":  # tl.cdiv(x, lit) = (x + lit - 1) // lit, computed in the block's type
            t = (x + np.array(y - 1).astype(x.dtype)).astype(NP[ct])
            return Model.binop("//", t, y, ct)
        if op in ("//", "%"):  # by a positive literal
            x64, y64 = x.astype(np.int64), y.astype(np.int64)
            if np.max(np.abs(x64), initial=0) + abs(int(y)) >= 2 ** 22:
                raise EvalError("integer division beyond ascend's documented exact range")
            q = _tdiv(x64, y64)
            return (q if op == "//" else x64 - q * y64).astype(NP[ct])
        if op in ("shl", "shr"):
            s = (y.astype(np.int64) & (BITS[ct] - 1)).astype(NP[ct])
            return np.left_shift(x, s) if op == "shl" else np.right_shift(x, s)
        if op in ("<<", ">>"):
            return np.left_shift(x, y) if op == "<<" else np.right_shift(x, y)
        if op == "fdiv":
            return (x.astype(np.float64) / (np.abs(y.astype(np.float64)) + 1.0)).astype(NP[ct])
        raise KeyError(op)

    @staticmethod
    def mathfn(fn, x):
        if fn == "exp":
            return np.exp(np.minimum(x, 3.0))
        if fn == "exp2":
            return np.exp2(np.minimum(x, 3.0))
        if fn == "log":
            return np.log(np.abs(x) + 1.0)
        if fn == "log2":
            return np.log2(np.abs(x) + 1.0)
        if fn == "sqrt":
            return np.sqrt(np.abs(x))
        if fn == "rsqrt":
            return 1.0 / np.sqrt(np.abs(x) + 1.0)
        if fn == "sin":
            return np.sin(x)
        if fn == "cos":
            return np.cos(x)
        if fn == "erf":
            return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x
        if fn == "sigmoid":
            return 1.0 / (1.0 + np.exp(-x))
        if fn == "floor":
            return np.floor(x)
        if fn == "ceil":
            return np.ceil(x)
        if fn in LIBDEVICE:
            return LIBDEVICE[fn][1](x)
        raise KeyError(fn)

    def reduce(self, node, x, mag, prec, red):
        a, d = node.a, node.dtype
        src = node.kids[0].dtype
        kind = a["op"]
        v, dd = x.v, x.d
        ax = a["axis"]
        if ax is None:
            v = v.reshape(v.shape[0], -1)
            dd = dd.reshape(dd.shape[0], -1)
            ax = 0
        nax = ax + 1
        length = v.shape[nax]
        exact = x.exact
        with np.errstate(all="ignore"):
            if kind in ("sum", "generic_add"):
                w = cast_np(v, src, d)
                if is_float(d):
                    r = self._fold(w, nax, d) if kind == "generic_add" else \
                        np.sum(w.astype(np.float64), axis=nax).astype(NP[d])
                    exact = False
                else:
                    r = np.sum(w.astype(np.int64), axis=nax).astype(NP[d])
            elif kind in ("max", "min", "generic_max"):
                w = cast_np(v, src, d)
                r = np.max(w, axis=nax) if kind != "min" else np.min(w, axis=nax)
            elif kind in ("argmax", "argmin"):
                w = self._cmpable(v, src)
                r = (np.argmax(w, axis=nax) if kind == "argmax" else np.argmin(w, axis=nax)).astype(np.int32)
            elif kind == "xor_sum":
                r = np.bitwise_xor.reduce(v, axis=nax)
            else:
                raise KeyError(kind)
        rd = np.all(dd, axis=nax)
        if a.get("keep_dims"):
            r, rd = np.expand_dims(r, nax), np.expand_dims(rd, nax)
        return Val(np.asarray(r).astype(NP[d]), rd, exact, mag, prec, max(red, length))

    @staticmethod
    def _fold(w, nax, d):
        acc = np.take(w, 0, axis=nax)
        for i in range(1, w.shape[nax]):
            acc = (acc.astype(np.float64) + np.take(w, i, axis=nax).astype(np.float64)).astype(NP[d])
        return acc

    def scan(self, node, x, mag, prec, red):
        a, d = node.a, node.dtype
        src = node.kids[0].dtype
        nax = a["axis"] + 1
        v = cast_np(x.v, src, d)
        rev = a.get("reverse", False)
        if rev:
            v = np.flip(v, nax)
        exact = x.exact
        with np.errstate(all="ignore"):
            if a["op"] in ("cumsum", "generic_add"):
                if is_float(d):
                    r = np.cumsum(v.astype(np.float64), axis=nax).astype(NP[d])
                    exact = False
                else:
                    r = np.cumsum(v.astype(np.int64), axis=nax).astype(NP[d])
            elif a["op"] == "cumprod":
                if is_float(d):
                    r = np.cumprod(v.astype(np.float64), axis=nax).astype(NP[d])
                    exact = False
                else:
                    r = np.cumprod(v.astype(np.int64), axis=nax).astype(NP[d])  # wraps like the dtype
                    r = r.astype(NP[d])
            elif a["op"] == "generic_max":
                r = np.maximum.accumulate(v, axis=nax)
            else:
                raise KeyError(a["op"])
        dd = np.logical_and.accumulate(np.flip(x.d, nax) if rev else x.d, axis=nax)
        if rev:
            r, dd = np.flip(r, nax), np.flip(dd, nax)
        return Val(np.ascontiguousarray(r).astype(NP[d]), np.ascontiguousarray(dd), exact, mag, prec,
                   max(red, v.shape[nax]))

    def ifnode(self, node, env):
        c = self.ev(node.kids[0], env)
        t = self.ev(node.kids[1], env)
        e = self.ev(node.kids[2], env)
        shape = shape_of(node.tag, self.k)
        cv = c.v.reshape((self.P,) + (1,) * len(shape))
        cd = c.d.reshape((self.P,) + (1,) * len(shape))
        v = np.where(cv, t.v, e.v)
        dd = np.where(cv, t.d, e.d) & cd
        return Val(v.astype(NP[node.dtype]), dd, c.exact and t.exact and e.exact, max(c.mag, t.mag, e.mag),
                   lower_prec(c.prec, lower_prec(t.prec, e.prec)), max(c.red, t.red, e.red))

    def lazyload(self, node):
        """`a if c else b` on the program id, whose sides load: only the side taken reads its input."""
        a, P, pid = node.a, self.P, self.pid
        arr = self.inputs[a["arg"]].reshape(-1)
        if a["form"] == "first":  # LIT if pid == 0 else x[pid - 1]
            v = np.where(pid == 0, a["lit"], arr[np.maximum(pid - 1, 0)])
        elif a["form"] == "last":  # x[pid + 1] if pid + 1 < P else LIT
            v = np.where(pid + 1 < P, arr[np.minimum(pid + 1, P - 1)], a["lit"])
        else:  # x[pid - 1] if pid > 0 else y[pid]
            v = np.where(pid > 0, arr[np.maximum(pid - 1, 0)], self.inputs[a["arg2"]].reshape(-1)[pid])
        v = np.asarray(v).astype(NP[node.dtype])
        return Val(v, np.ones(v.shape, bool), True, 0.0, None)

    def countdown(self, node):
        """`acc = acc * 3 + x[i]` over chunks i = R-1, R-1+STEP, ... down to 0 (a negative-step range):
        Horner's rule, so an order other than counting down gives other values."""
        a, z = node.a, self.k.sizes
        arr = self.inputs[a["arg"]].reshape(-1).astype(np.float64)
        n, mask = z["n"], self.offs < z["n"]
        acc = np.zeros(self.offs.shape, np.float64)
        for i in range(a["trips"] - 1, -1, a["step"]):
            acc = acc * 3 + np.where(mask, arr[np.minimum(i * n + self.offs, arr.size - 1)], 0)
        v = acc.astype(NP[node.dtype])
        exact = not is_float(node.dtype)  # float inputs: each step rounds (and may fuse into an fma)
        return Val(v, np.ones(v.shape, bool), exact, float(np.abs(acc).max(initial=1)),
                   None if exact else node.dtype, a["trips"])

    def ptrloop(self, node):
        """`acc = acc * 3 + x[p]` over `trips` chunks, the pointers (a block at the tile's offsets and/or a
        scalar at the program id) advanced by one chunk (n, or M * N) every iteration."""
        a, z = node.a, self.k.sizes
        arr = self.inputs[a["arg"]].reshape(-1).astype(np.float64)
        if self.k.mode == "1d":
            chunk, offs, mask, pid = z["n"], self.offs, self.offs < z["n"], self.pid[:, None]
        else:
            chunk = z["M"] * z["N"]
            offs = self.rows[:, :, None] * z["N"] + self.cols[:, None, :]
            mask = (self.rows < z["M"])[:, :, None] & (self.cols < z["N"])[:, None, :]
            pid = self.pid[:, None, None]
        acc = np.zeros(offs.shape, np.float64)
        for i in range(a["trips"]):
            term = np.zeros(offs.shape, np.float64)
            if "block" in a["form"]:
                term = term + np.where(mask, arr[np.minimum(i * chunk + offs, arr.size - 1)], 0)
            if "scalar" in a["form"]:
                term = term + arr[i * chunk + pid]
            acc = acc * 3 + term
        v = acc.astype(NP[node.dtype])
        exact = not is_float(node.dtype)
        return Val(v, np.ones(v.shape, bool), exact, float(np.abs(acc).max(initial=1)),
                   None if exact else node.dtype, a["trips"])

    def trips(self, node):
        z = self.k.sizes
        if node.a["combine"] == "dot":
            return -(-z["K"] // z["BK"])
        return z[node.a["count"]]

    def loop(self, node, env):
        d, shape = node.dtype, shape_of(node.tag, self.k)
        comb = node.a["combine"]
        if comb == "max":
            init = node.a["init"]
            acc = np.full((self.P,) + shape, init).astype(NP[d])
        else:
            acc = np.zeros((self.P,) + shape, NP[d])
        dd = np.ones(acc.shape, bool)
        exact, mag, prec, red = True, 0.0, None, 1
        for kv in range(self.trips(node)):
            env2 = dict(env)
            env2[node.a["var"]] = kv
            if comb == "dot":
                dn = Node("dot", d, node.tag, node.kids[:2], {"prec": node.a.get("prec")})
                b = self.ev(dn, env2)
                with np.errstate(all="ignore"):
                    acc = (acc.astype(np.float64 if is_float(d) else np.int64) + b.v).astype(NP[d])
            else:
                b = self.ev(node.kids[0], env2)
                bv = expand_to(b.v, shape_of(node.kids[0].tag, self.k), shape)
                bd = expand_to(b.d, shape_of(node.kids[0].tag, self.k), shape)
                with np.errstate(all="ignore"):
                    if comb == "add":
                        acc = self.binop("+", acc, bv.astype(NP[d]), d).astype(NP[d])
                        if is_float(d):
                            exact = False
                    else:
                        acc = np.maximum(acc, bv.astype(NP[d]))
                b.d = bd
            dd &= b.d if b.d.shape == dd.shape else np.broadcast_to(b.d, dd.shape)
            exact &= b.exact
            mag, prec, red = max(mag, b.mag), lower_prec(prec, b.prec), max(red, b.red)
            if is_float(d):
                vv = acc.astype(np.float64)[dd]
                if vv.size and (not np.all(np.isfinite(vv)) or np.max(np.abs(vv)) > (2000.0 if d != "f32" else 1e7)):
                    raise EvalError("loop accumulator overflows")
        return Val(acc, dd, exact, mag, prec, max(red, self.trips(node)))

    # -- statements
    def store_layout(self, st):
        """(flat indices (P,*shape), mask (P,*shape)) of a store statement."""
        z, pat = self.k.sizes, st.a["pattern"]
        if pat == "ubsplit":
            return ub_index(self, self.k)
        if pat in _ext.STORE_PATTERNS:
            return _ext.store_layout(self, st)
        fake = Node("load", st.a["out_dtype"], st.a["tag"], a={"pattern": pat, "stride": st.a.get("stride"),
                                                                "shift": 0, "mod": 1, "win": st.a.get("win", 0)})
        if self.k.mode == "1d" and pat == "strided":
            return self.offs * z[st.a["stride"]], self.offs < z["n"]
        if pat in ("scalar", "pid"):
            return self.pid.copy(), None
        return self.layout(fake, {})

    def run(self):
        """Outputs after the kernel: {arg: (array, defined, written, exact, Val)}."""
        if self.k.mode in _paths.MODES:
            return _paths.model(self)
        _ext.check_kernel(self.k)
        outs = {}
        for st in self.k.stmts:
            val = self.ev(st.value, {})
            arr = self.inputs[st.a["out"]].copy().reshape(-1)
            defined = np.ones(arr.shape, bool)
            written = np.zeros(arr.shape, bool)
            shape = shape_of(st.a["tag"], self.k)
            v = expand_to(val.v, shape_of(st.value.tag, self.k), shape)
            vd = expand_to(val.d, shape_of(st.value.tag, self.k), shape)
            od = st.a["out_dtype"]
            if st.kind == "store":
                idx, m = self.store_layout(st)
                idx = np.asarray(idx, np.int64)
                m = np.ones(idx.shape, bool) if m is None else np.broadcast_to(m, idx.shape)
                if st.a.get("guard") and self.k.sizes.get("ER"):  # programs >= limit returned before it
                    alive = (self.pid < st.a["guard"]["limit"]).reshape((-1,) + (1,) * (idx.ndim - 1))
                    m = m & alive
                v = cast_np(v, st.value.dtype, od)
                if st.value.dtype != od and is_float(st.value.dtype) and is_int(od):
                    raise EvalError("implicit float->int store cast")
                sel = m
                if np.any(sel & ((idx < 0) | (idx >= arr.size))):
                    raise EvalError("store out of bounds")
                fi, fv, fd = idx[sel], v[sel], vd[sel]
                if fi.size and np.bincount(fi, minlength=arr.size).max() > 1:  # (np.unique: minutes at 25M)
                    raise EvalError("store writes one element twice")
                arr[fi] = fv
                defined[fi] = fd
                written[fi] = True
                outs[st.a["out"]] = (arr.reshape(self.inputs[st.a["out"]].shape), defined, written, val.exact, val)
            else:
                outs.update(self.atomic(st, val, v, vd, arr, defined, written))
        return outs

    def atomic(self, st, val, v, vd, arr, defined, written):
        z, op = self.k.sizes, st.a["op"]
        offs = self.offs
        m = (offs < z["n"]) if op != "cas" else np.ones(offs.shape, bool)
        if st.a["pattern"] == "mod":
            idx = offs % st.a["mod"]
        else:
            idx = offs.copy()
        if st.a.get("use_mask") is False:
            m = np.ones(m.shape, bool) if st.a["pattern"] == "mod" else m
        d = st.a["out_dtype"]
        v = cast_np(v, st.value.dtype, d)
        exact = val.exact and not (is_float(d) and op == "add" and st.a["pattern"] == "mod")
        if not exact:  # lanes add up in an order that differs between targets
            val = Val(val.v, val.d, False, val.mag, val.prec, max(val.red, int(z["n"])))
        olds = np.zeros(v.shape, NP[d])
        cmpv = cmpd = None
        if op == "cas":
            cval = self.ev(st.a["cmp"], {})
            cmpv = cast_np(expand_to(cval.v, shape_of(st.a["cmp"].tag, self.k), v.shape[1:]), st.a["cmp"].dtype, d)
            cmpd = expand_to(cval.d, shape_of(st.a["cmp"].tag, self.k), v.shape[1:])
        with np.errstate(all="ignore"):
            for p in range(self.P):  # program order, lane order (the sim's order)
                for j in range(v.shape[1]):
                    if not m[p, j]:
                        continue
                    i = idx[p, j]
                    if not vd[p, j]:
                        defined[i] = False
                    olds[p, j] = arr[i]
                    x = v[p, j]
                    if op == "add":
                        if is_float(d):
                            arr[i] = NP[d].type(np.float64(arr[i]) + np.float64(x))
                        else:
                            arr[i] = (np.array([arr[i]]) + np.array([x]))[0]
                    elif op == "max":
                        arr[i] = max(arr[i], x)
                    elif op == "min":
                        arr[i] = min(arr[i], x)
                    elif op == "and":
                        arr[i] = arr[i] & x
                    elif op == "or":
                        arr[i] = arr[i] | x
                    elif op == "xor":
                        arr[i] = arr[i] ^ x
                    elif op == "xchg":
                        arr[i] = x
                    elif op == "cas":
                        if not cmpd[p, j]:  # compared with a lane a masked load left undefined
                            defined[i] = False
                        if arr[i] == cmpv[p, j]:
                            arr[i] = x
                    written[i] = True
        res = {st.a["out"]: (arr.reshape(self.inputs[st.a["out"]].shape), defined, written, exact, val)}
        if st.a.get("old_out"):
            o = self.inputs[st.a["old_out"]].copy().reshape(-1)
            od = np.ones(o.shape, bool)
            ow = np.zeros(o.shape, bool)
            sel = offs < z["n"]
            o[offs[sel]] = olds[sel]
            ow[offs[sel]] = True
            res[st.a["old_out"]] = (o.reshape(self.inputs[st.a["old_out"]].shape), od, ow, exact, val)
        return res


# ---------------------------------------------------------------------------------------- inputs
def input_specs(k):
    """{arg name: (dtype, shape, value profile)} of every array argument."""
    if k.mode in _paths.MODES:
        return _paths.specs(k)
    specs = {}
    z = k.sizes
    for node in kernel_nodes(k):
        if node.kind == "lazyload":  # `x if c else tl.load(...)`: one (P,) input per side that loads
            for arg in (node.a["arg"], node.a.get("arg2")):
                if arg:
                    specs[arg] = (node.dtype, (int(np.prod(grid_of(k))),), node.a.get("profile", "small"))
        if node.kind == "countdown":  # `trips` chunks of n, read from the last to the first
            specs[node.a["arg"]] = (node.dtype, (node.a["trips"] * z["n"],), "small")
        if node.kind == "ubsplit":  # a block too large for one pass through the unified buffer
            specs.update(ub_inputs(node, k))
        if node.kind == "ptrloop":  # `trips` chunks of n (or M * N), one per iteration
            chunk = z["n"] if k.mode == "1d" else z["M"] * z["N"]
            specs[node.a["arg"]] = (node.dtype, (node.a["trips"] * chunk,), "small")
        if node.kind != "load":
            continue
        specs[node.a["arg"]] = (node.dtype, input_shape(node.a, k), node.a.get("profile", "small"))
    for st in k.stmts:
        specs[st.a["out"]] = (st.a["out_dtype"], output_shape(st, k), "fill")
        if st.a.get("old_out"):
            specs[st.a["old_out"]] = (st.a["out_dtype"], (z["n"],), "fill")
    return specs


def input_shape(a, k):
    z, pat = k.sizes, a["pattern"]
    P = int(np.prod(grid_of(k)))
    if pat in _ext.LOAD_PATTERNS:
        return _ext.input_shape(a, k)
    if k.mode == "1d":
        n = z["n"]
        return {"contig": (n,), "strided": (n * z.get(a.get("stride"), 1),), "rev": (n,), "shift": (n,),
                "mod": (a.get("mod", 1),), "wrap": (n,), "scalar": (1,), "pid": (P,),
                "loopcontig": (z.get(a.get("count"), 1) * n,)}[pat]
    M, N = z["M"], z["N"]
    if pat == "rowmajor":
        return (M, z[a["stride"]])
    if pat == "looptile":
        return (z[a["count"]], M, z[a["stride"]])
    if pat in ("colmajor", "ttile", "transload"):
        return (N, M)
    if pat in ("rowvec", "rowvec1"):
        return (M,)
    if pat in ("colvec", "colvec1"):
        return (N,)
    if pat == "scalar":
        return (1,)
    if pat == "pid":
        return (P,)
    if pat in ("atile", "loopatile"):
        return (M, z["K"])
    if pat in ("btile", "loopbtile"):
        return (z["K"], N)
    raise KeyError(pat)


def output_shape(st, k):
    z, pat = k.sizes, st.a["pattern"]
    P = int(np.prod(grid_of(k)))
    if pat == "ubsplit":
        return ub_out_shape(st, k)
    if pat in _ext.STORE_PATTERNS:
        return _ext.output_shape(st, k, P)
    if st.kind == "atomic":
        if st.a["op"] == "cas":
            return (P * z["BLOCK"],)
        return (st.a["mod"],) if st.a["pattern"] == "mod" else (z["n"],)
    if k.mode == "1d":
        return {"contig": (z["n"],), "rev": (z["n"],), "strided": (z["n"] * z.get(st.a.get("stride"), 1),),
                "pid": (P,)}[pat]
    return {"rowmajor": (z["M"], z.get(st.a.get("stride"), 0)), "colmajor": (z["N"], z["M"]),
            "rowvec": (z["M"],), "colvec": (z["N"],), "pid": (P,)}[pat]


def make_data(dtype, shape, profile, rng):
    size = int(np.prod(shape)) if shape else 1
    if dtype == "i1":
        v = rng.random(size) < 0.5
    elif is_int(dtype):
        lo, hi = {"small": (-9, 10), "wide": (-(2 ** (BITS[dtype] - 1)), 2 ** (BITS[dtype] - 1)),
                  "mid": (-1000, 1001), "fill": (-50, 51), "pos": (0, 10)}[profile]
        if dtype == "i8" and profile == "mid":
            lo, hi = -128, 128
        if dtype == "i64" and profile == "wide":
            lo, hi = -(2 ** 40), 2 ** 40
        v = rng.integers(lo, hi, size, dtype=np.int64)
    else:
        if profile == "ints":
            v = rng.integers(-6, 7, size).astype(np.float64)
        elif profile == "fill":
            v = rng.integers(-50, 51, size).astype(np.float64) * 0.25
        elif profile == "pos":
            v = rng.random(size) * 2 + 0.05
        else:
            v = rng.uniform(-2.0, 2.0, size)
    return np.asarray(v).astype(NP[dtype]).reshape(shape)


def make_inputs(k):
    """Fresh, deterministic input arrays (from k.seed) for every argument of kernel k; those of the
    statements tools/fuzz_ext.py appended come from a second stream, so the others stay the same."""
    rng, ext_rng = np.random.default_rng(k.seed), np.random.default_rng([k.seed, 1])
    out = {}
    for name, (dt, shape, prof) in sorted(input_specs(k).items(), key=lambda x: _argkey(x[0])):
        out[name] = make_data(dt, shape, prof, ext_rng if name in k.ext_args else rng)
    return out


def _argkey(name):
    head = name.rstrip("0123456789")
    return (head, int(name[len(head):] or 0))


# ---------------------------------------------------------------------------------------- render
class Renderer:
    def __init__(self, k):
        self.k = k
        self.lines = []
        self.n = 0
        self.helpers = set()
        self.libdevice = False  # the kernel calls libdevice: the source imports it
        self.lineno_of = {}   # id(node) -> line index in self.lines (0-based, in the body)

    def var(self):
        self.n += 1
        return f"v{self.n}"

    def emit(self, text, ind, node=None):
        self.lines.append("    " * ind + text)
        if node is not None:
            self.lineno_of[id(node)] = len(self.lines) - 1

    def lit(self, v, d):
        if d == "i1":
            return "True" if v else "False"
        if is_float(d):
            return repr(float(v))
        return str(int(v))

    def r(self, node, ind):  # noqa: C901 - one branch per node kind
        kd, d, a = node.kind, node.dtype, node.a
        v = self.var()
        if kd == "load":
            self.emit(f"{v} = {self.load_src(node, ind)}", ind, node)
            return v
        if kd == "full":
            if a.get("zeros"):
                self.emit(f"{v} = tl.zeros({SHAPE_SRC[node.tag]}, {TL[d]})", ind, node)
            else:
                self.emit(f"{v} = tl.full({SHAPE_SRC[node.tag]}, {self.lit(a['value'], d)}, {TL[d]})", ind, node)
            return v
        if kd == "index":
            if a["which"] == "arange":
                return "tl.arange(0, BLOCK)"
            return {"offs": "offs", "rows": "rows", "cols": "cols", "pid": "pid",
                    "loopvar": a.get("loop", "k")}[a["which"]]
        if kd == "lazyload":
            p, lit = a["arg"], self.lit(a.get("lit", 0), d)
            last = "tl.num_programs(0)" if self.k.mode == "1d" else "tl.num_programs(0) * tl.num_programs(1)"
            src = {"first": f"{lit} if pid == 0 else tl.load({p} + pid - 1)",
                   "last": f"tl.load({p} + pid + 1) if pid + 1 < {last} else {lit}",
                   "two": f"tl.load({p} + pid - 1) if pid > 0 else tl.load({a.get('arg2')} + pid)"}[a["form"]]
            self.emit(f"{v} = {src}", ind, node)
            return v
        if kd == "ptrloop":
            return self.ptrloop_src(node, v, ind)
        if kd == "ubsplit":
            return ub_src(self, node, v, ind)
        if kd == "countdown":
            i = f"i{v}"
            self.emit(f"{v} = tl.zeros((BLOCK,), dtype={TL[d]})", ind, node)
            self.emit(f"for {i} in range({a['trips'] - 1}, -1, {a['step']}):", ind)
            self.emit(f"{v} = {v} * 3 + tl.load({a['arg']} + {i} * n + offs, mask=mask, other=0)", ind + 1)
            return v
        if kd == "if":
            c = self.r(node.kids[0], ind)
            self.emit(f"if {c}:", ind, node)
            t = self.r(node.kids[1], ind + 1)
            self.emit(f"{v} = {t}", ind + 1)
            self.emit("else:", ind)
            e = self.r(node.kids[2], ind + 1)
            self.emit(f"{v} = {e}", ind + 1)
            return v
        if kd == "loop":
            comb, var = a["combine"], a["var"]
            shape = SHAPE_SRC[node.tag]
            if comb == "max":
                self.emit(f"{v} = tl.full({shape}, {self.lit(a['init'], d)}, {TL[d]})", ind, node)
            else:
                self.emit(f"{v} = tl.zeros({shape}, {TL[d]})", ind, node)
            if comb == "dot":
                rng_src = "range(0, tl.cdiv(K, BK))"
            else:
                cnt = a["count"]
                rng_src = {"range": f"range(0, {cnt})", "tl.range": f"tl.range(0, {cnt})",
                           "static": f"tl.static_range({cnt})"}[a.get("form", "range")]
            if comb == "dot":
                _ext.loop_pre(self, node, ind)
            self.emit(f"for {var} in {rng_src}:", ind)
            if comb == "dot":
                x = self.r(node.kids[0], ind + 1)
                y = self.r(node.kids[1], ind + 1)
                prec = _dot_kwargs(node.kids[0].dtype, a)
                if a.get("form") == "pluseq":
                    self.emit(f"{v} += tl.dot({x}, {y}{prec})", ind + 1)
                else:
                    self.emit(f"{v} = tl.dot({x}, {y}, {v}{prec})", ind + 1)
                _ext.loop_post(self, node, ind + 1)
            else:
                b = self.r(node.kids[0], ind + 1)
                if comb == "add":
                    self.emit(f"{v} += {b}", ind + 1)
                else:
                    self.emit(f"{v} = tl.maximum({v}, {b})", ind + 1)
            return v
        ks = [self.r(c, ind) for c in node.kids]
        if kd == "bin":
            op = a["op"]
            x, y = ks
            src = {"idiv": f"{x} // (({y} & 7) + 1)", "imod": f"{x} % (({y} & 7) + 1)",
                   "shl": f"{x} << ({y} & {BITS[a['ct']] - 1})", "shr": f"{x} >> ({y} & {BITS[a['ct']] - 1})",
                   "fdiv": f"{x} / (tl.abs({y}) + 1.0)"}.get(op, f"{x} {op} {y}")
        elif kd == "binlit" and a["op"] == "cdiv":
            src = f"tl.cdiv({ks[0]}, {a['lit']})"
        elif kd == "binlit":
            src = f"{ks[0]} {a['op']} {self.lit(a['lit'], 'f32' if isinstance(a['lit'], float) else 'i32')}"
        elif kd in ("cmp", "logic"):
            src = f"{ks[0]} {a['op']} {ks[1]}"
        elif kd == "cmplit":
            src = f"{ks[0]} {a['op']} {self.lit(a['lit'], 'f32' if isinstance(a['lit'], float) else 'i32')}"
        elif kd == "where":
            src = f"tl.where({ks[0]}, {ks[1]}, {ks[2]})"
        elif kd == "wherelit":
            lit = self.lit(a["lit"], "f32" if isinstance(a["lit"], float) else "i32")
            src = f"tl.where({ks[0]}, {ks[1]}, {lit})" if a.get("lit_first") is None else \
                f"tl.where({ks[0]}, {lit}, {ks[1]})"
        elif kd == "clamp":
            src = f"tl.clamp({ks[0]}, {a['lo']!r}, {a['hi']!r})"
        elif kd == "cast":
            if a.get("bitcast"):
                src = f"{ks[0]}.to({TL[d]}, bitcast=True)"
            elif a.get("form") == "cast":
                src = f"tl.cast({ks[0]}, {TL[d]})"
            else:
                src = f"{ks[0]}.to({TL[d]})"
        elif kd == "unary":
            src = {"neg": f"-{ks[0]}", "abs": f"tl.abs({ks[0]})", "invert": f"~{ks[0]}"}[a["op"]]
        elif kd == "minmax":
            src = f"tl.{'maximum' if a['op'] == 'max' else 'minimum'}({ks[0]}, {ks[1]})"
        elif kd == "math":
            fn, x = a["fn"], ks[0]
            ns = "tl.math" if a.get("ns") == "math" and fn not in ("sigmoid",) else "tl"
            if fn in LIBDEVICE:
                self.libdevice = True
            src = LIBDEVICE[fn][0].format(x=x) if fn in LIBDEVICE else {
                   "exp": f"{ns}.exp(tl.where({x} < 3.0, {x}, 3.0))",
                   "exp2": f"{ns}.exp2(tl.where({x} < 3.0, {x}, 3.0))",
                   "log": f"{ns}.log(tl.abs({x}) + 1.0)", "log2": f"{ns}.log2(tl.abs({x}) + 1.0)",
                   "sqrt": f"{ns}.sqrt(tl.abs({x}))", "rsqrt": f"{ns}.rsqrt(tl.abs({x}) + 1.0)"}.get(
                fn, f"{ns}.{fn}({x})")
        elif kd == "fma":
            src = f"tl.fma({ks[0]}, {ks[1]}, {ks[2]})"
        elif kd == "reduce":
            op, ax = a["op"], a["axis"]
            kdim = ", keep_dims=True" if a.get("keep_dims") else ""
            if op.startswith("generic"):
                h = "_fz_add" if op == "generic_add" else "_fz_max"
                self.helpers.add(h)
                src = f"tl.reduce({ks[0]}, {ax}, {h}{kdim})"
            elif a.get("method"):
                src = f"{ks[0]}.{op}({ax}{kdim})" if ax is not None else f"{ks[0]}.{op}()"
            else:
                src = f"tl.{op}({ks[0]}, {ax}{kdim})" if ax is not None or op in ("argmax", "argmin") \
                    else f"tl.{op}({ks[0]})"
            if op == "sum" and node.kids[0].dtype == "i1":  # Triton sums bools in uint32; the model's i32
                src += ".to(tl.int32)"
        elif kd == "scan":
            op, ax = a["op"], a["axis"]
            rev = ", reverse=True" if a.get("reverse") else ""
            if op.startswith("generic"):
                h = "_fz_add" if op == "generic_add" else "_fz_max"
                self.helpers.add(h)
                src = f"tl.associative_scan({ks[0]}, {ax}, {h}{rev})"
            else:
                src = f"tl.{op}({ks[0]}, {ax}{rev})"
        elif kd == "expand":
            form = a.get("form", "index")
            if node.tag == "T":
                src = f"tl.broadcast_to({ks[0]}, (BM, BN))"
            elif form == "index":
                src = f"{ks[0]}[:, None]" if node.tag == "R1" else f"{ks[0]}[None, :]"
            elif form == "expand_dims":
                src = f"tl.expand_dims({ks[0]}, {1 if node.tag == 'R1' else 0})"
            else:
                src = f"tl.reshape({ks[0]}, {SHAPE_SRC[node.tag]})"
        elif kd == "trans":
            src = f"tl.trans({ks[0]})" if a.get("form") != "permute" else f"tl.permute({ks[0]}, (1, 0))"
        elif kd == "dot":
            prec = _dot_kwargs(node.kids[0].dtype, a)
            acc = f", {ks[2]}" if len(ks) > 2 else ""
            src = f"tl.dot({ks[0]}, {ks[1]}{acc}{prec})"
        else:
            src = _ext.render(self, node, ks, v, ind)  # None: the node emitted its own lines
            if src is None:
                return v
        self.emit(f"{v} = {src}", ind, node)
        return v

    def ptrloop_src(self, node, v, ind):
        """A loop advancing a block and/or a scalar pointer by one chunk per iteration (Model.ptrloop)."""
        a, d = node.a, node.dtype
        one_d = self.k.mode == "1d"
        shape, offs, mask, chunk = ("(BLOCK,)", "offs", "mask", "n") if one_d else \
            ("(BM, BN)", "rows[:, None] * N + cols[None, :]", "mask2", "M * N")
        self.emit(f"{v} = tl.zeros({shape}, dtype={TL[d]})", ind, node)
        terms = []
        if "block" in a["form"]:
            self.emit(f"pb{v} = {a['arg']} + {offs}", ind)
            terms.append(f"tl.load(pb{v}, mask={mask}, other=0)")
        if "scalar" in a["form"]:
            self.emit(f"ps{v} = {a['arg']} + pid", ind)
            terms.append(f"tl.load(ps{v})")
        self.emit(f"for i{v} in range({a['trips']}):", ind)
        self.emit(f"{v} = {v} * 3 + {' + '.join(terms)}", ind + 1)
        for kind in ("block", "scalar"):
            if kind in a["form"]:
                self.emit(f"p{kind[0]}{v} += {chunk}", ind + 1)
        return v

    def load_src(self, node, ind=1):
        a, pat, mode = node.a, node.a["pattern"], self.k.mode
        if a.get("access") or pat in _ext.LOAD_PATTERNS:
            return _ext.load_src(self, node, ind)
        p = a["arg"]
        if mode == "1d":
            ptr, mask = {"contig": (f"{p} + offs", "mask"), "strided": (f"{p} + offs * {a.get('stride')}", "mask"),
                         "rev": (f"{p} + (n - 1 - offs)", "mask"),
                         "shift": (f"{p} + (offs + {a.get('shift')})", f"offs + {a.get('shift')} < n"),
                         "mod": (f"{p} + offs % {a.get('mod')}", "mask"), "wrap": (f"{p} + offs % n", None),
                         "scalar": (p, None), "pid": (f"{p} + pid", None),
                         "loopcontig": (f"{p} + {a.get('loop')} * n + offs", "mask")}[pat]
        else:
            s = a.get("stride")
            lp = a.get("loop")
            ptr, mask = {
                "rowmajor": (f"{p} + rows[:, None] * {s} + cols[None, :]", "mask2"),
                "looptile": (f"{p} + {lp} * M * {s} + rows[:, None] * {s} + cols[None, :]", "mask2"),
                "colmajor": (f"{p} + rows[:, None] + cols[None, :] * M", "mask2"),
                "ttile": (f"{p} + cols[:, None] * M + rows[None, :]", "cmask[:, None] & rmask[None, :]"),
                "transload": (f"{p} + cols[:, None] * M + rows[None, :]", "cmask[:, None] & rmask[None, :]"),
                "rowvec": (f"{p} + rows", "rmask"), "colvec": (f"{p} + cols", "cmask"),
                "rowvec1": (f"{p} + rows[:, None]", "rmask[:, None]"),
                "colvec1": (f"{p} + cols[None, :]", "cmask[None, :]"),
                "scalar": (p, None), "pid": (f"{p} + pid", None),
                "atile": (f"{p} + rows[:, None] * K + ks[None, :]", "rmask[:, None] & (ks < K)[None, :]"),
                "btile": (f"{p} + ks[:, None] * N + cols[None, :]", "(ks < K)[:, None] & cmask[None, :]"),
                "loopatile": (f"{p} + rows[:, None] * K + ({lp} * BK + ks)[None, :]",
                              f"rmask[:, None] & ({lp} * BK + ks < K)[None, :]"),
                "loopbtile": (f"{p} + ({lp} * BK + ks)[:, None] * N + cols[None, :]",
                              f"({lp} * BK + ks < K)[:, None] & cmask[None, :]"),
            }[pat]
        if mask is None or not a.get("masked", True):
            src = f"tl.load({ptr})"
        elif a.get("other") is None:
            src = f"tl.load({ptr}, mask={mask})"
        else:
            src = f"tl.load({ptr}, mask={mask}, other={self.lit(a['other'], node.dtype)})"
        if pat == "transload":
            src = f"tl.trans({src})"
        return src

    def store_src(self, st, val, ind=1):
        a, pat, mode = st.a, st.a["pattern"], self.k.mode
        if pat == "ubsplit":
            return ub_store_src(st, val)
        if a.get("access") or pat in _ext.STORE_PATTERNS:
            return _ext.store_src(self, st, val, ind)
        o = a["out"]
        if mode == "1d":
            ptr, mask = {"contig": (f"{o} + offs", "mask"), "rev": (f"{o} + (n - 1 - offs)", "mask"),
                         "strided": (f"{o} + offs * {a.get('stride')}", "mask"), "pid": (f"{o} + pid", None)}[pat]
        else:
            s = a.get("stride")
            ptr, mask = {"rowmajor": (f"{o} + rows[:, None] * {s} + cols[None, :]", "mask2"),
                         "colmajor": (f"{o} + rows[:, None] + cols[None, :] * M", "mask2"),
                         "rowvec": (f"{o} + rows", "rmask"), "colvec": (f"{o} + cols", "cmask"),
                         "pid": (f"{o} + pid", None)}[pat]
        m = f", mask={mask}" if mask else ""
        return f"tl.store({ptr}, {val}{m})"

    def params(self):
        k, z = self.k, self.k.sizes
        specs = input_specs(k)
        ins = sorted((n for n in specs if n.startswith("in")), key=_argkey)
        outs = sorted((n for n in specs if n.startswith("out")), key=_argkey)
        scal = ["n"] if k.mode == "1d" else ["M", "N"] + (["K"] if "BK" in z else [])
        used = set()
        for node in kernel_nodes(k):
            for key in ("stride", "count"):
                if node.a.get(key):
                    used.add(node.a[key])
        for st in k.stmts:
            if st.a.get("stride"):
                used.add(st.a["stride"])
        scal += sorted(u for u in used if not u.startswith("C"))
        const = ["BLOCK"] if k.mode == "1d" else ["BM", "BN"] + (["BK"] if "BK" in z else [])
        const += sorted(u for u in used if u.startswith("C"))
        more_scal, more_const = _ext.params(k)
        more_const = more_const + ub_params(k)
        scal += more_scal
        const += more_const
        return ins, outs, scal, const

    def source(self):
        k = self.k
        ins, outs, scal, const = self.params()
        body = []
        if k.mode == "1d":
            body += ["pid = tl.program_id(0)"]
            if k.early_return:
                body += ["if pid * BLOCK >= n:", "    return"]
            body += ["offs = pid * BLOCK + tl.arange(0, BLOCK)", "mask = offs < n"]
        else:
            body += ["pid_m = tl.program_id(0)", "pid_n = tl.program_id(1)",
                     "pid = pid_m * tl.num_programs(1) + pid_n",
                     "rows = pid_m * BM + tl.arange(0, BM)", "cols = pid_n * BN + tl.arange(0, BN)",
                     "rmask = rows < M", "cmask = cols < N", "mask2 = rmask[:, None] & cmask[None, :]"]
            if "BK" in k.sizes:
                body.append("ks = tl.arange(0, BK)")
        self.stmt_line = {}
        for i, st in enumerate(k.stmts):
            start = len(self.lines)
            guard = st.a.get("guard")
            if guard:  # an early return under a constexpr `if`: the programs past the limit store nothing
                self.emit("if ER:", 1)
                self.emit(f"    if pid >= {guard['limit']}:", 1)
                self.emit("        return", 1)
            val = self.r(st.value, 1)
            if st.kind == "store":
                self.emit(self.store_src(st, val), 1)
            else:
                op = st.a["op"]
                o = st.a["out"]
                ptr = f"{o} + offs % {st.a['mod']}" if st.a["pattern"] == "mod" else f"{o} + offs"
                m = ", mask=mask" if st.a.get("use_mask", True) else ""
                if op == "cas":
                    c = self.r(st.a["cmp"], 1)
                    call = f"tl.atomic_cas({ptr}, {c}, {val})"
                else:
                    call = f"tl.atomic_{op}({ptr}, {val}{m})"
                if st.a.get("old_out"):
                    ov = self.var()
                    self.emit(f"{ov} = {call}", 1)
                    self.emit(f"tl.store({st.a['old_out']} + offs, {ov}, mask=mask)", 1)
                else:
                    self.emit(call, 1)
            self.stmt_line[i] = (start, len(self.lines))
        head = ["import triton", "import triton.language as tl"]
        if self.libdevice:
            head.append("from triton.language.extra import libdevice")
        head.append("")
        helpers = []
        for h in sorted(self.helpers):
            fn = "a + b" if h == "_fz_add" else "tl.maximum(a, b)"
            helpers += ["", "@triton.jit", f"def {h}(a, b):", f"    return {fn}", ""]
        sig = ", ".join(ins + outs + scal + [f"{c}: tl.constexpr" for c in const])
        name = f"fuzz_kernel_{k.index}"
        lines = head + helpers + ["", "@triton.jit", f"def {name}({sig}):"]
        lines += ["    " + b for b in body]
        self.body_offset = len(lines)
        lines += self.lines
        return "\n".join(lines) + "\n", name


def render(k):
    """(source text, kernel name, Renderer) of kernel k."""
    r = Renderer(k)
    if k.mode in _paths.MODES:
        return _paths.source(k) + (r,)
    src, name = r.source()
    return src, name, r


def launch_args(k, inputs):
    """The positional arguments and the constexpr dict of a launch, in the kernel's order."""
    if k.mode in _paths.MODES:
        return _paths.launch(k, inputs)
    r = Renderer(k)
    ins, outs, scal, const = r.params()
    args = [inputs[n] for n in ins + outs] + [int(k.sizes[s]) for s in scal]
    meta = {c: int(k.sizes[c]) for c in const}
    return args, meta, ins + outs + scal


# ---------------------------------------------------------------------------------------- generator
SIZES_1D = [1, 2, 4, 8, 16, 32, 64, 128, 256]
SIZES_1D_W = [0.3, 0.3, 0.4, 0.8, 3, 3, 2, 2, 0.7]


def boundary_sizes(b, rng, primes=(3, 5, 7, 13, 17, 31, 37, 61, 97, 101, 127, 131)):
    cands = [1, b - 1, b, b + 1, 2 * b - 1, 2 * b + 1, 3 * b] + [p for p in primes if p <= 4 * b]
    return int(cands[rng.integers(len(cands))]) if b > 1 else int(rng.integers(1, 5))


class Gen:
    """Builds one random Kernel from a numpy Generator."""

    def __init__(self, rng, index=0, extensions=True):
        self.rng = rng
        self.index = index
        self.extensions = extensions
        self.n_in = 0
        self.n_out = 0
        self.n_loop = 0
        self.loads = 0
        self.features = set()

    # -- helpers
    def pick(self, seq, p=None):
        seq = list(seq)
        if p is not None:
            p = np.asarray(p, float)
            p = p / p.sum()
        return seq[int(self.rng.choice(len(seq), p=p))]

    def chance(self, p):
        return self.rng.random() < p

    def feat(self, f):
        self.features.add(f)

    def new_in(self):
        self.n_in += 1
        return f"in{self.n_in - 1}"

    def new_out(self):
        self.n_out += 1
        return f"out{self.n_out - 1}"

    def lit_for(self, d, nonzero=False):
        if is_float(d):
            return float(self.pick([0.5, 1.5, -2.0, 3.0, -0.25, 2.0, 1.0]))
        v = int(self.rng.integers(-8, 9))
        if nonzero and v == 0:
            v = 3
        return v

    def other_for(self, d):
        if d == "i1":
            return self.pick([0, 1])
        if is_float(d):
            return float(self.pick([0.0, 1.0, -1.5, 2.0, -0.5]))
        return int(self.pick([0, 1, -1, 7, -3]))

    # -- leaves
    def leaf(self, d, t, ctx):
        opts, w = [], []
        pats = LOAD_PATTERNS[self.mode].get(t, [])
        if ctx.get("stream") and t == "B":  # tools/fuzz_paths.py's streaming kernels: contiguous blocks only
            pats = ["contig"]
        if pats and self.loads < 9:
            opts.append("load")
            w.append(6)
        if ctx.get("loop") and t in LOOP_PATTERNS[self.mode] and self.loads < 9 and not ctx.get("noloop"):
            opts.append("loopload")
            w.append(6)
        if t not in ("S",) and d != "i1":
            opts.append("full")
            w.append(1)
        if d == "i32":
            idx = {"B": ["offs", "arange"], "S": ["pid"], "R": ["rows"], "C": ["cols"]}.get(t, [])
            if ctx.get("loop") and t == "S" and not ctx.get("static"):
                idx.append("loopvar")
            if idx:
                opts.append("index")
                w.append(1.5)
        if not opts:
            return None
        kind = self.pick(opts, w)
        if kind == "full":
            val = self.other_for(d) if d != "i1" else 1
            self.feat("full")
            return Node("full", d, t, a={"value": val, "zeros": val == 0 and self.chance(0.5)})
        if kind == "index":
            which = self.pick(idx)
            a = {"which": which}
            if which == "loopvar":
                a["loop"] = ctx["loop"][-1]
            self.feat(f"index:{which}")
            return Node("index", "i32", t, a=a)
        self.loads += 1
        if kind == "loopload":
            pat = self.pick(LOOP_PATTERNS[self.mode][t])
            lp = ctx["loop"][-1]
            a = {"pattern": pat, "arg": self.new_in(), "loop": lp, "count": ctx["count"][-1]}
            if pat == "looptile":
                a["stride"] = self.stride_param()
        else:
            pat = self.pick(pats, [PATTERN_WEIGHTS.get(p, 1.0) for p in pats])
            a = {"pattern": pat, "arg": self.new_in()}
            if pat == "strided":
                a["stride"] = self.pick(["S0", "S1", "CS"])
                self.sizes.setdefault(a["stride"], int(self.pick([1, 2, 3])) if a["stride"] != "CS" else 2)
            if pat == "rowmajor":
                a["stride"] = self.stride_param()
            if pat == "shift":
                a["shift"] = int(self.pick([1, 2, 3]))
            if pat == "mod":
                a["mod"] = int(self.pick([1, 3, 5, 7]))
        a["masked"] = pat not in ("wrap", "scalar", "pid")
        if a["masked"]:
            a["other"] = None if self.chance(0.2) else self.other_for(d)
            if a["other"] is None:
                self.feat("load:no-other")
        a["profile"] = self.profile(d)
        self.feat(f"load:{pat}")
        self.feat(f"dtype:{d}")
        return Node("load", d, t, a=a)

    def stride_param(self):
        s = self.pick(["SR0", "SR1"])
        if s not in self.sizes:
            self.sizes[s] = self.sizes["N"] + int(self.pick([0, 0, 1, 3, 16]))
        return s

    def profile(self, d):
        if d == "i1":
            return "small"
        if is_int(d):
            return self.pick(["small", "mid", "wide"], [5, 3, 1])
        return self.pick(["uniform", "ints", "pos"], [5, 3, 1])

    # -- expressions
    def gen(self, d, t, depth, ctx):
        """A node of dtype d and tag t."""
        for _ in range(8):
            node = self._gen(d, t, depth, ctx)
            if node is not None:
                return node
        node = self.leaf(d, t, ctx)
        if node is not None:
            return node
        if t != "S" and d != "i1":
            return Node("full", d, t, a={"value": self.other_for(d)})
        x = Node("index", "i32", "S", a={"which": "pid"}) if t == "S" else self.gen("i32", t, 0, ctx)
        if d == "i1":
            return Node("cmplit", "i1", t, [x], {"op": ">", "lit": 0})
        return Node("cast", d, t, [x], {})

    def _gen(self, d, t, depth, ctx):  # noqa: C901
        exact = ctx.get("exact", False)
        if depth <= 0 or self.chance(0.2):
            return self.leaf(d, t, ctx)
        prods, w = [], []

        def add(p, weight):
            prods.append(p)
            w.append(weight)

        fexact = exact and is_float(d)  # float arithmetic is not exact across targets
        if is_int(d) or (is_float(d) and not fexact):
            add("arith", 5)
            add("arithlit", 2)
        if is_int(d) or is_float(d):
            add("minmax", 1)
            add("unary", 1)
        if is_int(d):
            add("intop", 3)
        if is_float(d) and not exact:
            add("math", 3)
            add("fma", 0.5)
            if d == "f32":
                add("fdiv", 1)
        if d == "i1":
            add("cmp", 5)
            add("logic", 2)
        add("where", 1.5)
        if d != "i1":
            add("wherelit", 0.7)
        if d == "f32":
            add("clamp", 0.5)
        if is_int(d):
            add("cdiv", 0.4)
        add("cast", 2)
        if d in ("i16", "i32") and depth >= 1:
            add("bitcast", 0.5)
        if t in ("S", "R", "C", "R1", "C1") and (d != "i1"):
            add("reduce", 4 if t != "S" or self.mode == "1d" else 1.5)
        if t in ("B", "T", "R", "C") and (is_int(d) or is_float(d)) and not fexact:
            add("scan", 1)
        if t in ("R1", "C1") or (t == "T" and self.chance(0.3)):
            add("expand", 2)
        if t == "T" and self.sizes.get("BM") == self.sizes.get("BN"):
            add("trans", 1)
        if t == "T":
            add("transload", 0.5)
        if t == "T" and d in ("f32", "i32") and "BK" in self.sizes and not exact:
            add("dot", 5)
        if not ctx.get("in_if", 0) >= 1 and t != "S":
            add("if", 1)
        if not ctx.get("loop") and t in ("B", "T") and (is_int(d) or is_float(d)) and not fexact \
                and not ctx.get("flat"):
            add("loop", 1.2)
        p = self.pick(prods, w)
        return getattr(self, "p_" + p)(d, t, depth - 1, ctx)

    def sub_tags(self, t):
        """Tags of operands that broadcast to t."""
        if t == "T":
            return self.pick([("T", "T"), ("T", "R1"), ("C1", "T"), ("R1", "C1"), ("T", "S"), ("T", "C")],
                             [6, 2.5, 2.5, 1, 1, 1])
        if t in ("B", "R", "C"):
            return self.pick([(t, t), (t, "S")], [6, 2])
        if t in ("TT", "A", "K"):
            return self.pick([(t, t), (t, "S")], [6, 1])
        if t == "R1":
            return self.pick([("R1", "R1"), ("R1", "S")], [5, 1])
        if t == "C1":
            return self.pick([("C1", "C1"), ("C1", "S")], [5, 1])
        return ("S", "S")

    def p_arith(self, d, t, depth, ctx):
        ta, tb = self.sub_tags(t)
        if self.chance(0.5):
            ta, tb = tb, ta
        ops = ["+", "-", "*"]
        op = self.pick(ops)
        db = d
        if self.chance(0.25):  # exercise promotion: an operand of a narrower type
            if is_int(d):
                db = self.pick([x for x in ("i1",) + INTS if BITS[x] <= BITS[d]])
            elif d == "f32":
                db = self.pick(["f16", "bf16", "i8", "i32"])
            elif d == "f16":
                db = self.pick(["i8", "i32", "bf16"])
        if is_float(d) and is_float(db) and compute_type(d, db) != d:
            db = d
        x = self.gen(d, ta, depth, ctx)
        y = self.gen(db, tb, depth, ctx)
        if self.chance(0.5):
            x, y = y, x
        ct = compute_type(x.dtype, y.dtype)
        if ct != d:
            return None
        self.feat(f"op:{op}")
        return Node("bin", ct, t, [x, y], {"op": op, "ct": ct})

    def p_arithlit(self, d, t, depth, ctx):
        op = self.pick(["+", "-", "*"] + (["//", "%", "<<", ">>", "&", "|", "^"] if is_int(d) else []))
        lit = self.lit_for(d, nonzero=op in ("//", "%"))
        if op in ("//", "%"):
            lit = abs(lit) or 3
        if op in ("<<", ">>"):
            lit = int(self.rng.integers(0, min(BITS[d], 8)))
        x = self.gen(d, t, depth, {**ctx, "exact": ctx.get("exact")})
        ct = weak_type(d, lit, op in ("//", "%"))
        if ct != d:
            return None
        self.feat(f"op:{op}lit")
        return Node("binlit", d, t, [x], {"op": op, "lit": lit, "ct": ct})

    def p_intop(self, d, t, depth, ctx):
        op = self.pick(["&", "|", "^", "idiv", "imod", "shl", "shr"])
        ta, tb = self.sub_tags(t)
        x = self.gen(d, ta, depth, ctx)
        y = self.gen(d, tb, depth, ctx)
        self.feat(f"op:{op}")
        return Node("bin", d, t, [x, y], {"op": op, "ct": d})

    def p_fdiv(self, d, t, depth, ctx):
        ta, tb = self.sub_tags(t)
        x = self.gen(d, ta, depth, ctx)
        y = self.gen(self.pick(["f32", "f16", "bf16"]), tb, depth, ctx)
        ct = compute_type(x.dtype, y.dtype, True)
        if ct != d:
            return None
        self.feat("op:/")
        return Node("bin", d, t, [x, y], {"op": "fdiv", "ct": ct})

    def p_minmax(self, d, t, depth, ctx):
        if d == "bf16":
            return None
        ta, tb = self.sub_tags(t)
        src = d
        if d == "f32" and self.chance(0.2):
            src = "bf16"  # maximum promotes bf16 to fp32
        x = self.gen(src, ta, depth, ctx)
        y = self.gen(src, tb, depth, ctx)
        op = self.pick(["max", "min"])
        self.feat(f"op:{op}imum")
        return Node("minmax", d, t, [x, y], {"op": op})

    def p_unary(self, d, t, depth, ctx):
        ops = ["neg", "abs"] + (["invert"] if is_int(d) else [])
        op = self.pick(ops)
        self.feat(f"op:{op}")
        return Node("unary", d, t, [self.gen(d, t, depth, ctx)], {"op": op})

    def p_math(self, d, t, depth, ctx):
        fns = ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "erf", "floor", "ceil"]
        if d == "f32":
            fns += ["sigmoid"] + list(LIBDEVICE)
        fn = self.pick(fns)
        # floor/ceil jump and sqrt is steep at 0: their operands must be the same on every target
        sub = {**ctx, "exact": True} if fn in ("floor", "ceil", "sqrt", "trunc", "rint") else ctx
        src = d
        if fn == "sigmoid":
            src = self.pick(["f32", "f16", "bf16"])
        elif d == "f32" and self.chance(0.15):
            src = self.pick(["i8", "i32"])  # integers converted first: math of an integer is an error, as in Triton
        x = self.gen(src, t, depth, sub)
        if is_int(src):
            x = Node("cast", d, t, [x], {"form": "to"})
        self.feat(f"math:{fn}")
        return Node("math", d, t, [x], {"fn": fn, "ns": self.pick(["tl", "math"], [4, 1])})

    def p_fma(self, d, t, depth, ctx):
        self.feat("math:fma")
        return Node("fma", d, t, [self.gen(d, t, depth, ctx) for _ in range(3)])

    def p_cmp(self, d, t, depth, ctx):
        sub = {**ctx, "exact": True}
        src = self.pick(["i8", "i16", "i32", "i64", "f16", "bf16", "f32", "i1"], [2, 1, 3, 1, 1, 1, 2, 0.5])
        op = self.pick(["<", "<=", ">", ">=", "==", "!="])
        if self.chance(0.4) and src != "i1":
            x = self.gen(src, t, depth, sub)
            lit = self.lit_for(src)
            self.feat("op:cmplit")
            return Node("cmplit", "i1", t, [x], {"op": op, "lit": lit})
        ta, tb = self.sub_tags(t)
        x = self.gen(src, ta, depth, sub)
        y = self.gen(src, tb, depth, sub)
        self.feat(f"cmp:{src}")
        return Node("cmp", "i1", t, [x, y], {"op": op})

    def p_logic(self, d, t, depth, ctx):
        ta, tb = self.sub_tags(t)
        op = self.pick(["&", "|", "^"])
        self.feat("op:logic")
        return Node("logic", "i1", t, [self.gen("i1", ta, depth, ctx), self.gen("i1", tb, depth, ctx)], {"op": op})

    def p_where(self, d, t, depth, ctx):
        tags = self.sub_tags(t)
        c = self.gen("i1", tags[1] if tags[1] != "S" else t, depth, ctx)
        x = self.gen(d, tags[0], depth, ctx)
        y = self.gen(d, t, depth, ctx)
        if bcast_tag(bcast_tag(c.tag, x.tag) or "X", y.tag) != t:
            return None
        self.feat("where")
        return Node("where", d, t, [c, x, y])

    def p_wherelit(self, d, t, depth, ctx):
        c = self.gen("i1", t, depth, ctx)
        x = self.gen(d, t, depth, ctx)
        lit = self.lit_for(d)
        if weak_type(d, lit) != d:
            return None
        self.feat("where:literal")
        return Node("wherelit", d, t, [c, x], {"lit": lit, "lit_first": True if self.chance(0.3) else None})

    def p_clamp(self, d, t, depth, ctx):
        x = self.gen(self.pick(["f32", "f16", "bf16"]), t, depth, ctx)
        lo = float(self.pick([-1.0, -0.5, 0.0]))
        self.feat("math:clamp")
        return Node("clamp", d, t, [x], {"lo": lo, "hi": float(self.pick([0.5, 1.0, 2.5]))})

    def p_cdiv(self, d, t, depth, ctx):
        x = self.gen(d, t, depth, ctx)
        self.feat("op:cdiv")
        return Node("binlit", d, t, [x], {"op": "cdiv", "lit": int(self.pick([2, 3, 4, 7])), "ct": d})

    def p_cast(self, d, t, depth, ctx):
        src = self.pick(["i1", "i8", "i16", "i32", "i64", "f16", "bf16", "f32"])
        if src == d:
            return None
        sub = dict(ctx)
        if is_float(src) and (is_int(d) or d == "i1"):
            sub["exact"] = True
        if is_float(src) and is_int(d):
            x = self.leaf(src, t, sub)  # a loaded value: small enough for every int type
            if x is None:
                return None
        else:
            x = self.gen(src, t, depth, sub)
        self.feat(f"cast:{src}->{d}")
        return Node("cast", d, t, [x], {"form": self.pick(["to", "cast"], [3, 1])})

    def p_bitcast(self, d, t, depth, ctx):
        src = {"i16": self.pick(["f16", "bf16"]), "i32": "f32"}[d]
        x = self.gen(src, t, depth, {**ctx, "exact": True})
        self.feat(f"bitcast:{src}->{d}")
        return Node("cast", d, t, [x], {"bitcast": True})

    def p_reduce(self, d, t, depth, ctx):
        # (input tag, axis, keep_dims) giving t
        if self.mode == "1d":
            src_t, axis, keep = "B", self.pick([0, None]), False
            if t != "S":
                return None
        else:
            opts = {"R": [("T", 1, False)], "C": [("T", 0, False)], "R1": [("T", 1, True)],
                    "C1": [("T", 0, True)], "S": [("R", 0, False), ("C", 0, False), ("T", None, False)]}[t]
            src_t, axis, keep = self.pick(opts)
        cands = []
        if is_int(d):
            wide = {"i32": ("i8", "i16", "i32", "i1"), "i64": ("i64",)}.get(d, ())  # narrower ints widen
            cands += [("sum", x) for x in wide] + [("max", x) for x in wide if x != "i1"]
            cands += [("min", x) for x in wide if x != "i1"]
            cands += [("xor_sum", d), ("generic_add", d), ("generic_max", d)]
            if d == "i32":
                cands += [("argmax", x) for x in ("i8", "i32", "f32", "f16")]
                cands += [("argmin", x) for x in ("i8", "i32", "f32", "f16")]
        elif is_float(d):
            if not ctx.get("exact"):
                cands += [("sum", d), ("generic_add", d)]
            if d == "f32":
                cands += [("max", x) for x in ("f16", "bf16", "f32")] + [("min", x) for x in ("f16", "f32")]
            if d != "bf16":
                cands += [("generic_max", d)]
        if not cands:
            return None
        op, src = self.pick(cands)
        if op == "sum" and src == "i1" and d != "i32":
            return None
        sub = {**ctx, "exact": True} if op in ("argmax", "argmin") else ctx
        x = self.gen(src, src_t, depth, sub)
        self.feat(f"reduce:{op}:axis{axis}" + (":keep" if keep else ""))
        return Node("reduce", d, t, [x], {"op": op, "axis": axis, "keep_dims": keep,
                                          "method": self.chance(0.15) and op in ("sum", "max", "min")})

    def p_scan(self, d, t, depth, ctx):
        axis = 0 if t in ("B", "R", "C") else self.pick([0, 1])
        cands = [("generic_add", d)]
        if d not in ("i8", "i16"):
            cands += [("cumsum", d)]  # narrower ints sum in int32
        if d == "i32":
            cands += [("cumsum", "i8"), ("cumsum", "i16")]
        if is_int(d) or d == "f32":
            cands += [("cumprod", d)]
        if d == "f32":
            cands += [("cumsum", "bf16")]
        if d != "bf16":
            cands += [("generic_max", d)]
        if d == "bf16":
            return None
        op, src = self.pick(cands)
        x = self.gen(src, t, depth, ctx if op != "cumprod" else {**ctx, "small": True})
        if op == "cumprod" and is_float(d):
            x = Node("math", d, t, [x], {"fn": "cos"})  # |x| <= 1: no overflow
        rev = self.chance(0.3)
        self.feat(f"scan:{op}:axis{axis}" + (":rev" if rev else ""))
        return Node("scan", d, t, [x], {"op": op, "axis": axis, "reverse": rev})

    def p_expand(self, d, t, depth, ctx):
        if t == "R1":
            x = self.gen(d, "R", depth, ctx)
        elif t == "C1":
            x = self.gen(d, "C", depth, ctx)
        else:
            x = self.gen(d, self.pick(["R1", "C1"]), depth, ctx)
        form = self.pick(["index", "expand_dims", "reshape"], [4, 1, 1])
        self.feat(f"expand:{x.tag}->{t}" + ("" if t == "T" else f":{form}"))
        return Node("expand", d, t, [x], {"form": form})

    def p_trans(self, d, t, depth, ctx):
        x = self.gen(d, "T", depth, ctx)
        form = self.pick(["trans", "permute"], [3, 1])
        self.feat(f"trans:{form}")
        return Node("trans", d, t, [x], {"form": form})

    def p_transload(self, d, t, depth, ctx):
        x = self.gen(d, "TT", depth, ctx)
        self.feat("trans:tile")
        return Node("trans", d, t, [x], {"form": "trans"})

    def p_dot(self, d, t, depth, ctx):
        src = {"f32": self.pick(["f16", "bf16", "f32"], [3, 2, 1]), "i32": "i8"}[d]
        x = self.gen(src, "A", min(depth, 1), {**ctx, "exact": True})
        y = self.gen(src, "K", min(depth, 1), {**ctx, "exact": True})
        kids = [x, y]
        if self.chance(0.3):
            kids.append(self.gen(d, "T", depth - 1, ctx))
        self.feat(f"dot:{src}" + (":acc" if len(kids) > 2 else ""))
        return Node("dot", d, t, kids)

    def p_if(self, d, t, depth, ctx):
        sub = {**ctx, "in_if": ctx.get("in_if", 0) + 1}
        if self.chance(0.5):
            pid = Node("index", "i32", "S", a={"which": "pid"})
            c = Node("cmplit", "i1", "S", [Node("binlit", "i32", "S", [pid], {"op": "%", "lit": 2, "ct": "i32"})],
                     {"op": "==", "lit": 0})
        else:
            c = self.gen("i1", "S", 2, {**sub, "exact": True})
        then = self.gen(d, t, depth, sub)
        other = self.gen(d, t, depth, sub)
        self.feat("if")
        return Node("if", d, t, [c, then, other])

    def p_loop(self, d, t, depth, ctx):
        self.n_loop += 1
        var = f"k{self.n_loop - 1}"
        count = self.pick(["R", "CR"])
        self.sizes.setdefault(count, int(self.pick([1, 2, 3, 4])))
        form = self.pick(["range", "tl.range", "static"], [3, 1, 1]) if count == "CR" else \
            self.pick(["range", "tl.range"], [3, 1])
        sub = {**ctx, "loop": (ctx.get("loop") or ()) + (var,), "count": (ctx.get("count") or ()) + (count,)}
        comb = "add" if (d == "bf16" or self.chance(0.7)) else "max"
        if form == "static":
            sub["static"] = True
        body = self.gen(d, t, depth, sub)
        a = {"combine": comb, "var": var, "count": count, "form": form}
        if comb == "max":
            a["init"] = -(2 ** (BITS[d] - 1)) if is_int(d) else -1000.0
        self.feat(f"loop:{comb}:{form}")
        return Node("loop", d, t, [body], a)

    def matmul(self, d):
        src = {"f32": self.pick(["f16", "bf16", "f32"], [3, 2, 1]), "i32": "i8"}[d]
        self.n_loop += 1
        var = f"k{self.n_loop - 1}"
        loads = []
        for pat, tag in (("loopatile", "A"), ("loopbtile", "K")):
            self.loads += 1
            loads.append(Node("load", src, tag, a={"pattern": pat, "arg": self.new_in(), "loop": var,
                                                   "masked": True, "other": 0 if is_int(src) else 0.0,
                                                   "profile": "ints" if is_float(src) else "small"}))
        self.feat(f"matmul:{src}")
        return Node("loop", d, "T", loads, {"combine": "dot", "var": var, "form": self.pick(["acc", "pluseq"])})

    # -- kernels
    def kernel(self, seed):
        rng = self.rng
        self.mode = self.pick(["1d", "2d", "dot"], [5, 4, 1.2])
        template = self.mode
        if self.mode == "dot":
            self.mode = "2d"
        z = {}
        self.sizes = z
        if self.mode == "1d":
            b = int(self.pick(SIZES_1D, SIZES_1D_W))
            if self.chance(0.04):
                b = int(self.pick([3, 5, 24, 48]))  # Triton needs powers of 2; sim and cpu do not
                self.feat("block:non-pow2")
            z["BLOCK"] = b
            z["n"] = boundary_sizes(b, rng)
        else:
            if template == "dot":
                z["BM"], z["BN"], z["BK"] = (int(self.pick([16, 32])) for _ in range(3))
            else:
                z["BM"], z["BN"] = int(self.pick([1, 2, 4, 8, 16, 32])), int(self.pick([2, 4, 8, 16, 32]))
                if self.chance(0.3):
                    z["BN"] = z["BM"] = max(2, z["BM"])
            z["M"], z["N"] = boundary_sizes(z["BM"], rng), boundary_sizes(z["BN"], rng)
            if template == "dot":
                z["K"] = boundary_sizes(z["BK"], rng)
        stmts = []
        n_st = int(self.pick([1, 2, 3], [4, 3, 1]))
        depth = int(self.pick([1, 2, 3, 4], [1, 3, 3, 2]))
        for _ in range(n_st):
            stmts.append(self.statement(template, depth))
        if template == "dot" and not any(s.value.kind == "loop" for s in stmts):
            stmts[0] = self.store(self.matmul(self.pick(["f32", "i32"], [3, 1])), "T")
        k = Kernel(self.mode, z, stmts, seed=int(rng.integers(2 ** 31)), index=self.index)
        # drawn last, so every other draw (and the kernels of earlier campaigns) stays the same
        if self.mode == "1d" and z["n"] >= 1 and self.chance(0.15):
            k.early_return = True
            self.feat("control:early-return")
        if self.extensions:  # the newer features (tools/fuzz_ext.py), drawn after all of the above
            _ext.extend(self, k)
            control_extras(self, k)
            pointer_loop_extra(self, k)
            ub_overflow_extra(self, k)  # last: the kernels before it stay the same
        update_grid_flags(k)
        k.features = set(self.features)
        k.features.add(f"template:{template}")
        return k

    def statement(self, template, depth):
        if self.mode == "1d" and self.chance(0.12):
            return self.atomic(depth)
        d = self.pick(["i1", "i8", "i16", "i32", "i64", "f16", "bf16", "f32"], [0.5, 2, 0.5, 4, 1, 2, 1.5, 4])
        if self.mode == "1d":
            t = self.pick(["B", "S"], [6, 1.5])
        else:
            t = self.pick(["T", "R", "C", "S"], [8, 1.5, 1.5, 0.5])
            if template == "dot" and self.chance(0.6):
                return self.store(self.matmul(self.pick(["f32", "i32"], [3, 1])), "T")
        v = self.gen(d, t, depth, {})
        return self.store(v, t)

    def store(self, v, t):
        a = {"out": self.new_out(), "tag": t}
        if self.mode == "1d":
            if t == "S":
                a["pattern"] = "pid"
            else:
                a["pattern"] = self.pick(["contig", "rev", "strided"], [6, 1, 1])
                if a["pattern"] == "strided":
                    a["stride"] = self.pick(["S0", "CS"])
                    self.sizes.setdefault(a["stride"], int(self.pick([1, 2, 3])) if a["stride"] != "CS" else 2)
        else:
            a["pattern"] = {"T": self.pick(["rowmajor", "colmajor"], [4, 1]), "R": "rowvec", "C": "colvec",
                            "S": "pid"}[t]
            if a["pattern"] == "rowmajor":
                a["stride"] = self.stride_param()
        if self.mode == "1d" and t == "B" and v.tag == "B":
            self.rng.random()  # a draw kept so that existing seeds generate the same kernels
        od = v.dtype
        if self.chance(0.15):
            if is_int(v.dtype) or v.dtype == "i1":
                od = self.pick(["i8", "i32", "i64", "f32"])
            elif is_float(v.dtype):
                od = self.pick(["f16", "bf16", "f32"])
            self.feat(f"store-cast:{v.dtype}->{od}")
        if v.dtype == "i1" and od == "i1" and self.chance(0.5):
            od = "i8"
        a["out_dtype"] = od
        self.feat(f"store:{a['pattern']}")
        return Stmt("store", v, a)

    def atomic(self, depth):
        op = self.pick(["add", "max", "min", "and", "or", "xor", "xchg", "cas"], [5, 2, 2, 1, 1, 1, 1, 1])
        d = self.pick(["i32", "f32"]) if op in ("add", "max", "min", "xchg") else "i32"
        if op == "cas":
            d = "i32"
        pattern = "mod" if op not in ("xchg", "cas") and self.chance(0.6) else "unique"
        v = self.gen(d, "B", max(0, depth - 1), {"exact": op != "add"})
        a = {"op": op, "out": self.new_out(), "tag": "B", "out_dtype": d, "pattern": pattern,
             "mod": int(self.pick([1, 3, 8]))}
        if pattern == "unique":
            a["mod"] = 0
            if op not in ("cas",) and self.chance(0.4) or op == "xchg":
                a["old_out"] = self.new_out()
        if op == "cas":
            a["cmp"] = self.gen(d, "B", 0, {"exact": True})
            a["old_out"] = a.get("old_out") or (self.new_out() if self.chance(0.5) else None)
        self.feat(f"atomic:{op}:{pattern}" + (":old" if a.get("old_out") else ""))
        return Stmt("atomic", v, a)


def control_extras(g, k):
    """Lazy control flow, drawn after everything else (the kernel's other draws stay the same): a
    statement storing `a if c else b` on the program id whose sides load (program 0, or the last one,
    would read out of bounds if both sides ran); a loop counting down (a negative range step) whose
    Horner sum shows the order; last, an early return under a constexpr `if` before one more store.
    Each is appended after the kernel's statements, so the lines before stay the seed's."""
    n_in, n_out = g.n_in, g.n_out
    if g.chance(0.2):
        d = g.pick(["i32", "f32", "i8", "f16", "i64"], [3, 3, 1, 1, 1])
        form = g.pick(["first", "last", "two"]) if d in ("i32", "f32") else "two"
        a = {"arg": g.new_in(), "form": form, "profile": g.profile(d)}
        if form == "two":
            a["arg2"] = g.new_in()
        else:
            a["lit"] = g.lit_for(d)
        g.feat(f"ext:ifexp:{form}")
        k.stmts.append(Stmt("store", Node("lazyload", d, "S", a=a),
                            {"out": g.new_out(), "tag": "S", "pattern": "pid", "out_dtype": d}))
    if k.mode == "1d" and g.chance(0.15):  # a loop counting down (a negative range step)
        d = g.pick(["i32", "f32"])
        trips, step = int(g.pick([1, 2, 3, 4])), int(g.pick([-1, -2], [3, 1]))
        g.feat(f"ext:countdown:{step}")
        k.stmts.append(Stmt("store", Node("countdown", d, "B", a={"arg": g.new_in(), "trips": trips, "step": step}),
                            {"out": g.new_out(), "tag": "B", "pattern": "contig", "out_dtype": d}))
    P = int(np.prod(grid_of(k)))
    if k.mode == "1d" and P >= 2 and not any(st.kind != "store" for st in k.stmts) and g.chance(0.15):
        # the last statement: an early return under a constexpr `if` (on or off), then one more store
        # that only the programs below the limit reach
        on = g.chance(0.7)
        k.sizes["ER"] = int(on)
        g.feat(f"ext:early-return:{'on' if on else 'off'}")
        d = g.pick(["i32", "f32"])
        k.stmts.append(Stmt("store", Node("index", "i32", "B", a={"which": "offs"}),
                            {"out": g.new_out(), "tag": "B", "pattern": "contig", "out_dtype": d,
                             "guard": {"limit": int(g.rng.integers(1, P))}}))
    k.ext_args = set(k.ext_args) | {f"in{i}" for i in range(n_in, g.n_in)} | {f"out{i}" for i in range(n_out, g.n_out)}


def pointer_loop_extra(g, k):
    """A loop that advances pointers (`p += n` each iteration: a block at the tile's offsets, a scalar
    at the program id, or both), drawn after everything else, control_extras included, so earlier
    seeds give the same kernels; its statement goes before an early-return guard's store (which must
    stay last)."""
    if not g.chance(0.15):
        return
    n_in, n_out = g.n_in, g.n_out
    d = g.pick(["i32", "f32"])
    form = g.pick(["block", "scalar", "scalar+block"], [2, 1, 1])
    g.feat(f"ext:ptrloop:{form}")
    tag = "B" if k.mode == "1d" else "T"
    st = Stmt("store", Node("ptrloop", d, tag, a={"arg": g.new_in(), "trips": int(g.pick([1, 2, 3, 4])),
                                                  "form": form}),
              {"out": g.new_out(), "tag": tag, "pattern": "contig" if k.mode == "1d" else "rowmajor",
               "out_dtype": d})
    if k.mode != "1d":
        st.a["stride"] = g.stride_param()
    at = next((i for i, s in enumerate(k.stmts) if s.a.get("guard")), len(k.stmts))
    k.stmts.insert(at, st)
    k.ext_args = set(k.ext_args) | {f"in{i}" for i in range(n_in, g.n_in)} | {f"out{i}" for i in range(n_out, g.n_out)}


# ---------------------------------------------------------------------- blocks that overflow the UB
UB_FORMS = {"1d": ["map", "softmax", "cumsum"], "2d": ["rownorm", "dotloop"]}
UB_DOT_K = 32  # the K step of the `dotloop` form (two steps)


def ub_overflow_extra(g, k):
    """A statement on a block too large for one pass through the Ascend unified buffer (65536
    elements, a 128 x 256 fp32 tile), drawn after every other extra, so earlier seeds give the same
    kernels: each program computes its own block of a new input (a map, a three-phase softmax, a
    cumsum, a row and column normalisation, or a dot accumulated in a loop with a vector epilogue)
    and stores it; the block's tail is masked off in the last program. Kernels of at most 8 programs
    (the targets compute every program's whole block)."""
    if int(np.prod(grid_of(k))) > 8 or not g.chance(0.15):
        return
    n_in, n_out = g.n_in, g.n_out
    form = g.pick(UB_FORMS[k.mode])
    d = {"map": g.pick(["f32", "f16", "i32"]), "cumsum": "i32"}.get(form, "f32")
    a = {"form": form, "arg": g.new_in()}
    if k.mode == "1d":
        k.sizes["UB"] = 65536 if d == "f16" or g.chance(0.5) else 32768
        tag = "@UB"
    else:
        k.sizes["UBM"], k.sizes["UBN"] = g.pick([(128, 256), (64, 512)] if form != "dotloop" else [(128, 256)])
        tag = "@UBM,UBN"
        if form == "dotloop":
            a["arg2"] = g.new_in()
    k.sizes["UT"] = int(g.pick([0, 1, 3]))
    g.feat(f"ext:ubsplit:{form}")
    st = Stmt("store", Node("ubsplit", d, tag, a=a), {"out": g.new_out(), "tag": tag, "pattern": "ubsplit",
                                                      "out_dtype": d})
    at = next((i for i, s in enumerate(k.stmts) if s.a.get("guard")), len(k.stmts))
    k.stmts.insert(at, st)
    k.ext_args = set(k.ext_args) | {f"in{i}" for i in range(n_in, g.n_in)} | {f"out{i}" for i in range(n_out, g.n_out)}


def ub_index(m, k):
    """(flat indices, mask) of the big block of each program (ub_overflow_extra)."""
    z, P = k.sizes, m.P
    if k.mode == "1d":
        idx = m.pid[:, None] * z["UB"] + np.arange(z["UB"])[None, :]
        return idx, idx < P * z["UB"] - z["UT"]
    r = m.pid[:, None] * z["UBM"] + np.arange(z["UBM"])[None, :]
    c = np.arange(z["UBN"])
    mask = (r < P * z["UBM"] - z["UT"])[:, :, None] & (c < z["UBN"] - z["UT"])[None, None, :]
    return r[:, :, None] * z["UBN"] + c[None, None, :], mask


def ub_model(m, node):
    """The numpy model of a ubsplit node: (P, *block) values."""
    a, z, d = node.a, m.k.sizes, node.dtype
    idx, mask = ub_index(m, m.k)
    arr = m.inputs[a["arg"]].reshape(-1)
    x = np.where(mask, arr[np.minimum(idx, arr.size - 1)], 0).astype(np.float64)
    form, exact, red = a["form"], False, 1
    if form == "map":
        v = x * 3 + 1 if d == "i32" else np.where(x > 0, x * 2.0, x * 0.5) + 1.0
        exact = d == "i32"
    elif form == "softmax":
        e = np.exp(x - np.where(mask, x, -np.inf).max(axis=1, keepdims=True))
        v, red = e / np.where(mask, e, 0).sum(axis=1, keepdims=True), z["UB"]
    elif form == "cumsum":
        v, exact, red = np.cumsum(x, axis=1), True, z["UB"]
    elif form == "rownorm":
        v, red = x - x.max(axis=2, keepdims=True) + x.sum(axis=1, keepdims=True) * 0.25, z["UBM"]
    else:  # dotloop: small integers in f16, so every product and sum is exact
        rows = m.pid[:, None] * z["UBM"] + np.arange(z["UBM"])[None, :]
        live = rows < m.P * z["UBM"] - z["UT"]
        A = m.inputs[a["arg"]].astype(np.float64).reshape(-1, 2 * UB_DOT_K)
        B = m.inputs[a["arg2"]].astype(np.float64)
        v = np.einsum("pik,kj->pij", np.where(live[:, :, None], A[np.minimum(rows, len(A) - 1)], 0), B) * 0.5
        exact, red = True, 2 * UB_DOT_K
    v = v.astype(NP[d])
    return Val(v, np.ones(v.shape, bool), exact, float(np.abs(v.astype(np.float64)).max(initial=1)),
               None if d == "i32" else d, red)


def ub_inputs(node, k):
    """{arg: (dtype, shape, profile)} of a ubsplit node's inputs."""
    z, P, a = k.sizes, int(np.prod(grid_of(k))), node.a
    if k.mode == "1d":
        return {a["arg"]: (node.dtype, (P * z["UB"],), "small")}
    if a["form"] != "dotloop":
        return {a["arg"]: ("f32", (P * z["UBM"], z["UBN"]), "small")}
    return {a["arg"]: ("f16", (P * z["UBM"], 2 * UB_DOT_K), "ints"),
            a["arg2"]: ("f16", (2 * UB_DOT_K, z["UBN"]), "ints")}


def ub_out_shape(st, k):
    z, P = k.sizes, int(np.prod(grid_of(k)))
    return (P * z["UB"],) if k.mode == "1d" else (P * z["UBM"], z["UBN"])


def ub_params(k):
    """The constexprs of a kernel with a ubsplit statement."""
    z = k.sizes
    return [key for key in ("UB", "UBM", "UBN", "UT") if key in z]


def ub_src(r, node, v, ind):
    """The source of a ubsplit node (ub_model); the store (ub_store_src) uses its offsets and mask."""
    a, d = node.a, node.dtype
    progs = "tl.num_programs(0)" if r.k.mode == "1d" else "(tl.num_programs(0) * tl.num_programs(1))"
    if r.k.mode == "1d":
        r.emit(f"u_{v} = pid * UB + tl.arange(0, UB)", ind, node)
        r.emit(f"um_{v} = u_{v} < {progs} * UB - UT", ind)
        r.emit(f"x_{v} = tl.load({a['arg']} + u_{v}, mask=um_{v}, other=0)", ind)
        x = f"x_{v}"
        src = {"map": f"{x} * 3 + 1" if d == "i32" else f"tl.where({x} > 0, {x} * 2.0, {x} * 0.5) + 1.0",
               "cumsum": f"tl.cumsum({x}, 0)"}.get(a["form"])
        if src is None:  # softmax
            r.emit(f"e_{v} = tl.exp({x} - tl.max(tl.where(um_{v}, {x}, float('-inf')), 0))", ind)
            src = f"e_{v} / tl.sum(tl.where(um_{v}, e_{v}, 0.0), 0)"
        r.emit(f"{v} = {src}", ind)
        return v
    r.emit(f"ur_{v} = pid * UBM + tl.arange(0, UBM)", ind, node)
    r.emit(f"uc_{v} = tl.arange(0, UBN)", ind)
    r.emit(f"um_{v} = (ur_{v} < {progs} * UBM - UT)[:, None] & (uc_{v} < UBN - UT)[None, :]", ind)
    r.emit(f"u_{v} = ur_{v}[:, None] * UBN + uc_{v}[None, :]", ind)
    if a["form"] == "rownorm":
        r.emit(f"x_{v} = tl.load({a['arg']} + u_{v}, mask=um_{v}, other=0.0)", ind)
        r.emit(f"{v} = x_{v} - tl.max(x_{v}, 1)[:, None] + tl.sum(x_{v}, 0)[None, :] * 0.25", ind)
        return v
    kk = UB_DOT_K
    r.emit(f"{v} = tl.zeros((UBM, UBN), dtype=tl.float32)", ind)
    r.emit(f"uk_{v} = tl.arange(0, {kk})", ind)
    r.emit(f"for i_{v} in range(2):", ind)
    r.emit(f"a_{v} = tl.load({a['arg']} + ur_{v}[:, None] * {2 * kk} + (i_{v} * {kk} + uk_{v})[None, :], "
           f"mask=(ur_{v} < {progs} * UBM - UT)[:, None], other=0.0)", ind + 1)
    r.emit(f"b_{v} = tl.load({a['arg2']} + (i_{v} * {kk} + uk_{v})[:, None] * UBN + uc_{v}[None, :])", ind + 1)
    r.emit(f"{v} += tl.dot(a_{v}, b_{v}) * 0.5", ind + 1)
    return v


def ub_store_src(st, val):
    return f"tl.store({st.a['out']} + u_{val}, {val}, mask=um_{val})"


FAMILIES = ("mix", "classic", "paths")
FAMILY = "mix"  # the default of generate(); tools/fuzz.py --family sets it


def generate(seed, index, extensions=True, family=None):
    """Kernel number `index` of the campaign with seed `seed`: a valid kernel and its inputs.

    `family` (default FAMILY): "mix" draws a kernel of tools/fuzz_paths.py for about 30% of the indices
    of seeds >= fuzz_paths.FIRST_SEED (decided by a random stream of its own; earlier seeds are
    unchanged), "classic" never, "paths" always.

    Kernels the numpy model rejects (overflowing floats, out-of-range casts...) are redrawn. The
    newer features (tools/fuzz_ext.py) are drawn last, on a kernel the model accepts without them,
    and dropped when the model rejects them, so a kernel without them is the one earlier versions
    of the generator gave (`extensions=False` gives that kernel always).
    """
    family = family or FAMILY
    if family == "paths" or family == "mix" and _paths.drawn(seed, index):
        return _paths.generate(seed, index)
    for attempt in range(50):
        k = None
        for ext in (False, True) if extensions else (False,):
            g = Gen(np.random.default_rng([seed, index, attempt]), index, extensions=ext)
            cand = g.kernel(seed)
            try:
                Model(cand, make_inputs(cand)).run()
            except EvalError:
                if not ext:
                    break
                continue
            k = cand
        if k is not None:
            return k
    raise RuntimeError(f"no valid kernel for seed {seed} index {index}")


# the newer features (join/split/sort/..., block pointers, tensor descriptors, dot variants): their
# generator, numpy model and renderer, in a module of their own
try:
    from . import fuzz_ext as _ext
except ImportError:
    import fuzz_ext as _ext
_ext.install(sys.modules[__name__])
# the "paths" family, kernels shaped for the ascend target's newer lowering paths
try:
    from . import fuzz_paths as _paths
except ImportError:
    import fuzz_paths as _paths
_paths.install(sys.modules[__name__])
