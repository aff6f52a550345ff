"""`xblock.export(kernel, grid, *args, directory=...)` (issue 32, item 5): a launch that just ran is
exported with its own arrays as the project's data; the golden is the reference simulator's on them;
the project runs on the model toolkit and its checker passes; the caller's arrays are not written."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import xblock
from examples.add import add_kernel
from xblock.backends.ascend.export.hostcheck import model_toolkit, run_project


def _launch():
    rng = np.random.default_rng(3)
    n = 1000
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    return x, y, np.zeros(n, np.float32), n


def test_the_launch_arrays_are_the_project_data(tmp_path):
    x, y, out, n = _launch()
    grid = (xblock.cdiv(n, 256),)
    add_kernel[grid](x, y, out, n, BLOCK=256, target="ascend")  # the launch that just ran
    ran = out.copy()
    xblock.export(add_kernel, grid, x, y, out, n, BLOCK=256, directory=tmp_path / "p")
    p = tmp_path / "p"
    for name, a in (("x_ptr", x), ("y_ptr", y), ("out_ptr", ran)):
        assert (p / "data" / f"{name}.bin").read_bytes() == a.tobytes(), name
    golden = np.fromfile(p / "golden" / "out_ptr.bin", np.float32)
    np.testing.assert_array_equal(golden, x + y)
    np.testing.assert_array_equal(out, ran)  # not written by the export
    launch = json.loads((p / "kernel.json").read_text())["launch"]
    assert [b["data"] for b in launch["buffers"]] == ["given"] * 3 and launch["scalars"] == {"n": n}


@pytest.mark.skipif(shutil.which("g++") is None or shutil.which("cmake") is None,
                    reason="the model toolkit builds with cmake and g++")
def test_the_exported_launch_runs_and_passes_its_checker(tmp_path):
    x, y, out, n = _launch()
    xblock.export(add_kernel, (xblock.cdiv(n, 256),), x, y, out, n, BLOCK=256, directory=tmp_path / "p")
    res = run_project(tmp_path / "p", model_toolkit(tmp_path / "toolkit"))
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    assert "PASS: 1 of 1 outputs" in res.stdout, res.stdout[-2000:]
