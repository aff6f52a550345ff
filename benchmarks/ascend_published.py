"""Published 910B measurements against the ascend cost model's estimate of xblock's own kernel for the
same work (shared/ascendc/PUBLISHED_PERF.md; docs/BENCHMARKS.md, "Ascend: published 910B times").

Each row writes the published kernel's work as an xblock kernel (below, or an example), compiles it for
the SoC of the measurement, runs it on the AscendC CPU model (sampled: `xblock.profile(..., sample=True)`,
a few blocks run and the rest extrapolated) and prints the estimate, the published time, their ratio
and the plan that won. Estimates, not measurements: no Ascend hardware is used.

Usage: python benchmarks/ascend_published.py [--only add,copy,matmul,attention] [--blocks 32x128,128x128]
    [--set row_groups=False]   (--blocks: the attention rows' BLOCK_MxBLOCK_N; --set: an option of every row)
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import xblock  # noqa: E402
import xblock.language as xl  # noqa: E402


@xblock.jit
def add_rows(x_ptr, y_ptr, z_ptr, n, BLOCK: xl.constexpr):
    """z = x + y in BLOCK-element copies (the published Add's dataCopyLen)."""
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    mask = offs < n
    xl.store(z_ptr + offs, xl.load(x_ptr + offs, mask=mask) + xl.load(y_ptr + offs, mask=mask), mask=mask)


@xblock.jit
def read_tiles(x_ptr, out_ptr, M, N, write, BM: xl.constexpr, BN: xl.constexpr):
    """GM -> UB reads of BM x BN tiles; nothing is written unless `write` (0 here): the read-only copy."""
    rows = xl.program_id(0) * BM + xl.arange(0, BM)
    cols = xl.program_id(1) * BN + xl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = xl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)
    if write != 0:
        xl.store(out_ptr + rows[:, None] * N + cols[None, :], x, mask=mask)


@xblock.jit
def read_max(x_ptr, out_ptr, M, N, BM: xl.constexpr, BN: xl.constexpr):
    """GM -> UB reads of BM x BN tiles, each reduced to its maximum (one element a program is written).

    For tiles too large for the unified buffer whole: xblock moves such a tile in chunks inside the loop
    that consumes it, so `read_tiles` with `write` 0 would move nothing; a reduction keeps every byte read.
    """
    rows = xl.program_id(0) * BM + xl.arange(0, BM)
    cols = xl.program_id(1) * BN + xl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = xl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0)
    xl.store(out_ptr + xl.program_id(0) * xl.num_programs(1) + xl.program_id(1), xl.max(xl.max(x, 1), 0))


def _plan(p) -> str:
    from xblock.backends.ascend.plan.plan import AscendPlan

    text = AscendPlan.from_dict(p.plan).describe() if p.plan else ""
    return f"{text}; {'double' if p.double_buffered else 'single'}-buffered"


def add_rows_cases():
    n = 8192 * 8192
    x = np.ones(n, np.float16)
    # the published cases 2-4 read their inputs through L2 (l2_bypass=False); case 5 keeps them out of it, as
    # xblock's own plan does (plan/streaming.py); case 6 (184.5 us) is case 5 with a UB layout without bank
    # conflicts, the best published Add
    for block, bufs, bypass, published, what in [
            (4096, 1, False, 306.6, "8 KB copies, one buffer"),
            (16384, 1, False, 268.5, "32 KB copies, one buffer"),
            (16384, 2, False, 264.0, "32 KB copies, double-buffered"),
            (8192, 2, False, 264.0, "16 KB copies, double-buffered, inputs through L2"),
            (16384, 2, True, 187.7, "32 KB copies, double-buffered, inputs out of L2"),
            (8192, 2, True, 184.5, "xblock's plan: 16 KB copies, double-buffered, inputs out of L2")]:
        yield (f"Add 8192^2 fp16, {what}", "910B2", published, add_rows, (xblock.cdiv(n, block),),
               (x, x, np.empty_like(x), n), dict(BLOCK=block, buffer_num=bufs, l2_bypass=bypass))


