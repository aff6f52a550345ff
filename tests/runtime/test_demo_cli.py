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
    rows = re.findall(r"^(\w+)\s+(\S+)\s+float32\s+ok", out, re.M)
    assert rows == [("softmax", "2x129"), ("add", "1025")], out
    assert "xblock.examples.add" in sys.modules  # the package's examples, not the repository's folder


@pytest.mark.parametrize("argv, message", [
    (["--examples", "ad"], "no example 'ad' (the examples: add, softmax,"),
    (["--targets", "sim,cpuu"], "unknown target 'cpuu'"),
])
def test_demo_names_what_it_does_not_know(capsys, argv, message):
    assert cli.main(["demo", *argv]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and "did you mean" in err, err
