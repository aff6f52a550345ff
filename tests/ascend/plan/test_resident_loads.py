"""Resident loads on ascend (backends/ascend/plan/resident.py): a load every program makes alike (a weight,
a bias) is copied once per core before the grid loop and stays in UB; the counters show it read once
per core; numerics at boundary shapes; and the loads that must stay in the loop do."""

from __future__ import annotations

import numpy as np
import pytest

import xblock
import xblock.language as xl
from examples import layernorm, rmsnorm

pytestmark = pytest.mark.filterwarnings("ignore")

GRID_LOOP = "for (int64_t pid = GetBlockIdx();"


@xblock.jit
def bias_rows_kernel(x_ptr, b_ptr, y_ptr, n_rows, n_cols, stride, R: xl.constexpr, BLOCK: xl.constexpr):
    rows = xl.program_id(0) * R + xl.arange(0, R)
    cols = xl.arange(0, BLOCK)
    m = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = xl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=m, other=0.0)
    b = xl.load(b_ptr + cols, mask=cols < n_cols, other=0.0)
    xl.store(y_ptr + rows[:, None] * stride + cols[None, :], x + b[None, :], mask=m)


@xblock.jit
def table_kernel(x_ptr, p_ptr, y_ptr, n_cols, P: xl.constexpr, BLOCK: xl.constexpr):
    """y[pid] = x[pid] + p (a [P, BLOCK] table the same for every program: a multi-row resident copy)."""
    pid = xl.program_id(0)
    r = xl.arange(0, P)
    cols = xl.arange(0, BLOCK)
    m = (r[:, None] < P) & (cols[None, :] < n_cols)
    offs = r[:, None] * n_cols + cols[None, :]
    x = xl.load(x_ptr + pid * P * n_cols + offs, mask=m, other=0.0)
    p = xl.load(p_ptr + offs, mask=m, other=0.0)
    xl.store(y_ptr + pid * P * n_cols + offs, x * p, mask=m)


@xblock.jit
def written_weight_kernel(x_ptr, w_ptr, n_cols, BLOCK: xl.constexpr):
    """w is also written (by program 0): its load must stay in the loop."""
    pid = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    m = cols < n_cols
    w = xl.load(w_ptr + cols, mask=m, other=0.0)
    xl.store(x_ptr + pid * n_cols + cols, w, mask=m)
    xl.store(w_ptr + cols, w, mask=m & (pid == 0))


@xblock.jit
def varying_kernel(x_ptr, w_ptr, n_ptr, y_ptr, n_cols, BLOCK: xl.constexpr):
    """A weight whose mask depends on a loaded value, one volatile, and one gathered (stride 2)."""
    pid = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    n = xl.load(n_ptr)
    a = xl.load(w_ptr + cols, mask=cols < n, other=0.0)
    b = xl.load(w_ptr + cols, mask=cols < n_cols, other=0.0, volatile=True)
    c = xl.load(w_ptr + cols * 2, mask=cols * 2 < n_cols, other=0.0)
    x = xl.load(x_ptr + pid * n_cols + cols, mask=cols < n_cols, other=0.0)
    xl.store(y_ptr + pid * n_cols + cols, x + a + b + c, mask=cols < n_cols)


def _before_loop(cpp: str, text: str) -> bool:
    """Whether `text` appears in `cpp`, and only before the grid loop."""
    at = cpp.find(GRID_LOOP)
    return at > 0 and text in cpp[:at] and text not in cpp[at:]


def _rms_args(n_rows, n_cols, seed=0):
    c = rmsnorm.case((n_rows, n_cols), np.float16, seed)
    return c, [a.copy() if isinstance(a, np.ndarray) else a for a in c.args]


@pytest.mark.parametrize("coarsen", [False, None])
@pytest.mark.parametrize("n_rows, n_cols", [(1, 1), (3, 127), (45, 128), (97, 129), (2, 1000)])
def test_rmsnorm_numerics(n_rows, n_cols, coarsen):
    c, args = _rms_args(n_rows, n_cols)
    opts = {} if coarsen is None else {"coarsen": coarsen}
    c.kernel[c.grid](*args, target="ascend", **c.meta, **opts)
    np.testing.assert_allclose(args[2].astype(np.float32), c.expected["out"].astype(np.float32),
                               atol=c.atol, rtol=c.rtol)


@pytest.mark.parametrize("coarsen", [False, None])
def test_rmsnorm_weight_before_the_grid_loop(coarsen):
    c, args = _rms_args(64, 1000)
    opts = {} if coarsen is None else {"coarsen": coarsen}
    ck = c.kernel.warmup(*args, target="ascend", **c.meta, **opts)
    cpp = ck.asm["cpp"]
    assert _before_loop(cpp, "DataCopyPad(wResident, wGm[0]")
    # a core without programs (blockDim > numPrograms) copies nothing
    guard = cpp.find("if ((GetBlockIdx() < numPrograms)) {")
    assert 0 < guard < cpp.find("DataCopyPad(wResident") < cpp.find(GRID_LOOP)
    assert _before_loop(cpp, "SetFlag<HardEvent::MTE2_V>")  # MTE2 -> V once, before the loop
    assert ck.metadata["resident_loads"] == [20]


