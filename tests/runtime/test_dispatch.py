"""The C memo of launches (`fastpath.dispatch`: what `kernel[grid]` is once the kernel ran): a launch
seen before runs without Python and reuses exactly the kernel the full path would pick; errors read
as on the Python path; the cuda launch is reached from it (fake driver, no GPU)."""

import importlib.util
import struct
import sys
import threading
import traceback
from types import SimpleNamespace

import numpy as np
import pytest

import xblock
import xblock.language as xl
from tests._pkg import in_package
from xblock.errors import ExecutionError, LaunchError
from xblock.runtime import fastpath

pytestmark = pytest.mark.skipif(fastpath.helper() is None, reason="no C compiler or Python headers here")


def _scaled(x_ptr, out_ptr, n, alpha, BLOCK: xl.constexpr, TWICE: xl.constexpr = False):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    y = xl.load(x_ptr + offs, mask=m) * alpha
    if TWICE:
        y = y * 2
    xl.store(out_ptr + offs, y, mask=m)


def _fail(*a, **k):
    raise AssertionError("took the Python path")


X32 = np.arange(80, dtype=np.float32)
X64 = np.arange(80, dtype=np.float64)
VARIANTS = [  # (args, kwargs): each must reach the kernel the full path compiles for it
    ((X32, np.zeros(80, np.float32), 64, 2.0), {"BLOCK": 16}),
    ((X32, np.zeros(80, np.float32), 1, 2.0), {"BLOCK": 16}),  # n == 1
    ((X32, np.zeros(80, np.float32), 63, 2.0), {"BLOCK": 16}),  # n % 16 != 0
    ((X32[1:], np.zeros(80, np.float32)[1:], 64, 2.0), {"BLOCK": 16}),  # not 16-byte aligned
    ((X64, np.zeros(80, np.float64), 64, 2.0), {"BLOCK": 16}),  # another dtype
    ((X32, np.zeros(80, np.float32), 64, 2), {"BLOCK": 16}),  # an int scalar: i32, not fp32
    ((X32, np.zeros(80, np.float32), 64, 2.0), {"BLOCK": 32}),
    ((X32, np.zeros(80, np.float32), 64, 2.0), {"BLOCK": 16, "TWICE": True}),
    ((X32, np.zeros(80, np.float32), 64, 2.0), {"BLOCK": 16, "TWICE": 1}),  # 1 is not True
    ((X32,), {"out_ptr": np.zeros(80, np.float32), "n": 64, "alpha": 2.0, "BLOCK": 16}),  # by keyword
    ((X32, np.zeros(80, np.float32), 64, 2.0, 16), {"target": "cpu"}),
    ((X32, np.zeros(80, np.float32), 64, 2.0), {"BLOCK": 16, "num_warps": 8}),
    ((X32, np.zeros(80, np.float32), 64, 2.0), {"BLOCK": 16, "target": "sim"}),
]


def _expected(args, kwargs):
    named = dict(zip(("x_ptr", "out_ptr", "n", "alpha", "BLOCK"), args), **kwargs)
    x, n = named["x_ptr"], named["n"]
    return x[:n] * named["alpha"] * (2 if named.get("TWICE") else 1)


def test_a_seen_launch_reuses_the_kernel_the_full_path_picks(monkeypatch):
    k = xblock.jit(_scaled)
    first = []
    for args, kwargs in VARIANTS:
        first.append(k[(5,)](*args, **kwargs))
    assert k._dispatch is not None and len(k._dispatch) >= len({id(c) for c in first}) - 1
    for _ in range(2):
        for (args, kwargs), ck in zip(VARIANTS, first):
            out = kwargs.get("out_ptr", args[1] if len(args) > 1 else None)
            out[:] = 0
            monkeypatch.setattr(k, "run", _fail)  # a hit never comes back to Python
            assert k[(5,)](*args, **kwargs) is ck
            monkeypatch.undo()
            np.testing.assert_array_equal(out[: len(_expected(args, kwargs))], _expected(args, kwargs))
            assert ck is k.warmup(*args, **kwargs)  # the specialization the full path compiles
    assert len({id(c) for c in first}) == len(VARIANTS) - 2  # by keyword and target="cpu" are the first's


def test_a_hit_runs_no_python_function():
    k = xblock.jit(_scaled)
    x, out = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    grid = (1,)  # one program: the cpu kernel runs on the calling thread (more go to the pool's threads)
    for _ in range(3):
        k[grid](x, out, 64, 3.0, BLOCK=64)
    calls = []
    sys.setprofile(lambda frame, event, arg: calls.append((event, frame.f_code.co_name)) if event == "call" else None)
    try:
        k[grid](x, out, 64, 3.0, BLOCK=64)
    finally:
        sys.setprofile(None)
    assert [c for c in calls if c[1] != "__getitem__"] == []
    np.testing.assert_array_equal(out, x * 3)


def _times(x_ptr, out_ptr, SCALE: xl.constexpr):
    offs = xl.arange(0, 16)
    xl.store(out_ptr + offs, xl.load(x_ptr + offs) * SCALE)


def test_constexpr_floats_computed_afresh_still_hit_and_keep_their_type(monkeypatch):
    k = xblock.jit(_times)
    x, out = np.arange(16, dtype=np.float32), np.zeros(16, np.float32)
    by_float = [k[(1,)](x, out, SCALE=float("1.5")) for _ in range(2)]
    by_int = [k[(1,)](x, out, SCALE=int("2")) for _ in range(2)]
    monkeypatch.setattr(k, "run", _fail)
    assert k[(1,)](x, out, SCALE=float("1.5")) is by_float[0]  # another float object, equal: a hit
    np.testing.assert_array_equal(out, x * 1.5)
    assert k[(1,)](x, out, SCALE=int("2")) is by_int[0] is not by_float[0]
    np.testing.assert_array_equal(out, x * 2)


