"""The cache directory: where compiled stages (runtime/cache.py) and native libraries (`native.py`,
the ascend model's builds) are written.

It lives here, below the runtime, because backends write into it too and import nothing of the
runtime (docs/DESIGN.md, "Layers and data flow"); runtime/cache.py imports it from here.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Callable


class CacheWarning(RuntimeWarning):
    """The cache cannot be used as configured (read-only, full) or held a corrupted entry."""


def configured_dir() -> Path:
    """XBLOCK_CACHE_DIR, else $XDG_CACHE_HOME/xblock or ~/.cache/xblock."""
    env = os.environ.get("XBLOCK_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "xblock"


_STATE_LOCK = threading.Lock()
_PROBED: dict = {}  # configured root -> None (writable) or (private fallback dir, reason)


def cache_dir() -> Path:
    """Where files are written: the configured directory, or, when it cannot be written, a private
    directory of this process (removed at exit), after one warning."""
    root = configured_dir()
    state = _PROBED.get(str(root), ())
    if state == ():
        state = _probe(root)
    return root if state is None else state[0]


def _probe(root: Path):
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=".probe-", dir=root)
        os.close(fd)
        os.unlink(name)
    except OSError as e:
        return degrade(root, e)
    _PROBED.setdefault(str(root), None)
    return _PROBED[str(root)]


def degrade(root: Path, error: OSError):
    """Stop writing under `root` for the rest of the process; warn once. Returns (fallback dir, reason)."""
    with _STATE_LOCK:
        state = _PROBED.get(str(root))
        if state:
            return state
        fallback = Path(tempfile.mkdtemp(prefix="xblock-cache-"))
        import atexit

        atexit.register(shutil.rmtree, fallback, True)
        reason = f"{type(error).__name__}: {error.strerror or error}"
        state = _PROBED[str(root)] = (fallback, reason)
    warnings.warn(f"xblock: the cache directory {root} cannot be written ({reason}); compiled kernels are kept "
                  "in memory for this process (set XBLOCK_CACHE_DIR to a writable directory)", CacheWarning,
                  stacklevel=3)
    return state


def build_folder(folder: Path, build: Callable[[Path], bool]) -> bool:
    """Make `folder` (in the cache) at once: `build(tmp)` fills a temporary folder beside it, renamed to
    `folder` when `build` returns True; another process may have won the race, its folder stays. False
    where `build` failed or nothing could be written."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix="building-", dir=folder.parent))
        try:
            if not build(tmp):
                return False
            try:
                tmp.rename(folder)  # atomic
            except OSError:
                pass
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    except OSError:
        return False
    return True
