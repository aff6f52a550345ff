"""Unmodified @triton.autotune / @triton.heuristics kernels honoured by xblock (sim and cpu)."""

import json

import numpy as np
import pytest

import xblock
from xblock.backends import get_backend
from xblock.runtime import autotune as at

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

TARGETS = ["sim", "cpu"]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    """Each test tunes afresh: results are stored under its own cache directory."""
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path))


# ------------------------------------------------------------------ a tiled matmul, as in Triton's tutorials
PRUNED = []  # (number of configs, named args) of each early_config_prune call
ESTIMATED = []  # the BLOCK_K of each perf_model call


def _drop_tiles_larger_than_k(configs, named_args, **kwargs):
    PRUNED.append((len(configs), dict(named_args)))
    return [c for c in configs if c.kwargs["BLOCK_K"] <= max(16, named_args["K"])]


def _bigger_tiles_are_faster(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, num_warps, **kwargs):
    ESTIMATED.append(BLOCK_K)
    return 1.0 / (BLOCK_M * BLOCK_N * BLOCK_K)


MATMUL_CONFIGS = [
    triton.Config({"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 2}, num_warps=2, num_stages=2),
    triton.Config({"BLOCK_M": 32, "BLOCK_N": 16, "BLOCK_K": 32, "GROUP_M": 1}, num_warps=4, maxnreg=128),
    triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "GROUP_M": 4}, num_warps=8, num_ctas=1),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 256, "GROUP_M": 1}, num_warps=8),
]


@triton.autotune(configs=MATMUL_CONFIGS, key=["M", "N", "K"],
                 prune_configs_by={"early_config_prune": _drop_tiles_larger_than_k,
                                   "perf_model": _bigger_tiles_are_faster, "top_k": 2})
@triton.jit
def tiled_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # programs walk the output tiles in groups of GROUP_M rows, for L2 reuse
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % per_group) % rows_in_group
    tile_n = (pid % per_group) // rows_in_group
    offs_m = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        offs_k = k * BLOCK_K + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak,
                    mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0.0)
        b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                    mask=(offs_k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _matmul_grid(M, N):
    return lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)


def _matmul_args(M, N, K, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    return a, b, c, M, N, K, K, 1, N, 1, N, 1


def test_jit_of_a_triton_autotuned_kernel_keeps_configs_and_hooks():
    kernel = xblock.jit(tiled_matmul)
    assert isinstance(kernel, at.Autotuner)
    assert kernel.configs == tiled_matmul.configs and kernel.configs[0] is MATMUL_CONFIGS[0]
    assert kernel.keys == ["M", "N", "K"]
    assert kernel.early_config_prune is _drop_tiles_larger_than_k
    assert kernel.perf_model is _bigger_tiles_are_faster and kernel.configs_top_k == 2
    assert xblock.jit(tiled_matmul) is kernel  # one wrapper per Triton object
    assert xblock.jit(kernel) is kernel
    assert kernel.source.params[:3] == ["a_ptr", "b_ptr", "c_ptr"]


@pytest.mark.parametrize("target", TARGETS)
def test_triton_autotuned_matmul_matches_numpy(target, tmp_path):
    PRUNED.clear()
    ESTIMATED.clear()
    kernel = xblock.jit(tiled_matmul)
    kernel.cache.clear()
    M, N, K = 70, 50, 40
    args = _matmul_args(M, N, K)
    kernel[_matmul_grid(M, N)](*args, target=target)
    a, b, c = args[:3]
    np.testing.assert_allclose(c, a @ b, rtol=2e-2, atol=2e-2)  # fp32 dot at Triton's default precision: tf32
    # early_config_prune saw every config and the named arguments; the 256-deep tile was dropped,
    # then perf_model ranked the other three and only its top 2 were benchmarked
    assert PRUNED[0][0] == 4 and PRUNED[0][1]["K"] == K and set(PRUNED[0][1]) >= {"a_ptr", "M", "stride_cn"}
    assert sorted(ESTIMATED) == [16, 16, 32]
    assert len(kernel.configs_timings) == 2
    assert kernel.best_config in (MATMUL_CONFIGS[1], MATMUL_CONFIGS[2])
    # the choice is stored per target and device, and reused by a new process (a new wrapper)
    device = get_backend(target).device_name().replace(" ", "_")
    (store,) = [p for p in (tmp_path / "autotune").iterdir() if p.name.endswith(f"-{target}-{device}.json")]
    (choice,) = json.loads(store.read_text()).values()
    assert MATMUL_CONFIGS[choice] is kernel.best_config
    again = at._from_triton_autotuner(tiled_matmul)  # a wrapper of its own, as in a new process
    again.do_bench = lambda *a, **k: pytest.fail("benchmarked again")
    args2 = _matmul_args(M, N, K, seed=1)
    again[_matmul_grid(M, N)](*args2, target=target)
    np.testing.assert_allclose(args2[2], args2[0] @ args2[1], rtol=2e-2, atol=2e-2)
    assert again.best_config is kernel.best_config


def test_a_new_key_tunes_again():
    kernel = at._from_triton_autotuner(tiled_matmul)
    for M in (20, 33):
        args = _matmul_args(M, 24, 16)
        kernel[_matmul_grid(M, 24)](*args, target="sim")
        np.testing.assert_allclose(args[2], args[0] @ args[1], rtol=2e-2, atol=2e-2)
    assert {k for _, k in kernel.cache} == {(20, 24, 16, "float32", "float32", "float32"),
                                             (33, 24, 16, "float32", "float32", "float32")}


def test_diff_of_a_triton_autotuned_kernel():
    M, N, K = 24, 40, 16
    report = xblock.diff(tiled_matmul, _matmul_grid(M, N), *_matmul_args(M, N, K), targets=["cpu"])
    assert report.ok, str(report)
    assert [r.output for r in report.rows] == ["c_ptr"]


# ------------------------------------------------------------------ heuristics, stacked both ways
def _even(args):
    return args["n"] % args["BLOCK"] == 0


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64}, num_warps=2)], key=["n"])
@triton.heuristics(values={"EVEN": _even})  # sees the config's BLOCK
@triton.jit
def scale_tuned_outside(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs) * alpha)
    else:
        mask = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


