"""First-call time of an autotuned matmul with 16 configs: serial compiles vs a pool of workers, or
all 16 configs vs the 4 that xblock's cost model keeps.

Run: `.venv/bin/python benchmarks/autotune_cold_start.py [--target cpu] [--size 256] [--model]`.
Each mode runs in a fresh process with an empty cache (the cold start a user sees): the first
launch compiles every config, benchmarks them and launches the best. Serial is
XBLOCK_COMPILE_WORKERS=1; parallel compiles on every core: this process and one spawned worker per
other core (`xblock/runtime/pool.py`). With `--model` the two modes are, both serial, all 16
configs and `prune_configs_by={"perf_model": "xblock", "top_k": 4}` (ranked from the xb IR before
any compile; `xblock/runtime/cost_model.py`), and each row also gives the chosen config's time.
`--rank` prints, in this process, the model's estimate and rank of each config beside its time
measured with 40 runs (the autotuner's own timing takes 3), to judge the model.
Figures go to docs/BENCHMARKS.md ("Runtime"). On cuda, pass torch tensors: `--target cuda`
(needs a GPU, torch and Triton).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import xblock  # noqa: E402
import xblock.language as xl  # noqa: E402

CONFIGS = [xblock.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k}, num_warps=4)
           for m in (32, 64) for n in (32, 64) for k in (16, 32) for _ in (0,)] + \
          [xblock.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k}, num_warps=8)
           for m in (64, 128) for n in (64, 128) for k in (32, 64)]  # 16 configs


@xblock.autotune(configs=CONFIGS, key=["M", "N", "K"])
@xblock.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
           BLOCK_M: xl.constexpr, BLOCK_N: xl.constexpr, BLOCK_K: xl.constexpr):
    pid = xl.program_id(0)
    num_n = xl.cdiv(N, BLOCK_N)
    offs_m = (pid // num_n) * BLOCK_M + xl.arange(0, BLOCK_M)
    offs_n = (pid % num_n) * BLOCK_N + xl.arange(0, BLOCK_N)
    offs_k = xl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = xl.zeros((BLOCK_M, BLOCK_N), dtype=xl.float32)
    for k in range(0, xl.cdiv(K, BLOCK_K)):
        left = K - k * BLOCK_K
        a = xl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < left), other=0.0)
        b = xl.load(b_ptrs, mask=(offs_k[:, None] < left) & (offs_n[None, :] < N), other=0.0)
        acc = xl.dot(a, b, acc=acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    xl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


matmul_model = xblock.autotune(configs=CONFIGS, key=["M", "N", "K"],
                               prune_configs_by={"perf_model": "xblock", "top_k": 4})(matmul.fn)


def grid(meta):
    return (xblock.cdiv(meta["M"], meta["BLOCK_M"]) * xblock.cdiv(meta["N"], meta["BLOCK_N"]),)


def first_call(target: str, size: int, model: bool = False) -> dict:
    """In this process: time the first (tuning) launch, check the result, report the choice."""
    tuned = matmul_model if model else matmul
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    c = np.zeros((size, size), np.float32)
    args = [a, b, c]
    if target == "cuda":
        import torch

        args = [torch.from_numpy(x).cuda() for x in args]
    t0 = time.perf_counter()
    tuned[grid](*args, size, size, size, size, 1, size, 1, size, 1, target=target)
    first = time.perf_counter() - t0
    out = args[2].cpu().numpy() if target == "cuda" else c
    err = float(np.abs(out - a @ b).max())
    best = tuned.best_config
    return {"first_call_s": first, "bench_s": tuned.bench_time, "best": repr(best), "max_err": err,
            "best_ms": tuned.configs_timings.get(best, float("nan")) * 1e3, "compiled": len(tuned.configs_timings),
            "model_s": tuned.model_ranking.seconds if tuned.model_ranking else 0.0}


def run_mode(workers: int, target: str, size: int, model: bool = False) -> dict:
    env = {**os.environ, "XBLOCK_CACHE_DIR": tempfile.mkdtemp(prefix="xblock-cold-"),
           "XBLOCK_COMPILE_WORKERS": str(workers)}
    out = subprocess.run([sys.executable, __file__, "--child", "--target", target, "--size", str(size)] +
                         (["--model"] if model else []), env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--target", default="cpu")
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--repeat", type=int, default=1, help="runs per mode (alternating)")
    p.add_argument("--model", action="store_true", help="all 16 configs vs the cost model's top 4 (serial)")
    p.add_argument("--rank", action="store_true", help="the model's ranking beside measured times")
    args = p.parse_args()
    if args.child:
        print(json.dumps(first_call(args.target, args.size, args.model)))
        return
    if args.model:
        compare_model(args)
        return
    if args.rank:
        rank_configs(args.target, args.size)
        return
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    print(f"autotuned matmul {args.size}^3 fp32, {len(CONFIGS)} configs, target {args.target}, {cores} cores; "
          "first call in a fresh process with an empty cache")
    print("| mode | first call | of which tuning | chosen config | max abs error |")
    print("|---|---|---|---|---|")
    results: dict = {"serial": [], "parallel": []}
    for _ in range(args.repeat):
        for mode, workers in (("serial", 1), ("parallel", cores)):
            r = run_mode(workers, args.target, args.size)
            results[mode].append(r["first_call_s"])
            who = "this process" if workers == 1 else f"this process + {workers - 1} worker{'s' if workers > 2 else ''}"
            print(f"| {mode} ({who}) | {r['first_call_s']:.2f} s | "
                  f"{r['bench_s']:.2f} s | {r['best']} | {r['max_err']:.1e} |", flush=True)
    s, q = np.median(results["serial"]), np.median(results["parallel"])
    print(f"median first call: serial {s:.2f} s, parallel {q:.2f} s: {s / q:.2f}x")


def rank_configs(target: str, size: int) -> None:
    """The cost model's estimate and rank of every config beside its measured time (40 runs each)."""
    from xblock.runtime import cost_model

    a = np.ones((size, size), np.float32)
    args = [a, a.copy(), np.zeros_like(a)]
    if target == "cuda":
        import torch

        args = [torch.from_numpy(x).cuda() for x in args]
    args += [size, size, size, size, 1, size, 1, size, 1]
    ranking = cost_model.rank(matmul_model, CONFIGS, args, {}, grid, target, len(CONFIGS) - 1)
    order = sorted(CONFIGS, key=ranking.estimates.get)
    times = {}
    for c in CONFIGS:
        meta = matmul_model._meta(c, {"target": target}, target)
        times[c] = xblock.testing.do_bench(lambda: matmul.fn[grid](*args, **meta), warmup=3, rep=40)["median"]
    by_time = sorted(CONFIGS, key=times.get)
    print(f"matmul {size}^3 fp32 on {target}: {ranking.model}, ranked in {ranking.seconds:.2f} s")
    print("| config | model estimate | model rank | measured (median of 40) | measured rank |")
    print("|---|---|---|---|---|")
    for c in order:
        print(f"| {c} | {ranking.estimates[c] * 1e3:.4f} ms | {order.index(c) + 1} | {times[c] * 1e3:.3f} ms | "
              f"{by_time.index(c) + 1} |")


def compare_model(args) -> None:
    """All 16 configs vs the cost model's top 4, both compiled serially, each in a fresh process."""
    print(f"autotuned matmul {args.size}^3 fp32, {len(CONFIGS)} configs, target {args.target}, serial compiles; "
          "first call in a fresh process with an empty cache")
    print("| mode | first call | of which ranking / tuning | configs compiled | chosen config (its time) "
          "| max abs error |")
    print("|---|---|---|---|---|---|")
    results: dict = {"all": [], "model": []}
    for _ in range(args.repeat):
        for mode, model in (("all 16 configs", False), ("cost model, top_k=4", True)):
            r = run_mode(1, args.target, args.size, model)
            results["model" if model else "all"].append(r["first_call_s"])
            print(f"| {mode} | {r['first_call_s']:.2f} s | {r['model_s']:.2f} s / {r['bench_s']:.2f} s | "
                  f"{r['compiled']} | "
                  f"{r['best']} ({r['best_ms']:.3f} ms) | {r['max_err']:.1e} |", flush=True)
    s, q = np.median(results["all"]), np.median(results["model"])
    print(f"median first call: all 16 {s:.2f} s, cost model top 4 {q:.2f} s: {s / q:.2f}x")


if __name__ == "__main__":
    main()
