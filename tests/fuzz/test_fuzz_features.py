"""A bounded run of the fuzzer's newer features (tools/fuzz_ext.py) on sim and cpu.

The kernels are the first ones of seed SEED that, together, carry every feature family of REQUIRED:
join/split/interleave/cat/gather/histogram/flip, permutes of 2-D and 3-D blocks, sort and topk,
block pointers and tensor descriptors (loads and stores), dot precisions and out_dtype, 2-D and
batched dots, and the lazy control flow of tools/fuzz_gen.py `control_extras` (conditional
expressions whose sides load, loops counting down, an early return under a constexpr `if`), and loops
advancing block and scalar pointers (`pointer_loop_extra`), and blocks too large for one pass through
the Ascend unified buffer, 1-D and 2-D (`ub_overflow_extra`). Each
runs on sim (checked against the fuzzer's own numpy model) and cpu (checked against the model, or
the simulator for float arithmetic) in a worker process with a timeout; any
failure class, or a kernel every target rejects (a generator bug), fails the test. ascend (whose
CPU model compiles C++ for every kernel) and cuda are left to campaigns (docs/RELIABILITY.md).

The other tests check that the features are drawn after everything else (a kernel without them is
the one the generator gave before they existed) and the model of the dot precisions.
"""

import os
import sys

import numpy as np
import pytest

triton = pytest.importorskip("triton")  # the generated kernels are @triton.jit kernels
tl = triton.language

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import fuzz  # noqa: E402
import fuzz_ext  # noqa: E402
import fuzz_gen  # noqa: E402

import xblock  # noqa: E402

SEED = 13
SCAN = 200            # kernels looked at to cover REQUIRED
TARGETS = ["sim", "cpu"]
TIMEOUT = 30.0        # seconds per kernel and target: a hang
REQUIRED = ("shape:join", "shape:split", "shape:interleave", "shape:cat", "shape:gather", "shape:histogram",
            "shape:flip", "shape:permute:2d", "shape:permute:3d", "sort:", "topk:", "blockptr:load",
            "blockptr:store", "tdesc:load", "tdesc:store", "dot-precision:", "dot2:", "dot3:",
            "ext:ifexp:", "ext:countdown:", "ext:early-return:on", "ext:early-return:off",
            "ext:ptrloop:block", "ext:ptrloop:scalar", "ext:ubsplit:map", "ext:ubsplit:dotloop")


def _covered(k):
    return {r for r in REQUIRED if any(f.startswith(r) for f in k.features)}


def select(seed=SEED, scan=SCAN):
    """(kernel indices, features left uncovered): each index adds a feature family not seen before."""
    got, picked = set(), []
    for i in range(scan):
        new = _covered(fuzz_gen.generate(seed, i)) - got
        if new:
            got |= new
            picked.append(i)
        if len(got) == len(REQUIRED):
            break
    return picked, sorted(set(REQUIRED) - got)


PICKED, MISSING = select()


def test_selection_covers_every_feature():
    assert not MISSING, f"seed {SEED}, kernels 0-{SCAN - 1}, generate none of {MISSING}"


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    r = fuzz.Runner(str(tmp_path_factory.mktemp("fuzz_features")), timeout=TIMEOUT)
    yield r
    r.close()


@pytest.mark.parametrize("index", PICKED, ids=[f"kernel{i}" for i in PICKED])
def test_new_features(runner, index):
    k = fuzz_gen.generate(SEED, index)
    results, prep = runner.run(k, TARGETS)
    bad = [f"{t}: {o}: {fuzz.short_detail(d)[:300]}" for t, (o, d, _) in results.items()
           if o not in ("ok", "not-supported")]
    assert not bad, (f"seed {SEED} kernel {index} ({prep['path']}; features {sorted(_covered(k))}):\n"
                     + "\n".join(bad) + f"\nreplay: python tools/fuzz.py --seed {SEED} --first {index} --count 1")


def _body(k):
    lines = fuzz_gen.render(k)[0].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("def fuzz_kernel"))
    return [line for line in lines[start + 1:] if line != "    ks = tl.arange(0, BK)"]


@pytest.mark.parametrize("seed", [1, 6])
def test_new_features_are_drawn_last(seed):
    """A kernel with the new features is the kernel without them plus statements at the end: the same
    lines before them, the same grid, the same input data and the same expected outputs."""
    for i in range(40):
        k, old = fuzz_gen.generate(seed, i), fuzz_gen.generate(seed, i, extensions=False)
        body, old_body = _body(k), _body(old)
        assert (body == old_body) != fuzz_ext.is_extended(k), i
        assert body[:len(old_body)] == old_body and fuzz_gen.grid_of(k) == fuzz_gen.grid_of(old), i
        inputs, old_inputs = fuzz_gen.make_inputs(k), fuzz_gen.make_inputs(old)
        assert all(inputs[name].tobytes() == a.tobytes() for name, a in old_inputs.items()), i
        want = fuzz_gen.Model(k, inputs).run()
        for name, (a, *_) in fuzz_gen.Model(old, old_inputs).run().items():
            assert want[name][0].tobytes() == a.tobytes(), (i, name)


def test_dot_precision_model():
    """x @ I shows each operand's rounding: tf32 truncates to 10 mantissa bits, tf32x3 and bf16x6 keep
    these values whole, bf16x3 keeps 16 of their bits."""
    x = np.array([[1 + 2**-11 + 2**-20, -3.0 - 2**-9 - 2**-22]], np.float32)
    eye = np.eye(2, dtype=np.float32)
    got = {p: fuzz_ext.dot_f64(x, eye, p) for p in ("ieee", "tf32", "tf32x3", "bf16x3", "bf16x6")}
    np.testing.assert_array_equal(got["tf32"], [[1.0, -3.0 - 2**-9]])
    for p in ("ieee", "tf32x3", "bf16x6"):
        np.testing.assert_array_equal(got[p], x.astype(np.float64))
    np.testing.assert_array_equal(got["bf16x3"], [[1 + 2**-11, -3.0 - 2**-9]])


# ------------------------------------------------------------------------------ found by the generator
@triton.jit
def sort_method(x_ptr, out_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(out_ptr + tl.arange(0, N), x.sort(descending=True))


def test_sort_as_a_tensor_method():
    x = np.array([3, 1, 2, 5, 4, 0, 7, 6], np.float32)
    out = np.zeros_like(x)
    xblock.jit(sort_method)[(1,)](x, out, N=8, target="sim")
    np.testing.assert_array_equal(out, np.sort(x)[::-1])
