"""`xblock cache export/import`: a tar of cache entries, to run precompiled kernels elsewhere.

A machine with a GPU, torch and Triton but without the MLIR wheels (or without compilers at all)
imports a bundle made where the kernels were compiled; launches then hit the cache and compile
nothing. Entries are stored as in the cache (`<key>/<file>`), with `bundle.json` listing them;
import re-checks every file's digest and writes each entry atomically through `FileCache.put`.
The autotune choices (`autotune/<file>.json`, e.g. from `xblock tune`) travel too, so a deployed
service never tunes: import merges them into the choices already there.
"""

from __future__ import annotations

import io
import json
import os
import re
import tarfile

from ..errors import BundleError
from .cache import FileCache

BUNDLE_MANIFEST = "bundle.json"
FORMAT = 1
_KEY = re.compile(r"^[0-9a-f]{64}$")
_FILE = re.compile(r"^[A-Za-z0-9_.-]+$")
AUTOTUNE = "autotune"


def _entries(cache: FileCache):
    if not cache.root.exists():
        return
    for sub in sorted(cache.root.iterdir()):
        if not sub.is_dir() or sub.name.startswith("."):
            continue
        for entry in sorted(sub.iterdir()):
            if _KEY.match(entry.name):
                files = cache.get(entry.name)
                if files is not None:
                    yield entry.name, files


def _wanted(meta: dict, kernels, targets) -> bool:
    if kernels is not None and meta.get("name") not in kernels:
        return False
    return targets is None or meta.get("target") in targets


def export_bundle(path, kernels=None, targets=None, cache_dir=None) -> int:
    """Write cache entries to a tar file (gzip-compressed when `path` ends with .gz).

    Args:
        path: the bundle to write.
        kernels: kernel names (or kernels) to keep; None keeps every entry.
        targets: target names to keep ("cuda", "cpu", ...); None keeps all.
        cache_dir: the cache to read; default XBLOCK_CACHE_DIR.
    Returns:
        The number of entries written.
    """
    names = None if kernels is None else {k if isinstance(k, str) else k.__name__ for k in kernels}
    cache = FileCache(cache_dir)
    listed = []
    mode = "w:gz" if str(path).endswith(".gz") else "w"
    with tarfile.open(path, mode) as tar:
        for key, files in _entries(cache):
            try:
                meta = json.loads(files["metadata.json"])
            except (KeyError, ValueError):
                continue
            if not _wanted(meta, names, targets):
                continue
            for name, data in sorted(files.items()):
                info = tarfile.TarInfo(f"{key}/{name}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            listed.append({"key": key, "name": meta.get("name"), "target": meta.get("target"),
                           "files": sorted(files)})
        tuned = []
        for path_, choices in _autotune_files(cache):
            data = json.dumps(choices).encode()
            info = tarfile.TarInfo(f"{AUTOTUNE}/{path_.name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
            tuned.append(path_.name)
        doc = json.dumps({"format": FORMAT, "entries": listed, AUTOTUNE: tuned}, indent=1).encode()
        info = tarfile.TarInfo(BUNDLE_MANIFEST)
        info.size = len(doc)
        tar.addfile(info, io.BytesIO(doc))
    return len(listed)


def import_bundle(path, cache_dir=None) -> int:
    """Store every entry of a bundle in the cache (XBLOCK_CACHE_DIR by default); returns how many.

    Raises:
        BundleError (a ValueError): the file is not an xblock bundle, or an entry is malformed.
    """
    cache = FileCache(cache_dir)
    with _open(path) as tar:
        members = {m.name: m for m in tar.getmembers() if m.isfile()}
        doc = _manifest(path, tar, members)
        n = 0
        for entry in doc["entries"]:
            key, files = _entry(path, entry)
            data = {}
            for name in files:
                member = members.get(f"{key}/{name}")
                if member is None:
                    raise BundleError(f"{path}: entry {key} lacks {name}")
                data[name] = tar.extractfile(member).read()
            cache.put(key, data)
            n += 1
        for name in doc.get(AUTOTUNE, []):
            member = members.get(f"{AUTOTUNE}/{name}") if isinstance(name, str) else None
            choices = _json(path, tar, member) if member is not None and _FILE.match(name) else None
            if not isinstance(choices, dict):
                raise BundleError(f"{path}: malformed autotune entry {name!r}")
            _merge_choices(cache, name, choices)
    return n


def _open(path) -> tarfile.TarFile:
    """The bundle at `path`, opened for reading; a file that is not a tar archive is a BundleError."""
    try:
        return tarfile.open(path, "r:*")
    except tarfile.ReadError as e:
        raise BundleError(f"{path} is not an xblock cache bundle (not a tar archive: {e})") from None


def _entry(path, entry) -> tuple[str, list]:
    """(key, file names) of one entry of the manifest, checked."""
    key = entry.get("key") if isinstance(entry, dict) else None
    files = entry.get("files") if isinstance(entry, dict) else None
    if not (isinstance(key, str) and _KEY.match(key) and isinstance(files, list)
            and all(isinstance(f, str) and _FILE.match(f) for f in files)):
        raise BundleError(f"{path}: malformed entry {key!r}")
    return key, files


def _json(path, tar: tarfile.TarFile, member):
    try:
        return json.loads(tar.extractfile(member).read())
    except ValueError as e:
        raise BundleError(f"{path}: {member.name} is not valid JSON ({e})") from None


def _manifest(path, tar: tarfile.TarFile, members: dict) -> dict:
    """The bundle's `bundle.json`, checked: its format, and a list of entries."""
    if BUNDLE_MANIFEST not in members:
        raise BundleError(f"{path} is not an xblock cache bundle (no {BUNDLE_MANIFEST})")
    doc = _json(path, tar, members[BUNDLE_MANIFEST])
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else None
        raise BundleError(f"{path}: unsupported bundle format {found} (this xblock reads format {FORMAT})")
    if not isinstance(doc.get("entries"), list) or not isinstance(doc.get(AUTOTUNE, []), list):
        raise BundleError(f"{path}: malformed {BUNDLE_MANIFEST} (no list of entries)")
    return doc


def _autotune_files(cache: FileCache):
    """(path, choices) of every autotune results file of the cache."""
    folder = cache.root / AUTOTUNE
    if not folder.is_dir():
        return
    for p in sorted(folder.glob("*.json")):
        try:
            choices = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(choices, dict):
            yield p, choices


def _merge_choices(cache: FileCache, name: str, choices: dict) -> None:
    """Add a bundle's autotune choices to the file of the same name (the bundle's win)."""
    folder = cache.root / AUTOTUNE
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    try:
        current = json.loads(path.read_text())
    except (OSError, ValueError):
        current = {}
    current = current if isinstance(current, dict) else {}
    tmp = path.with_name(f"{name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({**current, **choices}))
    os.replace(tmp, path)


def bundle_entries(path) -> list:
    """The entries listed in a bundle (key, name, target, files), without importing it."""
    with _open(path) as tar:
        return _manifest(path, tar, {m.name: m for m in tar.getmembers() if m.isfile()})["entries"]


__all__ = ["export_bundle", "import_bundle", "bundle_entries"]
