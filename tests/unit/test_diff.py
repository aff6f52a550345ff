"""xblock.diff: report figures, output inference, skipped targets, and a planted fault localized."""

import importlib
import json

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock import backends
from xblock.numdiff import compare, ulp_distance


@pytest.fixture
def faulty():
    backends._TARGETS["sim-faulty"] = "tests.unit.faulty_target"
    yield "sim-faulty"
    backends._TARGETS.pop("sim-faulty", None)
    backends._LOADED.pop("sim-faulty", None)


@pytest.fixture
def planted(request):
    """A real target with a planted fault at the softmax's division (tests/unit/faulty_targets.py)."""
    from tests.unit.faulty_targets import faulty

    base = request.param
    if base == "sim":
        name, module, backend = "sim-faulty", "tests.unit.faulty_target", None
    else:
        name, module, backend = f"{base}-faulty", "tests.unit.faulty_targets", faulty(base)
    backends._TARGETS[name] = module
    if backend is not None:
        backends._LOADED[name] = backend
    yield name
    backends._TARGETS.pop(name, None)
    backends._LOADED.pop(name, None)


def softmax_case():
    return importlib.import_module("examples.softmax").case((5, 100))


def test_known_perturbation_figures():
    ref = np.array([1.0, 2.0, 4.0, 8.0], np.float32)
    got = ref.copy()
    got[2] = np.nextafter(np.float32(4.0), np.float32(5.0))  # one ULP up
    got[3] = 8.5
    d = compare("t", "out", got, ref, atol=1e-5, rtol=1e-5)
    assert d.mismatches == 1 and d.first_bad == (3,)
    assert d.max_abs == pytest.approx(0.5) and d.max_rel == pytest.approx(0.0625)
    assert ulp_distance(got[:3], ref[:3], np.float32).max() == pytest.approx(1.0)
    assert not d.ok


def test_outputs_are_inferred_from_stores():
    c = softmax_case()
    rep = xblock.diff(c.kernel, c.grid, *c.args, targets=["sim"], **c.meta)
    assert [r.output for r in rep.rows] == ["out_ptr"] and rep.ok
    layer = importlib.import_module("examples.layernorm").case((3, 100))
    rep = xblock.diff(layer.kernel, layer.grid, *layer.args, targets=["sim"], **layer.meta)
    assert len(rep.rows) == 3  # y, mean and rstd are stored; x, weight and bias are not


def test_unavailable_target_is_skipped_with_reason(monkeypatch):
    c = softmax_case()
    monkeypatch.setitem(backends._TARGETS, "nowhere", "tests.unit.unavailable_target")
    rep = xblock.diff(c.kernel, c.grid, *c.args, targets=["sim", "nowhere"], **c.meta)
    assert rep.ok
    (status,) = [s for s in rep.statuses if s.target == "nowhere"]
    assert status.status == "skipped" and "not available" in status.reason
    data = json.loads(rep.to_json())
    assert data["ok"] and data["rows"][0]["target"] == "sim"


def test_planted_fault_is_caught_and_localized(faulty):
    c = softmax_case()
    x_before = c.args[1].copy()
    rep = xblock.diff(c.kernel, c.grid, *c.args, targets=["sim", faulty], localize=True, **c.meta)
    assert not rep.ok
    bad = [r for r in rep.rows if r.target == faulty]
    assert bad and not bad[0].ok and bad[0].mismatches > 0
    assert rep.localized["op"] == "arith.divf"
    src = open(importlib.import_module("examples.softmax").__file__).read().splitlines()
    assert "num / xl.sum(" in src[rep.localized["line"] - 1]
    assert "FAIL" in str(rep) and "arith.divf" in str(rep)
    np.testing.assert_array_equal(c.args[1], x_before)  # inputs are copied per target


def test_plot_marks_the_mismatches(faulty, tmp_path):
    pytest.importorskip("matplotlib")
    from xblock.cli import plot_mismatches

    c = softmax_case()
    rep = xblock.diff(c.kernel, c.grid, *c.args, targets=["sim", faulty], **c.meta)
    png = tmp_path / "mismatch.png"
    plot_mismatches(c.kernel, c, rep, str(png))
    assert png.read_bytes()[:4] == b"\x89PNG"
    bad = [r for r in rep.rows if r.target == faulty][0]
    assert bad.mask.shape == (5, 100) and bad.mask.sum() == bad.mismatches


