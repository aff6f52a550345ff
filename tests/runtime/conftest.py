"""Each runtime test gets an empty cache directory and forgets the kernels compiled before it."""

import pytest

from xblock.runtime import compiler


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(root))
    compiler._MEMORY.clear()
    yield root
    compiler._MEMORY.clear()


def misses(name: str) -> int:
    """How many times kernel `name` was compiled into the current cache (its recorded misses)."""
    from xblock.runtime.cache import read_stats

    return sum(r["misses"] for (n, _), r in read_stats().items() if n == name)
