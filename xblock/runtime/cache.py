"""On-disk cache of compiled stages, keyed by content: atomic writes, a lock per key, checksums,
hit/miss statistics, and an in-memory fallback when the directory cannot be written.

The directory itself (`cache_dir`, `configured_dir`, the probe that degrades it) is in
backends/common/cachedir.py, below the runtime, since backends write their native libraries there."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import time
import warnings
from pathlib import Path

from ..backends.common.cachedir import (  # noqa: F401  (CacheWarning and degrade: this module's API too)
    _PROBED,
    _STATE_LOCK,
    CacheWarning,
    _probe,
    cache_dir,
    configured_dir,
    degrade,
)

try:
    import fcntl
except ImportError:  # not POSIX: no locks (concurrent processes may then compile a kernel twice)
    fcntl = None

MANIFEST = "manifest.json"
STATS_LOG, STATS_SUMMARY, STATS_LOCK = "stats.log", "stats.json", "stats.lock"
STATS_COMPACT_BYTES = 256 << 10  # the log is folded into the summary beyond this size
LOCK_TIMEOUT_S = float(os.environ.get("XBLOCK_LOCK_TIMEOUT", "600"))  # then compile without waiting
_WARNED: set = set()


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _as_bytes(v) -> bytes:
    return v if isinstance(v, bytes) else str(v).encode()


def _warn_once(tag, msg: str) -> None:
    with _STATE_LOCK:
        if tag in _WARNED:
            return
        _WARNED.add(tag)
    warnings.warn(msg, CacheWarning, stacklevel=4)


_MEMORY_ENTRIES: dict = {}  # (root, key) -> files: what a cache that cannot be written keeps


class FileCache:
    """Entries are directories `<root>/<key[:2]>/<key>/` holding one file per stage and a manifest."""

    def __init__(self, root: Path | None = None):
        self.root = Path(root) if root is not None else configured_dir()

    def path(self, key: str) -> Path:
        return self.root / key[:2] / key

    @property
    def writable(self) -> bool:
        """False once writing under the root failed (the cache then lives in this process's memory)."""
        if str(self.root) not in _PROBED:
            if self.root == configured_dir():
                cache_dir()
            else:
                _probe(self.root)
        return not _PROBED.get(str(self.root))

    def _read(self, key: str):
        """(files, None) or (None, what is wrong: None when the entry is simply absent)."""
        d = self.path(key)
        try:
            raw = (d / MANIFEST).read_bytes()
        except FileNotFoundError:
            return None, ("its manifest is missing" if d.is_dir() else None)
        except (NotADirectoryError, PermissionError):
            return None, None  # a cache that cannot be used: not a corrupted entry
        except OSError as e:
            return None, f"its manifest cannot be read ({e.strerror})"
        try:
            listed = json.loads(raw)["files"]
            files = {}
            for name, digest in listed.items():
                try:
                    data = (d / name).read_bytes()
                except OSError:
                    return None, f"'{name}' is missing"
                if _digest(data) != digest:
                    return None, f"'{name}' does not match its checksum"
                files[name] = data
        except (ValueError, KeyError, TypeError, AttributeError):
            return None, "its manifest is malformed"
        return files, None

    def get(self, key: str) -> dict | None:
        """The stored files of `key` (name -> bytes), or None when absent or corrupted.

        A corrupted entry (a file truncated or changed, a malformed manifest) is reported once with
        a CacheWarning; the caller rebuilds it and `put` replaces it.
        """
        files, problem = self._read(key)
        if files is None:
            files = _MEMORY_ENTRIES.get((str(self.root), key))
            if files is None and problem is not None:
                _warn_once(("corrupt", str(self.root), key),
                           f"xblock: the cache entry {self.path(key)} is corrupted ({problem}); compiling it again")
        return dict(files) if files is not None else None

    def put(self, key: str, files: dict) -> bool:
        """Store `files` (name -> str|bytes) under `key`: write a temporary dir, then rename it.

        Returns False when the directory cannot be written (read-only, full): the entry is then
        kept in memory for this process, after one CacheWarning.
        """
        data = {name: _as_bytes(v) for name, v in files.items()}
        if self.writable:
            try:
                self._write(key, data)
                return True
            except OSError as e:
                degrade(self.root, e)
        _MEMORY_ENTRIES[(str(self.root), key)] = data
        return False

    def _write(self, key: str, files: dict) -> None:
        final = self.path(key)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key[:8]}-", dir=final.parent))
        try:
            manifest = {}
            for name, data in files.items():
                (tmp / name).write_bytes(data)
                manifest[name] = _digest(data)
            (tmp / MANIFEST).write_text(json.dumps({"files": manifest}))
            try:
                os.rename(tmp, final)
            except OSError:
                # another process stored it first, or a corrupted entry is in the way
                if self._read(key)[0] is None:
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

    @contextlib.contextmanager
    def lock(self, key: str):
        """Hold `<root>/<key[:2]>/.<key>.lock` (an flock, released by the kernel if the process dies), so
        that concurrent processes compile a key once. Without a usable lock it holds nothing."""
        fd = None
        if fcntl is not None and self.writable:
            try:
                path = self.path(key).with_name(f".{key}.lock")
                path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
            except OSError:
                fd = None
        if fd is not None and not _flock(fd, fcntl.LOCK_EX, LOCK_TIMEOUT_S):
            os.close(fd)  # a holder that never finishes: compile without it
            fd = None
        try:
            yield
        finally:
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)

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
            if not sub.is_dir() or sub.name.startswith("."):
                continue
            if _is_shard(sub.name):
                out["kernels"] += sum(1 for e in sub.iterdir() if not e.name.startswith("."))
            else:
                out[sub.name] = out.get(sub.name, 0) + sum(1 for _ in sub.iterdir())
        return out

    def entries(self):
        """(key, metadata dict or None) of every entry, without checking the checksums."""
        if not self.root.exists():
            return
        for sub in sorted(self.root.iterdir()):
            if not (sub.is_dir() and _is_shard(sub.name)):
                continue
            for entry in sorted(sub.iterdir()):
                if entry.name.startswith("."):
                    continue
                try:
                    meta = json.loads((entry / "metadata.json").read_bytes())
                except (OSError, ValueError):
                    meta = None
                yield entry.name, meta

    def clear_counts(self) -> dict:
        """Remove everything; returns what was removed, as `contents` counts it."""
        counts = self.contents()
        if self.root.exists():
            for sub in self.root.iterdir():
                if sub.is_dir():
                    shutil.rmtree(sub, ignore_errors=True)
                elif sub.name in (STATS_LOG, STATS_SUMMARY):
                    sub.unlink(missing_ok=True)
        return counts