def test_blocks_balance_the_reads_of_per_core_arguments():
    """options.launch_blocks: sqrt(other bytes / bytes every core reads whole) blocks at most (rounded),
    for vector kernels with resident loads or per-core row caches; the others one per core."""
    from xblock.backends.ascend.options import AIV_ONLY, MIX_AIC_1_2, launch_blocks

    md = {"soc": "910B3", "kernel_type": AIV_ONLY, "per_core_args": ["w_ptr", "b_ptr"]}
    ln = {"x_ptr": 97 * 3001 * 4, "y_ptr": 97 * 3001 * 4, "w_ptr": 3001 * 4, "b_ptr": 3001 * 4,
          "mean_ptr": 97 * 4, "rstd_ptr": 97 * 4}
    assert launch_blocks(md, 97) == 40  # sizes unknown: one block per core
    assert launch_blocks(md, 97, ln) == 10  # layernorm 97 x 3001: sqrt(97.0)
    assert launch_blocks(md, 4096, {"x_ptr": 2 << 24, "w_ptr": 2048, "b_ptr": 2048}) == 40
    assert launch_blocks(md, 3, {"x_ptr": 4, "w_ptr": 400}) == 1
    assert launch_blocks(dict(md, per_core_args=[]), 97, ln) == 40
    assert launch_blocks(dict(md, kernel_type=MIX_AIC_1_2), 97, ln) == 20  # a Cube kernel: one per AI Core


@pytest.mark.parametrize("coarsen", [False, None])
@pytest.mark.parametrize("n_rows", [1, 7, 4096])
def test_rmsnorm_weight_read_once_per_core(n_rows, coarsen):
    n_cols = 1024
    c, args = _rms_args(n_rows, n_cols)
    opts = {} if coarsen is None else {"coarsen": coarsen}
    p = xblock.profile(c.kernel, c.grid, *args, **c.meta, **opts)
    w_bytes = n_cols * 2
    assert p.counters["gm_read_bytes"] == n_rows * n_cols * 2 + p.blocks * w_bytes
    assert p.counters["gm_write_bytes"] == n_rows * n_cols * 2
    if n_rows == 4096:
        total = p.counters["gm_read_bytes"] + p.counters["gm_write_bytes"]
        assert total / p.counters["min_gm_bytes"] < 1.01  # 1.5 with the weight read by every program


