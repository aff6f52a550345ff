"""`xblock bench --plot` writes a perf_report-style PNG (GB/s against size, a line per target)."""

from __future__ import annotations

import pytest

from xblock.cli import main

plt = pytest.importorskip("matplotlib.pyplot")


def test_bench_plot_writes_a_png(tmp_path, capsys):
    out = tmp_path / "add.png"
    rc = main(["bench", "examples/add.py:add_kernel", "--targets", "sim,cpu", "--plot", str(out), "--warmup", "0",
               "--rep", "1"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "add_kernel on cpu, size 98432" in text and "GB/s" in text
    img = plt.imread(out)
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
    assert img[..., :3].std() > 0.01  # not a blank image


def test_bench_plot_names_an_unknown_target(tmp_path, capsys):
    rc = main(["bench", "examples/add.py:add_kernel", "--targets", "sim,cpuu", "--plot", str(tmp_path / "x.png")])
    assert rc != 0
    assert "unknown target 'cpuu'" in capsys.readouterr().err
