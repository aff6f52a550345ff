"""Cube-path figures for a 4096^3 fp16 matmul on a 910B (docs/BENCHMARKS.md, "Ascend Cube").

Run: `.venv/bin/python benchmarks/ascend_cube.py [--size 4096]`. Prints the tile plan and the
L1/L0 use against capacity, then runs the generated AscendC on xblock's CPU model with the
arithmetic switched off (XBEMU_CUBE_COUNT_ONLY=1; every check and counter still runs) to count
cube ops and bytes per level, and compares them with the static estimate: GM bytes against the
minimum and the cube-bound time at 16x16x16 MACs per cycle per cube core.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("XBLOCK_CACHE_DIR", tempfile.mkdtemp(prefix="xblock-bench-"))
os.environ["XBEMU_CUBE_COUNT_ONLY"] = "1"

import xblock  # noqa: E402
from tests.ascend_cube.kernels import dot_kernel  # noqa: E402
from xblock.backends.ascend.cube_plan import CUBE_SOCS, estimate, plan_cube  # noqa: E402
from xblock.backends.ascend.launch import LAST_COUNTERS, cube_counters  # noqa: E402

SIG = dict(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16", M="i32", N="i32", K="i32", stride_am="i32",
           stride_bk="i32", stride_cm="i32")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--soc", default="910B3")
    ap.add_argument("--block", default="128,256,64")
    args = ap.parse_args()
    S = args.size
    BM, BN, BK = map(int, args.block.split(","))
    soc = CUBE_SOCS[args.soc]
    plan = plan_cube(BM, BN, BK, "f16", soc)
    est = estimate(plan, S, S, S)
    print(f"{soc.name}: {soc.cube_cores} cube cores, {soc.clock_hz / 1e9:.1f} GHz assumed")
    print("plan:", plan.describe())
    meta = dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, RELU=1)
    ck = xblock.compile(dot_kernel, target="ascend", signature=SIG, constexprs=meta, soc=args.soc)
    a = np.zeros((S, S), np.float16)
    b = np.zeros((S, S), np.float16)
    c = np.zeros((S, S), np.float16)
    t0 = time.perf_counter()
    ck[(xblock.cdiv(S, BM), xblock.cdiv(S, BN))](a, b, c, S, S, S, S, S, S)
    wall = time.perf_counter() - t0
    got = cube_counters(ck)
    gm = got["gm_to_l1_bytes"] + got["l0c_to_gm_bytes"]
    print(f"model run (count only): {wall:.1f} s; blockDim {LAST_COUNTERS['block_dim']} (one block per AIC)")
    for k, v in got.items():
        print(f"  {k:18s} {v}")
    print(f"GM bytes: model {gm} (static {est['gm_bytes']}), minimum {est['gm_min_bytes']}, "
          f"ratio {gm / est['gm_min_bytes']:.2f}x")
    print(f"cube ops: model {got['cube_ops']}, static {est['cube_ops']}, MACs/4096 {est['macs'] // 4096}")
    ops_per_core = -(-got["cube_ops"] // soc.cube_cores)
    print(f"cube-bound time: ideal {est['ideal_s'] * 1e3:.3f} ms (MACs / (4096 x {soc.cube_cores} x clock)); "
          f"from the model's count, {ops_per_core / soc.clock_hz * 1e3:.3f} ms with the ops spread evenly, "
          f"{est['cube_bound_s'] * 1e3:.3f} ms in {est['waves']} waves of {soc.cube_cores} tiles")


if __name__ == "__main__":
    main()
