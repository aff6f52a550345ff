"""Launching on an NVIDIA GPU: bad arguments get errors that name the kernel and the argument.

Needs torch and a CUDA GPU (skips otherwise). The kernels come from the cache, precompiled by
`precompile_for_tests()` (called by prepare_device) where MLIR is, so this runs on a GPU machine
without it.
"""

from __future__ import annotations

import numpy as np
import pytest

import xblock
from examples.add import add_kernel

N = 4096
SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}


def precompile_for_tests():
    from xblock.backends.cuda.precompile import TensorSpec, precompile

    t = TensorSpec(N, "float32")
    precompile(add_kernel, (t, t, t, N), dict(BLOCK=1024))
    xblock.compile(add_kernel, target="cuda", signature=SIGNATURE, constexprs={"BLOCK": 1024})


def test_add_on_gpu(torch):
    x, y = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
    out = torch.full((N,), float("nan"), device="cuda")
    add_kernel[(N // 1024,)](x, y, out, N, BLOCK=1024)  # cuda is the default for CUDA tensors
    torch.testing.assert_close(out, x + y)


def test_compiled_kernel_grid_call(torch):
    ck = xblock.compile(add_kernel, target="cuda", signature=SIGNATURE, constexprs={"BLOCK": 1024})
    x, y = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
    out = torch.empty_like(x)
    ck[(N // 1024,)](x, y, out, N)
    torch.testing.assert_close(out, x + y)


def test_empty_grid_is_a_no_op(torch):
    x = torch.zeros(N, device="cuda")
    add_kernel[(0,)](x, x, x, N, BLOCK=1024)
    torch.cuda.synchronize()


def test_cpu_tensors_to_cuda_launch(torch):
    x = torch.randn(N)
    with pytest.raises(xblock.LaunchError, match=r"add_kernel: argument 'x_ptr' is a tensor on 'cpu'"):
        add_kernel[(4,)](x, x, x, N, BLOCK=1024, target="cuda")


def test_one_cpu_tensor_among_cuda_tensors(torch):
    x = torch.randn(N, device="cuda")
    with pytest.raises(xblock.LaunchError, match=r"argument 'y_ptr' is a tensor on 'cpu'"):
        add_kernel[(4,)](x, torch.randn(N), x, N, BLOCK=1024)


def test_numpy_arrays_to_cuda_launch(torch):
    a = np.zeros(N, np.float32)
    with pytest.raises(xblock.LaunchError, match=r"argument 'x_ptr' is a numpy.ndarray; the cuda target takes torch"):
        add_kernel[(4,)](a, a, a, N, BLOCK=1024, target="cuda")


def test_unsupported_dtype(torch):
    x = torch.zeros(N, dtype=torch.complex64, device="cuda")
    with pytest.raises(xblock.LaunchError, match=r"argument 'x_ptr' has dtype torch.complex64"):
        add_kernel[(4,)](x, x, x, N, BLOCK=1024)
