"""Autotuning with compiles in worker processes picks what serial tuning picks; `xblock tune`
stores the choices and `xblock cache export` carries them to a cache that then never tunes."""

import numpy as np

import xblock
from tests.runtime import kernels
from tests.runtime.conftest import misses
from xblock.cli import main
from xblock.runtime import pool


def tune(monkeypatch, workers: int):
    monkeypatch.setenv("XBLOCK_COMPILE_WORKERS", str(workers))
    monkeypatch.setattr(pool, "POOL_MIN_S", 0.0)  # workers for any compile that is not a cache hit
    kernels.tuned_add.cache.clear()
    kernels.BENCHED.clear()
    x = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(x)
    kernels.tuned_add[kernels.grid](x, out, 1000, target="cpu")
    np.testing.assert_array_equal(out, x + 1)
    return kernels.tuned_add.best_config, sorted(kernels.BENCHED[: len(kernels.TUNED_BLOCKS)])


def test_parallel_tuning_picks_the_config_serial_tuning_picks(monkeypatch, tmp_path, fresh_cache):
    serial = tune(monkeypatch, 1)
    assert misses("_add_one") == len(kernels.TUNED_BLOCKS)
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path / "other"))
    xblock.runtime.compiler._MEMORY.clear()
    kernels.tuned_add.fn.kernels.clear()
    jobs = []
    submit = pool._submit
    monkeypatch.setattr(pool, "_submit", lambda *a: jobs.append(submit(*a)) or jobs[-1])
    parallel = tune(monkeypatch, 2)
    done = [f.result() for f in jobs[0].values() if not f.cancelled()]
    assert done and all(isinstance(key, str) for key in done), done  # a worker compiled and stored these
    assert serial == parallel
    assert serial[0].kwargs == {"BLOCK": 32}
    assert serial[1] == sorted(kernels.TUNED_BLOCKS)  # every config benchmarked once
    assert misses("_add_one") == len(kernels.TUNED_BLOCKS)  # here or in the worker, each key once


def test_tune_command_stores_choices_that_a_bundle_carries(monkeypatch, tmp_path, fresh_cache, capsys):
    monkeypatch.setenv("XBLOCK_COMPILE_WORKERS", "1")
    assert main(["tune", "tests/runtime/kernels.py:tuned_add", "--sizes", "100", "300", "-t", "sim"]) == 0
    assert capsys.readouterr().out.count("BLOCK=32") == 2
    bundle = tmp_path / "kernels.tar.gz"
    assert main(["cache", "export", str(bundle)]) == 0
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path / "deployed"))
    assert main(["cache", "import", str(bundle)]) == 0

    def no_bench(*a, **k):
        raise AssertionError("tuned again: the bundle's choice was not used")

    tuned = xblock.autotune([xblock.Config({"BLOCK": b}) for b in kernels.TUNED_BLOCKS], key=["n"],
                            pre_hook=kernels._record, do_bench=no_bench)(xblock.jit(kernels._add_one))
    for n in (100, 300):
        x = np.arange(n, dtype=np.float32)
        out = np.zeros_like(x)
        tuned[kernels.grid](x, out, n, target="sim")
        np.testing.assert_array_equal(out, x + 1)
        assert tuned.best_config.kwargs == {"BLOCK": 32}


def test_tune_refuses_a_kernel_that_is_not_autotuned(capsys):
    assert main(["tune", "tests/runtime/kernels.py:add_one", "--sizes", "10"]) == 2
    assert "not autotuned" in capsys.readouterr().err


def test_workers_find_kernels_by_module_and_name():
    assert pool.kernel_ref(kernels.tuned_add.fn)[:2] == ("tests.runtime.kernels", "_add_one")

    def local(x_ptr):
        pass

    assert pool.kernel_ref(xblock.jit(local)) is None  # not reachable from its module: compiled here
