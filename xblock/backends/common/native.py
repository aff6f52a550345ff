"""Native libraries of compiled kernels: written once, content-addressed, and loaded with ctypes."""

from __future__ import annotations

import ctypes
import hashlib
import os
from pathlib import Path

from .cachedir import cache_dir


def library_path(blob: bytes, kind: str) -> Path:
    """The path of a shared library with bytes `blob` under the cache's `kind/` folder.

    The file is named by the blob's digest and written atomically once, so concurrent processes
    agree on it and a half-written library is never loaded.
    """
    path = cache_dir() / kind / (hashlib.sha256(blob).hexdigest()[:32] + ".so")
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_suffix(f".{os.getpid()}.tmp")
        part.write_bytes(blob)
        os.replace(part, path)
    return path


def load_library(blob: bytes, kind: str) -> ctypes.CDLL:
    """Load the shared library with bytes `blob` (see `library_path`)."""
    return ctypes.CDLL(str(library_path(blob, kind)))
