"""The launch hot path (`kernel[grid](...)` after the first launch of a shape): a dictionary hit
and the launcher call. It must still pick a new specialization whenever the full path would:
another dtype, a pointer no longer 16-byte aligned, an int becoming 1, another constexpr.
The first tests replace the cuda launcher by a recorder, so they run without a GPU (compiling
needs Triton and MLIR). The GPU tests (torch and a CUDA GPU; kernels precompiled by
`precompile_for_fast_launch()` where MLIR is, carried in XBLOCK_CACHE_DIR) check the C launch
(runtime/fastpath.py `CudaLaunch`): results, parameters of every kind, the current stream, and the
checks that still send a launch to the Python path.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import xblock
import xblock.language as xl
from examples.add import add_kernel
from xblock.backends.cuda import launch as cuda_launch
from xblock.backends.cuda.precompile import TensorSpec

compiles = pytest.mark.skipif(not (importlib.util.find_spec("triton") and importlib.util.find_spec("mlir")),
                              reason="compiling for cuda needs Triton and the MLIR bindings")
N, BIG = 4096, 2**40


@pytest.fixture
def calls(monkeypatch):
    seen = []
    monkeypatch.setattr(cuda_launch.CudaLauncher, "__call__",
                        lambda self, grid, args: seen.append((self.metadata["arg_types"], self.metadata["constexprs"],
                                                              grid, list(args), id(self))))
    add_kernel._fast.clear()
    return seen


def _t(dtype="float32", aligned=True):
    return TensorSpec(4096, dtype, aligned)


@compiles
def test_hot_path_reuses_and_respecializes(calls):
    x, y, o = _t(), _t(), _t()
    ck1 = add_kernel[(4,)](x, y, o, 4096, BLOCK=1024, target="cuda")
    ck2 = add_kernel[(4,)](y, x, o, 4096, BLOCK=1024, target="cuda")  # same shape: the fast path
    assert ck1 is ck2 and calls[1][3] == [y, x, o, 4096] and calls[1][2] == (4, 1, 1)
    assert add_kernel[(4,)](x, y, o, 1, BLOCK=1024, target="cuda") is not ck1  # n == 1 is specialized
    assert add_kernel[(4,)](_t(aligned=False), y, o, 4096, BLOCK=1024, target="cuda") is not ck1
    h = add_kernel[(4,)](_t("float16"), _t("float16"), _t("float16"), 4096, BLOCK=1024, target="cuda")
    assert h is not ck1 and h.metadata["arg_types"][0] == "*fp16"
    assert add_kernel[(4,)](x, y, o, 4096, BLOCK=512, target="cuda") is not ck1
    assert add_kernel[(4,)](x, y, o, 4096, BLOCK=1024, target="cuda", num_warps=8) is not ck1
    assert add_kernel[(4,)](x, y, o, 4096, BLOCK=1024, target="cuda") is ck1  # and back
    assert len({c[4] for c in calls}) == 6


@compiles
def test_grids_on_the_hot_path(calls):
    x = _t()
    for grid, want in [((3,), (3, 1, 1)), ((3, 2), (3, 2, 1)), ((3, 2, 5), (3, 2, 5)), ((3,), (3, 1, 1))]:
        add_kernel[grid](x, x, x, 4096, BLOCK=1024, target="cuda")
        assert calls[-1][2] == want
    add_kernel[lambda meta: (meta["n"] // meta["BLOCK"],)](x, x, x, 4096, BLOCK=1024, target="cuda")
    assert calls[-1][2] == (4, 1, 1)
    with pytest.raises(Exception, match="grid"):
        add_kernel[(-1,)](x, x, x, 4096, BLOCK=1024, target="cuda")


# ------------------------------------------------------------------------------ on a GPU
@xblock.jit
def mixed_kernel(x_ptr, h_ptr, idx_ptr, out_ptr, alpha, beta, shift, big, flag, n, BLOCK: xl.constexpr):
    """out = alpha*x + beta*h + idx + shift + (big - 2**40) (+ 100 where flag): every parameter kind."""
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    x = xl.load(x_ptr + offs, mask=m)
    h = xl.load(h_ptr + offs, mask=m).to(xl.float32)
    i = xl.load(idx_ptr + offs, mask=m)
    r = alpha * x + (beta * h).to(xl.float32) + (i + shift).to(xl.float32) + (big - BIG).to(xl.float32)
    if flag:
        r = r + 100.0
    xl.store(out_ptr + offs, r, mask=m)


def _mixed_args(torch_or_spec, alpha=0.5, beta=np.float64(-2.0), shift=-3, big=BIG + 5, flag=True):
    if torch_or_spec is None:
        x, h, i, o = (TensorSpec(N, dtype) for dtype in ("float32", "float16", "int32", "float32"))
    else:
        t = torch_or_spec
        x, h = t.randn(N, device="cuda"), t.randn(N, device="cuda").half()
        i, o = t.randint(-50, 50, (N,), device="cuda", dtype=t.int32), t.full((N,), float("nan"), device="cuda")
    return [x, h, i, o, alpha, beta, shift, big, flag, N]


def precompile_for_fast_launch():
    """Compile, where MLIR is, the kernels the GPU tests launch (into XBLOCK_CACHE_DIR)."""
    from xblock.backends.cuda.precompile import precompile

    t = TensorSpec(N, "float32")
    precompile(add_kernel, (t, t, t, N), dict(BLOCK=1024))
    precompile(mixed_kernel, _mixed_args(None), dict(BLOCK=1024))


@pytest.fixture
def python_launches(monkeypatch):
    """Counts the launches the C launch hands to the Python one."""
    seen = []
    original = cuda_launch.CudaLauncher.launch_python

    def counted(self, grid, args):
        seen.append(grid)
        return original(self, grid, args)

    monkeypatch.setattr(cuda_launch.CudaLauncher, "launch_python", counted)
    return seen


def _c_launch_expected():
    return cuda_launch.launcher_class() is not cuda_launch.CudaLauncher


def test_add_launches_in_c_and_matches_torch(torch, python_launches):
    x, y = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
    out = torch.empty_like(x)
    ck = add_kernel[(N // 1024,)](x, y, out, N, BLOCK=1024)
    del python_launches[:]
    for k in range(20):
        x.normal_()
        add_kernel[(N // 1024,)](x, y, out, N, BLOCK=1024)
        torch.testing.assert_close(out, x + y)
    if _c_launch_expected():
        assert ck.launcher.c_launch_armed and python_launches == []


def test_every_parameter_kind_reaches_the_kernel(torch, python_launches):
    args = _mixed_args(torch)
    mixed_kernel[(N // 1024,)](*args, BLOCK=1024)
    del python_launches[:]
    for alpha, beta, shift, big, flag in [(0.5, -2.0, -3, BIG + 5, True), (1.25, 3.5, 7, BIG - 9, False),
                                          (-2.0, 0.25, -1000, BIG + 2**20 + 3, True)]:
        x, h, i, out = args[:4]
        mixed_kernel[(N // 1024,)](x, h, i, out, alpha, np.float64(beta), shift, big, flag, N, BLOCK=1024)
        want = alpha * x + (beta * h.double()).float() + (i + shift).float() + float(big - BIG) + (100.0 if flag else 0)
        torch.testing.assert_close(out, want)
    if _c_launch_expected():
        assert python_launches == []


def test_the_current_stream_is_honoured(torch, python_launches):
    x, y = torch.ones(N, device="cuda"), torch.ones(N, device="cuda")
    out = torch.zeros(N, device="cuda")
    add_kernel[(N // 1024,)](x, y, out, N, BLOCK=1024)
    side = torch.cuda.Stream()
    for _ in range(3):
        with torch.cuda.stream(side):
            torch.cuda._sleep(20_000_000)  # the side stream is busy; the default one is not
            out.zero_()
            add_kernel[(N // 1024,)](x, y, out, N, BLOCK=1024)  # must run after zero_, on `side`
            seen = out.clone()
        torch.cuda.synchronize()
        assert torch.equal(seen, x + y)
    graph = torch.cuda.CUDAGraph()  # a capture fails for a launch on any other stream
    with torch.cuda.graph(graph):
        add_kernel[(N // 1024,)](x, y, out, N, BLOCK=1024)
    x.fill_(5)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)
    if _c_launch_expected():
        assert python_launches == []


def test_launches_from_a_new_thread(torch):
    import threading

    x = torch.randn(N, device="cuda")
    outs = [torch.empty_like(x) for _ in range(3)]
    add_kernel[(N // 1024,)](x, x, outs[0], N, BLOCK=1024)
    errors = []

    def work():  # no CUDA context is current on a new thread until something makes it so
        try:
            for out in outs:
                add_kernel[(N // 1024,)](x, x, out, N, BLOCK=1024)
        except Exception as e:  # noqa: BLE001  reported below
            errors.append(e)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    torch.cuda.synchronize()
    assert errors == []
    for out in outs:
        torch.testing.assert_close(out, x + x)


def test_checks_still_hold_after_c_launches(torch):
    x = torch.randn(N, device="cuda")
    out = torch.empty_like(x)
    for _ in range(3):
        ck = add_kernel[(N // 1024,)](x, x, out, N, BLOCK=1024)
    with pytest.raises(xblock.LaunchError, match="argument 'y_ptr' is a tensor on 'cpu'"):
        add_kernel[(N // 1024,)](x, torch.randn(N), out, N, BLOCK=1024)
    with pytest.raises(xblock.LaunchError, match="not contiguous"):
        add_kernel[(N // 1024,)](x, torch.randn(2 * N, device="cuda")[::2], out, N, BLOCK=1024)
    with pytest.raises(xblock.LaunchError, match="complex64"):
        add_kernel[(N // 1024,)](x, x.to(torch.complex64), out, N, BLOCK=1024)
    with pytest.raises(xblock.LaunchError, match="argument 'x_ptr' is a tensor on 'cpu'"):
        ck.launcher((4, 1, 1), [torch.randn(N), x, out, N])  # the launcher itself, without codes
    with pytest.raises(xblock.LaunchError, match="launch failed"):
        ck.launcher((4, 70000, 1), [x, x, out, N])  # beyond CUDA's grid: Triton's launcher says
    add_kernel[(N // 1024,)](x, x, out, N, BLOCK=1024)
    torch.testing.assert_close(out, x + x)


def test_the_triton_launch_on_request(torch, monkeypatch):
    x = torch.randn(N, device="cuda")
    out = torch.empty_like(x)
    ck = add_kernel[(N // 1024,)](x, x, out, N, BLOCK=1024)
    monkeypatch.setenv("XBLOCK_CUDA_TRITON_LAUNCH", "1")
    launcher = cuda_launch.load(ck.asm, ck.metadata)
    for _ in range(2):
        launcher((N // 1024, 1, 1), [x, x, out, N])
    torch.testing.assert_close(out, x + x)
    assert not getattr(launcher, "c_launch_armed", False)
