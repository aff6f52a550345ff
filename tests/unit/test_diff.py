"""xblock.diff: report figures, output inference, skipped targets, and a planted fault localized."""

import importlib
import json

import numpy as np
import pytest

import xblock
from xblock import backends
from xblock.numdiff import compare, ulp_distance


@pytest.fixture
def faulty():
    backends._TARGETS["sim-faulty"] = "tests.unit.faulty_target"
    yield "sim-faulty"
    backends._TARGETS.pop("sim-faulty", None)
    backends._LOADED.pop("sim-faulty", None)


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
