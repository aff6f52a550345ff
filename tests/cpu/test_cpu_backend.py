"""The cpu target beyond numerics: stages, default target, warm cache without MLIR, errors, threads."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.backends import default_target

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@xblock.jit
def _scale(x_ptr, out_ptr, n, alpha, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    mask = offs < n
    xl.store(out_ptr + offs, xl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


@xblock.jit
def _swapping(x_ptr, BLOCK: xl.constexpr):
    x = xl.load(x_ptr + xl.arange(0, BLOCK))
    xl.atomic_cas(x_ptr, 0.0, xl.sum(x))  # ERR


def test_stages_and_text():
    ck = xblock.compile(_scale, target="cpu", signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                                                           "alpha": "fp32"}, constexprs={"BLOCK": 64})
    assert list(ck.asm) == ["xb", "llvm.mlir", "ll", "so"]
    assert "llvm.func @xb_launch" in ck.asm["llvm.mlir"]
    assert "define void @xb_launch" in ck.asm["ll"]
    assert isinstance(ck.asm["so"], bytes) and ck.asm["so"][:4] == b"\x7fELF"


def test_numpy_arguments_default_to_cpu():
    x = np.arange(100, dtype=np.float32)
    out = np.zeros_like(x)
    assert default_target([x, out, 100, 2.0]) == "cpu"
    ck = _scale[(2,)](x, out, 100, 2.0, BLOCK=64)
    assert ck.target == "cpu"
    np.testing.assert_array_equal(out, 2 * x)


@pytest.mark.parametrize("grid", [1, 2, 3, 97])
def test_grid_split_over_threads(grid):
    n = grid * 16 - 5
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    out = np.full_like(x, np.nan)
    _scale[(grid,)](x, out, n, -3.0, BLOCK=16, target="cpu")
    np.testing.assert_array_equal(out, x * np.float32(-3.0))


def test_unsupported_op_names_op_target_and_line(monkeypatch):
    from xblock.backends.cpu import pipeline  # noqa: F401  (fills the rule table)
    from xblock.backends.cpu.lowering import RULES

    monkeypatch.delitem(RULES, "xb.atomic_cas")  # every xb op has a rule: take one away
    with pytest.raises(xblock.CompilationError) as info:
        xblock.compile(_swapping, target="cpu", signature={"x_ptr": "*fp32"}, constexprs={"BLOCK": 16})
    msg = str(info.value)
    assert "no 'cpu' lowering for xb.atomic_cas" in msg
    assert f"test_cpu_backend.py:{_swapping.fn.__code__.co_firstlineno + 3}:" in msg
    assert "xl.atomic_cas(x_ptr, 0.0, xl.sum(x))" in msg
    assert "Traceback" not in msg and "/xblock/backends/" not in msg


_WARM = textwrap.dedent("""
    import sys
    import numpy as np
    import examples.softmax as m
    case = m.case((33, 300))
    args = case.copy_args()
    case.run("cpu", args)
    np.testing.assert_allclose(args[0], case.expected["out"], rtol=1e-5, atol=1e-6)
    print("MLIR_LOADED" if any(k == "mlir" or k.startswith("mlir.") for k in sys.modules) else "NO_MLIR")
""")


def test_warm_cache_runs_without_mlir(tmp_path):
    env = dict(os.environ, XBLOCK_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT)
    run = lambda: subprocess.run([sys.executable, "-c", _WARM], env=env, cwd=ROOT,  # noqa: E731
                                 capture_output=True, text=True, timeout=120)
    cold = run()
    assert cold.returncode == 0, cold.stderr
    assert "MLIR_LOADED" in cold.stdout  # the cold run compiled
    warm = run()
    assert warm.returncode == 0, warm.stderr
    assert "NO_MLIR" in warm.stdout


def test_big_blocks_run_on_big_stacks():
    import examples.softmax as m

    case = m.case((2, 300_000))  # BLOCK = 2^19: megabytes of block buffers per program
    args = case.copy_args()
    case.run("cpu", args)
    # fp32 sums of 300k terms in one vector accumulator: about 1e-5 relative
    np.testing.assert_allclose(args[0], case.expected["out"], rtol=1e-4, atol=1e-9)
