"""Native libraries of compiled kernels: written once, content-addressed, and loaded with ctypes."""

from __future__ import annotations

import ctypes
import hashlib
import os
import warnings
from pathlib import Path

from .cachedir import CacheWarning, cache_dir


def library_path(blob: bytes, kind: str) -> Path:
    """The path of a shared library with bytes `blob` under the cache's `kind/` folder.

    The file is named by the blob's digest and written atomically once, so concurrent processes
    agree on it and a half-written library is never loaded. A file there whose bytes are not the
    blob's (truncated, overwritten) is a corrupted entry: one CacheWarning, and it is written again.
    """
    path = cache_dir() / kind / (hashlib.sha256(blob).hexdigest()[:32] + ".so")
    if path.exists() and not _holds(path, blob):
        warnings.warn(f"xblock cache: the native library {path} was corrupted (its bytes are not the "
                      "compiled kernel's); writing it again", CacheWarning, stacklevel=3)
    elif path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_suffix(f".{os.getpid()}.tmp")
    part.write_bytes(blob)
    os.replace(part, path)
    return path


def _holds(path: Path, blob: bytes) -> bool:
    try:
        return path.stat().st_size == len(blob) and path.read_bytes() == blob
    except OSError:
        return False


def load_library(blob: bytes, kind: str) -> ctypes.CDLL:
    """Load the shared library with bytes `blob` (see `library_path`)."""
    return ctypes.CDLL(str(library_path(blob, kind)))