@pytest.mark.parametrize("n_rows, n_cols, R, BLOCK", [(1, 5, 4, 8), (7, 130, 4, 256), (45, 64, 1, 64),
                                                      (101, 33, 8, 64), (3, 1, 2, 16)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_bias_rows(n_rows, n_cols, R, BLOCK, dtype):
    rng = np.random.default_rng(1)
    stride = n_cols + 3
    x = rng.standard_normal((n_rows, stride)).astype(dtype)
    b = rng.standard_normal(n_cols).astype(dtype)
    y = np.zeros_like(x)
    grid = (-(-n_rows // R),)
    args = (x, b, y, n_rows, n_cols, stride)
    bias_rows_kernel[grid](*args, target="ascend", R=R, BLOCK=BLOCK)
    np.testing.assert_array_equal(y[:, :n_cols], x[:, :n_cols] + b[None, :])
    assert not y[:, n_cols:].any()
    ck = bias_rows_kernel.warmup(*args, target="ascend", R=R, BLOCK=BLOCK)
    assert _before_loop(ck.asm["cpp"], "(bResident, bGm[0]")
    p = xblock.profile(bias_rows_kernel, grid, *args, R=R, BLOCK=BLOCK, coarsen=False)
    assert p.counters["gm_read_bytes"] == x[:, :n_cols].nbytes + p.blocks * b.nbytes


@pytest.mark.parametrize("n_progs, n_cols", [(1, 16), (3, 100), (50, 37)])
def test_multi_row_table(n_progs, n_cols):
    rng = np.random.default_rng(2)
    P, BLOCK = 4, 128
    x = rng.standard_normal((n_progs, P, n_cols)).astype(np.float32)
    t = rng.standard_normal((P, n_cols)).astype(np.float32)
    y = np.zeros_like(x)
    table_kernel[(n_progs,)](x, t, y, n_cols, target="ascend", P=P, BLOCK=BLOCK)
    np.testing.assert_array_equal(y, x * t[None])
    ck = table_kernel.warmup(x, t, y, n_cols, target="ascend", P=P, BLOCK=BLOCK)
    assert _before_loop(ck.asm["cpp"], "(pResident, pGm[0]")


def test_written_argument_stays_in_the_loop():
    n, n_cols = 5, 40
    w = np.arange(n_cols, dtype=np.float32)
    x = np.zeros((n, n_cols), np.float32)
    written_weight_kernel[(n,)](x, w, n_cols, target="ascend", BLOCK=64)
    np.testing.assert_array_equal(x, np.broadcast_to(np.arange(n_cols, dtype=np.float32), (n, n_cols)))
    ck = written_weight_kernel.warmup(x, w, n_cols, target="ascend", BLOCK=64)
    assert "resident_loads" not in ck.metadata and "Resident" not in ck.asm["cpp"]


def test_loads_that_vary_stay_in_the_loop():
    rng = np.random.default_rng(3)
    n, n_cols, BLOCK = 3, 50, 64
    w = rng.standard_normal(2 * BLOCK).astype(np.float32)
    x = rng.standard_normal((n, n_cols)).astype(np.float32)
    lim = np.array([30], np.int32)
    y = np.zeros_like(x)
    varying_kernel[(n,)](x, w, lim, y, n_cols, target="ascend", BLOCK=BLOCK)
    cols = np.arange(n_cols)
    a = np.where(cols < 30, w[:n_cols], 0)
    c = np.where(cols * 2 < n_cols, w[np.minimum(cols * 2, 2 * BLOCK - 1)], 0)
    np.testing.assert_allclose(y, x + a + w[:n_cols] + c, rtol=1e-6)
    ck = varying_kernel.warmup(x, w, lim, y, n_cols, target="ascend", BLOCK=BLOCK)
    assert "resident_loads" not in ck.metadata


def test_loads_inside_loops_stay():
    c = layernorm.case((3, 300), np.float32)
    ck = c.kernel.warmup(*c.copy_args(), target="ascend", **c.meta)
    assert "resident_loads" not in ck.metadata
    args = c.copy_args()
    c.kernel[c.grid](*args, target="ascend", **c.meta)
    for name, i in c.outputs.items():
        np.testing.assert_allclose(args[i], c.expected[name], atol=c.atol, rtol=c.rtol)


@xblock.jit
def late_weight_kernel(x_ptr, w_ptr, y_ptr, BLOCK: xl.constexpr):
    """x dies before w is loaded: in the loop both share one input queue; resident, w needs UB of its own."""
    pid = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    s = xl.sum(xl.load(x_ptr + pid * BLOCK + cols), axis=0)
    w = xl.load(w_ptr + cols)
    xl.store(y_ptr + pid * BLOCK + cols, w * s)


@xblock.jit
def late_weights_kernel(x_ptr, v_ptr, w_ptr, y_ptr, BLOCK: xl.constexpr):
    """As late_weight_kernel with two weights, one after the other: the three loads share one queue."""
    pid = xl.program_id(0)
    cols = xl.arange(0, BLOCK)
    s = xl.sum(xl.load(x_ptr + pid * BLOCK + cols), axis=0)
    a = xl.sum(xl.load(v_ptr + cols), axis=0) * s
    w = xl.load(w_ptr + cols)
    xl.store(y_ptr + pid * BLOCK + cols, w * a)


def _late(block, weights, rng):
    n = 3
    x = rng.standard_normal((n, block)).astype(np.float32)
    ws = [rng.standard_normal(block).astype(np.float32) for _ in range(weights)]
    return x, ws, np.zeros_like(x)


@pytest.mark.parametrize("block, weights, hoisted, buffers", [
    (1 << 13, 1, True, 2),  # fits beside the double-buffered queues
    (12288, 1, True, 1),  # single-buffered with or without it: hoisted
    (1 << 14, 1, False, 1),  # does not fit even single-buffered: as before
    (1 << 13, 2, False, 2),  # would cost the queues their second buffers: as before
])
def test_room_for_resident_tiles(block, weights, hoisted, buffers):
    """Resident tiles count in the UB plan; when they do not fit, or would take the double buffering
    the loop has without them, the kernel is lowered as before (not split)."""
    rng = np.random.default_rng(4)
    x, ws, y = _late(block, weights, rng)
    kernel = late_weight_kernel if weights == 1 else late_weights_kernel
    args = (x, *ws, y)
    ck = kernel.warmup(*args, target="ascend", BLOCK=block, coarsen=False)
    plan = ck.metadata["ub_plan"]
    assert ("resident_loads" in ck.metadata) == hoisted and "split" not in ck.metadata
    assert plan["total"] <= plan["usable"]
    assert all(q["buffers"] == buffers for q in plan["queues"].values())
    kernel[(x.shape[0],)](*args, target="ascend", BLOCK=block, coarsen=False)
    a = x.sum(axis=1, keepdims=True) * (ws[0].sum() if weights == 2 else 1)
    np.testing.assert_allclose(y, ws[-1][None, :] * a, rtol=1e-4, atol=1e-2)
