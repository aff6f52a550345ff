"""The launch hot path keeps the full path's semantics: what it reuses, and what it still refuses."""

import numpy as np
import pytest

import xblock
from tests.runtime import kernels
from xblock.errors import LaunchError
from xblock.runtime import fastpath

TARGETS = ["cpu", "sim"]


def fresh():
    return xblock.jit(kernels._add_one)


@pytest.mark.parametrize("target", TARGETS)
def test_warm_launches_reuse_the_kernel_without_compiling(target, monkeypatch):
    k = fresh()
    x = np.arange(40, dtype=np.float32)
    out = np.zeros_like(x)
    first = k[(3,)](x, out, 40, BLOCK=16, target=target)
    monkeypatch.setattr("xblock.runtime.jit.compile_specialization", _fail)
    for _ in range(3):
        out[:] = 0
        assert k[(3,)](x, out, 40, BLOCK=16, target=target) is first
        np.testing.assert_array_equal(out, x + 1)


def _fail(*a, **k):
    raise AssertionError("compiled again")


@pytest.mark.parametrize("target", TARGETS)
def test_checks_that_protect_users_stay_on_the_hot_path(target):
    k = fresh()
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    for _ in range(2):
        k[(4,)](x, out, 64, BLOCK=16, target=target)
    ro = np.zeros_like(x)
    ro.flags.writeable = False
    with pytest.raises(LaunchError, match="read-only"):
        k[(4,)](x, ro, 64, BLOCK=16, target=target)
    strided = np.zeros(128, np.float32)[::2]
    with pytest.raises(LaunchError, match="not contiguous"):
        k[(4,)](x, strided, 64, BLOCK=16, target=target)
    with pytest.raises(LaunchError, match="used as a pointer"):
        k[(4,)](x, 3, 64, BLOCK=16, target=target)
    with pytest.raises(LaunchError, match="grid"):
        k[(-1,)](x, out, 64, BLOCK=16, target=target)


def test_a_new_specialization_is_picked_when_the_full_path_would_pick_one():
    k = fresh()
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    base = k[(4,)](x, out, 64, BLOCK=16, target="sim")
    assert k[(4,)](x, out, 64, BLOCK=16, target="sim") is base
    assert k[(1,)](x, out, 1, BLOCK=16, target="sim") is not base  # n == 1 is specialized
    assert k[(4,)](x, out, 63, BLOCK=16, target="sim") is not base  # 63 % 16 != 0
    assert k[(4,)](x[1:], out[1:], 48, BLOCK=16, target="sim") is not base  # pointers not 16-byte aligned
    h = np.arange(64, dtype=np.float16)
    assert k[(4,)](h, np.zeros_like(h), 64, BLOCK=16, target="sim").metadata["arg_types"][0] == "*fp16"
    assert k[(4,)](x, out, 64, BLOCK=32, target="sim") is not base
    assert k[(4,)](x, out, 64, BLOCK=16, target="sim") is base


def test_constexpr_values_of_different_types_are_different_keys():
    assert fastpath.constexpr_code(1) != fastpath.constexpr_code(True)
    assert fastpath.constexpr_code(1) != fastpath.constexpr_code(1.0)
    assert fastpath.constexpr_code(16) == 16


def test_the_c_helper_computes_the_python_codes():
    mod = fastpath.helper()
    if mod is None:
        pytest.skip("no C compiler or Python headers here: the Python codes serve")
    values = [0, 1, 15, 16, -1, -16, 2**31 - 1, 2**31, 2**32, 2**32 + 16, 2**63 - 1, 2**63, 2**64 - 16, 2**64,
              -(2**63), -(2**63) - 1, True, False, 1.5, None, np.int32(16), np.float32(1), "s",
              np.zeros(3, np.float32), np.zeros(4, np.int8)[1:], np.zeros((2, 3)).T, np.zeros(2, ">f4")]
    for mode, fn in enumerate((mod.spec, mod.spec_no_align, mod.spec_none)):
        for v in values:
            try:
                want = fastpath.spec_py(v, mode)
            except fastpath.NoFastPath:
                with pytest.raises(fastpath.NoFastPath):
                    fn(v)
                continue
            assert fn(v) == want, (v, mode)


