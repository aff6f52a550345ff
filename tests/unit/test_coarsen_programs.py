"""xb-coarsen-programs (xblock/passes/coarsen_programs.py): R programs of axis 0 per program instance.

The pass is checked on the simulator (the coarsened xb module run by the sim's executor must give
numpy's answer at boundary row counts), on what it refuses, and on ascend, which uses it.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.passes import coarsen_programs as cp

mlir = pytest.importorskip("mlir")
from mlir import ir  # noqa: E402

from xblock.dialects import xb  # noqa: E402


def _coarse_sim(kernel, grid, args, meta, rows, per=None):
    """Run `kernel` coarsened by `rows` on the sim executor, each instance computing `per` <= rows
    programs (default: rows); returns the arrays it wrote."""
    from xblock.sim import backend as sb
    from xblock.sim.convert import convert
    from xblock.sim.program import bind_rules
    from xblock.sim.rules import LAZY_RULES, SIM_RULES

    ck = kernel.warmup(*args, target="sim", **meta)
    with xb.context():
        m = ir.Module.parse(ck.asm["xb"])
        cp.run(m, rows)
        m.operation.verify()
        program = convert(m)
    bind_rules(program.body, SIM_RULES, LAZY_RULES)
    arrays, names, vals = [], [], []
    for n, s, v in zip(ck.metadata["arg_names"], ck.metadata["arg_types"], args):
        if s.startswith("*"):
            vals.append(None)
            arrays.append(v)
            names.append(n)
        else:
            vals.append(np.array([v], dtype=sb._SCALAR[s]))
    g = tuple(grid) + (1,) * (3 - len(grid))
    per = rows if per is None else per
    vals += [np.array([g[0]], np.int32), np.array([per], np.int32)]
    memory = sb._run(program, (-(-g[0] // per), g[1], g[2]), arrays, names, vals, serial=False)
    for i in memory.written:
        np.copyto(arrays[i], memory.arrays[i])
    return args


@pytest.mark.parametrize("name,size,dtype", [
    ("softmax", (1, 7), "float32"), ("softmax", (5, 100), "float32"), ("softmax", (9, 129), "float16"),
    ("rmsnorm", (3, 127), "float16"), ("rmsnorm", (8, 64), "float16"),
    ("layernorm", (5, 1025), "float32"), ("argmax", (7, 100), "float32"), ("cumsum", (5, 33), "float32"),
    ("gelu", 1000, "float32"), ("transpose", (30, 20), "float32"),
])
@pytest.mark.parametrize("rows,per", [(2, 2), (4, 4), (4, 3), (4, 1)])
def test_coarsened_examples_match_numpy_on_the_sim(name, size, dtype, rows, per):
    """R rows per instance tile, of which `per` are the instance's (the others masked off)."""
    case = importlib.import_module("examples." + name).case(size, dtype)
    got = _coarse_sim(case.kernel, case.grid, case.copy_args(), case.meta, rows, per)
    for out, i in case.outputs.items():
        np.testing.assert_allclose(np.asarray(got[i], np.float64), np.asarray(case.expected[out], np.float64),
                                   atol=case.atol, rtol=case.rtol, err_msg=out)


@xblock.jit
def per_row_scalars(x_ptr, mean_ptr, count_ptr, n, BLOCK: xl.constexpr):
    row = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0)
    acc = xl.zeros([BLOCK], dtype=xl.float32)
    for k in range(0, 3):  # a loop carrying a per-row block
        acc += x * (k + 1)
    xl.store(mean_ptr + row, xl.sum(acc, axis=0) / n)
    xl.store(count_ptr + row, xl.num_programs(0) + row * 0)


@pytest.mark.parametrize("n_rows", [1, 3, 4, 5])
def test_loops_scalar_stores_and_num_programs(n_rows):
    x = np.arange(n_rows * 6, dtype=np.float32).reshape(n_rows, 6)
    mean, count = np.zeros(n_rows, np.float32), np.zeros(n_rows, np.int32)
    _coarse_sim(per_row_scalars, (n_rows,), (x, mean, count, 6), dict(BLOCK=8), 4)
    np.testing.assert_allclose(mean, 6 * x.mean(axis=1), rtol=1e-6)
    np.testing.assert_array_equal(count, np.full(n_rows, n_rows))  # the user's grid, not the instances


