"""The cpu target against numpy, side by side in one run (figures go to docs/BENCHMARKS.md, "CPU").

Run: `.venv/bin/python benchmarks/cpu_vs_numpy.py [--quick]`. Prints one table row per goal of
issue 3: vector add (one thread, all cores), softmax, layernorm, matmul against numpy `@`,
cold compile time per example kernel, and warm launch overhead; and vectorized math (exp, log,
sin, tanh) against numpy's ufuncs, which has no goal.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("XBLOCK_CACHE_DIR", tempfile.mkdtemp(prefix="xblock-bench-"))

import xblock  # noqa: E402
import xblock.language as xl  # noqa: E402
from xblock.backends.cpu.launch import cores  # noqa: E402


def pair(ours, ref, rep=15) -> tuple:
    """Medians of `ours` and `ref`, timed alternately so that both see the same machine load."""
    for f in (ours, ref):
        f()
    ts = ([], [])
    for _ in range(rep):
        for k, f in enumerate((ours, ref)):
            t0 = time.perf_counter()
            f()
            ts[k].append(time.perf_counter() - t0)
    return float(np.median(ts[0])), float(np.median(ts[1]))


def row(name, size, ours, ref, goal, higher_is_better=True):
    ratio = ref / ours
    ok = ratio >= goal
    print(f"| {name} | {size} | {ours * 1e3:.2f} ms | {ref * 1e3:.2f} ms | {ratio:.2f}x | "
          f"{goal}x: {'met' if ok else 'not met'} |", flush=True)


def bench_add(rep):
    import examples.add as m

    n = 1 << 24
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    out, ref = np.empty_like(x), np.empty_like(x)
    block = 4096
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    grid = (xblock.cdiv(n, block),)
    for threads, label in ((1, "one thread"), (0, f"{cores()} cores")):
        ck = xblock.compile(m.add_kernel, target="cpu", signature=sig, constexprs={"BLOCK": block},
                            num_threads=threads)
        launch = ck[grid]
        t, t_np = pair(lambda: launch(x, y, out, n), lambda: np.add(x, y, out=ref), rep)
        assert np.array_equal(out, x + y)
        row(f"vector add fp32, {label}", "2^24", t, t_np, 0.95 if threads == 1 else 1.0)


def bench_softmax(rep):
    import examples.softmax as m

    R, C = 4096, 1024
    x = np.random.default_rng(0).standard_normal((R, C), dtype=np.float32)
    out = np.empty_like(x)

    def ref():
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    run = lambda: m.softmax_kernel[(R,)](out, x, C, C, C, BLOCK=C)  # noqa: E731
    t, t_np = pair(run, ref, rep)
    np.testing.assert_allclose(out, ref(), rtol=1e-5, atol=1e-6)
    row("softmax fp32", f"{R}x{C}", t, t_np, 3)


def bench_layernorm(rep):
    import examples.layernorm as m

    R, C, eps = 4096, 1024, 1e-5
    rng = np.random.default_rng(0)
    x = rng.standard_normal((R, C), dtype=np.float32)
    w, b = rng.standard_normal(C, dtype=np.float32), rng.standard_normal(C, dtype=np.float32)
    y, mean, rstd = np.empty_like(x), np.empty(R, np.float32), np.empty(R, np.float32)

    def ref():
        mu = x.mean(axis=1, keepdims=True)
        d = x - mu
        r = 1 / np.sqrt((d * d).mean(axis=1, keepdims=True) + eps)
        return d * r * w + b

    run = lambda: m.layernorm_kernel[(R,)](x, y, w, b, mean, rstd, C, C, eps, BLOCK=1024)  # noqa: E731
    t, t_np = pair(run, ref, rep)
    np.testing.assert_allclose(y, ref(), rtol=1e-4, atol=1e-4)
    row("layernorm fp32", f"{R}x{C}", t, t_np, 2)


def bench_matmul(rep, meta):
    import examples.matmul as m

    M = N = K = 1024
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((M, K), dtype=np.float32), rng.standard_normal((K, N), dtype=np.float32)
    c = np.empty((M, N), np.float32)
    grid = (xblock.cdiv(M, meta["BLOCK_M"]) * xblock.cdiv(N, meta["BLOCK_N"]),)
    run = lambda: m.matmul_kernel[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1, **meta)  # noqa: E731
    t, t_np = pair(run, lambda: a @ b, max(5, rep // 2))
    ref = a @ b
    np.testing.assert_allclose(c, np.where(ref >= 0, ref, 0.01 * ref), rtol=1e-3, atol=1e-3)
    tile = f"{meta['BLOCK_M']}x{meta['BLOCK_N']}x{meta['BLOCK_K']}"
    print(f"|   (matmul: {2 * M * N * K / t / 1e9:.0f} GFLOP/s ours, {2 * M * N * K / t_np / 1e9:.0f} numpy; "
          f"tiles {tile}) | | | | | |")
    row("matmul fp32 (+leaky-ReLU)", "1024^3", t, t_np, 0.5)


@xblock.jit
def _unary(x_ptr, out_ptr, n, FN: xl.constexpr, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    mask = offs < n
    x = xl.load(x_ptr + offs, mask=mask)
    if FN == "exp":
        y = xl.exp(x)
    elif FN == "log":
        y = xl.log(x)
    elif FN == "sin":
        y = xl.sin(x)
    else:
        y = xl.math.tanh(x)
    xl.store(out_ptr + offs, y, mask=mask)


def bench_math(rep):
    """Vectorized math (no goal in the issue): one thread, 2^22 fp32 in [0.1, 10), against numpy's ufuncs."""
    n = 1 << 22
    x = np.random.default_rng(0).uniform(0.1, 10, n).astype(np.float32)
    out, ref = np.empty_like(x), np.empty_like(x)
    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    cells = []
    for name in ("exp", "log", "sin", "tanh"):
        ck = xblock.compile(_unary, target="cpu", signature=sig, constexprs={"FN": name, "BLOCK": 4096},
                            num_threads=1)
        launch = ck[(n // 4096,)]
        t, t_np = pair(lambda: launch(x, out, n), lambda: getattr(np, name)(x, out=ref), rep)
        np.testing.assert_allclose(out, ref, rtol=2e-6, atol=1e-6)
        cells.append(f"{name} {t * 1e3:.2f} vs {t_np * 1e3:.2f} ms ({t_np / t:.1f}x)")
    print(f"| math fp32, one thread | 2^22 | {'; '.join(cells)} | | | none |")


def bench_compile():
    from xblock.runtime import compiler

    times = {}
    for name in ["add", "softmax", "layernorm", "rmsnorm", "matmul", "gelu", "argmax", "cumsum", "transpose",
                 "colsum"]:
        mod = importlib.import_module("examples." + name)
        case = mod.case(mod.SIZES[1], mod.DTYPES[0])
        _, spec, _ = case.kernel.specialize(case.kernel.bind(case.args, case.meta))
        os.environ["XBLOCK_CACHE_DIR"] = tempfile.mkdtemp(prefix="xblock-cold-")
        compiler._MEMORY.clear()
        t0 = time.perf_counter()
        compiler.compile_specialization(case.kernel.source, spec, "cpu", {})
        times[name] = time.perf_counter() - t0
    worst = max(times.values())
    print("| cold compile per example | " + ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in times.items())
          + f" | max {worst * 1e3:.0f} ms | | | 0.5 s: {'met' if worst < 0.5 else 'not met'} |")


@xblock.jit
def _tiny(x_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    xl.store(x_ptr + offs, xl.load(x_ptr + offs) + 1.0)


def bench_launch():
    x = np.zeros(16, np.float32)
    _tiny[(1,)](x, BLOCK=16)
    n = 5000
    t0 = time.perf_counter()
    for _ in range(n):
        _tiny[(1,)](x, BLOCK=16)
    per = (time.perf_counter() - t0) / n
    ck = xblock.compile(_tiny, target="cpu", signature={"x_ptr": "*fp32"}, constexprs={"BLOCK": 16})
    t0 = time.perf_counter()
    for _ in range(n):
        ck.launcher((1, 1, 1), [x])
    direct = (time.perf_counter() - t0) / n
    print(f"| warm launch overhead | 16 lanes, grid 1 | kernel[grid](...) {per * 1e6:.1f} us, "
          f"compiled launcher {direct * 1e6:.1f} us | | | 20 us: {'met' if per < 20e-6 else 'not met'} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--only", default="", help="comma-separated: add,softmax,layernorm,matmul,math,compile,launch")
    args = ap.parse_args()
    rep = 5 if args.quick else 15
    only = set(filter(None, args.only.split(",")))
    print(f"cores: {cores()}, numpy {np.__version__}")
    print("| benchmark | size | xblock cpu | numpy | speed-up | goal |\n|---|---|---|---|---|---|")
    want = lambda k: not only or k in only  # noqa: E731
    if want("add"):
        bench_add(rep)
    if want("softmax"):
        bench_softmax(rep)
    if want("layernorm"):
        bench_layernorm(rep)
    if want("matmul"):
        bench_matmul(rep, dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8))
    if want("math"):
        bench_math(rep)
    if want("compile"):
        bench_compile()
    if want("launch"):
        bench_launch()


if __name__ == "__main__":
    main()
