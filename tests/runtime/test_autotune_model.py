"""xblock's cost model prunes autotune configs before any backend compile (`perf_model="xblock"`):
only the model's top_k are compiled and benchmarked, the choice is one of them, results are right,
and a kernel it cannot count keeps every config with a warning, never an error."""

import numpy as np
import pytest

import xblock
import xblock.language as xl
from tests.runtime.conftest import misses
from xblock.errors import ConfigError, XBlockWarning
from xblock.runtime import compiler, cost_model

MATMUL_CONFIGS = [xblock.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k}) for m in (16, 32) for n in (16, 32)
                  for k in (16, 32)] + \
                 [xblock.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k}, num_warps=8) for m in (32, 64)
                  for n in (32, 64) for k in (16, 32)]  # 16 configs
ADD_CONFIGS = [xblock.Config({"BLOCK": 2**b}, num_warps=w) for b in range(4, 12) for w in (4, 8)]  # 16 configs


def _matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: xl.constexpr, BLOCK_N: xl.constexpr, BLOCK_K: xl.constexpr):
    pid = xl.program_id(0)
    num_n = xl.cdiv(N, BLOCK_N)
    offs_m = (pid // num_n) * BLOCK_M + xl.arange(0, BLOCK_M)
    offs_n = (pid % num_n) * BLOCK_N + xl.arange(0, BLOCK_N)
    offs_k = xl.arange(0, BLOCK_K)
    acc = xl.zeros((BLOCK_M, BLOCK_N), dtype=xl.float32)
    for k in range(0, xl.cdiv(K, BLOCK_K)):
        kk = k * BLOCK_K + offs_k
        a = xl.load(a_ptr + offs_m[:, None] * K + kk[None, :], mask=(offs_m[:, None] < M) & (kk[None, :] < K),
                    other=0.0)
        b = xl.load(b_ptr + kk[:, None] * N + offs_n[None, :], mask=(kk[:, None] < K) & (offs_n[None, :] < N),
                    other=0.0)
        acc = xl.dot(a, b, acc=acc)
    xl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    xl.store(out_ptr + offs, xl.load(x_ptr + offs, mask=m) + xl.load(y_ptr + offs, mask=m), mask=m)


def _rows_of_loaded_length(x_ptr, len_ptr, out_ptr, BLOCK: xl.constexpr):
    """Sums a row whose length is read from memory: a loop the model cannot count."""
    offs = xl.arange(0, BLOCK)
    acc = xl.zeros((BLOCK,), dtype=xl.float32)
    for i in range(xl.load(len_ptr)):
        acc += xl.load(x_ptr + i * BLOCK + offs)
    xl.store(out_ptr + offs, acc)


def _tuned(fn, configs, top_k=4, **kw):
    return xblock.autotune(configs, key=kw.pop("key", ["n"]), prune_configs_by={"perf_model": "xblock", "top_k": top_k},
                           **kw)(xblock.jit(fn))


def _matmul_grid(meta):
    return (xblock.cdiv(meta["M"], meta["BLOCK_M"]) * xblock.cdiv(meta["N"], meta["BLOCK_N"]),)


def _add_grid(meta):
    return (xblock.cdiv(meta["n"], meta["BLOCK"]),)


@pytest.fixture
def builds(monkeypatch):
    """Each backend compile, as the constexprs it compiled; the tuner's ranking must exist by then."""
    monkeypatch.setenv("XBLOCK_COMPILE_WORKERS", "1")
    seen, tuners = [], []
    build = compiler._build

    def spy(ks, spec, *a, **k):
        seen.append((dict(spec.constexprs), [t.model_ranking is not None for t in tuners]))
        return build(ks, spec, *a, **k)

    monkeypatch.setattr(compiler, "_build", spy)
    return seen, tuners


def _check_pruned(tuned, seen, keys):
    ranking = tuned.model_ranking
    assert len(ranking.kept) == 4 and len(ranking.pruned) == 12
    assert all(ready == [True] for _, ready in seen)  # ranked before the first backend compile
    kept = {tuple(c.kwargs[k] for k in keys) + (c.num_warps,) for c in ranking.kept}
    assert tuned.best_config in ranking.kept
    assert {tuple(cx[k] for k in keys) for cx, _ in seen} <= {k[:-1] for k in kept}
    assert len(seen) == misses(tuned.__name__) == 4  # only the top_k were compiled


def test_a_matmul_is_pruned_to_top_k_before_compiling(builds):
    seen, tuners = builds
    tuned = _tuned(_matmul, MATMUL_CONFIGS, key=["M", "N", "K"])
    tuners.append(tuned)
    rng = np.random.default_rng(0)
    M, N, K = 70, 45, 50
    a, b = (rng.integers(-3, 4, shape).astype(np.float32) for shape in ((M, K), (K, N)))  # exact in tf32
    c = np.zeros((M, N), np.float32)
    tuned[_matmul_grid](a, b, c, M, N, K, target="cpu")
    np.testing.assert_array_equal(c, a @ b)
    _check_pruned(tuned, seen, ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
    assert all(t > 0 for t in tuned.model_ranking.estimates.values())


def test_an_elementwise_kernel_is_pruned_to_top_k_before_compiling(builds, capsys, monkeypatch):
    seen, tuners = builds
    monkeypatch.setenv("XBLOCK_PRINT_AUTOTUNING", "1")
    tuned = _tuned(_add, ADD_CONFIGS)
    tuners.append(tuned)
    n = 1000
    x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    tuned[_add_grid](x, y, out, n, target="cpu")
    np.testing.assert_array_equal(out, x + 1)
    _check_pruned(tuned, seen, ("BLOCK",))
    # one program of 1024 lanes (no spread over threads, fewest lanes masked off) ranks first
    assert tuned.model_ranking.kept[0].kwargs == {"BLOCK": 1024}
    printed = capsys.readouterr().out
    assert "kept 4 of 16 configs" in printed and "pruned without compiling: " in printed


def test_a_kernel_the_model_cannot_count_keeps_every_config_with_a_warning(builds):
    seen, tuners = builds
    configs = [xblock.Config({"BLOCK": b}) for b in (16, 32, 64)]
    tuned = _tuned(_rows_of_loaded_length, configs, top_k=1, key=[])
    tuners.append(tuned)
    x = np.arange(64 * 5, dtype=np.float32)
    out = np.zeros(64, np.float32)
    with pytest.warns(XBlockWarning, match="cannot be counted before it runs: a loop whose trip count") as w:
        tuned[(1,)](x, np.array([3], np.int32), out, target="cpu")
    loop_line = _rows_of_loaded_length.__code__.co_firstlineno + 4  # the `for` line
    assert w[0].filename.endswith("test_autotune_model.py") and w[0].lineno == loop_line
    assert tuned.model_ranking.note and len(tuned.model_ranking.kept) == 3
    assert len(seen) == 3  # every config compiled and benchmarked, as without the model
    b = tuned.best_config.kwargs["BLOCK"]
    np.testing.assert_array_equal(out[:b], x[: 3 * b].reshape(3, b).sum(0))


def test_a_target_without_a_model_keeps_every_config(monkeypatch):
    monkeypatch.setenv("XBLOCK_COMPILE_WORKERS", "1")
    tuned = _tuned(_add, [xblock.Config({"BLOCK": b}) for b in (16, 32, 64)], top_k=1)
    x = np.arange(100, dtype=np.float32)
    out = np.zeros_like(x)
    with pytest.warns(XBlockWarning, match="has no cost model"):
        tuned[_add_grid](x, x, out, 100, target="sim")
    np.testing.assert_array_equal(out, 2 * x)
    assert len(tuned.model_ranking.kept) == 3


def test_the_cuda_roofline_ranks_without_a_gpu_or_a_compile(builds):
    seen, _ = builds
    tuned = _tuned(_matmul, MATMUL_CONFIGS, key=["M", "N", "K"])
    a, b, c = np.zeros((512, 512), np.float16), np.zeros((512, 512), np.float16), np.zeros((512, 512), np.float32)
    r16 = cost_model.rank(tuned, tuned.configs, (a, b, c, 512, 512, 512), {}, _matmul_grid, "cuda", 4)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    r32 = cost_model.rank(tuned, tuned.configs, (a32, b32, c, 512, 512, 512), {}, _matmul_grid, "cuda", 4)
    assert seen == [] and len(r16.kept) == 4 and not r16.note
    assert all(r16.estimates[cf] < r32.estimates[cf] for cf in tuned.configs)  # tensor cores: fp16 over tf32


def test_work_is_counted_from_the_ir():
    from xblock.passes import work_counts

    tuned = _tuned(_matmul, MATMUL_CONFIGS, key=["M", "N", "K"])
    a = np.zeros((64, 64), np.float32)
    fn = tuned.fn
    _, spec, runtime = fn.specialize(fn.bind((a, a, a, 64, 64, 64), {"BLOCK_M": 32, "BLOCK_N": 16, "BLOCK_K": 16}))
    module = compiler._frontend_and_passes(fn.source, spec)
    work = work_counts.count(module, {i: v for i, v in enumerate(runtime) if type(v) is int}, (8, 1, 1))
    assert work.programs == 8
    assert work.bytes == 4 * ((32 * 16 + 16 * 16) * 4 + 32 * 16)  # 4 trips of two tiles, then the store
    assert work.dot_flops == {("f32", "tf32"): 2.0 * 32 * 16 * 64}
    fn = xblock.jit(_prefix_rows)  # a loop bound that depends on program_id: averaged over sampled programs
    _, spec, runtime = fn.specialize(fn.bind((a, a), {"BLOCK": 16}))
    work = work_counts.count(compiler._frontend_and_passes(fn.source, spec), {}, (5, 1, 1))
    assert work.programs == 5 and work.bytes == (0 + 2 + 4) / 3 * 16 * 4 + 16 * 4  # programs 0, 2 and 4


def _prefix_rows(x_ptr, out_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    acc = xl.zeros((BLOCK,), dtype=xl.float32)
    for i in range(xl.program_id(0)):
        acc += xl.load(x_ptr + i * BLOCK + offs)
    xl.store(out_ptr + xl.program_id(0) * BLOCK + offs, acc)


def test_the_model_is_named_as_triton_names_a_perf_model():
    with pytest.raises(ConfigError, match="perf_model='xblok'.*'xblock'"):
        xblock.autotune(ADD_CONFIGS, key=["n"], prune_configs_by={"perf_model": "xblok", "top_k": 4})(xblock.jit(_add))
    with pytest.raises(ConfigError, match="prune_configs_by key.*model"):
        xblock.autotune(ADD_CONFIGS, key=["n"], prune_configs_by={"model": "xblock", "top_k": 4})(xblock.jit(_add))
    tuned = xblock.autotune(ADD_CONFIGS, key=["n"], prune_configs_by={"perf_model": "xblock", "top_k": "4"})(
        xblock.jit(_add))
    x = np.zeros(16, np.float32)
    with pytest.raises(ConfigError, match="top_k must be"):
        tuned[_add_grid](x, x, x, 16, target="cpu")


def test_a_target_with_its_own_model_ranks_by_its_estimate(monkeypatch):
    """Ascend's per-pipe model (`xblock.profile`) stands in for benchmarking: it runs each config, with the hooks."""
    import dataclasses
    from types import SimpleNamespace

    monkeypatch.setenv("XBLOCK_COMPILE_WORKERS", "1")
    sim = cost_model.get_backend("sim")
    profiled, hooked = [], []

    def profile(kernel, grid, *args, **meta):
        kernel[grid](*args, target="sim", **meta)
        profiled.append(meta["BLOCK"])
        return SimpleNamespace(estimate_us={16: 3.0, 32: 1.0, 64: 2.0}[meta["BLOCK"]])

    monkeypatch.setattr(cost_model, "get_backend", lambda t: dataclasses.replace(sim, profile=profile))
    tuned = _tuned(_add, [xblock.Config({"BLOCK": b}) for b in (16, 32, 64)], top_k=1,
                   pre_hook=lambda kw, reset_only=False: hooked.append(kw["BLOCK"]))
    x = np.arange(100, dtype=np.float32)
    out = np.zeros_like(x)
    tuned[_add_grid](x, x, out, 100, target="sim")
    np.testing.assert_array_equal(out, 2 * x)
    assert profiled == [16, 32, 64] and hooked[:3] == [16, 32, 64]
    assert tuned.best_config.kwargs == {"BLOCK": 32} and tuned.model_ranking.kept == [tuned.best_config]
    assert "pruned: " in tuned.model_ranking.report()
