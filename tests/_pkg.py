"""Where the xblock package lives, for tests that look for its frames or paths in what a user sees.

A clone of the repository may itself sit in a folder named `xblock` (CI clones into one), so a test
must not look for the bare substring "xblock/": the user's own kernel file then contains it."""

from __future__ import annotations

import os
import re

import xblock

PKG = os.path.dirname(os.path.abspath(xblock.__file__)) + os.sep
_INTERNAL = re.compile(r"xblock[/\\]((backends|frontend|sim|passes|dialects|language|runtime)[/\\]|\w+\.py\b)")


def in_package(filename: str) -> bool:
    """Whether a traceback frame's file is one of the package's own modules."""
    return os.path.abspath(filename).startswith(PKG)


def mentions_package(text: str) -> bool:
    """Whether a message shows a path into the package (absolute, or relative as `xblock/<dir>/`)."""
    return PKG in text or bool(_INTERNAL.search(text))
