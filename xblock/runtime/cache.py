"""On-disk cache of compiled stages, keyed by content; atomic writes, corrupted entries rebuilt."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

MANIFEST = "manifest.json"


def cache_dir() -> Path:
    env = os.environ.get("XBLOCK_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "xblock"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _as_bytes(v) -> bytes:
    return v if isinstance(v, bytes) else str(v).encode()


class FileCache:
    """Entries are directories `<root>/<key[:2]>/<key>/` holding one file per stage and a manifest."""

    def __init__(self, root: Path | None = None):
        self.root = Path(root) if root is not None else cache_dir()

    def path(self, key: str) -> Path:
        return self.root / key[:2] / key

    def get(self, key: str) -> dict | None:
        """The stored files of `key` (name -> bytes), or None when absent or corrupted."""
        d = self.path(key)
        try:
            manifest = json.loads((d / MANIFEST).read_text())
            files = {}
            for name, digest in manifest["files"].items():
                data = (d / name).read_bytes()
                if _digest(data) != digest:
                    return None
                files[name] = data
            return files
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, files: dict) -> None:
        """Store `files` (name -> str|bytes) under `key`: write a temporary dir, then rename it."""
        final = self.path(key)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key[:8]}-", dir=final.parent))
        try:
            manifest = {}
            for name, value in files.items():
                data = _as_bytes(value)
                (tmp / name).write_bytes(data)
                manifest[name] = _digest(data)
            (tmp / MANIFEST).write_text(json.dumps({"files": manifest}))
            try:
                os.rename(tmp, final)
            except OSError:
                # another process stored it first, or a corrupted entry is in the way
                if self.get(key) is None:
                    junk = Path(tempfile.mkdtemp(prefix=".old-", dir=final.parent))
                    try:
                        os.rename(final, junk / "entry")
                    except OSError:
                        pass
                    shutil.rmtree(junk, ignore_errors=True)
                    os.rename(tmp, final)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)

    def clear(self) -> int:
        """Remove everything under the cache directory; returns how many compiled kernels it held."""
        return self.clear_counts()["kernels"]

    def contents(self) -> dict:
        """What the cache holds: {"kernels": compiled kernel entries, <folder>: files} for the other
        folders (native libraries such as `cpu-so`/`ascend-emu`, `autotune` results)."""
        out: dict = {"kernels": 0}
        if not self.root.exists():
            return out
        for sub in self.root.iterdir():
            if not sub.is_dir():
                continue
            n = sum(1 for _ in sub.iterdir())
            if len(sub.name) == 2 and all(c in "0123456789abcdef" for c in sub.name):
                out["kernels"] += n
            else:
                out[sub.name] = out.get(sub.name, 0) + n
        return out

    def clear_counts(self) -> dict:
        """Remove everything; returns what was removed, as `contents` counts it."""
        counts = self.contents()
        if self.root.exists():
            for sub in self.root.iterdir():
                if sub.is_dir():
                    shutil.rmtree(sub, ignore_errors=True)
        return counts
