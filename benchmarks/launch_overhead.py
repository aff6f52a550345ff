"""Launch overhead from Python, side by side in one run: a warm `kernel[grid](...)` of a 16-lane
kernel on cpu, and, where a GPU, torch and Triton are present, a 1024-element add on cuda against
Triton's own launch of the same kernel and `torch.add`.

Run: `.venv/bin/python benchmarks/launch_overhead.py [--launches 5000] [--rounds 7] [--profile]`.
Each figure is the median over rounds of (wall time of N back-to-back launches) / N; on the GPU
the launches are asynchronous, so this is the host-side cost, with one synchronize per round.
Goals (issue 17): cpu <= 10 us; cuda <= 6 us and <= 1.0x torch.add. `--profile` prints a
cProfile of 10k warm cpu launches. `--precompile-cuda ARCH` (where MLIR and Triton are, no GPU
needed) compiles the cuda kernel into XBLOCK_CACHE_DIR, to carry to a GPU host without MLIR (with
this very tree: cache keys hash xblock's sources). Figures go to docs/BENCHMARKS.md ("Runtime").
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("XBLOCK_CACHE_DIR", tempfile.mkdtemp(prefix="xblock-bench-"))

import xblock  # noqa: E402
import xblock.language as xl  # noqa: E402


def add_body(x_ptr, y_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    mask = offs < n
    xl.store(out_ptr + offs, xl.load(x_ptr + offs, mask=mask) + xl.load(y_ptr + offs, mask=mask), mask=mask)


add = xblock.jit(add_body)
add_python = xblock.jit(add_body)  # the same kernel launched through the Python hot path (no C memo): the
add_python._make_dispatch = lambda: None  # launch before the C memo of runtime/fastpath.py, for comparison


def per_launch(fn, launches: int, rounds: int, sync=None) -> float:
    """Median over `rounds` of the wall time of `launches` calls of fn, per call, in microseconds."""
    fn()
    if sync:
        sync()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(launches):
            fn()
        if sync:
            sync()
        times.append((time.perf_counter() - t0) / launches * 1e6)
    return statistics.median(times)


def side_by_side(named: dict, launches: int, rounds: int, sync=None) -> dict:
    """Times of several launchers, their rounds interleaved so that all see the same machine load."""
    out = {k: [] for k in named}
    for f in named.values():
        f()
    for _ in range(rounds):
        for k, f in named.items():
            out[k].append(per_launch(f, launches, 1, sync))
    return {k: statistics.median(v) for k, v in out.items()}


def bench_cpu(launches: int, rounds: int) -> dict:
    x, y = np.ones(16, np.float32), np.ones(16, np.float32)
    out = np.zeros(16, np.float32)
    grid = (1,)
    ck = add[grid](x, y, out, 16, BLOCK=16, target="cpu")
    np.testing.assert_array_equal(out, x + y)
    named = {
        "xblock kernel[grid](...), cpu": lambda: add[grid](x, y, out, 16, BLOCK=16, target="cpu"),
        "xblock kernel[grid](...), cpu, target implied": lambda: add[grid](x, y, out, 16, BLOCK=16),
        "the same, through the Python hot path (no C memo)": lambda: add_python[grid](x, y, out, 16, BLOCK=16),
        "its compiled launcher alone": lambda: ck.launcher((1, 1, 1), (x, y, out, 16)),
        "numpy np.add(x, y, out=out), 16 elements": lambda: np.add(x, y, out=out),
    }
    return side_by_side(named, launches, rounds)


def bench_cuda(launches: int, rounds: int) -> dict | None:
    try:
        import torch
        import triton
        import triton.language as tl
    except ImportError as e:
        print(f"cuda: skipped ({e})")
        return None
    if not torch.cuda.is_available():
        print("cuda: skipped (no GPU)")
        return None

    @triton.jit
    def triton_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    n = 1024
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    grid = (1,)
    add[grid](x, y, out, n, BLOCK=1024)
    torch.testing.assert_close(out, x + y)
    triton_add[grid](x, y, out, n, BLOCK=1024)
    add_python[grid](x, y, out, n, BLOCK=1024)
    named = {
        "xblock kernel[grid](...), cuda": lambda: add[grid](x, y, out, n, BLOCK=1024),
        "the same, through the Python hot path (no C memo)": lambda: add_python[grid](x, y, out, n, BLOCK=1024),
        "Triton kernel[grid](...)": lambda: triton_add[grid](x, y, out, n, BLOCK=1024),
        "torch.add(x, y, out=out)": lambda: torch.add(x, y, out=out),
    }
    return side_by_side(named, launches, rounds, torch.cuda.synchronize)


def profile(launches: int = 10000) -> None:
    import cProfile
    import pstats

    x, y = np.ones(16, np.float32), np.ones(16, np.float32)
    out = np.zeros(16, np.float32)
    for kernel in (add, add_python):
        kernel[(1,)](x, y, out, 16, BLOCK=16, target="cpu")
        kernel[(1,)](x, y, out, 16, BLOCK=16, target="cpu")
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(launches):
            kernel[(1,)](x, y, out, 16, BLOCK=16, target="cpu")
        prof.disable()
        print("C memo" if kernel is add else "Python hot path (no C memo)")
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)


def precompile_cuda(arch: int) -> None:
    from xblock.backends.cuda.precompile import TensorSpec, precompile

    spec = TensorSpec(1024, "float32")
    precompile(add, (spec, spec, spec, 1024), {"BLOCK": 1024}, arch=arch)
    print(f"compiled the cuda add for sm_{arch} into {os.environ['XBLOCK_CACHE_DIR']}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--launches", type=int, default=5000)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--profile", action="store_true", help="print a cProfile of 10k warm cpu launches "
                   "(of the Python hot path too: a hit of the C memo runs no Python to profile)")
    p.add_argument("--precompile-cuda", type=int, metavar="ARCH", help="compile the cuda kernel (e.g. 90), then exit")
    args = p.parse_args()
    if args.precompile_cuda:
        precompile_cuda(args.precompile_cuda)
        return
    if args.profile:
        profile()
        return
    from xblock.runtime import fastpath

    helper = "C helper" if fastpath.helper() is not None else "no C helper: Python codes"
    print(f"warm launches, {args.launches} per round, median of {args.rounds} rounds ({helper})")
    print("| launch | per launch | goal |")
    print("|---|---|---|")
    try:
        cpu = bench_cpu(args.launches, args.rounds)
    except (xblock.CompilationError, xblock.backends.TargetUnavailable) as err:  # a GPU host without MLIR or LLVM tools
        print(f"| cpu | skipped: {str(err).splitlines()[0][-120:]} | |")
        cpu = {}
    for name, us in cpu.items():
        goal = "<= 10 us: " + ("met" if us <= 10 else "not met") if name.endswith(", cpu") else ""
        print(f"| {name} | {us:.2f} us | {goal} |", flush=True)
    cuda = bench_cuda(args.launches, args.rounds)
    if cuda:
        ours, torch_add = cuda["xblock kernel[grid](...), cuda"], cuda["torch.add(x, y, out=out)"]
        for name, us in cuda.items():
            goal = ""
            if name.startswith("xblock"):
                goal = (f"<= 6 us: {'met' if us <= 6 else 'not met'}; {ours / torch_add:.2f}x torch.add "
                        f"(<= 1.0x: {'met' if ours <= torch_add else 'not met'})")
            print(f"| {name} | {us:.2f} us | {goal} |", flush=True)


if __name__ == "__main__":
    main()