def test_grid_callables_are_evaluated_once_per_distinct_meta():
    k = fresh()

    def grid(meta):
        grid.calls += 1
        return (xblock.cdiv(meta["n"], meta["BLOCK"]),)

    grid.calls = 0
    for n in (100, 100, 100, 100, 200, 200, 200):
        x = np.arange(n, dtype=np.float32)
        out = np.zeros_like(x)
        k[grid](x, out, n, BLOCK=32, target="cpu")
        np.testing.assert_array_equal(out, x + 1)
    assert grid.calls <= 3  # the full path, the first hot launch, the new n


def test_a_grid_over_changing_state_is_evaluated_every_time():
    k = fresh()
    state = {"n": 48}
    grid = lambda meta: (xblock.cdiv(state["n"], meta["BLOCK"]),)  # noqa: E731  reads data outside meta
    for n in (48, 80, 112):  # multiples of BLOCK: programs cover exactly n elements
        state["n"] = n
        x = np.arange(128, dtype=np.float32)
        out = np.zeros_like(x)
        k[grid](x, out, 128, BLOCK=16, target="cpu")
        np.testing.assert_array_equal(out[:n], x[:n] + 1)
        assert not out[n:].any()


def test_device_asserts_and_bounds_checks_still_fire_on_the_hot_path():
    k = fresh()
    x = np.arange(16, dtype=np.float32)
    out = np.zeros_like(x)
    k[(1,)](x, out, 16, BLOCK=16, target="cpu")
    k[(1,)](x, out, 16, BLOCK=16, target="cpu")
    with pytest.raises(Exception, match="out-of-bounds|outside"):
        k[(1,)](x[:8].copy(), out[:8].copy(), 16, BLOCK=16, target="cpu")  # n larger than the arrays


class FakeCudaTensor:
    """What the codes read of a torch CUDA tensor."""

    def __init__(self, ptr, dtype="float32", contiguous=True, cuda=True):
        self.ptr, self.dtype, self.contiguous, self.is_cuda, self.device = ptr, dtype, contiguous, cuda, "cpu"

    def data_ptr(self):
        return self.ptr

    def is_contiguous(self):
        return self.contiguous


def test_the_c_helper_computes_tensor_codes_as_python_does():
    mod = fastpath.helper()
    if mod is None:
        pytest.skip("no C compiler or Python headers here")
    values = [FakeCudaTensor(4096), FakeCudaTensor(4100), FakeCudaTensor(64, "float16", False),
              FakeCudaTensor(64, cuda=False)]
    want = [[fastpath.spec_py(v, mode) for v in values] for mode in range(3)]
    mod.set_tensor_type(FakeCudaTensor)
    try:
        got = [[fn(v) for v in values] for fn in (mod.spec, mod.spec_no_align, mod.spec_none)]
    finally:
        mod.set_tensor_type(type(None))
    assert got == want


def test_array_subclasses_and_byte_swapped_arrays_keep_their_semantics(tmp_path):
    k = fresh()
    mm = np.memmap(tmp_path / "x.bin", dtype=np.float32, mode="w+", shape=(64,))
    mm[:] = np.arange(64)
    out = np.zeros(64, np.float32)
    for _ in range(3):
        k[(4,)](mm, out, 64, BLOCK=16, target="cpu")
        np.testing.assert_array_equal(out, np.arange(64) + 1)
    assert fastpath.spec_other(mm) == (np.memmap, fastpath.spec_py(np.asarray(mm)))
    with pytest.raises(fastpath.NoFastPath):
        fastpath.spec_py(np.zeros(4, ">f4"))


def test_grids_of_numpy_ints_and_bare_ints_take_the_hot_path(monkeypatch):
    k = fresh()
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    k[(4,)](x, out, 64, BLOCK=16, target="cpu")
    monkeypatch.setattr(k, "_run_full", _fail)
    for grid in ((np.int64(4),), 4, [4], (4, 1), (4, 1, 1)):
        out[:] = 0
        k[grid](x, out, 64, BLOCK=16, target="cpu")
        np.testing.assert_array_equal(out, x + 1)
