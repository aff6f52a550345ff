"""Errors of the cuda target that show without a GPU: each names the kernel's file and line.

(Launch errors that need a GPU, such as CPU tensors passed to a cuda launch, are in
test_gpu_launch.py, which runs where torch sees a GPU.)
"""

from __future__ import annotations

import numpy as np
import pytest

import xblock
import xblock.language as xl
from examples.add import add_kernel

pytest.importorskip("triton")
pytest.importorskip("mlir")  # compiling needs the MLIR bindings

SIG = {"x_ptr": "*fp32"}


@xblock.jit
def _twice(x_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    xl.store(x_ptr + offs, xl.load(x_ptr + offs) * 2)


LINE = _twice.fn.__code__.co_firstlineno


def test_non_power_of_2_block_names_the_line():
    with pytest.raises(xblock.CompilationError) as info:
        xblock.compile(_twice, target="cuda", signature=SIG, constexprs={"BLOCK": 12})
    msg = str(info.value)
    assert f"test_errors.py:{LINE + 3}:" in msg
    assert "needs block dimensions that are powers of 2, got a block of shape [12]" in msg
    assert "xl.store(x_ptr + offs" in msg
    assert "Traceback" not in msg and "/xblock/backends/" not in msg


def test_bad_num_warps():
    with pytest.raises(xblock.CompilationError, match="num_warps must be a power of 2, got 3"):
        xblock.compile(_twice, target="cuda", signature=SIG, constexprs={"BLOCK": 16}, num_warps=3)


def test_unknown_option():
    with pytest.raises(xblock.CompilationError, match="unknown option.*for target 'cuda': soc"):
        xblock.compile(_twice, target="cuda", signature=SIG, constexprs={"BLOCK": 16}, soc="910B")


def test_unsupported_dtype_at_launch():
    x = np.zeros(16, np.complex64)
    with pytest.raises(xblock.LaunchError, match=r"add_kernel: argument 'x_ptr' has dtype complex64"):
        add_kernel[(1,)](x, x, x, 16, BLOCK=1024, target="cuda")


def test_cuda_launch_without_gpu_says_why(monkeypatch, tmp_path):
    """numpy arrays with target='cuda' on a machine without torch or a GPU: a LaunchError, not a crash."""
    try:
        import torch

        if torch.cuda.is_available():
            pytest.skip("a GPU is visible: test_gpu_launch.py covers numpy arrays on cuda")
    except ImportError:
        pass
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path))
    x = np.zeros(16, np.float32)
    with pytest.raises(xblock.LaunchError) as info:
        add_kernel[(1,)](x, x, x, 16, BLOCK=1024, target="cuda")
    msg = str(info.value)
    assert "add.py:" in msg and "add_kernel:" in msg
    assert "needs torch and triton" in msg or "needs an NVIDIA GPU" in msg


def test_cuda_claims_only_cuda_tensors():
    from xblock.backends.cuda import claims_arguments

    class FakeTensor:  # what a torch CUDA tensor looks like to claims_arguments
        is_cuda = True

    FakeTensor.__module__ = "torch"
    assert claims_arguments([1, FakeTensor()])
    assert not claims_arguments([np.zeros(4), 3])
    FakeTensor.is_cuda = False
    assert not claims_arguments([FakeTensor()])


def test_loading_needs_no_mlir(tmp_path):
    """A cuda cache entry loads (and a bundle imports) in a process where MLIR cannot be imported."""
    import os
    import subprocess
    import sys
    import textwrap

    from xblock.runtime.bundle import export_bundle


    cache = tmp_path / "cache"
    env = dict(os.environ, XBLOCK_CACHE_DIR=str(cache))
    code = textwrap.dedent("""
        import os, sys
        sys.path.insert(0, os.getcwd())
        from tests.cuda.support import compile_case, example_case
        compile_case(example_case("softmax"))
    """)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    bundle = tmp_path / "kernels.tar.gz"
    assert export_bundle(bundle, kernels=["softmax_kernel"], cache_dir=cache) == 1
    blocked = textwrap.dedent(f"""
        import os, sys
        class NoMLIR:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "mlir":
                    raise ImportError("no MLIR on this machine")
        sys.meta_path.insert(0, NoMLIR())
        sys.path.insert(0, os.getcwd())
        from xblock.runtime.bundle import import_bundle
        assert import_bundle({str(bundle)!r}) == 1
        from tests.cuda.support import compile_case, example_case
        ck = compile_case(example_case("softmax"))
        assert ck.asm["cubin"][:4] == b"\\x7fELF" and type(ck.launcher).__name__ == "CudaLauncher"
        assert not [m for m in sys.modules if m.split(".")[0] == "mlir"]
        print("OK")
    """)
    env["XBLOCK_CACHE_DIR"] = str(tmp_path / "fresh")
    r = subprocess.run([sys.executable, "-c", blocked], env=env, cwd=root, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "OK" in r.stdout, r.stderr
