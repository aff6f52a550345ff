"""Progress of long compiles and autotuning: shown on a terminal or with XBLOCK_PROGRESS=1, silenced
by XBLOCK_QUIET=1 and `xblock --quiet`, never shown where stderr is not a terminal unless asked."""

import io
import os
import sys

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock import cli, progress
from xblock.runtime import pool

SIGNATURE = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}


def _double(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    xl.store(out_ptr + offs, xl.load(x_ptr + offs, mask=m) * 2, mask=m)


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def env(monkeypatch):
    """No progress variable set, and a step shown as soon as it starts."""
    for name in ("XBLOCK_QUIET", "XBLOCK_PROGRESS"):
        monkeypatch.setenv(name, "0")  # restored after the test (xblock --quiet sets XBLOCK_QUIET)
    monkeypatch.setenv("XBLOCK_PROGRESS_DELAY", "0")
    return monkeypatch


def _compile_a_new_kernel(target="sim"):
    kernel = xblock.jit(_double)  # a fresh kernel: compiled, not found in this process
    return xblock.compile(kernel, target=target, signature=SIGNATURE, constexprs={"BLOCK": 64})


@pytest.mark.parametrize("quiet, forced, terminal, shown", [
    ("0", "0", False, False),  # piped or captured: nothing
    ("0", "0", True, True),  # a terminal
    ("0", "1", False, True),  # asked for
    ("1", "0", True, False),  # silenced
    ("1", "1", True, False),  # quiet wins
])
def test_progress_is_on_for_terminals_unless_quiet(env, quiet, forced, terminal, shown):
    env.setenv("XBLOCK_QUIET", quiet)
    env.setenv("XBLOCK_PROGRESS", forced)
    env.setattr("sys.stderr", _Terminal() if terminal else io.StringIO())
    assert progress.enabled() is shown


def test_a_long_compile_shows_its_stages_when_asked(env, capsys):
    env.setenv("XBLOCK_PROGRESS", "1")
    _compile_a_new_kernel()
    err = capsys.readouterr().err
    assert "compiling _double for sim" in err, err
    assert "(xb " in err, err  # the summary line names each stage with its time


def test_a_compile_under_a_second_shows_nothing(env, capsys):
    env.setenv("XBLOCK_PROGRESS", "1")
    env.setenv("XBLOCK_PROGRESS_DELAY", "30")
    _compile_a_new_kernel()
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("setting", [{"XBLOCK_QUIET": "1", "XBLOCK_PROGRESS": "1"}, {}])
def test_quiet_or_not_a_terminal_prints_nothing(env, capsys, setting):
    for k, v in setting.items():
        env.setenv(k, v)
    _compile_a_new_kernel()
    assert capsys.readouterr().err == ""


def test_autotuning_shows_configs_tried_and_the_best(env, capsys):
    env.setenv("XBLOCK_PROGRESS", "1")
    tuned = xblock.autotune([xblock.Config({"BLOCK": b}) for b in (32, 64)], key=["n"])(xblock.jit(_double))
    x = np.arange(100, dtype=np.float32)
    out = np.empty_like(x)
    tuned[lambda m: (xblock.cdiv(100, m["BLOCK"]),)](x, out, 100, target="sim")
    np.testing.assert_array_equal(out, 2 * x)
    err = capsys.readouterr().err
    assert "autotuning _double on sim [1/2], best BLOCK=" in err, err
    assert "autotuned _double on sim: 2 configs in" in err and f"best {tuned.best_config}" in err, err


@pytest.mark.parametrize("argv", [["--quiet", "compile"], ["compile", "-q"]])
def test_cli_quiet_silences_progress(env, capsys, argv):
    env.setenv("XBLOCK_PROGRESS", "1")
    env.setattr("sys.path", list(sys.path))  # the CLI puts the kernel's folders on it
    path = os.path.join(os.path.dirname(__file__), "kernels.py")
    argv = [*argv, f"{path}:add_one", "--target", "sim", "-s", "*fp32,*fp32,i32", "-D", "BLOCK=32"]
    assert cli.main(argv) == 0
    captured = capsys.readouterr()
    assert "xb.kernel" in captured.out and captured.err == ""
    assert os.environ["XBLOCK_QUIET"] == "1"  # and in the processes it starts


def test_steps_in_a_transient_block_leave_no_line(env, capsys):
    env.setenv("XBLOCK_PROGRESS", "1")
    with progress.transient(), progress.step("demo: add") as step:
        step.stage("compiling for sim")
    with progress.step("a lasting step") as step:
        step.stage("one")
    err = capsys.readouterr().err
    assert err.splitlines() == ["demo: add ...", "a lasting step ...", "a lasting step: 0.0 s (one 0.0 s)"], err


def test_compile_workers_are_quiet(monkeypatch):
    monkeypatch.setenv("XBLOCK_QUIET", "0")
    monkeypatch.setenv("XBLOCK_COMPILE_WORKERS", "2")
    pool._init_worker()
    assert not progress.enabled()


def test_a_failed_step_leaves_no_summary(env, capsys):
    env.setenv("XBLOCK_PROGRESS", "1")
    with pytest.raises(RuntimeError), progress.step("compiling broken") as step:
        step.stage("xb")
        raise RuntimeError("the error says what happened")
    assert capsys.readouterr().err == "compiling broken ...\n"