@triton.heuristics(values={"EVEN": lambda args: args["n"] % 64 == 0, "SCALE": lambda args: args["alpha"] != 1.0})
@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def scale_tuned_inside(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr, EVEN: tl.constexpr, SCALE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if SCALE:
        x = x * alpha
    tl.store(y_ptr + offs, x, mask=mask)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [256, 200])
def test_autotune_over_heuristics(target, n):
    kernel = xblock.jit(scale_tuned_outside)
    assert isinstance(kernel, at.Autotuner) and isinstance(kernel.fn, at.Heuristics)
    x = np.arange(n, dtype=np.float32)
    y = np.zeros_like(x)
    kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n, 3.0, target=target)
    np.testing.assert_allclose(y, 3.0 * x)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_heuristics_over_autotune(target, alpha):
    kernel = xblock.jit(scale_tuned_inside)
    assert isinstance(kernel, at.Heuristics) and isinstance(kernel.fn, at.Autotuner)
    n = 300
    x = np.arange(n, dtype=np.float32)
    y = np.zeros_like(x)
    kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n, alpha, target=target)
    np.testing.assert_allclose(y, alpha * x)


def test_heuristics_values_are_computed_from_the_arguments():
    seen = []

    @xblock.heuristics({"BLOCK": lambda a: seen.append(dict(a)) or 64, "EVEN": lambda a: a["n"] % a["BLOCK"] == 0})
    @triton.jit
    def k(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr, EVEN: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * alpha, mask=offs < n)

    x = np.ones(128, np.float32)
    y = np.zeros_like(x)
    k[(2,)](x, y, alpha=2.0, n=128, target="sim")
    np.testing.assert_array_equal(y, 2 * x)
    assert seen[0]["n"] == 128 and seen[0]["alpha"] == 2.0 and seen[0]["x_ptr"] is x


# ------------------------------------------------------------------ compile(config=...)
MATMUL_SIGNATURE = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
                    "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32",
                    "stride_cm": "i32", "stride_cn": "i32"}


