"""The per-target status table in docs/LANGUAGE.md lists exactly the public names of the installed
triton.language (and triton.language.math): regenerate it with `make docs` when they drift."""

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "LANGUAGE.md"


def _rows() -> set:
    text = DOC.read_text()
    section = text.split("<!-- language-status:begin -->", 1)[1].split("<!-- language-status:end -->", 1)[0]
    return set(re.findall(r"^\| `(tl\.[\w.]+)` \|", section, re.M))


def test_status_table_lists_every_triton_language_name():
    tl = pytest.importorskip("triton.language")
    from tools.language_status import public_names

    want = {f"tl.{n}" for n in public_names(tl)} | {f"tl.math.{n}" for n in public_names(tl.math)}
    assert _rows() == want


def test_every_row_has_a_cell_per_target():
    from tools.language_status import TARGETS

    text = DOC.read_text()
    for line in text.splitlines():
        if line.startswith("| `tl."):
            assert line.count(" | ") == len(TARGETS), line
