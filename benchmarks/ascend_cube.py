"""Cube-path figures for 4096^3 fp16 matmuls on a 910B (docs/BENCHMARKS.md, "Ascend Cube").

Run: `.venv/bin/python benchmarks/ascend_cube.py [--size 4096] [--block 128,256,256] [--no-depth] [--no-join]`.
Two kernels:
- `examples/matmul.py` (Triton tutorial 03's structure, grouped program order, leaky-ReLU epilogue):
  a mixed kernel, the Cube computes each tile and both vector cores of the AI Core run the epilogue
  on halves of it (MIX_AIC_1_2);
- `tests/ascend/cube/kernels.py:dot_kernel` with ReLU: an AIC-only kernel, ReLU and the fp16
  conversion fused into Fixpipe.

Each runs once on xblock's AscendC CPU model with the Cube's arithmetic switched off
(XBEMU_CUBE_COUNT_ONLY=1; every check and counter still runs, the vector epilogue runs for real)
and goes through the cost model (`xblock.profile`, xblock/backends/ascend/model/cost.py): the tile plan
and its L1/L0 use against capacity, Mmad calls, bytes per level, the workspace, the estimated time
against the Cube-bound floor, and the busy cycles per pipe of the busiest AIC and AIV. The figures
are estimates from documented constants and assumptions, not hardware measurements.
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
from examples import matmul  # noqa: E402
from tests.ascend.cube.kernels import dot_kernel  # noqa: E402
from xblock.backends.ascend.model.cost import PIPES  # noqa: E402


def _cases(S: int, BM: int, BN: int, BK: int):
    a = np.zeros((S, S), np.float16)
    b = np.zeros((S, S), np.float16)
    c = np.zeros((S, S), np.float16)
    tiles = xblock.cdiv(S, BM) * xblock.cdiv(S, BN)
    yield ("matmul + leaky-ReLU (examples/matmul.py)", matmul.matmul_kernel, (tiles,),
           (a, b, c, S, S, S, S, 1, S, 1, S, 1), dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8))
    yield ("dot + ReLU fused in Fixpipe (dot_kernel)", dot_kernel, (xblock.cdiv(S, BM), xblock.cdiv(S, BN)),
           (a, b, c, S, S, S, S, S, S), dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, RELU=1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--soc", default="910B3")
    ap.add_argument("--block", default="128,256,256")
    ap.add_argument("--no-depth", action="store_true",
                    help="copy the user's BLOCK_K slices one K step at a time (cube_depth=False: the tiles before "
                         "the deep L1 tiles of cube/depth.py)")
    ap.add_argument("--no-join", action="store_true",
                    help="run one program of a core at a time (cube_join=False: no program joining of small tiles)")
    ap.add_argument("--no-pool", action="store_true",
                    help="join at most 4 programs, each with L1 slots of its own (cube_pool=False: no tile pool)")
    args = ap.parse_args()
    opts = dict(cube_depth=False) if args.no_depth else {}
    if args.no_join:
        opts["cube_join"] = False
    if args.no_pool:
        opts["cube_pool"] = False
    S = args.size
    BM, BN, BK = map(int, args.block.split(","))
    out_bytes = S * S * 2
    for title, kernel, grid, launch_args, meta in _cases(S, BM, BN, BK):
        t0 = time.perf_counter()
        p = xblock.profile(kernel, grid, *launch_args, soc=args.soc, **opts, **meta)
        wall = time.perf_counter() - t0
        ck = kernel.warmup(*launch_args, target="ascend", soc=args.soc, **opts, **meta)
        md = ck.metadata
        c = p.counters
        print(f"## {title}: {S}^3 fp16, BLOCK {BM}x{BN}x{BK}, {args.soc} ({wall:.1f} s on the CPU model)")
        print(f"kernel type {md.get('kernel_type')}; epilogue split: {md.get('split')}")
        for cube in md.get("cube", []):
            print("plan:", cube["plan"], "| vector cores:", cube.get("vector_cores", 0))
        print(f"Mmad calls {c['mmad_calls']}, cube ops {c['cube_ops']}, GM->L1 {c['gm_to_l1_bytes']} B in "
              f"{c['gm_to_l1_calls']} copies, L1->L0A {c['l1_to_l0a_bytes']} B, L1->L0B {c['l1_to_l0b_bytes']} B, "
              f"L0C->GM {c['l0c_to_gm_bytes']} B")
        print(f"workspace {c['workspace_bytes']} B = {c['workspace_bytes'] / out_bytes:.3f}x the fp16 output; "
              f"GM reads {c['gm_read_bytes']} B, writes {c['gm_write_bytes']} B")
        print(f"estimate {p.estimate_us:.1f} us, Cube-bound floor {p.floor_us:.1f} us, ratio {p.ratio:.2f}x, "
              f"bound by {p.bound}")
        for core, pipes in sorted(p.core_pipes.items()):
            print(f"  busiest {core}: " + ", ".join(f"{k} {pipes[k]:.0f}" for k in PIPES))
        first = [(label, pipes) for label, pipes in zip(p.cores, p.block_pipes) if label.startswith("block 0 ")]
        print("  block 0: " + "; ".join(f"{label[8:]} busy {sum(v for k, v in pipes.items() if k != 'Scalar'):.0f} "
                                        f"cycles (V {pipes['V']:.0f})" for label, pipes in first))
        print()


if __name__ == "__main__":
    main()