@xblock.jit
def twice(x_ptr, y_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    xl.store(y_ptr + offs, xl.load(x_ptr + offs, mask=m) * 2, mask=m)


class _DLPackOnly:
    """An array that offers only the DLPack protocol (as JAX or CuPy arrays do)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kw):
        return self._a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def _kinds():
    kinds = [("numpy", lambda a: a)]
    try:
        import torch

        kinds.append(("torch", torch.from_numpy))
    except ImportError:
        pass
    kinds.append(("dlpack", _DLPackOnly))
    return kinds


@pytest.mark.parametrize("kind", [k for k, _ in _kinds()])
def test_a_target_that_disagrees_is_reported_for_every_argument_kind(faulty, kind):
    """The verdict itself: with arguments of every kind the faulty target is a FAIL, the agreeing one
    ok, and the caller's arrays are untouched (each target ran on its own copies)."""
    wrap = dict(_kinds())[kind]
    c = softmax_case()
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in c.args]
    args = [wrap(a) if isinstance(a, np.ndarray) else a for a in c.args]
    rep = xblock.diff(c.kernel, c.grid, *args, targets=["sim", "cpu", faulty], **c.meta)
    verdict = {r.target: r.ok for r in rep.rows}
    assert verdict == {"sim": True, "cpu": True, faulty: False}, str(rep)
    assert not rep.ok and "FAIL" in str(rep)
    for a, b in zip(c.args, before):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)  # the output array too: diff never writes the caller's


def test_torch_bf16_arguments_are_compared_by_value():
    torch = pytest.importorskip("torch")
    x = torch.linspace(-3, 3, 50).to(torch.bfloat16)
    y = torch.zeros(50, dtype=torch.bfloat16)
    rep = xblock.diff(twice, (2,), x, y, 50, targets=["cpu"], BLOCK=32)
    assert rep.ok and not y.float().any()  # compared, and the caller's tensor untouched
    np.testing.assert_array_equal(rep.reference_outputs[1].astype(np.float32), (x.float() * 2).numpy())


@pytest.mark.parametrize("planted", ["sim", "cpu", "ascend"], indirect=True)
def test_localize_names_the_planted_line_on_every_target(planted):
    """A divergence seeded at a known line (the division) is localized there on each target: the
    target's own code records the values (ascend used to record nothing and blame line 1)."""
    c = softmax_case()
    rep = xblock.diff(c.kernel, c.grid, *c.args, targets=[planted], localize=True, **c.meta)
    assert not rep.ok
    src = open(importlib.import_module("examples.softmax").__file__).read().splitlines()
    assert rep.localized["op"] == "arith.divf", rep.localized
    assert "num / xl.sum(" in src[rep.localized["line"] - 1]


def test_a_target_that_records_nothing_cannot_localize(monkeypatch):
    from xblock import numdiff

    c = softmax_case()
    real = numdiff._recorded

    def silent(kernel, grid, args, meta, target, per):
        records, values = real(kernel, grid, args, meta, target, per)
        return records, (np.full_like(values, np.nan) if target == "cpu" else values)

    monkeypatch.setattr(numdiff, "_recorded", silent)
    out = numdiff.localize_divergence(c.kernel, c.grid, c.args, c.meta, "cpu")
    assert out["op"] is None and "recorded no value" in out["where"], out


@xblock.jit
def mm(a_ptr, b_ptr, c_ptr, M: xl.constexpr, N: xl.constexpr, K: xl.constexpr, PREC: xl.constexpr):
    rm, rn, rk = xl.arange(0, M), xl.arange(0, N), xl.arange(0, K)
    a = xl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = xl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = xl.dot(a, b, input_precision=PREC)  # the dot
    xl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


@pytest.mark.parametrize("prec", ["tf32", "ieee"])
def test_a_difference_by_design_is_explained_at_the_dot(prec):
    """An f32 dot at Triton's default tf32: the sim rounds operands to tf32, ascend multiplies whole
    f32; the report says so at the dot's line. At ieee both agree: no note."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((32, 32)).astype(np.float32), rng.standard_normal((32, 32)).astype(np.float32)
    c = np.zeros((32, 32), np.float32)
    rep = xblock.diff(mm, (1,), a, b, c, targets=["ascend"], M=32, N=32, K=32, PREC=prec)
    line = next(i for i, s in enumerate(open(__file__).read().splitlines(), 1) if s.endswith("# the dot"))
    if prec == "ieee":
        assert rep.ok and not rep.notes, str(rep)
        return
    assert not rep.ok and len(rep.notes) == 1, str(rep)
    assert f"test_diff.py:{line}: tl.dot of f32 operands, input_precision 'tf32': ascend computes it as 'ieee'" \
        in rep.notes[0]
    assert "differences by design" in str(rep) and rep.notes == json.loads(rep.to_json())["notes"]
