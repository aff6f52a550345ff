"""Atomics on ascend (atomics.py): atomic_add, atomic_max and atomic_min whose old value is unused are
copies to GM under SetAtomicAdd/SetAtomicMax/SetAtomicMin, of blocks and of scalars, from several
programs, against numpy. The atomics Atlas A2 has no AscendC API for are CompilationErrors at the
kernel line that name the missing API (atomic_cas and spin locks: test_atomic_cas.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.errors import XBlockWarning

SIG = {"x_ptr": "*fp32", "out_ptr": "*fp32"}


@xblock.jit(do_not_specialize=["n"])
def max_min_kernel(x_ptr, mx_ptr, mn_ptr, s_ptr, n, BLOCK: xl.constexpr):
    """Each program folds its row into mx/mn lane by lane, and its max and sum into s[0] and s[1]."""
    pid = xl.program_id(0)
    offs = xl.arange(0, BLOCK)
    on = offs < n
    x = xl.load(x_ptr + pid * n + offs, mask=on, other=0)
    xl.atomic_max(mx_ptr + offs, x, mask=on)
    xl.atomic_min(mn_ptr + offs, x, mask=on)
    xl.atomic_max(s_ptr, xl.max(xl.where(on, x, -1000)))
    xl.atomic_add(s_ptr + 1, xl.sum(x))


@xblock.jit
def refused_kernel(x_ptr, out_ptr, KIND: xl.constexpr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs)
    if KIND == 0:
        xl.atomic_xchg(out_ptr + offs, x)
    elif KIND == 1:
        xl.atomic_or(out_ptr + offs, x)
    else:
        old = xl.atomic_add(out_ptr + offs, x)
        xl.store(x_ptr + offs, old)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_atomic_max_min_add_from_several_programs(dtype):
    programs, block = 5, 64
    for n in (1, block - 1, block):
        x = (np.random.default_rng(n).standard_normal((programs, n)) * 100).astype(dtype)
        mx, mn = np.full(block, -1000, dtype), np.full(block, 1000, dtype)
        s = np.array([-1000, 0], dtype)
        max_min_kernel[(programs,)](x, mx, mn, s, n, BLOCK=block, target="ascend")
        assert np.array_equal(mx[:n], x.max(axis=0)) and np.all(mx[n:] == -1000)
        assert np.array_equal(mn[:n], x.min(axis=0)) and np.all(mn[n:] == 1000)
        assert s[0] == x.max()
        if dtype == np.int32:
            assert s[1] == x.sum()
        else:  # the programs' float sums add up in the order the blocks run
            np.testing.assert_allclose(s[1], x.astype(np.float64).sum(), rtol=1e-5, atol=1e-3)


def test_max_min_emit_the_data_copy_atomics():
    sig = {"x_ptr": "*i32", "mx_ptr": "*i32", "mn_ptr": "*i32", "s_ptr": "*i32", "n": "i32"}
    cpp = xblock.compile(max_min_kernel, target="ascend", signature=sig, constexprs={"BLOCK": 64}).asm["cpp"]
    for api in ("SetAtomicMax<int32_t>();", "SetAtomicMin<int32_t>();", "SetAtomicAdd<int32_t>();",
                "SetAtomicNone();"):  # the spelling every CANN from 8.0 to 9.1 declares (ASCEND_MODEL.md §1a)
        assert api in cpp, api
    assert "DisableDmaAtomic()" not in cpp  # (the header comment names it)


@pytest.mark.parametrize("kind,needle", [
    (0, "atomic_xchg (xb.atomic_rmw xchg) is not supported on ascend: it needs AscendC's scalar AtomicExch"),
    (1, "atomic_or (xb.atomic_rmw or) is not supported on ascend: AscendC has no atomic bitwise or"),
    (2, "the old value atomic_add returns is not available on ascend: it needs AscendC's scalar AtomicAdd"),
])
def test_atomics_without_an_a2_api_are_clear_errors(kind, needle):
    sig = SIG if kind != 1 else {"x_ptr": "*i32", "out_ptr": "*i32"}
    with pytest.raises(xblock.CompilationError) as e:
        xblock.compile(refused_kernel, target="ascend", signature=sig, constexprs={"KIND": kind, "BLOCK": 64})
    msg = str(e.value)
    assert "test_atomics.py:" in msg and needle in msg, msg
    assert "Atlas A2" in msg and "SetAtomicAdd/SetAtomicMax/SetAtomicMin" in msg
    assert "Traceback" not in msg and "xblock/backends" not in msg


# ----- the model of the data-copy atomics (planted kernels, as in test_model_fidelity.py) --------------

PLANTED_BODY = """    GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer((__gm__ float *)x);
    TQue<TPosition::VECOUT, 1> q;
    pipe.InitBuffer(q, 1, 256);
    LocalTensor<float> v = q.AllocTensor<float>();
    Duplicate(v, {value}, 64);
    q.EnQue(v);
    v = q.DeQue<float>();
    // planted.py:6: xl.atomic_max(x + offs, v)
    SetAtomicMax<{atomic_t}>();
    DataCopy(xGm, v, 64);
    SetAtomicNone();
    q.FreeTensor(v);
