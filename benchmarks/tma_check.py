"""Tensor descriptors on the TMA path (cuda, sm_90): check against torch, time against Triton.

Four kernels, one @triton.jit source each, compiled by xblock (`xblock.jit`) and by Triton in the
same process: a matmul through descriptors made in the kernel (`tl.make_tensor_descriptor`, which
needs global scratch memory: xblock's launcher provides it, Triton's needs `triton.set_allocator`),
the same matmul through host `TensorDescriptor` arguments, a scaled copy through host descriptors,
and a split-K matmul whose programs add their tiles with `desc.atomic_add` (a TMA reduction).
Every xblock output is checked against torch, and xblock's PTX must use TMA (`cp.async.bulk.tensor`).

  python benchmarks/tma_check.py --precompile      # no GPU needed: compile xblock's kernels (sm_90)
  python benchmarks/tma_check.py [--only matmul_device,copy] [--json out.json]    # on the GPU

On a GPU machine without MLIR, xblock's kernels come from the cache: run --precompile with the same
sources and Triton version elsewhere, and carry XBLOCK_CACHE_DIR (or an `xblock cache export` bundle).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import xblock  # noqa: E402

MATMUL = dict(M=4096, N=4096, K=4096, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=8, num_stages=3)
SPLIT_K = dict(M=2048, N=2048, K=4096, BLOCK_M=128, BLOCK_N=128, BLOCK_K=256, num_warps=8, num_stages=1)
COPY = dict(M=16384, N=8192, BM=64, BN=128, num_warps=4)


@triton.jit
def matmul_device(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    om = tl.program_id(0) * BLOCK_M
    on = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        acc = tl.dot(a_desc.load([om, k * BLOCK_K]), b_desc.load([k * BLOCK_K, on]), acc)
    c_desc.store([om, on], acc.to(tl.float16))


@triton.jit
def matmul_host(a_desc, b_desc, c_desc, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    om = tl.program_id(0) * BLOCK_M
    on = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        acc = tl.dot(a_desc.load([om, k * BLOCK_K]), b_desc.load([k * BLOCK_K, on]), acc)
    c_desc.store([om, on], acc.to(tl.float16))


@triton.jit
def split_k(a_desc, b_desc, c_desc, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    om = tl.program_id(0) * BLOCK_M
    on = tl.program_id(1) * BLOCK_N
    ok = tl.program_id(2) * BLOCK_K
    c_desc.atomic_add([om, on], tl.dot(a_desc.load([om, ok]), b_desc.load([ok, on])))


@triton.jit
def copy_scaled(x_desc, y_desc, scale, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0) * BM
    pn = tl.program_id(1) * BN
    y_desc.store([pm, pn], x_desc.load([pm, pn]) * scale)


# ------------------------------------------------------------------------------------ workloads
class Env:
    """Tensors (torch on the GPU, `TensorSpec` stand-ins with --precompile) and the descriptor class."""

    def __init__(self, precompile: bool):
        self.precompile = precompile
        if precompile:
            from xblock.backends.cuda.precompile import TensorSpec
            from xblock.runtime.args import TensorDescriptor

            self.torch, self.Descriptor = None, TensorDescriptor
            self.empty = lambda shape, dtype: TensorSpec(shape, dtype)
        else:
            import torch
            from triton.tools.tensor_descriptor import TensorDescriptor

            self.torch, self.Descriptor = torch, TensorDescriptor
            torch.manual_seed(0)
            dt = {"float16": torch.float16, "float32": torch.float32}
            self.empty = lambda shape, dtype: torch.randn(shape, dtype=dt[dtype], device="cuda")

    def desc(self, t, block):
        shape = list(t.shape)
        return self.Descriptor(t, shape, [shape[1], 1], block)


def w_matmul(env, host: bool):
    c = MATMUL
    m, n, k, bm, bn, bk = c["M"], c["N"], c["K"], c["BLOCK_M"], c["BLOCK_N"], c["BLOCK_K"]
    a, b, out = env.empty((m, k), "float16"), env.empty((k, n), "float16"), env.empty((m, n), "float16")
    meta = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=c["num_warps"], num_stages=c["num_stages"])
    if host:
        args = (env.desc(a, [bm, bk]), env.desc(b, [bk, bn]), env.desc(out, [bm, bn]), k)
    else:
        args = (a, b, out, m, n, k)
    return dict(kernel=matmul_host if host else matmul_device, grid=(m // bm, n // bn), args=args, meta=meta,
                out=out, ref=lambda: (a @ b), flops=2 * m * n * k)


def w_split_k(env):
    c = SPLIT_K
    m, n, k, bm, bn, bk = c["M"], c["N"], c["K"], c["BLOCK_M"], c["BLOCK_N"], c["BLOCK_K"]
    a, b, out = env.empty((m, k), "float16"), env.empty((k, n), "float16"), env.empty((m, n), "float32")
    meta = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=c["num_warps"], num_stages=c["num_stages"])
    args = (env.desc(a, [bm, bk]), env.desc(b, [bk, bn]), env.desc(out, [bm, bn]))
    if env.torch is not None:
        out.zero_()
    return dict(kernel=split_k, grid=(m // bm, n // bn, k // bk), args=args, meta=meta, out=out,
                ref=lambda: a.float() @ b.float(), flops=2 * m * n * k, reset=lambda: out.zero_())


def w_copy(env):
    c = COPY
    m, n = c["M"], c["N"]
    x, y = env.empty((m, n), "float32"), env.empty((m, n), "float32")
    meta = dict(BM=c["BM"], BN=c["BN"], num_warps=c["num_warps"])
    args = (env.desc(x, [c["BM"], c["BN"]]), env.desc(y, [c["BM"], c["BN"]]), 3.0)
    return dict(kernel=copy_scaled, grid=(m // c["BM"], n // c["BN"]), args=args, meta=meta, out=y,
                ref=lambda: 3.0 * x, bytes=2 * m * n * 4)


WORKLOADS = {
    "matmul_device": ("matmul, in-kernel descriptors (4096^3 fp16)", lambda env: w_matmul(env, False)),
    "matmul_host": ("matmul, host TensorDescriptor arguments (4096^3 fp16)", lambda env: w_matmul(env, True)),
    "split_k": ("split-K matmul, desc.atomic_add into fp32 (2048x2048x4096)", w_split_k),
    "copy": ("scaled copy through host descriptors (16384x8192 fp32)", w_copy),
}


def precompile(only=None, arch=90):
    """Compile every xblock kernel the GPU run launches, for `arch` (no GPU needed); check they use TMA."""
    env = Env(True)
    for name, (title, make) in WORKLOADS.items():
        if only is None or name in only:
            w = make(env)
            ck = xblock.jit(w["kernel"]).warmup(*w["args"], target="cuda", arch=arch, **w["meta"])
            tma = "cp.async.bulk.tensor" in ck.asm["ptx"]
            print(f"{name:14s} compiled for sm_{arch}: TMA in PTX: {tma}; {title}")
            if not tma:
                raise SystemExit(f"{name}: xblock's PTX does not use TMA")


# ------------------------------------------------------------------------------------ the GPU run
def run(only=None):
    import torch
    import triton.testing

    env = Env(False)
    results = []
    for name, (title, make) in WORKLOADS.items():
        if only is not None and name not in only:
            continue
        w = make(env)
        kernel, grid, args, meta = w["kernel"], w["grid"], w["args"], w["meta"]
        xk = xblock.jit(kernel)
        ck = xk.warmup(*args, target="cuda", **meta)
        tma = "cp.async.bulk.tensor" in ck.asm["ptx"]
        xk[grid](*args, **meta)  # before any triton.set_allocator: xblock provides the scratch itself
        torch.cuda.synchronize()
        ref = w["ref"]().float()
        err = ((w["out"].float() - ref).norm() / ref.norm()).item()
        triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
        reset = w.get("reset", lambda: None)

        def xblock_run():
            reset()
            xk[grid](*args, **meta)

        def triton_run():
            reset()
            kernel[grid](*args, **meta)

        t_x = triton.testing.do_bench(xblock_run)
        t_t = triton.testing.do_bench(triton_run)
        rate = (f"{w['flops'] / t_x / 1e9:.0f} TFLOP/s" if "flops" in w else f"{w['bytes'] / t_x / 1e6:.0f} GB/s")
        print(f"{name:14s} TMA {tma}  rel err {err:.2e}  xblock {t_x * 1e3:8.1f} us  Triton {t_t * 1e3:8.1f} us  "
              f"ratio {t_t / t_x:.3f}  ({rate}; {title})", flush=True)
        results.append(dict(workload=name, title=title, tma=tma, rel_err=err, xblock_ms=t_x, triton_ms=t_t))
        if not tma or err > 1e-2:
            print(f"  FAILED: {'no TMA in the PTX' if not tma else 'result differs from torch'}", flush=True)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--precompile", action="store_true", help="compile xblock's kernels (no GPU needed)")
    ap.add_argument("--arch", type=int, default=90)
    ap.add_argument("--only", default=None, help="comma-separated: " + ",".join(WORKLOADS))
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    only = set(a.only.split(",")) if a.only else None
    if a.precompile:
        precompile(only, a.arch)
        return
    results = run(only)
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    if any(not r["tma"] or r["rel_err"] > 1e-2 for r in results):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
