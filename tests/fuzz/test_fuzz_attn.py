"""The fuzzer's attention form (`paths:attn`, tools/fuzz_attn.py through tools/fuzz_paths.py), for ascend's row split.

Kernels of seed ATTN_SEED (the first that draws the form): generation is deterministic, the source compiles and
runs on sim within the float64 model's tolerance, a drawn kernel takes the row split on ascend
(`metadata["row_split"]["taken"]`, as tests/ascend/cube/test_row_split.py checks it) and the refusals are
reported with their reason (`fuzz_paths.ascend_paths`). The seeds before the form draw the kernels they drew
before it existed: hashes of their sources, taken on the generator without the form.
"""

import hashlib
import os
import sys

import numpy as np
import pytest

pytest.importorskip("triton")  # the generated kernels are @triton.jit kernels

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import fuzz  # noqa: E402
import fuzz_gen  # noqa: E402
import fuzz_paths  # noqa: E402

import xblock  # noqa: E402

SEED = fuzz_paths.ATTN_SEED
TAKEN = 29     # BLOCK_M 32, BLOCK_N 32, head dim 32, 7 queries, 127 keys: the row split taken
SIXTEEN = 6    # BLOCK_M 16: halves of 8 rows, refused
# sha256 (first 16 hex digits) of the sources and data seeds of kernels 0..11, per (seed, family), taken
# before the attention form was added
EARLIER = {(78, "paths"): "581c7456b18cb545", (78, "mix"): "b232c38c0748c48e",
           (80, "paths"): "2d37c30bdb2dbacf", (80, "mix"): "0be6b34cc64cc0d4",
           (81, "paths"): "2b9af11e05dfdb1b", (81, "mix"): "ff258d42090b0bdf"}


def _digest(seed, family):
    h = hashlib.sha256()
    for i in range(12):
        k = fuzz_gen.generate(seed, i, family=family)
        h.update(fuzz_gen.render(k)[0].encode() + str(k.seed).encode())
    return h.hexdigest()[:16]


@pytest.mark.parametrize("seed,family", list(EARLIER), ids=[f"{s}-{f}" for s, f in EARLIER])
def test_earlier_seeds_draw_the_same_kernels(seed, family):
    assert _digest(seed, family) == EARLIER[(seed, family)]


def test_the_form_is_drawn_from_its_seed_on():
    before = [fuzz_gen.generate(s, i, family="paths") for s in range(fuzz_paths.FIRST_SEED, SEED) for i in range(20)]
    assert not any("paths:attn" in k.features for k in before)
    attn = [i for i in range(30) if "paths:attn" in fuzz_gen.generate(SEED, i, family="paths").features]
    assert {0, SIXTEEN, TAKEN} <= set(attn) and len(attn) >= 6


def test_generation_is_deterministic():
    for i in (0, SIXTEEN, TAKEN):
        a, b = fuzz_gen.generate(SEED, i, family="paths"), fuzz_gen.generate(SEED, i, family="paths")
        assert a.mode == "attn" and "paths:attn" in a.features
        assert fuzz_gen.render(a)[0] == fuzz_gen.render(b)[0] and a.sizes == b.sizes
        ia, ib = fuzz_gen.make_inputs(a), fuzz_gen.make_inputs(b)
        assert all(np.array_equal(ia[n], ib[n]) for n in ia)


def _compiled(k, tmp_path, target):
    """(outputs after a launch on `target`, the compiled kernel)."""
    src, name, _ = fuzz_gen.render(k)
    path = tmp_path / f"{name}_{target}.py"
    path.write_text(src)
    kern = xblock.jit(fuzz._import_kernel(str(path), name))
    inputs = fuzz_gen.make_inputs(k)
    args, meta, names = fuzz_gen.launch_args(k, inputs)
    grid = fuzz_gen.grid_of(k)
    kern[grid](*args, target=target, **meta)
    return dict(zip(names, args)), kern.warmup(*args, grid=grid, target=target, **meta)


def _check(k, got):
    for name, (exp, defined, written, exact, val) in fuzz_gen.Model(k, fuzz_gen.make_inputs(k)).run().items():
        od = fuzz_gen.dtype_name(exp.dtype)
        assert fuzz.compare_output(name, got[name], exp, defined & written, exact, val, od, scale=2.0) is None


def test_source_compiles_and_matches_the_model_on_sim(tmp_path):
    k = fuzz_gen.generate(SEED, TAKEN, family="paths")
    src, name, _ = fuzz_gen.render(k)
    compile(src, name, "exec")
    assert src.count("tl.dot(") == 2 and "tl.max(qk, 1)" in src
    got, _ = _compiled(k, tmp_path, "sim")
    _check(k, got)


def test_a_drawn_kernel_takes_the_row_split_on_ascend(tmp_path):
    k = fuzz_gen.generate(SEED, TAKEN, family="paths")
    got, compiled = _compiled(k, tmp_path, "ascend")
    _check(k, got)
    md = compiled.metadata
    assert md["row_split"]["taken"] and md["kernel_type"] == "KERNEL_TYPE_MIX_AIC_1_2"
    assert fuzz_paths.ascend_paths(compiled, fuzz_gen.grid_of(k))[:1] == ["cube:row-split"]


def test_a_reduction_over_the_rows_is_refused(tmp_path):
    k = fuzz_gen.generate(SEED, TAKEN, family="paths").clone()
    k.stmts[0].value.a["colsum"] = True  # each program also stores its output's column sums
    got, compiled = _compiled(k, tmp_path, "ascend")
    _check(k, got)
    why = compiled.metadata["row_split"]
    assert why["taken"] is False and "carries a value" in why["why"]
    assert fuzz_paths.ascend_paths(compiled, fuzz_gen.grid_of(k)) == [f"cube:row-split-refused:{why['why']}"]


def test_blocks_of_16_rows_are_drawn_and_their_refusal_named():
    k = fuzz_gen.generate(SEED, SIXTEEN, family="paths")
    assert k.sizes["BM"] == 16

    class _Compiled:
        metadata = {"row_split": {"taken": False, "why": "8 rows a vector core are not whole 16-row fractals"}}
        asm = {}
    assert fuzz_paths.ascend_paths(_Compiled(), [4]) == ["cube:row-split-refused:8 rows a vector core are not "
                                                         "whole 16-row fractals"]
    _Compiled.metadata = {"row_split": {"taken": False, "why": "this load and the store at line 42 (to the same"}}
    assert fuzz_paths.ascend_paths(_Compiled(), [4]) == ["cube:row-split-refused:this load and the store at line N "
                                                         "(to the same"]


def test_shrink_candidates_are_valid_kernels():
    k = fuzz_gen.generate(SEED, 0, family="paths")
    n = 0
    for c in fuzz.shrink_candidates(k):
        fuzz_gen.render(c)
        fuzz_gen.Model(c, fuzz_gen.make_inputs(c)).run()
        n += 1
    assert n >= 8