"""


@pytest.mark.parametrize("value,atomic_t,error", [
    ("2.0f", "float", None),
    ("__builtin_nanf(\"\")", "float", "SetAtomicMax of a NaN: the hardware's result is not documented"),
    ("2.0f", "int32_t", "copies another type than the one SetAtomicMax was set for"),
])
def test_the_model_of_set_atomic_max(value, atomic_t, error):
    """SetAtomicMax<T> keeps the larger element; a NaN, or a copy of another type than T, stops the model."""
    from ..model.test_model_fidelity import PLANTED, build, kernel_source, metadata

    cpp = kernel_source("amax", "GM_ADDR x", PLANTED_BODY.format(value=value, atomic_t=atomic_t))
    launch = build("amax", cpp, metadata("amax", ["x"], [], [0]))
    x = np.concatenate([np.ones(32, np.float32), np.full(32, 3.0, np.float32)])
    if error is None:
        launch((1, 1, 1), [x])
        assert np.array_equal(x, np.concatenate([np.full(32, 2.0), np.full(32, 3.0)]).astype(np.float32))
        return
    with pytest.raises(xblock.ExecutionError) as e:
        launch((1, 1, 1), [x])
    # DataCopy carries no call site in the model: the error is reported at the kernel's def line
    assert str(e.value).startswith(f"{PLANTED}:1: ") and f"DataCopy(UB->GM): {error}" in str(e.value), str(e.value)


@xblock.jit
def scattered_atomics(x_ptr, o_ptr, m_ptr, n, BLOCK: xl.constexpr):
    i = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = i < n
    x = xl.load(x_ptr + i, mask=m, other=0.0)
    xl.atomic_add(o_ptr + i % 7, x, mask=m)
    xl.atomic_max(m_ptr + (i % 5) * 3, i, mask=m)


@pytest.mark.parametrize("n", [1, 63, 200])
def test_atomics_on_scattered_addresses_run_lane_by_lane(n):
    """Addresses that are not rows (`i % 7`, strided, repeated): one data-copy atomic per lane."""
    x = np.random.default_rng(n).integers(-4, 5, 256).astype(np.float32)
    o, mx = np.zeros(7, np.float32), np.full(15, -1, np.int32)
    with warnings.catch_warnings():  # (the first compile warns: "this atomic is a scatter ...")
        warnings.simplefilter("ignore", XBlockWarning)
        xblock.jit(scattered_atomics)[(4,)](x, o, mx, n, BLOCK=64, target="ascend")
    want, wm = np.zeros(7, np.float32), np.full(15, -1, np.int32)
    np.add.at(want, np.arange(n) % 7, x[:n])
    np.maximum.at(wm, (np.arange(n) % 5) * 3, np.arange(n, dtype=np.int32))
    np.testing.assert_array_equal(o, want)
    np.testing.assert_array_equal(mx, wm)
