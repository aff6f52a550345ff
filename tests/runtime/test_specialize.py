"""do_not_specialize, do_not_specialize_on_alignment and buckets: what is compiled, and that every
result stays right."""

import math

import numpy as np
import pytest

import xblock
from tests.runtime import kernels
from tests.runtime.conftest import misses
from xblock.errors import LaunchError

TARGETS = ["cpu", "sim"]


def launch(k, n, target, offset=0, block=32):
    x = np.arange(n + offset, dtype=np.float32)[offset:]
    out = np.zeros(n + offset, np.float32)[offset:]
    ck = k[(xblock.cdiv(n, block),)](x, out, n, BLOCK=block, target=target)
    np.testing.assert_array_equal(out, x + 1)
    return ck


@pytest.mark.parametrize("spec", [("n",), (2,)])
def test_do_not_specialize_compiles_one_kernel_for_every_value(spec):
    k = xblock.jit(kernels._add_one, do_not_specialize=spec)
    for n in (1, 16, 17, 64):
        launch(k, n, "sim")
    assert misses("_add_one") == 1
    plain = xblock.jit(kernels._add_one)
    for n in (1, 16, 17, 64):
        launch(plain, n, "sim")
    assert misses("_add_one") == 3  # and n == 1, n % 16 == 0 (n = 17 is the unspecialized kernel)


def test_do_not_specialize_on_alignment_ignores_pointer_alignment_and_divisibility():
    k = xblock.jit(kernels._add_one, do_not_specialize_on_alignment=["x_ptr", "out_ptr", "n"])
    for offset, n in ((0, 64), (1, 64), (3, 48), (0, 47)):
        launch(k, n, "sim", offset)
    assert misses("_add_one") == 1
    launch(k, 1, "sim")  # `== 1` is still specialized, as in Triton
    assert misses("_add_one") == 2


def test_do_not_specialize_names_a_parameter():
    k = xblock.jit(kernels._add_one, do_not_specialize=["m"])
    with pytest.raises(LaunchError, match="do_not_specialize names 'm'"):
        launch(k, 4, "sim")
    with pytest.raises(TypeError, match="pow2"):
        xblock.jit(kernels._add_one, buckets={"n": "pow3"})
    k = xblock.jit(kernels._add_one, buckets={"BLOCK": "pow2"})
    with pytest.raises(LaunchError, match="non-constexpr"):
        launch(k, 4, "sim")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rule", ["pow2", [64, 256, 1024, 4096]])
def test_bucketed_sizes_compile_few_kernels_and_every_result_is_right(target, rule):
    k = xblock.jit(kernels._add_one, buckets={"n": rule})
    sizes = sorted({int(s) for s in np.random.default_rng(0).integers(33, 4097, 40)} | {33, 4096, 1024})
    for n in sizes:
        launch(k, n, target, block=64)
    assert misses("_add_one") <= math.log2(max(sizes) - min(sizes))
    assert {k.key_value("n", n) for n in sizes} <= {64, 128, 256, 512, 1024, 2048, 4096}


def test_a_bucketed_size_keys_the_autotuner_by_its_bucket():
    tuned = xblock.autotune([xblock.Config({"BLOCK": b}) for b in (16, 32)], key=["n"],
                            do_bench=lambda call, quantiles=None: call() or 1.0)(
        xblock.jit(kernels._add_one, buckets={"n": "pow2"}))
    for n in (65, 100, 128, 129):
        x = np.arange(n, dtype=np.float32)
        out = np.zeros_like(x)
        tuned[kernels.grid](x, out, n, target="sim")
        np.testing.assert_array_equal(out, x + 1)
    assert sorted(key[1][0] for key in tuned.cache) == [128, 256]  # (target, (bucket, dtypes...))
