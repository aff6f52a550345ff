"""The on-disk cache: content keys, atomic entries, corrupted entries rebuilt, warm hits skip the frontend."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.runtime import compiler
from xblock.runtime.cache import FileCache

SIG = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}


@xblock.jit
def scale(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    xl.store(out_ptr + offs, xl.load(x_ptr + offs, mask=m) * 2, mask=m)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path))
    compiler._MEMORY.clear()
    yield tmp_path
    compiler._MEMORY.clear()


def entries(root):
    return [p for sub in root.iterdir() if sub.is_dir() for p in sub.iterdir() if not p.name.startswith(".")]


def test_entry_written_once_and_hit_skips_the_frontend(cache_dir, monkeypatch):
    xblock.compile(scale, target="sim", signature=SIG, constexprs={"BLOCK": 64})
    assert len(entries(cache_dir)) == 1
    compiler._MEMORY.clear()

    def boom(*a, **k):
        raise AssertionError("the frontend ran on a cache hit")

    monkeypatch.setattr("xblock.frontend.codegen.generate", boom)
    ck = xblock.compile(scale, target="sim", signature=SIG, constexprs={"BLOCK": 64})
    assert "xb.load" in ck.asm["xb"]


def test_key_changes_with_constexpr_and_signature(cache_dir):
    xblock.compile(scale, target="sim", signature=SIG, constexprs={"BLOCK": 64})
    xblock.compile(scale, target="sim", signature=SIG, constexprs={"BLOCK": 128})
    xblock.compile(scale, target="sim", signature={**SIG, "x_ptr": "*fp16"}, constexprs={"BLOCK": 64})
    assert len(entries(cache_dir)) == 3


def test_corrupted_entry_is_rebuilt(cache_dir):
    xblock.compile(scale, target="sim", signature=SIG, constexprs={"BLOCK": 64})
    (entry,) = entries(cache_dir)
    (entry / "xb").write_text("garbage")
    compiler._MEMORY.clear()
    ck = xblock.compile(scale, target="sim", signature=SIG, constexprs={"BLOCK": 64})
    assert "xb.load" in ck.asm["xb"]
    x = np.arange(100, dtype=np.float32)
    out = np.zeros_like(x)
    ck.run((2, 1, 1), [x, out, 100])
    np.testing.assert_array_equal(out, 2 * x)


def test_put_is_atomic_and_concurrent_writers_agree(tmp_path):
    c = FileCache(tmp_path)
    c.put("ab" * 32, {"a": "1"})
    c.put("ab" * 32, {"a": "1"})  # a second writer of the same entry is harmless
    assert c.get("ab" * 32) == {"a": b"1"}
    assert not [p for p in (tmp_path / "ab").iterdir() if p.name.startswith(".")]


def test_source_change_changes_the_key(tmp_path, monkeypatch):
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path / "c"))
    src = textwrap.dedent('''
        import xblock, xblock.language as xl
        @xblock.jit
        def k(p, BLOCK: xl.constexpr):
            xl.store(p + xl.arange(0, BLOCK), VALUE)
        xblock.compile(k, target="sim", signature={"p": "*fp32"}, constexprs={"BLOCK": 16})
    ''')
    for v in ("1.0", "2.0"):
        f = tmp_path / "k.py"
        f.write_text(src.replace("VALUE", v))
        subprocess.run([sys.executable, str(f)], check=True, env={**os.environ})
    assert len(entries(tmp_path / "c")) == 2


def test_repeated_launch_uses_the_in_memory_layer(cache_dir, monkeypatch):
    x = np.ones(10, np.float32)
    out = np.zeros_like(x)
    scale[(1,)](x, out, 10, BLOCK=16, target="sim")
    monkeypatch.setattr("xblock.runtime.jit.compile_specialization", _fail)
    scale[(1,)](x, out, 10, BLOCK=16, target="sim")
    np.testing.assert_array_equal(out, 2 * x)


def _fail(*a, **k):
    raise AssertionError("compiled again")


def test_dump_dir_receives_every_stage(cache_dir, tmp_path, monkeypatch):
    dump = tmp_path / "dump"
    monkeypatch.setenv("XBLOCK_DUMP_DIR", str(dump))
    xblock.compile(scale, target="sim", signature=SIG, constexprs={"BLOCK": 32})
    assert (dump / "scale.xb").read_text().count("xb.load") == 1
    assert (dump / "scale.simprog").stat().st_size > 0


def test_warm_cache_runs_sim_kernels_without_mlir(tmp_path):
    env = {**os.environ, "XBLOCK_CACHE_DIR": str(tmp_path)}
    script = textwrap.dedent('''
        import sys
        BLOCK_MLIR = len(sys.argv) > 1
        if BLOCK_MLIR:
            sys.modules["mlir"] = None  # any import of mlir now fails
        import numpy as np
        import xblock, xblock.language as xl

        @xblock.jit
        def inc(x_ptr, n, BLOCK: xl.constexpr):
            offs = xl.arange(0, BLOCK)
            m = offs < n
            xl.store(x_ptr + offs, xl.load(x_ptr + offs, mask=m) + 1, mask=m)

        x = np.zeros(10, np.float32)
        inc[(1,)](x, 10, BLOCK=16, target="sim")
        assert (x == 1).all()
    ''')
    f = tmp_path / "k.py"
    f.write_text(script)
    subprocess.run([sys.executable, str(f)], check=True, env=env)  # compiles into the cache
    subprocess.run([sys.executable, str(f), "block-mlir"], check=True, env=env)  # runs from it
