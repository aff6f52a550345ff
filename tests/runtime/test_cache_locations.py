"""Errors name the file that was launched (issue 32, item 9): the same kernel text in `a/k.py` and
`b/k.py` is two cache entries, so an error of the one launched second names its own file, not the
file an earlier process (or this one) compiled the alike kernel from."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

import xblock

KERNEL = '''
import xblock
import xblock.language as xl


@xblock.jit
def overrun(x_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    xl.store(x_ptr + offs, xl.load(x_ptr + offs) + 1.0)
'''


def _load(path):
    spec = importlib.util.spec_from_file_location(f"k_{abs(hash(str(path)))}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.overrun


def _two_files(root):
    paths = []
    for folder in ("a", "b"):
        (root / folder).mkdir(parents=True)
        (root / folder / "k.py").write_text(KERNEL)
        paths.append(root / folder / "k.py")
    return paths


@pytest.mark.parametrize("target", ["sim", "cpu", "ascend"])
@pytest.mark.parametrize("under_cwd", [False, True])
def test_the_error_names_the_file_launched(tmp_path, monkeypatch, target, under_cwd):
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path / "cache"))
    if under_cwd:  # keys name the files relative to the working directory: a/k.py, b/k.py
        monkeypatch.chdir(tmp_path)
    for path in _two_files(tmp_path / "src"):
        x = np.zeros(4, np.float32)
        with pytest.raises(xblock.ExecutionError) as info:
            _load(path)[(1,)](x, BLOCK=8, target=target)
        msg = str(info.value)
        here = os.path.join(path.parent.name, "k.py")
        assert f"{here}:9" in msg and f"{os.sep}{'b' if path.parent.name == 'a' else 'a'}{os.sep}k.py" not in msg, msg
