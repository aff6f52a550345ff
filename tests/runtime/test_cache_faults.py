"""The cache under concurrency and faults: a race of 8 processes, corrupted entries, a cache
directory that cannot be written, and the statistics `xblock cache stats` prints."""

import multiprocessing
import os
import warnings

import numpy as np
import pytest

import xblock
from tests.runtime import kernels
from tests.runtime.conftest import misses
from xblock.runtime import cache as cache_mod
from xblock.runtime import compiler
from xblock.runtime.cache import CacheWarning, FileCache


def launch(k, target="cpu", n=100):
    x = np.arange(n, dtype=np.float32)
    out = np.zeros_like(x)
    k[(xblock.cdiv(n, 32),)](x, out, n, BLOCK=32, target=target)
    np.testing.assert_array_equal(out, x + 1)


def test_eight_processes_compile_an_uncompiled_kernel_once(fresh_cache):
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(8), ctx.Queue()
    procs = [ctx.Process(target=kernels.race, args=(str(fresh_cache), barrier, results)) for _ in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * 8
    assert [results.get(timeout=5) for _ in procs] == [True] * 8
    assert 1 <= misses("add_one") <= 2  # the key's lock file: the others wait, then load what it stored
    row = cache_mod.read_stats()[("add_one", "cpu")]
    assert row["hits"] + row["misses"] == 8  # every process's line, none lost or torn
    assert FileCache(fresh_cache).contents()["kernels"] == 1


@pytest.mark.parametrize("damage", ["truncate", "flip", "manifest"])
def test_a_corrupted_entry_is_reported_once_and_rebuilt(fresh_cache, damage):
    launch(xblock.jit(kernels._add_one))
    ((key, _),) = list(FileCache().entries())
    entry = FileCache().path(key)
    if damage == "manifest":
        target = entry / "manifest.json"
        target.write_bytes(target.read_bytes()[:10])
    else:
        target = entry / "so"
        data = target.read_bytes()
        target.write_bytes(data[: len(data) // 2] if damage == "truncate" else bytes([data[0] ^ 1]) + data[1:])
    compiler._MEMORY.clear()
    with pytest.warns(CacheWarning, match="corrupted") as caught:
        launch(xblock.jit(kernels._add_one))
    assert len([w for w in caught if issubclass(w.category, CacheWarning)]) == 1
    assert FileCache().get(key) is not None  # rebuilt in place
    compiler._MEMORY.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        launch(xblock.jit(kernels._add_one))  # a hit now: nothing to report
    assert misses("_add_one") == 2


def _unwritable(tmp_path, how):
    if how == "chmod":
        if os.geteuid() == 0:
            pytest.skip("running as root: chmod does not stop writes (the path case covers this)")
        d = tmp_path / "ro"
        d.mkdir()
        d.chmod(0o500)
        return d
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    return blocker / "cache"  # cannot be created


@pytest.mark.parametrize("target", ["cpu", "sim"])
@pytest.mark.parametrize("how", ["chmod", "path"])
def test_an_unwritable_cache_degrades_to_memory_with_one_warning(tmp_path, monkeypatch, target, how):
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(_unwritable(tmp_path, how)))
    with pytest.warns(CacheWarning, match="cannot be written") as caught:
        for _ in range(3):
            launch(xblock.jit(kernels._add_one), target)
        compiler._MEMORY.clear()
        launch(xblock.jit(kernels._add_one), target)  # from the in-memory entries
    assert len([w for w in caught if issubclass(w.category, CacheWarning)]) == 1
    assert not FileCache().writable


def test_a_full_cache_degrades_to_memory(monkeypatch):
    def full(self, key, files):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(FileCache, "_write", full)
    with pytest.warns(CacheWarning, match="No space left"):
        launch(xblock.jit(kernels._add_one), "sim")
    compiler._MEMORY.clear()
    launch(xblock.jit(kernels._add_one), "sim")
    assert not FileCache().writable
    assert cache_mod.cache_dir() != cache_mod.configured_dir()  # native libraries go to a private folder


def test_stats_count_hits_misses_and_compile_time(capsys):
    launch(xblock.jit(kernels._add_one), "sim")
    launch(xblock.jit(kernels._add_one), "sim", n=64)  # n % 16 == 0: another specialization
    compiler._MEMORY.clear()
    launch(xblock.jit(kernels._add_one), "sim")  # a disk hit
    rows = cache_mod.read_stats()
    row = rows[("_add_one", "sim")]
    assert (row["hits"], row["misses"]) == (1, 2) and row["compile_s"] > 0
    assert cache_mod.read_stats() == rows  # folded into the summary, counted once
    from xblock.cli import main

    assert main(["cache", "stats"]) == 0
    out = capsys.readouterr().out
    assert "_add_one" in out and "sim" in out and "33%" in out


_RUN = """
import sys, warnings
import numpy as np
from tests.runtime import kernels
x = np.arange(100, dtype=np.float32)
out = np.zeros_like(x)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    kernels.add_one[(4,)](x, out, 100, BLOCK=32, target=sys.argv[1])
assert (out == x + 1).all(), out
print("CORRUPTED" if any("corrupted" in str(w.message) for w in caught) else "CLEAN")
"""

NATIVE = {"cpu": "cpu-so", "ascend": "ascend-emu"}  # the targets' native libraries, outside the entries


@pytest.mark.parametrize("target", ["sim", "cpu", "ascend"])
@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_every_file_of_a_target_damaged_is_rebuilt(fresh_cache, target, damage):
    """Each target's cache, entry files and native libraries alike, truncated or overwritten with
    garbage: a fresh process warns, rebuilds and gives the right answer; the next one is clean."""
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    run = lambda: subprocess.run([sys.executable, "-c", _RUN, target], cwd=root,  # noqa: E731
                                 env=dict(os.environ, XBLOCK_CACHE_DIR=str(fresh_cache)),
                                 capture_output=True, text=True, timeout=300)
    first = run()
    assert first.returncode == 0 and "CLEAN" in first.stdout, first.stderr[-2000:]
    files = [p for p in fresh_cache.rglob("*") if p.is_file() and not p.is_symlink()
             and p.suffix != ".lock" and not p.name.startswith(("stats", ".fastpath"))]
    folders = {p.parent.name for p in files}
    assert NATIVE.get(target, "sim") == "sim" or NATIVE[target] in folders, folders
    for p in files:
        data = p.read_bytes()
        p.write_bytes(data[: len(data) // 3] if damage == "truncate" else b"\x7fELF garbage" * 3)
    second = run()
    assert second.returncode == 0 and "CORRUPTED" in second.stdout, second.stderr[-2000:]
    third = run()
    assert third.returncode == 0 and "CLEAN" in third.stdout, third.stderr[-2000:]
