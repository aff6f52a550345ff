"""A target whose dependency is missing says which extra to install, as an xblock error."""

import importlib.util

import pytest

import xblock
import xblock.language as xl
from xblock.backends import TargetUnavailable, get_backend
from xblock.runtime import compiler


@xblock.jit
def ones(x_ptr, BLOCK: xl.constexpr):
    xl.store(x_ptr + xl.arange(0, BLOCK), 1.0)


@pytest.fixture
def no_triton(monkeypatch, tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a, **k: None if name == "triton" else
                        real(name, *a, **k))
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path))
    compiler._MEMORY.clear()
    yield
    compiler._MEMORY.clear()


def test_cuda_without_triton_names_the_extra(no_triton):
    with pytest.raises(TargetUnavailable, match=r"needs Triton to compile: pip install 'xblock\[cuda\]'"):
        xblock.compile(ones, target="cuda", signature={"x_ptr": "*fp32"}, constexprs={"BLOCK": 16})
    assert "pip install 'xblock[cuda]'" in get_backend("cuda").availability()