@xblock.jit
def per_row_flags(x_ptr, f_ptr, out_ptr, n, BLOCK: xl.constexpr):
    row = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    if xl.load(f_ptr + row):  # a per-row scalar condition choosing between blocks (a select)
        v = xl.full([BLOCK], 2, xl.int32)
    else:
        v = xl.full([BLOCK], 7, xl.int32)
    acc = xl.zeros([BLOCK], xl.int32) + row  # a per-row scalar spread, carried by a loop
    for k in range(0, 3):
        acc += v
    x = xl.load(x_ptr + row * n + cols, mask=cols < n, other=0)
    xl.store(out_ptr + row * n + cols, acc + x, mask=cols < n)


@pytest.mark.parametrize("n_rows", [1, 5])
def test_a_per_row_condition_and_a_per_row_loop_init(n_rows):
    """Fuzz seed 50, kernel 469 (internal error): the load the pass rebuilt with the row mask was no
    longer known as depending on the program id, so the select it fed kept a per-row condition of
    the wrong shape."""
    x = np.arange(n_rows * 6, dtype=np.int32).reshape(n_rows, 6)
    f = np.arange(n_rows) % 2 == 0
    out = np.zeros_like(x)
    _coarse_sim(per_row_flags, (n_rows,), (x, f, out, 6), dict(BLOCK=8), 4, 3)
    want = x + np.arange(n_rows)[:, None] + 3 * np.where(f, 2, 7)[:, None]
    np.testing.assert_array_equal(out, want)


@xblock.jit
def loop_to_the_row(x_ptr, out_ptr):
    row = xl.program_id(0)
    acc = 0.0
    for k in range(0, row):
        acc += xl.load(x_ptr + k)
    xl.store(out_ptr + row, acc)


@xblock.jit
def branch_on_the_row(x_ptr, out_ptr):
    row = xl.program_id(0)
    if row == 0:
        xl.store(out_ptr + row, xl.load(x_ptr))


@xblock.jit
def count_programs(counter_ptr, x_ptr):
    xl.atomic_add(counter_ptr, xl.load(x_ptr + xl.program_id(0)))


@xblock.jit
def race_for_one_address(x_ptr, out_ptr):
    xl.store(out_ptr, xl.load(x_ptr + xl.program_id(0)))


@xblock.jit
def assert_per_row(x_ptr, out_ptr):
    v = xl.load(x_ptr + xl.program_id(0))
    xl.store(out_ptr + xl.program_id(0), v)
    xl.device_assert(v >= 0, "negative")


@xblock.jit
def no_program_id(x_ptr, out_ptr):
    xl.store(out_ptr, xl.load(x_ptr))


@pytest.mark.parametrize("kernel,why", [
    (loop_to_the_row, "a loop whose bounds depend on program_id(0)"),
    (branch_on_the_row, "an if whose condition depends on program_id(0)"),
    (count_programs, "an atomic at an address that does not depend on program_id(0)"),
    (race_for_one_address, "programs race for it"),
    (assert_per_row, "tl.device_assert"),
    (no_program_id, "does not use program_id(0)"),
])
def test_what_is_refused(kernel, why):
    args = (np.zeros(4, np.float32), np.zeros(4, np.float32))
    ck = kernel.warmup(*args, target="sim")
    with xb.context():
        m = ir.Module.parse(ck.asm["xb"])
        before = str(m)
        with pytest.raises(cp.Refused, match=why.replace("(", r"\(").replace(")", r"\)")):
            cp.row_bytes(m)
        assert str(m) == before  # the analysis changes nothing


# ------------------------------------------------------------------------------------------- ascend
ascend = pytest.mark.skipif(not __import__("shutil").which("g++"), reason="the AscendC model needs g++")


