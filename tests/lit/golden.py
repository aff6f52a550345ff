"""Golden-file helpers: emitted text checked with FileCheck (the `filecheck` package)."""

from __future__ import annotations

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
