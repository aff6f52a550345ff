"""The timeline of a cost-model Profile (backends/ascend/model/timeline.py): the flow-shop rule of the
schedule, skipped pipes, the SVG and the text chart, a mixed kernel's three cores, the CLI, and
one real kernel end to end."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

import xblock
from xblock.backends.ascend.model import cost, timeline

pytestmark = pytest.mark.filterwarnings("ignore")

SVG = "{http://www.w3.org/2000/svg}"


def make_profile(per_core: list[dict], labels: list[str], programs: list[int], double: bool = True):
    """A Profile with per-core pipes, labels and program counts (set on the instance when the
    constructor lacks them)."""
    full = [dict(dict.fromkeys(cost.PIPES, 0.0), **p) for p in per_core]
    p = cost.Profile("k", "910B3", {}, full[0], "V", 1.0, 0.5, len({lb.split()[1] for lb in labels}),
                     sum(programs), double)
    p.block_pipes, p.cores, p.core_programs = full, labels, programs
    return p


def by(spans):
    return {(s.pipe, s.program): s for s in spans}


def test_double_buffered_programs_overlap():
    p = make_profile([{"MTE2": 400, "V": 400}], ["block 0 AIV"], [4])
    s = by(timeline.schedule(p, 0, 0, 4))
    assert s[("MTE2", 0)].start_cycle == 0 and s[("MTE2", 0)].end_cycle == 100
    # MTE2 of program 1 runs while V runs program 0
    assert s[("MTE2", 1)].start_cycle == 100 < s[("V", 0)].end_cycle == 200
    assert s[("V", 3)].end_cycle == 500  # (P - 1) * max + sum
    for j in range(1, 4):
        for pipe, nxt in (("MTE2", "V"),):
            assert s[(nxt, j)].start_cycle >= s[(pipe, j)].end_cycle  # input ready
            assert s[(pipe, j)].start_cycle >= s[(pipe, j - 1)].end_cycle  # pipe free
        if j >= 2:  # buffer of program j-2 freed by its consumer
            assert s[("MTE2", j)].start_cycle >= s[("V", j - 2)].end_cycle


def test_single_buffer_waits_for_the_consumer():
    p = make_profile([{"MTE2": 400, "V": 400, "MTE3": 200}], ["block 0 AIV"], [4], double=False)
    spans = timeline.schedule(p, 0, 0, 4)
    s = by(spans)
    order = ["MTE2", "V", "MTE3"]
    for j in range(3):
        for i in range(2):  # stage i of program j+1 after stage i+1 of program j
            assert s[(order[i], j + 1)].start_cycle >= s[(order[i + 1], j)].end_cycle
    # D=1 keeps MTE2 of program 1 off program 0's V; it may overlap program 0's MTE3
    assert s[("MTE2", 1)].start_cycle == s[("V", 0)].end_cycle == 200
    assert s[("MTE2", 1)].start_cycle < s[("MTE3", 0)].end_cycle


@pytest.mark.parametrize("double", [True, False])
def test_schedule_follows_the_rule_everywhere(double):
    pipes = {"Scalar": 30, "MTE2": 500, "V": 900, "MTE3": 250}
    p = make_profile([pipes], ["block 0 AIV"], [6], double=double)
    s = by(timeline.schedule(p, 0, 0, 6))
    order, d = ["Scalar", "MTE2", "V", "MTE3"], 2 if double else 1
    for j in range(6):
        for i, pipe in enumerate(order):
            want = max(s[(order[i - 1], j)].end_cycle if i else 0,
                       s[(pipe, j - 1)].end_cycle if j else 0,
                       s[(order[i + 1], j - d)].end_cycle if j >= d and i + 1 < len(order) else 0)
            assert s[(pipe, j)].start_cycle == pytest.approx(want)
            assert s[(pipe, j)].end_cycle - s[(pipe, j)].start_cycle == pytest.approx(pipes[pipe] / 6)
    if double:  # all programs of the core, two buffers: the cost model's overlap figure
        full = dict(dict.fromkeys(cost.PIPES, 0.0), **pipes)
        assert s[("MTE3", 5)].end_cycle == pytest.approx(cost.overlap(full, 0.0, 6, True))


def test_range_and_clamping():
    p = make_profile([{"MTE2": 800, "V": 400}], ["block 0 AIV"], [8])
    whole = timeline.schedule(p, 0, 0, 8)
    part = timeline.schedule(p, 0, 3, 2)
    assert {s.program for s in part} == {3, 4}
    assert part == [s for s in whole if s.program in (3, 4)]  # the steady state, not restarted at 0
    assert {s.program for s in timeline.schedule(p, 0, 6, 10)} == {6, 7}
    assert timeline.schedule(p, 0, 8, 4) == []


def test_zero_pipes_are_skipped():
    p = make_profile([{"MTE2": 400, "V": 0, "MTE3": 200, "Scalar": 0}], ["block 0 AIV"], [2])
    spans = timeline.schedule(p, 0)
    assert {s.pipe for s in spans} == {"MTE2", "MTE3"}
    s = by(spans)
    assert s[("MTE3", 0)].start_cycle == s[("MTE2", 0)].end_cycle  # MTE2 feeds MTE3 directly
    assert timeline.schedule(make_profile([{}], ["block 0 AIV"], [2]), 0) == []


def _mixed():
    aic = {"Scalar": 100, "MTE2": 4000, "MTE1": 2000, "Cube": 6000, "Fixpipe": 3000}
    aiv = {"Scalar": 80, "MTE2": 3000, "V": 5000, "MTE3": 3000}
    labels = [f"block {b} {c}" for b in (0, 1) for c in ("AIC", "AIV0", "AIV1")]
    return make_profile([aic, aiv, aiv] * 2, labels, [4] * 6)


def test_mixed_kernel_three_cores():
    p = _mixed()
    assert timeline.block_cores(p, 1) == [3, 4, 5]
    cube = by(timeline.schedule(p, 0))
    assert [k for k in cube if k[1] == 0] == [("Scalar", 0), ("MTE2", 0), ("MTE1", 0), ("Cube", 0), ("Fixpipe", 0)]
    vec = by(timeline.schedule(p, 1))
    assert [k for k in vec if k[1] == 0] == [("Scalar", 0), ("MTE2", 0), ("V", 0), ("MTE3", 0)]
    root = ET.fromstring(timeline.render_svg(p, block=0))
    rows = [t.text for t in root.iter(SVG + "text") if t.get("class") == "row"]
    assert rows == [f"block 0 AIC {q}" for q in ("Scalar", "MTE2", "MTE1", "Cube", "Fixpipe")] + \
        [f"block 0 {c} {q}" for c in ("AIV0", "AIV1") for q in ("Scalar", "MTE2", "V", "MTE3")]
    text = timeline.render_text(p, block=1)
    assert [ln.split(" |")[0].strip() for ln in text.splitlines()[1:-1]] == [r.replace("block 0", "block 1")
                                                                           for r in rows]
    with pytest.raises(cost.ProfileError, match="block 2"):
        timeline.render_text(p, block=2)


def test_svg(tmp_path):
    p = make_profile([{"MTE2": 4000, "V": 4000, "MTE3": 2000, "Scalar": 100}, {"MTE2": 4000, "V": 4000}],
                     ["block 0 AIV", "block 1 AIV"], [8, 8])
    path = tmp_path / "t.svg"
    svg = timeline.render_svg(p, str(path), count=3)
    assert path.read_text() == svg
    root = ET.fromstring(svg)
    assert root.tag == SVG + "svg"
    rows = [t.text for t in root.iter(SVG + "text") if t.get("class") == "row"]
    assert rows == ["block 0 AIV Scalar", "block 0 AIV MTE2", "block 0 AIV V", "block 0 AIV MTE3"]
    spans = [r for r in root.iter(SVG + "rect") if r.find(SVG + "title") is not None]
    assert len(spans) == 4 * 3
    assert len({r.get("fill") for r in spans}) == 3  # coloured by program
    texts = [t.text for t in root.iter(SVG + "text")]
    title = root.find(SVG + "title").text
    assert "k on 910B3" in title and "bound by V" in title and "estimate 1.00 us" in title
    assert "programs 0..2" in title and "not a trace" in title
    assert {"0", "1", "2"} <= set(texts)  # program numbers inside the wide rectangles
    assert any("us" in (t or "") for t in texts)


def test_text_chart():
    p = make_profile([{"MTE2": 400, "V": 400}], ["block 0 AIV"], [12])
    text = timeline.render_text(p, count=12, width=65)
    lines = text.splitlines()
    assert "k on 910B3" in lines[0] and "programs 0..11" in lines[0]
    mte2, v = lines[1], lines[2]
    assert mte2.startswith("block 0 AIV MTE2") and v.startswith("block 0 AIV V")
    bar = mte2.split("|")[1]
    assert len(bar) == 65 and len(v.split("|")[1]) == 65
    # 13 stage times over 65 slots: 5 slots each, digits modulo 10
    assert bar == "".join(str(j % 10) * 5 for j in range(12)) + "....."
    assert v.split("|")[1] == "....." + "".join(str(j % 10) * 5 for j in range(12))
    assert lines[-1].split() == ["0", "us", f"{13 * 400 / 12 / cost.soc_cost('910B3').hz * 1e6:.3g}", "us"]


def test_profile_without_per_core_lists():
    """Before cost.Profile labels its cores: one summed entry per block, labelled 'block i'."""
    p = cost.Profile("k", "910B3", {}, {}, "V", 1.0, 0.5, 2, 6, True,
                     [dict(dict.fromkeys(cost.PIPES, 0.0), MTE2=300, V=600)] * 2)
    if hasattr(p, "cores"):
        p.cores, p.core_programs = [], []
    assert [(c[0], c[2]) for c in timeline.cores(p)] == [("block 0", 3), ("block 1", 3)]
    assert "block 0 MTE2" in timeline.render_text(p)


@pytest.fixture(scope="module")
def softmax_profile():
    from examples import softmax

    case = softmax.case((64, 256), "float32")
    p = xblock.profile(case.kernel, case.grid, *case.copy_args(), **case.meta)
    if not hasattr(p, "core_programs"):
        pytest.skip("cost.Profile has no per-core lists (core_programs) yet")
    return p


def test_softmax_end_to_end(softmax_profile, tmp_path):
    p = softmax_profile
    assert len(p.cores) == len(p.block_pipes) == len(p.core_programs)
    shown = min(p.core_programs[0], 8)
    root = ET.fromstring(timeline.render_svg(p, str(tmp_path / "s.svg")))
    rows = [t.text for t in root.iter(SVG + "text") if t.get("class") == "row"]
    assert rows and all(r.startswith(p.cores[0]) for r in rows) and any(r.endswith(" V") for r in rows)
    text = timeline.render_text(p)
    assert text.splitlines()[0].startswith("softmax_kernel on 910B3")
    assert len(text.splitlines()) == len(rows) + 2
    assert {s.program for s in timeline.schedule(p, 0)} == set(range(shown))


def test_cli_timeline(tmp_path, capsys, monkeypatch):
    from xblock.backends.ascend.model import profile as profile_mod
    from xblock.cli import main

    def fake(kernel, grid, *args, target="ascend", soc="910B3", **meta):
        p = make_profile([{"MTE2": 800, "V": 800, "MTE3": 400}], ["block 0 AIV"], [8])
        p.report = lambda: "the report"
        return p

    monkeypatch.setattr(xblock, "profile", fake)
    monkeypatch.setattr(profile_mod, "profile", fake)
    out = tmp_path / "t.svg"
    assert main(["profile", "examples/softmax.py:softmax_kernel", "--size", "8x64", "--timeline", str(out),
                 "--programs", "3"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("the report")
    assert "block 0 AIV MTE2 |" in printed and "programs 0..2" in printed and str(out) in printed
    ET.parse(out)
    # with --json the chart goes to stderr: stdout stays one JSON document
    assert main(["profile", "examples/softmax.py:softmax_kernel", "--size", "8x64", "--json", "--timeline",
                 str(out)]) == 0
    both = capsys.readouterr()
    assert json.loads(both.out)["kernel"] == "k"
    assert "\nblock 0 AIV V " in both.err and "programs 0..7" in both.err
