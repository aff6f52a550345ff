"""The shape-op, sort and attention kernels of tests/conformance on the GPU, against numpy.

Where MLIR is (no GPU needed), compile them for sm_90 into a cache to carry:
    XBLOCK_CACHE_DIR=$PWD/.xblock_cache/shapes python -m tests.cuda.gpu_shape_ops --precompile
On the GPU machine (torch, Triton, no MLIR), with the same tree:
    XBLOCK_CACHE_DIR=$PWD/.xblock_cache/shapes python -m tests.cuda.gpu_shape_ops
Not collected by pytest (it needs a GPU and a carried cache); the figures go to docs/BENCHMARKS.md.
"""

from __future__ import annotations

import sys

import numpy as np

import xblock
from examples.triton.attention import attention_fwd, grid, reference
from tests.conformance import test_shape_ops as S

F32 = "float32"


def cases():
    """(name, kernel, grid, inputs (numpy), outputs (shape, dtype), meta, expected fn(inputs) -> outputs)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    y = rng.standard_normal(8).astype(np.float32)
    src = rng.standard_normal((16, 32)).astype(np.float32)
    idx = rng.integers(0, 32, (16, 64)).astype(np.int32)
    cidx = rng.integers(0, 16, (2, 32)).astype(np.int32)
    hist = rng.integers(-5, 20, 64).astype(np.int32)
    srt = (rng.standard_normal((4, 16)) * 50).astype(np.float32)
    half = np.sort(srt, 1)
    bitonic = np.concatenate([half[:, :8], half[:, 8:][:, ::-1]], 1)
    asc = np.sort(srt, 1)
    flip = rng.standard_normal((8, 32)).astype(np.float16)
    return [
        ("join/split", S.join_split, (1,), [x, y], [((4, 8, 2), F32), ((4, 8), F32), ((4, 8), F32), ((16,), F32)],
         {"R": 4, "C": 8},
         lambda: [np.stack([x, np.broadcast_to(y, x.shape)], -1), 2 * x, 2 * np.broadcast_to(y, x.shape),
                  np.concatenate([3.5 + x[0], -1.0 + y])]),
        ("gather", S.gather_rows, (1,), [src, idx], [((16, 64), F32), ((2, 32), F32)], {"R": 16, "C": 32, "K": 64},
         None),  # the third input (cidx) is placed below
        ("histogram", S.histograms, (1,), [hist, 37], [((16,), "int32"), ((16,), "int32")], {"N": 64, "BINS": 16},
         lambda: [np.bincount(hist[(hist >= 0) & (hist < 16)], minlength=16),
                  np.bincount(hist[:37][(hist[:37] >= 0) & (hist[:37] < 16)], minlength=16)]),
        ("sort/topk/bitonic_merge", S.sorts, (1,), [srt, bitonic],
         [((4, 16), F32), ((4, 16), F32), ((4, 4), F32), ((4, 16), F32)], {"R": 4, "N": 16, "K": 4},
         lambda: [asc, asc[:, ::-1], asc[:, ::-1][:, :4], asc[:, ::-1]]),
        ("flip", S.flips, (1,), [flip], [((8, 32), "float16"), ((8, 32), "float16"), ((32,), "float16")],
         {"R": 8, "C": 32}, lambda: [flip[::-1], flip[:, ::-1], flip[0, ::-1]]),
    ], (src, idx, cidx)


def _torch_args(torch, inputs, outputs, to_device=True):
    args = []
    for v in inputs:
        args.append(torch.from_numpy(np.ascontiguousarray(v)).cuda() if isinstance(v, np.ndarray) else v)
    outs = [torch.zeros(shape, dtype=getattr(torch, dt), device="cuda") for shape, dt in outputs]
    return args, outs


def _spec_args(inputs, outputs):
    from xblock.backends.cuda.precompile import TensorSpec

    args = [TensorSpec(v.shape, v.dtype) if isinstance(v, np.ndarray) else v for v in inputs]
    return args, [TensorSpec(shape, dt) for shape, dt in outputs]


def _arrange(name, args, outs, gather_inputs):
    """Kernel argument order: the conformance kernels interleave inputs and outputs."""
    if name == "join/split":
        return [args[0], args[1], *outs]
    if name == "gather":
        return [args[0], args[1], outs[0], outs[1], gather_inputs]
    if name == "histogram":
        return [args[0], args[1], outs[0], outs[1]]
    if name == "sort/topk/bitonic_merge":
        return [args[0], args[1], *outs]
    return [args[0], *outs]


def _attention_args(torch=None):
    z, h, n, d = 1, 2, 1000, 64
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((z, h, n, d)).astype(np.float16) for _ in range(3))
    return (z, h, n, d), (q, k, v)


def precompile_all() -> None:
    from xblock.backends.cuda.precompile import TensorSpec, precompile

    all_cases, (src, idx, cidx) = cases()
    for name, kernel, _, inputs, outputs, meta, _ in all_cases:
        args, outs = _spec_args(inputs, outputs)
        precompile(kernel, _arrange(name, args, outs, TensorSpec(cidx.shape, cidx.dtype)), meta, arch=90)
    (z, h, n, d), (q, _, _) = _attention_args()
    spec = TensorSpec(q.shape, "float16")
    for causal in (False, True):
        precompile(attention_fwd, (spec, spec, spec, spec, d ** -0.5, h * n * d, n * d, d, h, n),
                   {"HEAD_DIM": d, "BLOCK_M": 64, "BLOCK_N": 64, "CAUSAL": causal}, arch=90)
    print("precompiled", len(all_cases) + 2, "kernels for sm_90")


def run_all() -> int:
    import torch

    all_cases, (src, idx, cidx) = cases()
    failed = 0
    for name, kernel, g, inputs, outputs, meta, expected in all_cases:
        args, outs = _torch_args(torch, inputs, outputs)
        extra = torch.from_numpy(cidx).cuda()
        xblock.jit(kernel)[g](*_arrange(name, args, outs, extra), **meta)
        torch.cuda.synchronize()
        got = [o.cpu().numpy() for o in outs]
        if name == "gather":
            want = [np.take_along_axis(src, idx, 1), np.take_along_axis(src, cidx, 0)]
        else:
            want = expected()
        ok = all(np.array_equal(a, np.asarray(b, a.dtype)) for a, b in zip(got, want))
        failed += not ok
        print(f"{name}: {'exact' if ok else 'MISMATCH'}")
    (z, h, n, d), (q, k, v) = _attention_args()
    tq, tk, tv = (torch.from_numpy(t).cuda() for t in (q, k, v))
    for causal in (False, True):
        o = torch.zeros_like(tq)
        xblock.jit(attention_fwd)[grid(n, z, h, 64)](tq, tk, tv, o, d ** -0.5, h * n * d, n * d, d, h, n,
                                                       HEAD_DIM=d, BLOCK_M=64, BLOCK_N=64, CAUSAL=causal)
        torch.cuda.synchronize()
        err = float(np.abs(o.float().cpu().numpy() - reference(q, k, v, d ** -0.5, causal)).max())
        ok = err < 1e-2
        failed += not ok
        print(f"attention n={n} d={d} causal={causal}: max abs err {err:.2e} {'ok' if ok else 'TOO LARGE'}")
    return failed


if __name__ == "__main__":
    if "--precompile" in sys.argv:
        precompile_all()
        sys.exit(0)
    sys.exit(1 if run_all() else 0)