def copy_cases():
    for m, n, bm, bn, published in [(12288, 12288, 1, 64, 564.8), (12288, 12288, 64, 64, 233.5),
                                    (12288, 12288, 64, 1024, 215.8), (12288, 12287, 64, 1024, 275.3)]:
        x = np.ones((m, n), np.float16)
        grid = (xblock.cdiv(m, bm), xblock.cdiv(n, bn))
        meta = dict(BM=bm, BN=bn, l2_bypass=False)  # the published copy reads through L2
        if bm * bn * 2 > 32768:  # a tile xblock moves in chunks: reduce it, so that its bytes are read
            yield (f"GM->UB read {m}x{n} fp16, tile [{bm},{bn}], each tile's max written", "910B2", published,
                   read_max, grid, (x, np.empty(grid[0] * grid[1], np.float16), m, n), meta)
        else:
            yield (f"GM->UB read {m}x{n} fp16, tile [{bm},{bn}]", "910B2", published, read_tiles, grid,
                   (x, np.empty((1, 1), np.float16), m, n, 0), meta)


def matmul_cases():
    from examples import matmul

    s = 8192
    a = np.ones((s, s), np.float16)
    meta = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8)
    yield ("matmul 8192^3 fp16, BLOCK 128x256x64 (the published base tile)", "910B1", 4121.2,
           matmul.matmul_kernel, ((s // 128) * (s // 256),), (a, a, np.empty_like(a), s, s, s, s, 1, s, 1, s, 1), meta)


ATTENTION_BLOCKS = [(32, 64), (32, 128), (128, 128)]


def attention_cases(blocks=None):
    from examples.triton import attention

    # BLOCK 32 x 128: the widest key block whose program fits the unified buffer whole (164352 of 188416 B; 64 x 128
    # needs 311808 B, and 64 x 64 fits with single-buffered output only); 32 x 64 for comparison with earlier tables;
    # 128 x 128, the usual GPU choice, is computed in row chunks (xb-strip-mine) spread over AI Cores (row_groups)
    for bm, bn in blocks or ATTENTION_BLOCKS:
        for seq, published in [(1024, 21.0), (4096, 88.9), (8192, 292.6)]:
            q = np.ones((1, 1, seq, 128), np.float16)
            meta = dict(HEAD_DIM=128, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=False)
            yield (f"attention fwd S={seq}, D=128 fp16, BLOCK {bm}x{bn}", "910B2", published, attention.attention_fwd,
                   attention.grid(seq, 1, 1, bm),
                   (q, q, q, np.empty_like(q), 0.088, seq * 128, seq * 128, 128, 1, seq), meta)


GROUPS = {"add": add_rows_cases, "copy": copy_cases, "matmul": matmul_cases, "attention": attention_cases}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", help="comma-separated groups: " + ",".join(GROUPS))
    ap.add_argument("--blocks", help="the attention rows' BLOCK_MxBLOCK_N, comma-separated (default: "
                    + ",".join(f"{m}x{n}" for m, n in ATTENTION_BLOCKS) + ")")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="an option for every row (a Python literal), e.g. row_groups=False")
    a = ap.parse_args()
    only = a.only.split(",") if a.only else list(GROUPS)
    extra = {k: ast.literal_eval(v) for k, v in (o.split("=", 1) for o in a.set)}
    if a.blocks:
        blocks = [tuple(int(x) for x in b.split("x")) for b in a.blocks.split(",")]
        GROUPS["attention"] = lambda: attention_cases(blocks)
    print("| case | SoC | published (us) | xblock estimate (us) | estimate / published | bound | plan | model run |")
    print("|---|---|---|---|---|---|---|---|")
    for g in only:
        for label, soc, published, kernel, grid, args, meta in GROUPS[g]():
            t = time.time()
            try:
                p = xblock.profile(kernel, grid, *args, soc=soc, sample=True, **meta, **extra)
            except Exception as e:  # a case xblock cannot run: its reason is the row
                print(f"| {label} | {soc} | {published} | - | - | - | {type(e).__name__}: "
                      f"{str(e).splitlines()[0][:160]} | |", flush=True)
                continue
            run = f"{time.time() - t:.0f} s, {len(p.sampled_blocks) or p.blocks} of {p.blocks} blocks"
            launched = int(np.prod(grid))  # a row-grouped launch runs G instances a program (cube/rowsplit.py)
            groups = f", each program on {p.programs // launched} AI Cores" if p.programs > launched else ""
            print(f"| {label} | {soc} | {published} | {p.estimate_us:.1f} | {p.estimate_us / published:.2f}x | "
                  f"{p.bound} | {_plan(p)}{groups} | {run} |", flush=True)


if __name__ == "__main__":
    main()
