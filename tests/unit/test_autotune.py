"""xblock.autotune and xblock.heuristics: pick a config, persist it, reuse it in a new tuner."""

import json

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.runtime import autotune as at


def _add(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    xl.store(out_ptr + offs, xl.load(x_ptr + offs, mask=m) + 1, mask=m)


CONFIGS = [xblock.Config({"BLOCK": 64}), xblock.Config({"BLOCK": 256}, num_warps=8)]


def test_autotune_picks_persists_and_reuses(tmp_path, monkeypatch):
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path))
    tuned = xblock.autotune(CONFIGS, key=["n"])(_add)
    x = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(x)
    grid = lambda meta: (xblock.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731
    tuned[grid](x, out, 1000, target="sim")
    np.testing.assert_array_equal(out, x + 1)
    (store,) = (tmp_path / "autotune").iterdir()
    assert list(json.loads(store.read_text()).values())[0] in (0, 1)

    def no_bench(*a, **k):
        raise AssertionError("benchmarked again")

    monkeypatch.setattr("xblock.testing.do_bench", no_bench)
    again = xblock.autotune(CONFIGS, key=["n"])(_add)
    out[:] = 0
    again[grid](x, out, 1000, target="sim")
    np.testing.assert_array_equal(out, x + 1)


def test_heuristics_fill_meta_parameters():
    h = xblock.heuristics({"BLOCK": lambda a: xblock.next_power_of_2(a["n"])})(_add)
    x = np.arange(100, dtype=np.float32)
    out = np.zeros_like(x)
    h[(1,)](x, out, 100, target="sim")
    np.testing.assert_array_equal(out, x + 1)


def test_no_config_compiles_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path))
    bad = xblock.autotune([at.Config({"BLOCK": 0})], key=["n"])(_add)
    with pytest.raises(RuntimeError, match="no autotune config"):
        bad[(1,)](np.zeros(4, np.float32), np.zeros(4, np.float32), 4, target="sim")
