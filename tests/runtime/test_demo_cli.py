"""`xblock demo` from the kernels shipped in the package (`xblock.examples`), with its quick options
(`--examples`, `--small`) and usage errors that name the choices."""

import re
import sys

import pytest

from xblock import cli


def test_demo_runs_the_named_examples_at_small_sizes(tmp_path, capsys):
    code = cli.main(["demo", "--targets", "sim", "--examples", "softmax,add", "--small", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    rows = re.findall(r"^(\w+)\s+(\S+)\s+float32\s+sim\s+ok", out, re.M)
    assert rows == [("softmax", "2x129"), ("add", "1025")], out
    assert "xblock.examples.add" in sys.modules  # the package's examples, not the repository's folder
    assert "all targets that ran agree (2 runs compared)" in out
    assert max(len(line) for line in out.splitlines()) <= 100, out


def test_a_demo_where_no_target_runs_says_so(tmp_path, capsys):
    from xblock.backends import get_backend

    if get_backend("cuda").availability() is None:
        pytest.skip("a GPU here: cuda runs")
    code = cli.main(["demo", "--targets", "cuda", "--examples", "add", "--small", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0 and "no target ran a kernel here" in out and "agree" not in out, out
    assert max(len(line) for line in out.splitlines()) <= 100, out


@pytest.mark.parametrize("argv, message", [
    (["--examples", "ad"], "no example 'ad' (the examples: add, softmax,"),
    (["--targets", "sim,cpuu"], "unknown target 'cpuu'"),
])
def test_demo_names_what_it_does_not_know(capsys, argv, message):
    assert cli.main(["demo", *argv]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and "did you mean" in err, err
