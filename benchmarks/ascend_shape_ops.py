"""The Ascend cost model (xblock.profile) on the shape ops: interleave, split, flip and a bitonic sort of
int32 rows (the language library's network of permutes, splits and joins).

Each kernel runs on the AscendC CPU model; the table gives the model's counters (scalar UB accesses, vector
instructions) and the cost model's estimate (xblock/backends/ascend/model/cost.py): estimates from
documented constants, several of them assumptions, not hardware measurements. Results are checked against
numpy before a row is printed.

Usage: python benchmarks/ascend_shape_ops.py [--soc 910B3]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import xblock  # noqa: E402
import xblock.language as xl  # noqa: E402


@xblock.jit
def interleave_kernel(a_ptr, b_ptr, out_ptr, N: xl.constexpr):
    i = xl.arange(0, N)
    y = xl.interleave(xl.load(a_ptr + i), xl.load(b_ptr + i))
    xl.store(out_ptr + xl.arange(0, 2 * N), y)


@xblock.jit
def split_kernel(x_ptr, even_ptr, odd_ptr, N: xl.constexpr):
    x = xl.reshape(xl.load(x_ptr + xl.arange(0, 2 * N)), [N, 2])
    a, b = xl.split(x)
    i = xl.arange(0, N)
    xl.store(even_ptr + i, a)
    xl.store(odd_ptr + i, b)


@xblock.jit
def flip_kernel(x_ptr, y_ptr, R: xl.constexpr, C: xl.constexpr):
    offs = xl.arange(0, R)[:, None] * C + xl.arange(0, C)[None, :]
    xl.store(y_ptr + offs, xl.flip(xl.load(x_ptr + offs), 1))


@xblock.jit
def sort_kernel(x_ptr, y_ptr, R: xl.constexpr, C: xl.constexpr):
    offs = xl.arange(0, R)[:, None] * C + xl.arange(0, C)[None, :]
    xl.store(y_ptr + offs, xl.sort(xl.load(x_ptr + offs)))


def _cases():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(1024).astype(np.float32)
    b = rng.standard_normal(1024).astype(np.float32)
    out = np.zeros(2048, np.float32)
    yield ("interleave", "2 x 1024 float32", interleave_kernel, (a, b, out), {"N": 1024},
           lambda: np.testing.assert_array_equal(out, np.stack([a, b], 1).ravel()))
    x = rng.standard_normal(2048).astype(np.float32)
    ev, od = np.zeros(1024, np.float32), np.zeros(1024, np.float32)
    yield ("split", "1024 x 2 float32", split_kernel, (x, ev, od), {"N": 1024},
           lambda: (np.testing.assert_array_equal(ev, x[0::2]), np.testing.assert_array_equal(od, x[1::2])))
    f = rng.standard_normal((32, 64)).astype(np.float32)
    fy = np.zeros_like(f)
    yield ("flip", "32 x 64 float32, dim 1", flip_kernel, (f, fy), {"R": 32, "C": 64},
           lambda: np.testing.assert_array_equal(fy, f[:, ::-1]))
    s = rng.integers(-1000, 1000, (16, 64)).astype(np.int32)
    sy = np.zeros_like(s)
    yield ("sort", "16 rows x 64 int32", sort_kernel, (s, sy), {"R": 16, "C": 64},
           lambda: np.testing.assert_array_equal(sy, np.sort(s, 1)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--soc", default="910B3")
    args = ap.parse_args()
    print("| kernel | case | scalar UB accesses | vector instrs | estimate (us) | bound |")
    print("|---|---|---|---|---|---|")
    for name, case, kernel, arrays, meta, check in _cases():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = xblock.profile(kernel, (1,), *arrays, soc=args.soc, **meta)
        check()
        c = p.counters
        print(f"| {name} | {case} | {c['scalar_ub_accesses']} | {c['vector_instructions']} | {p.estimate_us:.2f} | "
              f"{p.bound} |", flush=True)


if __name__ == "__main__":
    main()
