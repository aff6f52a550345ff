"""The compile pipeline around the stages: warmup, names as locations, written-argument metadata,
and hand-edited stages picked up from XBLOCK_OVERRIDE_DIR."""

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.runtime import compiler


@xblock.jit
def axpy(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    mask = offs < n
    acc = xl.load(x_ptr + offs, mask=mask) * alpha
    for _ in range(2):
        acc += xl.load(y_ptr + offs, mask=mask)
    xl.store(out_ptr + offs, acc, mask=mask)


@xblock.jit
def carried(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    p = out_ptr + xl.arange(0, BLOCK)
    for i in range(2):
        xl.store(p, xl.load(x_ptr + xl.arange(0, BLOCK)))
        p += BLOCK


@xblock.jit
def chosen(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    p = out_ptr
    if n > 5:
        p = x_ptr
    xl.store(p + xl.arange(0, BLOCK), xl.zeros((BLOCK,), dtype=xl.float32))


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path / "cache"))
    compiler._MEMORY.clear()
    yield tmp_path
    compiler._MEMORY.clear()


def _args(n=100):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    return x, y, np.zeros(n, np.float32), n, 0.5


def test_warmup_compiles_what_a_launch_uses_without_running(fresh):
    x, y, out, n, alpha = _args()
    ck = axpy.warmup(x, y, out, n, alpha, target="sim", BLOCK=64)
    assert not out.any(), "warmup ran the kernel"
    launched = axpy[(2,)](x, y, out, n, alpha, target="sim", BLOCK=64)
    assert launched is ck
    np.testing.assert_allclose(out, x * alpha + 2 * y, rtol=1e-6)


def test_warmup_errors_name_the_kernel(fresh):
    x, y, out, n, alpha = _args()
    with pytest.raises(xblock.LaunchError, match=r"test_pipeline.py:\d+: axpy: missing argument 'alpha'"):
        axpy.warmup(x, y, out, n, target="sim", BLOCK=64)


def test_assigned_names_travel_as_name_locations(fresh):
    x, y, out, n, alpha = _args()
    xb_text = axpy.warmup(x, y, out, n, alpha, target="sim", BLOCK=64).asm["xb"]
    for name in ("offs", "mask", "acc", "_"):
        assert f'loc("{name}"(' in xb_text, name


def test_written_arguments_are_compile_time_metadata(fresh):
    x, y, out, n, alpha = _args()
    assert axpy.warmup(x, y, out, n, alpha, target="sim", BLOCK=64).metadata["written_args"] == [2]
    # a pointer carried through a loop points where its initial value and each step's update point
    ck = carried.warmup(x, out, n, target="sim", BLOCK=16)
    assert ck.metadata["written_args"] == [1]
    # one chosen at run time may point into either
    assert chosen.warmup(x, out, n, target="sim", BLOCK=16).metadata["written_args"] == [0, 1]
    assert xblock.numdiff.written_arguments(chosen, (x, out, n), {"BLOCK": 16}) == [0, 1]


def test_an_edited_stage_is_picked_up_and_later_stages_rerun(fresh, monkeypatch):
    x, y, out, n, alpha = _args()
    dump = fresh / "dump"
    monkeypatch.setenv("XBLOCK_DUMP_DIR", str(dump))
    axpy.warmup(x, y, out, n, alpha, target="cpu", BLOCK=64)
    text = (dump / "axpy.xb").read_text()
    assert text.count("arith.addf") == 1
    edited = fresh / "edited"
    edited.mkdir()
    (edited / "axpy.xb").write_text(text.replace("arith.addf", "arith.subf"))
    monkeypatch.delenv("XBLOCK_DUMP_DIR")
    monkeypatch.setenv("XBLOCK_OVERRIDE_DIR", str(edited))
    compiler._MEMORY.clear()
    axpy.kernels.clear()
    axpy._fast.clear()
    axpy[(2,)](x, y, out, n, alpha, target="cpu", BLOCK=64)
    np.testing.assert_allclose(out, x * alpha - 2 * y, rtol=1e-6)
    monkeypatch.delenv("XBLOCK_OVERRIDE_DIR")  # without the override: the original kernel again
    axpy.kernels.clear()
    axpy._fast.clear()
    axpy[(2,)](x, y, out, n, alpha, target="cpu", BLOCK=64)
    np.testing.assert_allclose(out, x * alpha + 2 * y, rtol=1e-6)


@xblock.jit
def add_one(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    mask = offs < n
    xl.store(out_ptr + offs, xl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)


def test_a_hand_edited_ascendc_source_is_compiled_and_run(fresh, monkeypatch):
    """The AscendC debugging loop: dump kernel.cpp, edit it, run the edit on the CPU model."""
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(100, np.float32)
    dump = fresh / "dump"
    monkeypatch.setenv("XBLOCK_DUMP_DIR", str(dump))
    add_one.warmup(x, out, 100, target="ascend", BLOCK=128)
    cpp = (dump / "add_one.cpp").read_text()
    assert "Adds(" in cpp
    edited = fresh / "edited"
    edited.mkdir()
    (edited / "add_one.cpp").write_text(cpp.replace("Adds(", "Muls("))
    monkeypatch.delenv("XBLOCK_DUMP_DIR")
    monkeypatch.setenv("XBLOCK_OVERRIDE_DIR", str(edited))
    compiler._MEMORY.clear()  # the variable is read when a kernel compiles: forget this process's kernels
    add_one.kernels.clear()
    add_one._fast.clear()
    add_one[(1,)](x, out, 100, target="ascend", BLOCK=128)
    np.testing.assert_array_equal(out, x * 1.0)