@pytest.mark.parametrize("target", TARGETS)
def test_compile_with_config(target):
    sig = MATMUL_SIGNATURE
    names = get_backend(target).option_names
    by_index = xblock.compile(tiled_matmul, target=target, signature=sig, config=1)  # has maxnreg=128
    assert by_index.metadata["constexprs"]["BLOCK_K"] == "32"
    assert by_index.metadata["options"]["num_warps"] == 4
    assert ("maxnreg" in by_index.metadata["options"]) == ("maxnreg" in names)
    by_config = xblock.compile(xblock.jit(tiled_matmul), target=target, signature=sig, config=MATMUL_CONFIGS[2])
    assert by_config.metadata["constexprs"]["BLOCK_M"] == "32"
    assert by_config.metadata["options"]["num_warps"] == 8
    explicit = xblock.compile(tiled_matmul, target=target, signature=sig, num_warps=2,
                              constexprs={"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 1})
    assert explicit.metadata["constexprs"]["GROUP_M"] == "1"
    xl_config = xblock.compile(tiled_matmul, target=target, signature=sig, num_warps=2,
                               config=xblock.Config({"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 1},
                                                    num_warps=8))
    assert xl_config.metadata["options"]["num_warps"] == 2  # an explicit option wins over the config's


@pytest.mark.parametrize("target", ["ascend", "cuda"])
def test_compile_with_config_on_other_targets(target):
    """Compiling needs no device: a Triton config's num_ctas is dropped on ascend, kept on cuda."""
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "alpha": "fp32"}
    ck = xblock.compile(scale_tuned_outside, target=target, signature=sig, config=1, constexprs={"EVEN": False})
    assert ck.metadata["constexprs"]["BLOCK"] == "64"
    assert ck.metadata["options"]["num_warps"] == 2
    assert ("num_ctas" in ck.metadata["options"]) == ("num_ctas" in get_backend(target).option_names)


def test_warmup_and_rep_are_time_budgets():
    with pytest.warns(DeprecationWarning):
        tuned = triton.autotune([triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 128})], key=["n"],
                                warmup=1, rep=2, restore_value=["x_ptr"])(add_one_in_place)
    kernel = xblock.jit(tuned)
    assert (kernel.num_warmups, kernel.num_reps, kernel.do_bench) == (1, 2, None)
    x = np.zeros(256, np.float32)
    kernel[lambda m: (triton.cdiv(256, m["BLOCK"]),)](x, 256, target="sim")
    np.testing.assert_array_equal(x, np.ones(256, np.float32))
    assert len(kernel.configs_timings) == 2


def test_compile_without_the_config_values_says_how():
    with pytest.raises(xblock.CompilationError, match="needs a value in constexprs.*config="):
        xblock.compile(tiled_matmul, target="sim", signature=MATMUL_SIGNATURE)
    with pytest.raises(xblock.CompilationError, match="out of range"):
        xblock.compile(tiled_matmul, target="sim", signature=MATMUL_SIGNATURE, config=9)
    with pytest.raises(xblock.CompilationError, match="different values to: BLOCK_K"):
        xblock.compile(tiled_matmul, target="sim", signature=MATMUL_SIGNATURE, config=0,
                       constexprs={"BLOCK_K": 64})


# ------------------------------------------------------------------ reset_to_zero, restore_value, hooks
@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})],
                 key=["n"], reset_to_zero=["total_ptr"])
@triton.jit
def sum_with_atomics(x_ptr, total_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    part = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    tl.atomic_add(total_ptr, part)


@pytest.mark.parametrize("target", TARGETS)
def test_reset_to_zero_around_benchmark_runs(target):
    kernel = xblock.jit(sum_with_atomics)
    n = 1000
    x = np.arange(n, dtype=np.float32) % 7
    total = np.zeros(1, np.float32)
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)  # noqa: E731
    kernel[grid](x, total, n, target=target)  # benchmarks three configs, several runs each
    np.testing.assert_allclose(total, [x.sum()], rtol=1e-6)
    kernel[grid](x, total, n, target=target)  # as Triton: no reset once the key is tuned
    np.testing.assert_allclose(total, [2 * x.sum()], rtol=1e-6)


