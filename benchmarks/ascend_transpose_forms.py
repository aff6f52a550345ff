"""A 2-D transpose written three ways, on ascend's cost model (xblock.profile): `tl.trans` of a
row-major tile (examples/transpose.py), a row-major load stored down the columns of y, and a tile
read down the columns of x and stored row-major. The last two are rewritten as row copies and a
transpose in UB (passes/column_accesses.py); `--as-written` turns the rewrite off to show what
they cost lane by lane. Estimates from the cost model, not hardware measurements.

Usage: python benchmarks/ascend_transpose_forms.py [--size 1024] [--dtype float32] [--as-written]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import xblock  # noqa: E402
import xblock.language as xl  # noqa: E402
from examples.transpose import transpose_kernel  # noqa: E402


@xblock.jit
def store_down_columns(x_ptr, y_ptr, M, N, BM: xl.constexpr, BN: xl.constexpr):
    rm = xl.program_id(0) * BM + xl.arange(0, BM)
    rn = xl.program_id(1) * BN + xl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = xl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask)
    xl.store(y_ptr + rn[None, :] * M + rm[:, None], tile, mask=mask)


@xblock.jit
def load_down_columns(x_ptr, y_ptr, M, N, BM: xl.constexpr, BN: xl.constexpr):
    rn = xl.program_id(0) * BN + xl.arange(0, BN)
    rm = xl.program_id(1) * BM + xl.arange(0, BM)
    mask = (rn[:, None] < N) & (rm[None, :] < M)
    tile = xl.load(x_ptr + rm[None, :] * N + rn[:, None], mask=mask)
    xl.store(y_ptr + rn[:, None] * M + rm[None, :], tile, mask=mask)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--block", type=int, default=64)
    ap.add_argument("--as-written", action="store_true", help="without the column-access rewrite")
    a = ap.parse_args()
    if a.as_written:
        from xblock.passes import column_accesses
        column_accesses.run = lambda module, *_, **__: 0
    n, b = a.size, a.block
    x = np.random.default_rng(0).standard_normal((n, n)).astype(a.dtype)
    y = np.zeros((n, n), a.dtype)
    tiles = (xblock.cdiv(n, b), xblock.cdiv(n, b))
    runs = [("tl.trans (examples/transpose.py)", transpose_kernel, (x, y, n, n, n, n), dict(BLOCK_M=b, BLOCK_N=b)),
            ("store down the columns", store_down_columns, (x, y, n, n), dict(BM=b, BN=b)),
            ("load down the columns", load_down_columns, (x, y, n, n), dict(BM=b, BN=b))]
    print("| form | case | estimate (us) | bound | scalar accesses (UB + GM) | DataCopy calls |")
    print("|---|---|---|---|---|---|")
    for label, kernel, args, meta in runs:
        p = xblock.profile(kernel, tiles, *args, **meta)
        c = p.counters
        assert np.array_equal(y, x.T), label
        y[:] = 0
        print(f"| {label} | {a.dtype} {n}x{n}, {b}x{b} tiles | {p.estimate_us:.1f} | {p.bound} "
              f"| {c['scalar_ub_accesses'] + c['scalar_gm_accesses']} | {c['datacopy_calls']} |", flush=True)


if __name__ == "__main__":
    main()
