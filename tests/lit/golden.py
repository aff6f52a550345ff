"""Golden-file helpers: emitted text checked with FileCheck (the `filecheck` package), or compared
whole with a generated file (`compare_golden`; regenerate with XBLOCK_REGEN_GOLDEN=1)."""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def filecheck(check_file: Path, text: str) -> None:
    """Assert `text` matches the CHECK lines of `check_file`."""
    exe = Path(sys.executable).parent / "filecheck"
    r = subprocess.run([str(exe), str(check_file)], input=text, capture_output=True, text=True)
    assert r.returncode == 0, f"{check_file.name} does not match:\n{r.stdout}{r.stderr}\n--- text ---\n{text}"


def strip_locs(text: str) -> str:
    """Drop `loc(...)` annotations and #loc lines from printed MLIR."""
    text = re.sub(r"^#loc\d*\s*=.*$\n?", "", text, flags=re.M)
    return re.sub(r"\s*loc\((?:[^()]|\([^()]*\))*\)", "", text)


REGEN_ENV = "XBLOCK_REGEN_GOLDEN"


def normalize_paths(text: str) -> str:
    """File locations in printed MLIR (`loc("/any/dir/add.py":14:9)`) with the file's name alone, so a
    golden holds in any checkout."""
    return re.sub(r'"[^"\n]*[/\\]([^"/\\\n]*)"(?=:\d+:\d+)', r'"\1"', text)


def compare_golden(path: Path, text: str) -> None:
    """Assert `text` equals the golden file `path`; with XBLOCK_REGEN_GOLDEN=1 (re)write it first."""
    __tracebackhide__ = True
    if os.environ.get(REGEN_ENV) == "1":
        path.write_text(text)
    where = f"{path.parent.name}/{path.name}"
    assert path.exists(), f"{where} is missing; generate it with {REGEN_ENV}=1"
    want = path.read_text()
    if text != want:
        lines = list(difflib.unified_diff(want.splitlines(True), text.splitlines(True), "golden", "now", n=2))
        more = f"... ({len(lines) - 60} more diff lines)\n" if len(lines) > 60 else ""
        raise AssertionError(f"{where} changed; regenerate with {REGEN_ENV}=1 if intended\n"
                             + "".join(lines[:60]) + more)