@ascend
@pytest.mark.parametrize("name,size,dtype", [
    ("softmax", (1, 1000), "float32"), ("softmax", (43, 781), "float32"), ("softmax", (161, 1024), "float16"),
    ("rmsnorm", (5, 128), "float16"), ("rmsnorm", (161, 1000), "float16"),
])
def test_ascend_coarsens_row_kernels(name, size, dtype):
    """Row counts: one row, fewer than a core's share, and more than 40 cores x R (the last instance
    has fewer valid rows than R)."""
    case = importlib.import_module("examples." + name).case(size, dtype)
    args = case.copy_args()
    ck = case.kernel.warmup(*args, target="ascend", **case.meta)
    coarse = ck.metadata.get("coarsen")
    assert coarse and coarse["rows"] > 1 and coarse["arg"] == cp.ARG
    case.kernel[case.grid](*args, target="ascend", **case.meta)
    for out, i in case.outputs.items():
        np.testing.assert_allclose(np.asarray(args[i], np.float64), np.asarray(case.expected[out], np.float64),
                                   atol=case.atol, rtol=case.rtol, err_msg=out)


@ascend
def test_ascend_does_not_coarsen_a_weight_row_read_in_a_loop():
    """layernorm's w and b, read chunk by chunk in a loop and kept per core: not coarsened (the
    planner's coarsen_rows), still exact."""
    case = importlib.import_module("examples.layernorm").case((9, 1025), "float32")
    args = case.copy_args()
    ck = case.kernel.warmup(*args, target="ascend", **case.meta)
    assert not ck.metadata.get("coarsen")
    case.kernel[case.grid](*args, target="ascend", **case.meta)
    for out, i in case.outputs.items():
        np.testing.assert_allclose(np.asarray(args[i], np.float64), np.asarray(case.expected[out], np.float64),
                                   atol=case.atol, rtol=case.rtol, err_msg=out)


@ascend
def test_ascend_coarsened_rows_move_in_one_copy():
    """softmax 4096 x 1024 fp32: R rows per DataCopyPad (>= 8 KB per copy), GM bytes still the minimum."""
    case = importlib.import_module("examples.softmax").case((256, 1024), "float32")
    on = xblock.profile(case.kernel, case.grid, *case.copy_args(), **case.meta)
    off = xblock.profile(case.kernel, case.grid, *case.copy_args(), coarsen=False, **case.meta)
    assert off.counters["bytes_per_datacopy"] == 4096
    assert on.counters["bytes_per_datacopy"] >= 8192
    assert on.counters["gm_read_bytes"] == off.counters["gm_read_bytes"]
    assert on.programs < off.programs


@ascend
def test_ascend_keeps_the_kernel_as_written_when_coarsening_would_gather():
    """add's offsets `pid * BLOCK + arange` coarsened are R x BLOCK with a flat mask: a gather on
    ascend, worse than one contiguous row per program; the kernel is lowered as written."""
    case = importlib.import_module("examples.add").case(1000, "float32")
    ck = case.kernel.warmup(*case.copy_args(), target="ascend", **case.meta)
    assert "coarsen" not in ck.metadata


@ascend
def test_ascend_coarsen_option():
    case = importlib.import_module("examples.softmax").case((5, 100), "float32")
    ck = case.kernel.warmup(*case.copy_args(), target="ascend", coarsen=False, **case.meta)
    assert "coarsen" not in ck.metadata
    with pytest.raises(xblock.errors.XBlockError, match="coarsen must be True or False"):
        case.kernel.warmup(*case.copy_args(), target="ascend", coarsen=2, **case.meta)


@xblock.jit
def column_sums_by_atomics(x_ptr, c_ptr, N: xl.constexpr, K: xl.constexpr):
    # GemLite's gemv: an unmasked atomic_add of a [1, N] block per program of a 2-D grid (split over K)
    offs_n = xl.program_id(0) * N + xl.arange(0, N)
    offs_k = xl.program_id(1) * K + xl.arange(0, K)
    x = xl.load(x_ptr + offs_k[:, None] * 64 + offs_n[None, :])
    xl.atomic_add(c_ptr + offs_n[None, :], xl.sum(x, axis=0, keep_dims=True))


def test_an_unmasked_atomic_of_a_coarsened_program_takes_the_valid_mask():
    # (the pass rebuilt an unmasked atomic with its attributes read as named attributes: an internal error)
    x = (np.arange(64 * 64) % 7).astype(np.float32).reshape(64, 64)
    c = np.zeros(64, np.float32)
    column_sums_by_atomics[(4, 4)](x, c, N=16, K=16, target="ascend")
    np.testing.assert_array_equal(c, x.sum(0))
