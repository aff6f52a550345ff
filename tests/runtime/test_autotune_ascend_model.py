"""Autotuning on ascend ranks configs by the per-pipe cost model (`xblock.profile`), never by the host's
wall time of the AscendC CPU model: each config runs once on the model with the tuner's hooks, the
choice is stored and reused like on other targets, a user's do_bench still wins, and a config that
does not compile for ascend is skipped."""

import json

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.runtime import autotune as at
from xblock.runtime import cost_model

N = 2**18  # 1 MB per array: 128-byte programs cost their DMA issue 8192 times (cost.py), 8 KB ones 128 times
SMALL, BIG = xblock.Config({"BLOCK": 32}), xblock.Config({"BLOCK": 2048})  # 8192 tiny programs, or 128 big ones


def _accumulate(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    """out += x: a run the hooks do not undo would show in `out`."""
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    xl.store(out_ptr + offs, xl.load(out_ptr + offs, mask=m) + xl.load(x_ptr + offs, mask=m), mask=m)


def _grid(meta):
    return (xblock.cdiv(meta["n"], meta["BLOCK"]),)


def _tuned(configs=(SMALL, BIG), **kw):
    return xblock.autotune(list(configs), key=["n"], **kw)(xblock.jit(_accumulate))


def _host_prefers_small(monkeypatch) -> list:
    """Host timing (testing.do_bench) that makes the first config timed, SMALL, look 1000x faster."""
    calls = []

    def host_bench(fn, warmup=1, rep=3, **_):
        fn()
        calls.append(fn)
        return {"median": 1e-6 if len(calls) == 1 else 1e-3}

    monkeypatch.setattr(at.testing, "do_bench", host_bench)
    return calls


@pytest.fixture(autouse=True)
def _one_process(monkeypatch):
    monkeypatch.setenv("XBLOCK_COMPILE_WORKERS", "1")  # configs compiled and timed in order


def test_the_host_timing_the_fake_gives_prefers_the_small_blocks(monkeypatch):
    """The premise of the next test: where configs are timed on the host, the fake timing decides."""
    calls = _host_prefers_small(monkeypatch)
    tuned = _tuned()
    x, out = np.arange(N, dtype=np.float32), np.zeros(N, np.float32)
    tuned[_grid](x, out, N, target="cpu")
    assert len(calls) == 2 and tuned.best_config is SMALL


def test_ascend_ranks_by_the_cost_model_not_the_host_clock(monkeypatch, capsys):
    calls = _host_prefers_small(monkeypatch)
    monkeypatch.setenv("XBLOCK_PRINT_AUTOTUNING", "1")
    tuned = _tuned(reset_to_zero=["out_ptr"])
    x, out = np.arange(N, dtype=np.float32), np.zeros(N, np.float32)
    tuned[_grid](x, out, N, target="ascend")
    np.testing.assert_array_equal(out, x)  # tuning runs were zeroed: only the launch's sum is left
    assert calls == [] and tuned.best_config is BIG
    timings = tuned.configs_timings
    assert timings[SMALL] > 1.5 * timings[BIG]
    ref = xblock.profile(xblock.jit(_accumulate), _grid, x, np.zeros_like(out), N, target="ascend", BLOCK=2048)
    assert timings[BIG] == pytest.approx(ref.estimate_us * 1e-6)  # seconds, as host timings
    printed = capsys.readouterr().out
    assert "best config selected: BLOCK=2048;" in printed
    assert "cost-model estimates, not measurements: BLOCK=32: " in printed and "BLOCK=2048: " in printed


def test_the_choice_is_stored_and_reused_by_a_new_tuner(monkeypatch, fresh_cache):
    _tuned()[_grid](np.zeros(N, np.float32), np.zeros(N, np.float32), N, target="ascend")
    (store,) = (fresh_cache / "autotune").glob("*-ascend-*.json")
    assert list(json.loads(store.read_text()).values()) == [1]  # BIG's index

    def no_ranking(*a, **k):
        raise AssertionError("ranked again")

    monkeypatch.setattr(cost_model, "model_seconds", no_ranking)
    monkeypatch.setattr(at.testing, "do_bench", no_ranking)
    again = _tuned(restore_value=["out_ptr"])
    x, out = np.arange(N, dtype=np.float32), np.ones(N, np.float32)
    again[_grid](x, out, N, target="ascend")
    assert again.best_config is BIG
    np.testing.assert_array_equal(out, x + 1)


def test_a_users_do_bench_wins(monkeypatch):
    def no_model(*a, **k):
        raise AssertionError("the cost model was asked")

    monkeypatch.setattr(cost_model, "model_seconds", no_model)
    seen = []

    def do_bench(kernel_call, quantiles):
        kernel_call()
        seen.append(kernel_call)
        return [1.0 if len(seen) == 1 else 2.0, 0.9, 1.1]  # SMALL (timed first) looks faster

    tuned = _tuned(do_bench=do_bench, reset_to_zero=["out_ptr"])
    x, out = np.arange(N, dtype=np.float32), np.zeros(N, np.float32)
    tuned[_grid](x, out, N, target="ascend")
    assert len(seen) == 2 and tuned.best_config is SMALL
    np.testing.assert_array_equal(out, x)


def _accumulate_mod(x_ptr, out_ptr, n, BLOCK: xl.constexpr, MOD: xl.constexpr):
    """out += x, or x through float8 and back (the same for these small integers) with MOD: a float8 type,
    which ascend refuses (910B has none)."""
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    x = xl.load(x_ptr + offs, mask=m)
    if MOD:
        x = x.to(xl.float8e5).to(xl.float32)
    xl.store(out_ptr + offs, xl.load(out_ptr + offs, mask=m) + x, mask=m)


def test_a_config_that_does_not_compile_for_ascend_is_skipped():
    fmod = xblock.Config({"BLOCK": 2048, "MOD": True})  # the cheaper one, were it to compile
    plain = xblock.Config({"BLOCK": 32, "MOD": False})
    tuned = xblock.autotune([fmod, plain], key=["n"], reset_to_zero=["out_ptr"])(xblock.jit(_accumulate_mod))
    x, out = np.arange(N, dtype=np.float32), np.zeros(N, np.float32)
    tuned[_grid](x, out, N, target="ascend")
    assert tuned.best_config is plain and tuned.configs_timings[fmod] == float("inf")
    np.testing.assert_array_equal(out, x)
    none = xblock.autotune([fmod, xblock.Config({"BLOCK": 32, "MOD": True})], key=["n"])(xblock.jit(_accumulate_mod))
    with pytest.raises(at.AutotuneError, match="(?s)no autotune config compiles for target 'ascend'.*float8"):
        none[_grid](x, out, N, target="ascend")


def test_the_estimates_of_perf_model_xblock_are_not_taken_twice(monkeypatch):
    priced = []
    model_seconds = cost_model.model_seconds

    def counted(backend, fn, grid, args, meta):
        priced.append(meta["BLOCK"])
        return model_seconds(backend, fn, grid, args, meta)

    monkeypatch.setattr(cost_model, "model_seconds", counted)
    mid = xblock.Config({"BLOCK": 256})
    tuned = _tuned((SMALL, mid, BIG), prune_configs_by={"perf_model": "xblock", "top_k": 2},
                   reset_to_zero=["out_ptr"])
    x, out = np.arange(N, dtype=np.float32), np.zeros(N, np.float32)
    tuned[_grid](x, out, N, target="ascend")
    assert sorted(priced) == [32, 256, 2048]  # ranked once each; the two kept were not run again
    ranking = tuned.model_ranking
    assert ranking.pruned == [SMALL] and tuned.best_config is ranking.kept[0]
    assert all(tuned.configs_timings[c] == ranking.estimates[c] for c in ranking.kept)
    np.testing.assert_array_equal(out, x)


def test_the_choice_is_kept_per_soc(monkeypatch):
    """A launch option such as `soc` is part of the key: the choice made for one SoC profile is not
    reused for another (its costs differ)."""
    seen = []
    real = at.Autotuner._tune

    def tune(self, key, *a, **k):
        seen.append(key)
        return real(self, key, *a, **k)

    monkeypatch.setattr(at.Autotuner, "_tune", tune)
    tuned = _tuned(reset_to_zero=["out_ptr"])
    x = np.ones(N, np.float32)
    for soc in ("910B3", "910B1", "910B3"):
        out = np.zeros(N, np.float32)
        tuned[_grid](x, out, N, target="ascend", soc=soc)
        np.testing.assert_array_equal(out, x)
    assert len(seen) == 2 and seen[0] != seen[1] and any("soc='910B1'" in str(k) for k in seen[1])


def test_autotune_over_heuristics_ranks_by_the_model():
    # attorch's form: @autotune over @heuristics (here setting the block); the model prices the kernel under
    # the heuristics with their values filled in (the tuning runs restored), and the launch adds right
    tuned = xblock.autotune([xblock.Config({}, num_warps=1), xblock.Config({}, num_warps=2)], key=["n"],
                            restore_value=["out_ptr"])(
        xblock.heuristics({"BLOCK": lambda a: 2048 if a["n"] >= 2048 else 32})(xblock.jit(_accumulate)))
    x, out = np.arange(N, dtype=np.float32), np.ones(N, np.float32)
    tuned[_grid](x, out, N, target="ascend")
    np.testing.assert_array_equal(out, x + 1)
    assert len(tuned.configs_timings) == 2 and all(np.isfinite(t) for t in tuned.configs_timings.values())


def test_profile_of_an_autotuned_kernel_names_it():
    with pytest.raises(at.AutotuneError, match="is autotuned: xblock.profile prices one config"):
        xblock.profile(_tuned(), (4,), np.zeros(4, np.float32), np.zeros(4, np.float32), 4)