def test_callable_grids_are_evaluated_once_per_distinct_meta_in_c():
    k = xblock.jit(_scaled)

    def grid(meta):
        grid.calls += 1
        return (xblock.cdiv(meta["n"], meta["BLOCK"]),)

    grid.calls = 0
    for n in (40, 40, 40, 40, 72, 72, 72, 40):
        x = np.arange(n, dtype=np.float32)
        out = np.zeros_like(x)
        k[grid](x, out, n, 1.0, BLOCK=16)
        np.testing.assert_array_equal(out, x)
    assert grid.calls <= 3


def test_errors_on_the_c_path_read_as_on_the_python_path():
    k = xblock.jit(_scaled)
    x, out = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    for _ in range(2):
        k[(2,)](x, out, 32, 1.0, BLOCK=16)
    with pytest.raises(ExecutionError, match="out-of-bounds") as info:  # n larger than the arrays
        k[(2,)](x[:16].copy(), out[:16].copy(), 32, 1.0, BLOCK=16)
    files = [f.filename for f in traceback.extract_tb(info.value.__traceback__)]
    assert files and not any(in_package(f) for f in files), files


def test_launches_from_threads_while_the_memo_is_cleared():
    k = xblock.jit(_scaled)
    arrays = [np.arange(256, dtype=dt) for dt in (np.float32, np.float64)]
    for x in arrays:
        k[(16,)](x, np.zeros_like(x), 256, 2.0, BLOCK=16, num_threads=1)
    errors = []

    def work(i):
        try:
            for j in range(200):
                x = arrays[(i + j) % 2]
                out = np.zeros_like(x)
                k[(16,)](x, out, 256, 2.0, BLOCK=16, num_threads=1)
                np.testing.assert_array_equal(out, 2 * x)
                if i == 0 and j % 20 == 0:
                    k._fast.clear()
        except Exception as e:  # noqa: BLE001  reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


# ------------------------------------------------------------------------------ cuda, without a GPU
compiles = pytest.mark.skipif(not (importlib.util.find_spec("triton") and importlib.util.find_spec("mlir")),
                              reason="compiling for cuda needs Triton and the MLIR bindings")


class _Dtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name


F32 = _Dtype("torch.float32")


class FakeCudaTensor:
    """What the codes and the C launch read of a torch CUDA tensor."""

    is_cuda = True
    dtype = F32

    def __init__(self, ptr, device=0):
        self.ptr, self.device = ptr, SimpleNamespace(type="cuda", index=device)

    def data_ptr(self):
        return self.ptr

    def is_contiguous(self):
        return True


@compiles
def test_the_c_memo_launches_cuda_kernels_in_c():
    from tests.runtime.test_cuda_fastpath import FUNCTION, FakeDriver
    from xblock.backends.cuda import launch as cuda_launch

    helper = fastpath.helper()
    k = xblock.jit(_scaled)
    a, b = FakeCudaTensor(0x7F0000001000), FakeCudaTensor(0x7F0000002000)
    ck = k.warmup(a, b, 4096, 2.0, BLOCK=1024, target="cuda")
    kinds, sizes = cuda_launch.c_launch_kinds(ck.metadata["triton"], ck.metadata["arg_types"])
    driver = FakeDriver(list(sizes) + [8, 8])
    assert ck.launcher.arm(kinds, sizes, 128, 0, FakeCudaTensor, lambda d: 0x5000, None, False, *driver.addresses())
    assert ck.launcher.set_function(0, FUNCTION)
    helper.set_tensor_type(FakeCudaTensor)
    try:
        for _ in range(2):  # the Python path, then the C memo learns the launch
            assert k[(4,)](a, b, 4096, 2.0, BLOCK=1024, target="cuda") is ck
        k.run = _fail
        c, d = FakeCudaTensor(0x7F0000003000), FakeCudaTensor(0x7F0000004000)
        assert k[(4, 2)](c, d, 4096, 0.5, BLOCK=1024, target="cuda") is ck
        last = driver.launches[-1]
        assert len(driver.launches) == 3 and last["grid"] == (4, 2, 1) and last["stream"] == 0x5000
        assert last["params"][:4] == [struct.pack("<Q", 0x7F0000003000), struct.pack("<Q", 0x7F0000004000),
                                      struct.pack("<i", 4096), struct.pack("<f", 0.5)]
        # several GPUs: every tensor must be on the current one, checked on the C path too
        ck.launcher.get_device = lambda: 0
        assert ck.launcher.arm(kinds, sizes, 128, 0, FakeCudaTensor, lambda dev: 0x5000, lambda: 0, True,
                               *driver.addresses())
        assert ck.launcher.set_function(0, FUNCTION)
        assert k[(4,)](c, d, 4096, 0.5, BLOCK=1024, target="cuda") is ck and len(driver.launches) == 4
        with pytest.raises(LaunchError, match="is on cuda:1") as info:
            k[(4,)](c, FakeCudaTensor(0x7F0000005000, device=1), 4096, 0.5, BLOCK=1024, target="cuda")
        assert not any(in_package(f.filename) for f in traceback.extract_tb(info.value.__traceback__))
        assert len(driver.launches) == 4
    finally:
        helper.set_tensor_type(type(None))
