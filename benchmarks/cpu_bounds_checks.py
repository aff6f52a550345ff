"""The cost of the cpu target's bounds checks: each kernel with `bounds_check=True` (the default) and
`bounds_check=False`, timed alternately in one run (best of 31 each) (figures in docs/BENCHMARKS.md, "CPU").

Run: `.venv/bin/python benchmarks/cpu_bounds_checks.py`.
"""

from __future__ import annotations

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
from examples import matmul  # noqa: E402


@xblock.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    mask = offs < n
    xl.store(out_ptr + offs, xl.load(x_ptr + offs, mask=mask) + xl.load(y_ptr + offs, mask=mask), mask=mask)


@xblock.jit
def softmax(x_ptr, out_ptr, n_cols, BLOCK: xl.constexpr):
    row = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    e = xl.exp(x - xl.max(x, 0))
    xl.store(out_ptr + row * n_cols + cols, e / xl.sum(e, 0), mask=cols < n_cols)


@xblock.jit
def transpose(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    """A strided read (a gather, checked lane by lane) and a contiguous write."""
    r = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)[:, None]
    c = xl.program_id(1) * BLOCK + xl.arange(0, BLOCK)[None, :]
    xl.store(out_ptr + r * n + c, xl.load(x_ptr + c * n + r))


def pair(launch, rep=31) -> tuple:
    """Best times of the checked and unchecked kernel, run alternately (both see the same load)."""
    launch(True)
    launch(False)
    ts = ([], [])
    for _ in range(rep):
        for k, flag in enumerate((True, False)):
            t0 = time.perf_counter()
            launch(flag)
            ts[k].append(time.perf_counter() - t0)
    return min(ts[0]), min(ts[1])


def main() -> int:
    rng = np.random.default_rng(0)
    rows = []
    n = 1 << 24
    x, y, out = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    rows.append(("vector add fp32", "2^24", pair(lambda b: add[(xblock.cdiv(n, 4096),)](
        x, y, out, n, BLOCK=4096, target="cpu", bounds_check=b))))
    m = rng.standard_normal((4096, 1000)).astype(np.float32)
    o = np.empty_like(m)
    rows.append(("softmax fp32", "4096 x 1000", pair(lambda b: softmax[(4096,)](
        m, o, 1000, BLOCK=1024, target="cpu", bounds_check=b))))
    t = rng.standard_normal((2048, 2048)).astype(np.float32)
    to = np.empty_like(t)
    rows.append(("transpose fp32 (gather)", "2048 x 2048", pair(lambda b: transpose[(32, 32)](
        t, to, 2048, BLOCK=64, target="cpu", bounds_check=b))))
    a = rng.standard_normal((512, 512)).astype(np.float32)
    bm = rng.standard_normal((512, 512)).astype(np.float32)
    c = np.empty((512, 512), np.float32)
    grid = (xblock.cdiv(512, 64) * xblock.cdiv(512, 64),)
    rows.append(("matmul fp32", "512^3", pair(lambda b: matmul.matmul_kernel[grid](
        a, bm, c, 512, 512, 512, 512, 1, 512, 1, 512, 1, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8,
        target="cpu", bounds_check=b))))
    print(f"{'kernel':28s} {'size':12s} {'checked':>10s} {'unchecked':>10s} {'cost':>7s}")
    for name, size, (on, off) in rows:
        print(f"{name:28s} {size:12s} {on * 1e3:8.3f}ms {off * 1e3:8.3f}ms {100 * (on / off - 1):6.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