@triton.jit
def add_one_in_place(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def test_restore_value_and_user_hooks():
    restored = xblock.jit(triton.autotune([triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"],
                                          restore_value=["x_ptr"])(add_one_in_place))
    x = np.zeros(100, np.float32)
    restored[lambda m: (triton.cdiv(100, m["BLOCK"]),)](x, 100, target="sim")
    np.testing.assert_array_equal(x, np.ones(100, np.float32))  # every benchmark run was undone

    calls = []
    hooked = xblock.autotune(
        [xblock.Config({"BLOCK": 32}, pre_hook=lambda a: calls.append(("config", a["BLOCK"]))),
         xblock.Config({"BLOCK": 64})], key=["n"], reset_to_zero=["x_ptr"],  # replaced by the user's pre_hook
        pre_hook=lambda a, reset_only=False: calls.append(("pre", reset_only)),
        post_hook=lambda a, exception: calls.append(("post", exception)),
        do_bench=lambda fn, quantiles: (fn(), [1.0 if len(calls) < 5 else 2.0, 0, 0])[1])(add_one_in_place)
    x = np.zeros(100, np.float32)
    hooked[(4,)](x, 100, target="sim")
    assert calls[:6] == [("config", 32), ("pre", False), ("post", None), ("pre", False), ("post", None),
                         ("pre", True)]
    assert calls[6:] == [("config", 32)]  # the best config's pre_hook, before the real launch
    assert hooked.best_config.kwargs == {"BLOCK": 32}
    np.testing.assert_array_equal(x, 3 * np.ones(100, np.float32))  # two timed runs and the launch


def test_reset_and_restore_of_torch_like_tensors():
    class Tensor:  # what the hooks use of a torch tensor
        def __init__(self, v):
            self.v = v

        def zero_(self):
            self.v = 0

        def clone(self):
            return Tensor(self.v)

        def copy_(self, other):
            self.v = other.v

    t = Tensor(5)
    at._zero(t, "t")
    assert t.v == 0
    saved = at._save(Tensor(3), "t")
    at._restore(t, saved)
    assert t.v == 3
    with pytest.raises(TypeError, match="reset_to_zero: argument 'z'"):
        at._zero([1, 2], "z")


# ------------------------------------------------------------------ launch options and unsupported features
@pytest.mark.parametrize("target", TARGETS)
def test_launch_options_a_target_lacks_are_ignored(target):
    kernel = xblock.autotune([triton.Config({"BLOCK": 64}, num_warps=8, num_stages=5, num_ctas=2, maxnreg=64)],
                             key=["n"])(add_one_in_place)
    x = np.zeros(64, np.float32)
    kernel[(1,)](x, 64, target=target)
    np.testing.assert_array_equal(x, np.ones(64, np.float32))


def test_unsupported_features_are_errors():
    with pytest.raises(TypeError, match="ir_override"):
        xblock.autotune([triton.Config({"BLOCK": 64}, ir_override="k.ttgir")], key=["n"])(add_one_in_place)
    with pytest.raises(TypeError, match="use_cuda_graph"), pytest.warns(DeprecationWarning):
        xblock.jit(triton.autotune([triton.Config({"BLOCK": 64})], key=["n"], use_cuda_graph=True)(add_one_in_place))
    with pytest.raises(TypeError, match="prune_configs_by key.*early_prune"):
        xblock.autotune([xblock.Config({"BLOCK": 64})], key=["n"],
                        prune_configs_by={"early_prune": lambda c, a: c})(add_one_in_place)
    with pytest.raises(TypeError, match="no target has: blocks_per_core"):
        xblock.autotune([xblock.Config({"BLOCK": 64}, options={"blocks_per_core": 2})], key=["n"])(add_one_in_place)
    x = np.zeros(8, np.float32)
    bad_key = xblock.autotune([xblock.Config({"BLOCK": 64})], key=["size"])(add_one_in_place)
    with pytest.raises(TypeError, match="autotune key names 'size'"):
        bad_key[(1,)](x, 8, target="sim")
    clash = xblock.jit(triton.autotune([triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 8})],
                                       key=["n"])(add_one_in_place))
    with pytest.raises(ValueError, match="Conflicting meta-parameters: BLOCK"):
        clash[(1,)](x, 8, BLOCK=8, target="sim")
    pruned_away = xblock.autotune([xblock.Config({"BLOCK": 8}), xblock.Config({"BLOCK": 16})], key=["n"],
                                  prune_configs_by={"early_config_prune": lambda c, a, **k: []})(add_one_in_place)
    with pytest.raises(RuntimeError, match="after pruning"):
        pruned_away[(1,)](x, 8, target="sim")