def _is_shard(name: str) -> bool:
    return len(name) == 2 and all(c in "0123456789abcdef" for c in name)


def _flock(fd: int, op: int, timeout: float) -> bool:
    """flock with a timeout (polling a non-blocking flock); True when it is held."""
    deadline = time.monotonic() + timeout
    delay = 0.002
    while True:
        try:
            fcntl.flock(fd, op | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        except OSError:
            return False


# ------------------------------------------------------------------------------ statistics
def record(event: str, name: str, target: str, seconds: float = 0.0, root: Path | None = None) -> None:
    """Count a disk hit or a miss (with its compile time) of kernel `name` in `<root>/stats.log`.

    One short line per event, appended with one write under a shared lock (the compaction in
    `read_stats` takes it exclusively), so concurrent processes never lose or tear a line.
    """
    cache = FileCache(root)
    if not cache.writable:
        return
    line = json.dumps({"n": name, "t": target, "e": event, "s": round(seconds, 4)}, separators=(",", ":")) + "\n"
    try:
        with _stats_lock(cache.root, shared=True):
            fd = os.open(cache.root / STATS_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            try:
                os.write(fd, line.encode())
                size = os.fstat(fd).st_size
            finally:
                os.close(fd)
        if size > STATS_COMPACT_BYTES:
            read_stats(cache.root)
    except OSError:
        pass  # statistics are best effort


@contextlib.contextmanager
def _stats_lock(root: Path, shared: bool):
    if fcntl is None:
        yield
        return
    fd = os.open(root / STATS_LOCK, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        _flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX, 30.0)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def read_stats(root: Path | None = None) -> dict:
    """{(kernel, target): {"hits", "misses", "compile_s"}}: the summary plus the log, which is
    folded into the summary (under the exclusive lock) when the directory can be written."""
    cache = FileCache(root)
    summary_path, log_path = cache.root / STATS_SUMMARY, cache.root / STATS_LOG
    if not cache.root.exists():
        return {}
    lock = _stats_lock(cache.root, shared=False) if cache.writable else contextlib.nullcontext()
    with lock:
        try:
            rows = {tuple(k.split("\0", 1)): v for k, v in json.loads(summary_path.read_text()).items()}
        except (OSError, ValueError, AttributeError):
            rows = {}
        try:
            lines = log_path.read_text().splitlines()
        except OSError:
            lines = []
        for line in lines:
            try:
                ev = json.loads(line)
                row = rows.setdefault((ev["n"], ev["t"]), {"hits": 0, "misses": 0, "compile_s": 0.0})
                row["hits" if ev["e"] == "hit" else "misses"] += 1
                row["compile_s"] += float(ev.get("s", 0.0)) if ev["e"] == "miss" else 0.0
            except (ValueError, KeyError, TypeError):
                continue  # a line another tool damaged
        if lines and cache.writable:
            try:
                tmp = summary_path.with_name(f"{STATS_SUMMARY}.{os.getpid()}.tmp")
                tmp.write_text(json.dumps({"\0".join(k): v for k, v in rows.items()}))
                os.replace(tmp, summary_path)
                os.truncate(log_path, 0)
            except OSError:
                pass
    return rows
