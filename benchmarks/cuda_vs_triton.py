"""xblock's cuda target against Triton and torch on one GPU, side by side in one process.

The same algorithms compiled by xblock (the xblock-language examples, and the unmodified Triton
sources of examples/triton/ through `xblock.jit`) and by Triton directly, and torch, timed with
`triton.testing.do_bench` (median, CUDA events). Every output is checked against torch first.

  python benchmarks/cuda_vs_triton.py --precompile        # no GPU needed: compile xblock's kernels
  python benchmarks/cuda_vs_triton.py [--only add,matmul] [--json out.json]   # on the GPU
  python benchmarks/cuda_vs_triton.py --compile-times     # frontend + lowering vs Triton's stages

On a GPU machine without MLIR, xblock's kernels must come from the cache (--precompile elsewhere,
then carry XBLOCK_CACHE_DIR or a bundle).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import xblock  # noqa: E402

ADD_N = 1 << 28
SOFTMAX = (32768, 4096)
LAYERNORM = (16384, 8192)
GELU_N = 1 << 28
MATMUL_SIZES = (4096, 8192)
# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages)
MATMUL_CONFIGS = [(128, 256, 64, 8, 8, 3), (128, 256, 64, 8, 8, 4), (128, 256, 64, 4, 8, 4), (128, 256, 64, 16, 8, 4)]
PERSISTENT_CONFIGS = [(128, 256, 64, 8, 8, 3), (128, 256, 64, 8, 8, 4)]
NUM_SMS = 132  # H200
SOFTMAX_WARPS = 8
LAYERNORM_CFG = (8192, 8)  # BLOCK, num_warps (tutorial 05: 64 KB / element size, capped by N)
GELU_CONFIGS = [(1024, 4), (4096, 4), (8192, 8)]  # BLOCK, num_warps
LAUNCHES = 5000


# ------------------------------------------------------------------------------------ Triton twins
def _triton_kernels():
    """Triton versions of the examples that have no twin in examples/triton (same bodies)."""
    @triton.jit
    def softmax_rows(out_ptr, x_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
        num = tl.exp(x - tl.max(x, axis=0))
        out = num / tl.sum(num, axis=0)
        tl.store(out_ptr + row * out_row_stride + cols, out, mask=mask)

    @triton.jit
    def tanh_via_exp(u):
        e = tl.exp(-2.0 * tl.abs(u))
        t = (1.0 - e) / (1.0 + e)
        return tl.where(u >= 0, t, -t)

    @triton.jit
    def gelu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        y = 0.5 * x * (1.0 + tanh_via_exp(u))
        tl.store(out_ptr + offs, y, mask=mask)

    return softmax_rows, gelu


_PERSISTENT = None


def persistent_matmul():
    """Tutorial-09-style persistent matmul (no TMA): NUM_SMS programs walk the tiles; leaky_relu epilogue.

    Written once in triton.language; xblock compiles the same source through `xblock.jit`.
    """
    global _PERSISTENT
    if _PERSISTENT is not None:
        return _PERSISTENT

    @triton.jit
    def matmul_persistent(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                          stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                          GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
        start_pid = tl.program_id(0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        k_tiles = tl.cdiv(K, BLOCK_K)
        num_tiles = num_pid_m * num_pid_n
        num_pid_in_group = GROUP_M * num_pid_n
        for tile_id in range(start_pid, num_tiles, NUM_SMS):
            group_id = tile_id // num_pid_in_group
            first_pid_m = group_id * GROUP_M
            group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
            pid_m = first_pid_m + (tile_id % group_size_m)
            pid_n = (tile_id % num_pid_in_group) // group_size_m
            offs_am = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_bn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
            offs_am = tl.where(offs_am < M, offs_am, 0)
            offs_bn = tl.where(offs_bn < N, offs_bn, 0)
            offs_am = tl.max_contiguous(tl.multiple_of(offs_am, BLOCK_M), BLOCK_M)
            offs_bn = tl.max_contiguous(tl.multiple_of(offs_bn, BLOCK_N), BLOCK_N)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for ki in range(k_tiles):
                offs_k = ki * BLOCK_K + tl.arange(0, BLOCK_K)
                a = tl.load(a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak,
                            mask=offs_k[None, :] < K, other=0.0)
                b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn,
                            mask=offs_k[:, None] < K, other=0.0)
                acc = tl.dot(a, b, acc)
            acc = tl.where(acc >= 0, acc, 0.01 * acc)
            offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
            c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
            tl.store(c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn, acc.to(tl.float16),
                     mask=c_mask)

    _PERSISTENT = (matmul_persistent, xblock.jit(matmul_persistent))
    return _PERSISTENT


# ------------------------------------------------------------------------------------ workloads
class Env:
    """Allocates tensors (torch on the GPU, or TensorSpecs when precompiling) and launches."""

    def __init__(self, precompile: bool, arch=None):
        self.precompile = precompile
        self.arch = arch
        if not precompile:
            import torch

            self.torch = torch

    def empty(self, shape, dtype):
        if self.precompile:
            from xblock.backends.cuda.precompile import TensorSpec

            return TensorSpec(shape, dtype)
        return self.torch.empty(shape, dtype=getattr(self.torch, dtype), device="cuda")

    def randn(self, shape, dtype, scale=1.0, shift=0.0):
        if self.precompile:
            return self.empty(shape, dtype)
        t = self.torch.randn(shape, dtype=self.torch.float32, device="cuda") * scale + shift
        return t.to(getattr(self.torch, dtype))

    def xblock(self, kernel, grid, args, meta):
        """A zero-argument callable launching an xblock kernel (compiled now when precompiling)."""
        if self.precompile:
            from xblock.backends.cuda.precompile import precompile

            opts = {"arch": self.arch} if self.arch else {}
            precompile(kernel, args, meta, **opts)
            return None
        return lambda: kernel[grid](*args, **meta)


def _xk(fn):
    return fn if isinstance(fn, xblock.JITFunction) else xblock.jit(fn)


def w_add(env):
    from examples import add
    from examples.triton import add as tadd

    n = ADD_N
    x, y, out = env.randn(n, "float32"), env.randn(n, "float32"), env.empty(n, "float32")
    grid = (xblock.cdiv(n, 1024),)
    rows = {
        "xblock": env.xblock(add.add_kernel, grid, (x, y, out, n), dict(BLOCK=1024)),
        "xblock (tl source)": env.xblock(_xk(tadd.add_kernel), grid, (x, y, out, n), dict(BLOCK_SIZE=1024)),
    }
    if env.precompile:
        return None
    torch = env.torch
    rows["triton"] = lambda: tadd.add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)
    rows["torch"] = lambda: torch.add(x, y, out=out)
    return dict(rows=rows, out=out, ref=lambda: x + y, bytes=3 * 4 * n, flops=None)


def w_softmax(env):
    from examples import softmax

    M, N = SOFTMAX
    x, out = env.randn((M, N), "float32", 3.0), env.empty((M, N), "float32")
    meta = dict(BLOCK=N, num_warps=SOFTMAX_WARPS)
    rows = {"xblock": env.xblock(softmax.softmax_kernel, (M,), (out, x, N, N, N), meta)}
    if env.precompile:
        return None
    torch = env.torch
    softmax_rows, _ = _triton_kernels()
    rows["triton"] = lambda: softmax_rows[(M,)](out, x, N, N, N, BLOCK=N, num_warps=SOFTMAX_WARPS)
    rows["torch"] = lambda: torch.softmax(x, dim=1)
    return dict(rows=rows, out=out, ref=lambda: torch.softmax(x, dim=1), bytes=2 * 4 * M * N, flops=None)


def w_layernorm(env):
    from examples import layernorm
    from examples.triton import layernorm as tln

    M, N = LAYERNORM
    block, warps = LAYERNORM_CFG
    x = env.randn((M, N), "float32", 2.0, 0.5)
    w, b = env.randn(N, "float32", 0.1, 1.0), env.randn(N, "float32")
    y, mean, rstd = env.empty((M, N), "float32"), env.empty(M, "float32"), env.empty(M, "float32")
    args = (x, y, w, b, mean, rstd, N, N, 1e-5)
    rows = {
        "xblock": env.xblock(layernorm.layernorm_kernel, (M,), args, dict(BLOCK=block, num_warps=warps)),
        "xblock (tl source)": env.xblock(_xk(tln._layer_norm_fwd_fused), (M,), args,
                                         dict(BLOCK_SIZE=block, num_warps=warps)),
    }
    if env.precompile:
        return None
    torch = env.torch
    rows["triton"] = lambda: tln._layer_norm_fwd_fused[(M,)](*args, BLOCK_SIZE=block, num_warps=warps)
    rows["torch"] = lambda: torch.nn.functional.layer_norm(x, (N,), w, b, 1e-5)
    ref = lambda: torch.nn.functional.layer_norm(x, (N,), w, b, 1e-5)
    return dict(rows=rows, out=y, ref=ref, bytes=2 * 4 * M * N, flops=None)


def w_gelu(env):
    from examples import gelu

    n = GELU_N
    x, out = env.randn(n, "float16"), env.empty(n, "float16")
    rows = {}
    tgelu = None if env.precompile else _triton_kernels()[1]
    for block, warps in GELU_CONFIGS:
        grid = (xblock.cdiv(n, block),)
        rows[f"xblock BLOCK={block} w{warps}"] = env.xblock(gelu.gelu_kernel, grid, (x, out, n),
                                                            dict(BLOCK=block, num_warps=warps))
        if tgelu is not None:
            rows[f"triton BLOCK={block} w{warps}"] = (lambda g=grid, b=block, w=warps:
                                                      tgelu[g](x, out, n, BLOCK=b, num_warps=w))
    if env.precompile:
        return None
    torch = env.torch
    rows["torch"] = lambda: torch.nn.functional.gelu(x, approximate="tanh")
    ref = lambda: torch.nn.functional.gelu(x.float(), approximate="tanh").half()
    return dict(rows=rows, out=out, ref=ref, bytes=2 * 2 * n, flops=None)


def w_matmul(env, size):
    from examples import matmul
    from examples.triton import matmul as tmm

    M = N = K = size
    a, b, c = env.randn((M, K), "float16"), env.randn((K, N), "float16", K ** -0.5), env.empty((M, N), "float16")
    strides = (K, 1, N, 1, N, 1)
    rows = {}
    for bm, bn, bk, gm, warps, stages in MATMUL_CONFIGS:
        grid = (xblock.cdiv(M, bm) * xblock.cdiv(N, bn),)
        cfg = f"{bm}x{bn}x{bk} g{gm} w{warps} s{stages}"
        meta = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, num_warps=warps, num_stages=stages)
        tmeta = dict(BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=gm, ACTIVATION="leaky_relu",
                     num_warps=warps, num_stages=stages)
        args = (a, b, c, M, N, K) + strides
        rows[f"xblock {cfg}"] = env.xblock(matmul.matmul_kernel, grid, args, meta)
        rows[f"xblock (tl source) {cfg}"] = env.xblock(tmm.kernel(), grid, args, tmeta)
        if not env.precompile:
            rows[f"triton {cfg}"] = (lambda g=grid, t=tmeta, ar=args: tmm.matmul_kernel[g](*ar, **t))
    tp, xp = persistent_matmul()
    for bm, bn, bk, gm, warps, stages in PERSISTENT_CONFIGS:
        cfg = f"{bm}x{bn}x{bk} g{gm} w{warps} s{stages}"
        grid = (min(NUM_SMS, xblock.cdiv(M, bm) * xblock.cdiv(N, bn)),)
        meta = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, NUM_SMS=NUM_SMS, num_warps=warps,
                    num_stages=stages)
        args = (a, b, c, M, N, K) + strides
        rows[f"xblock persistent {cfg}"] = env.xblock(xp, grid, args, meta)
        if not env.precompile:
            rows[f"triton persistent {cfg}"] = (lambda g=grid, m=meta, ar=args: tp[g](*ar, **m))
    if env.precompile:
        return None
    torch = env.torch
    rows["torch"] = lambda: torch.nn.functional.leaky_relu(a @ b, 0.01)
    ref = lambda: torch.nn.functional.leaky_relu(a @ b, 0.01)
    return dict(rows=rows, out=c, ref=ref, bytes=None, flops=2 * M * N * K)


# (Z, H, seq, head_dim) and (BLOCK_M, BLOCK_N, num_warps, num_stages) per head dim
ATTENTION = (4, 32, 4096)
ATTENTION_CFG = {64: (128, 64, 4, 3), 128: (128, 64, 8, 3)}
PERSISTENT_SUBTILE = (8192, (128, 256, 64, 8, 8, 3))


def w_attention(env, head_dim, causal, dtype="float16"):
    """examples/triton/attention.py (tutorial-06-style forward), xblock vs Triton, same source."""
    from examples.triton import attention as att

    z, h, n = ATTENTION
    bm, bn, warps, stages = ATTENTION_CFG[head_dim]
    q, k, v = (env.randn((z, h, n, head_dim), dtype) for _ in range(3))
    o = env.empty((z, h, n, head_dim), dtype)
    scale = head_dim ** -0.5
    args = (q, k, v, o, scale, h * n * head_dim, n * head_dim, head_dim, h, n)
    meta = dict(HEAD_DIM=head_dim, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, num_warps=warps, num_stages=stages)
    grid = att.grid(n, z, h, bm)
    rows = {"xblock": env.xblock(att.attention_fwd, grid, args, meta)}
    if env.precompile:
        return None
    rows["triton"] = lambda: att.attention_fwd[grid](*args, **meta)
    torch = env.torch
    rows["torch sdpa"] = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    ref = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    flops = 4 * z * h * n * n * head_dim // (2 if causal else 1)
    return dict(rows=rows, out=o, ref=ref, bytes=None, flops=flops)


def w_persistent_subtile(env):
    """examples/triton/persistent_matmul.py: flatten=True tile loop, reshape/permute/split epilogue."""
    from examples.triton import persistent_matmul as pm

    size, (bm, bn, bk, gm, warps, stages) = PERSISTENT_SUBTILE
    a, b = env.randn((size, size), "float16"), env.randn((size, size), "float16", size ** -0.5)
    c = env.empty((size, size), "float16")
    grid = (min(NUM_SMS, xblock.cdiv(size, bm) * xblock.cdiv(size, bn)),)
    args = (a, b, c, size, size, size, size, 1, size, 1, size, 1)
    rows = {}
    for subtile in (False, True):
        meta = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, NUM_SMS=NUM_SMS, EPILOGUE_SUBTILE=subtile,
                    num_warps=warps, num_stages=stages)
        rows[f"xblock subtile={subtile}"] = env.xblock(pm.matmul_persistent, grid, args, meta)
        if not env.precompile:
            rows[f"triton subtile={subtile}"] = (lambda m=meta: pm.matmul_persistent[grid](*args, **m))
    if env.precompile:
        return None
    rows["torch"] = lambda: a @ b
    return dict(rows=rows, out=c, ref=lambda: a @ b, bytes=None, flops=2 * size ** 3)


WORKLOADS = {
    "add": ("vector add fp32 2^28", w_add),
    "softmax": (f"softmax fp32 {SOFTMAX[0]}x{SOFTMAX[1]}", w_softmax),
    "layernorm": (f"layernorm fp32 {LAYERNORM[0]}x{LAYERNORM[1]}", w_layernorm),
    "gelu": ("gelu (tanh) fp16 2^28", w_gelu),
    **{f"matmul{s}": (f"matmul fp16 + leaky_relu {s}^3", (lambda env, s=s: w_matmul(env, s))) for s in MATMUL_SIZES},
    **{f"attention{d}{'c' if c else ''}": (f"attention fwd fp16 {ATTENTION} d{d}{' causal' if c else ''}",
                                          (lambda env, d=d, c=c: w_attention(env, d, c)))
       for d in (64, 128) for c in (False, True)},
    "persistent": (f"persistent matmul fp16 {PERSISTENT_SUBTILE[0]}^3 (flatten, subtile epilogue)",
                   w_persistent_subtile),
}


def w_launch_precompile(env):
    from examples import add

    x, y, out = env.empty(1024, "float32"), env.empty(1024, "float32"), env.empty(1024, "float32")
    env.xblock(add.add_kernel, (1,), (x, y, out, 1024), dict(BLOCK=1024))


def precompile(arch=None, only=None):
    """Compile every xblock kernel the GPU run launches (no GPU needed)."""
    env = Env(True, arch)
    for name, (_, fn) in WORKLOADS.items():
        if only is None or name in only:
            fn(env)
    w_launch_precompile(env)


# ------------------------------------------------------------------------------------ timing
def _check(w, torch, name):
    ref = w["ref"]().float()
    got = w["out"].float()
    err = ((got - ref).norm() / ref.norm()).item()
    return err


def run_workload(key, env, results):
    import triton.testing

    torch = env.torch
    title, fn = WORKLOADS[key]
    w = fn(env)
    print(f"\n== {title}", flush=True)
    for label, launch in w["rows"].items():
        entry = {"workload": key, "title": title, "impl": label}
        try:
            if not label.startswith("torch"):
                w["out"].fill_(float("nan"))
                launch()
                torch.cuda.synchronize()
                entry["rel_err"] = _check(w, torch, label)
            rep = 500 if w["flops"] else 200  # matmuls: more repetitions, their rows differ by ~1%
            ms = triton.testing.do_bench(launch, warmup=25, rep=rep, return_mode="median")
        except Exception as e:  # keep going: one failing row must not lose the run
            entry["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            print(f"  {label:42s} ERROR {entry['error']}", flush=True)
            results.append(entry)
            continue
        entry["ms"] = ms
        if w["bytes"]:
            entry["GBps"] = w["bytes"] / ms / 1e6
        if w["flops"]:
            entry["TFLOPs"] = w["flops"] / ms / 1e9
        results.append(entry)
        extra = f"{entry.get('GBps', 0):8.0f} GB/s" if w["bytes"] else f"{entry['TFLOPs']:8.1f} TFLOP/s"
        err = f"err {entry['rel_err']:.1e}" if "rel_err" in entry else ""
        print(f"  {label:46s} {ms:8.4f} ms {extra}  {err}", flush=True)
    del w
    torch.cuda.empty_cache()


def copy_ceiling(env, results):
    import triton.testing

    torch = env.torch
    x = torch.empty(1 << 28, dtype=torch.float32, device="cuda").normal_()
    y = torch.empty_like(x)
    ms = triton.testing.do_bench(lambda: y.copy_(x), warmup=25, rep=200, return_mode="median")
    gbps = 2 * x.numel() * 4 / ms / 1e6
    results.append({"workload": "copy", "impl": "torch copy_ 1 GiB", "ms": ms, "GBps": gbps})
    print(f"\n== device copy ceiling (1 GiB read + 1 GiB written): {ms:.4f} ms, {gbps:.0f} GB/s", flush=True)


def launch_overhead(env, results):
    """Wall-clock per launch of a 1024-element add, from Python, LAUNCHES launches back to back."""
    from examples import add
    from examples.triton import add as tadd

    torch = env.torch
    x, y, out = (torch.randn(1024, device="cuda") for _ in range(3))
    ck = xblock.compile(add.add_kernel, target="cuda", constexprs={"BLOCK": 1024},
                        signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"})
    args = [x, y, out, 1024]
    fns = {
        "xblock kernel[grid](...)": lambda: add.add_kernel[(1,)](x, y, out, 1024, BLOCK=1024),
        "xblock compiled kernel ck[grid](...)": lambda: ck[(1,)](x, y, out, 1024),
        "xblock launcher only ck.launcher(grid, args)": lambda: ck.launcher((1, 1, 1), args),
        "triton kernel[grid](...)": lambda: tadd.add_kernel[(1,)](x, y, out, 1024, BLOCK_SIZE=1024),
        "torch.add(out=)": lambda: torch.add(x, y, out=out),
    }
    print("\n== launch overhead (wall clock per launch, small kernel)", flush=True)
    for label, fn in fns.items():
        for _ in range(200):
            fn()
        torch.cuda.synchronize()
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(LAUNCHES):
                fn()
            torch.cuda.synchronize()
            best = min(best, (time.perf_counter() - t0) / LAUNCHES * 1e6)
        results.append({"workload": "launch", "impl": label, "us": best})
        print(f"  {label:42s} {best:8.2f} us/launch", flush=True)


# ------------------------------------------------------------------------------------ compile times
def compile_times(results):
    """Per example: xblock frontend+passes, lowering to TTIR, and Triton's stages (uncached)."""
    import importlib
    import tempfile

    os.environ["XBLOCK_CACHE_DIR"] = tempfile.mkdtemp(prefix="xblock-ct-")
    from tests.cuda.support import EXAMPLES, example_case
    from xblock.backends.cuda import pipeline
    from xblock.backends.cuda.lowering import emit_ttir
    from xblock.backends.cuda.options import CudaOptions
    from xblock.frontend.codegen import generate
    from xblock.frontend.types import parse_signature_type
    from xblock.passes import run_pipeline

    pipeline.ttir_dialect()  # one-time Triton import and probe, outside the timings
    print("\n== compile time per kernel (ms): frontend+passes | lowering to TTIR | Triton's stages", flush=True)
    for name in EXAMPLES:
        case = example_case(name)
        mod = importlib.import_module("examples." + name)
        assert mod
        k = case.kernel
        from tests.cuda.support import fake_args

        _, spec, _ = k.specialize(k.bind(fake_args(case.args), dict(case.meta)))
        constexprs = dict(spec.constexprs)
        for n in spec.equal_to_1:
            constexprs.setdefault(n, 1)
        arg_types = {n: parse_signature_type(s) for n, s in spec.arg_types.items()}
        t0 = time.perf_counter()
        module = generate(k.source, arg_types, constexprs, spec.divisibility)
        with module.context:
            run_pipeline(module)
        t1 = time.perf_counter()
        emit_ttir(module, pipeline.ttir_dialect())
        t2 = time.perf_counter()
        stages = pipeline.stages(CudaOptions(arch=90))
        meta = {"name": k.__name__, "file": k.source.file, "line": 1}
        cur = module
        for ext, st in stages.items():
            cur = st(cur, meta)
        t3 = time.perf_counter()
        row = {"workload": "compile", "impl": name, "frontend_ms": (t1 - t0) * 1e3, "lowering_ms": (t2 - t1) * 1e3,
               "triton_ms": (t3 - t2) * 1e3}
        results.append(row)
        print(f"  {name:20s} {row['frontend_ms']:7.1f} | {row['lowering_ms']:6.1f} | {row['triton_ms']:7.1f}",
              flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--precompile", action="store_true")
    ap.add_argument("--arch", type=int, default=None)
    ap.add_argument("--compile-times", action="store_true")
    ap.add_argument("--only", default=None, help="comma-separated: " + ",".join(WORKLOADS) + ",copy,launch")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    only = set(a.only.split(",")) if a.only else None
    results = []
    if a.precompile:
        precompile(a.arch, only)
        print("precompiled into", os.environ.get("XBLOCK_CACHE_DIR", "the default cache"))
        return 0
    if a.compile_times:
        compile_times(results)
    else:
        import torch

        env = Env(False)
        print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, "
              f"triton {__import__('triton').__version__}, {time.strftime('%Y-%m-%d %H:%M')}", flush=True)
        if only is None or "copy" in only:
            copy_ceiling(env, results)
        for key in WORKLOADS:
            if only is None or key in only:
                run_workload(key, env, results)
        if only is None or "launch" in only:
            launch_overhead(env, results)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
