"""Program joining (lower/ops/dot.py `_emit_joined`, cube/tiling.py `join`): a core runs several programs of a
small-tile dot together, their K loops in one, each operand tile copied once however many programs of the group
read it (a run-time comparison of the tiles' GM offsets, extents and strides), one L0C accumulator per program.
Right for any program-id map: grouped, row-major, column-major and scrambled orders, M/N/K tails, fewer
programs than cores (groups of one) and a last group the launch cuts short; `cube_join=False` gives the same
numbers."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import xblock
import xblock.language as xl
from examples import matmul
from tests.ascend.cube.kernels import dot_kernel
from xblock.backends.ascend.cube.tiling import CUBE_SOCS, deepen, deepen_l0, join, plan_cube

B3 = CUBE_SOCS["910B3"]


@pytest.mark.parametrize("block,dtype,programs", [
    ((64, 64, 32), "f16", 4),     # 16 KB accumulators: four in half of L0C
    ((64, 128, 32), "f16", 2),
    ((32, 32, 32), "bf16", 4),
    ((128, 128, 64), "f16", 1),   # a 64 KB accumulator is the hardware tile already
    ((128, 256, 64), "f16", 1),
])
def test_join_is_chosen_from_the_shapes(block, dtype, programs):
    p = join(plan_cube(*block, dtype, B3), pooled=False)  # (the pooled join of 8: test_cube_pool.py)
    assert p.join == programs
    d = deepen(p)
    used = d.usage()
    assert all(u <= c for u, c in used.values())
    if programs > 1:
        assert used["L0C"][0] <= B3.l0c_bytes // 2  # the deep tile leaves every program's slots double-buffered in L1
        assert 2 * programs * (d.a1_bytes + d.b1_bytes) <= B3.l1_bytes
        assert f"{programs} programs of a core joined" in d.describe()


@xblock.jit
def ordered_dot(a_ptr, b_ptr, c_ptr, M, N, K, ORDER: xl.constexpr, BLOCK_M: xl.constexpr, BLOCK_N: xl.constexpr,
                BLOCK_K: xl.constexpr):
    """A dot whose programs map to tiles row-major (ORDER 0: consecutive programs share A), column-major (1:
    they share B), scrambled (2: program p computes tile (p * 7) mod P, P prime to 7) or grouped backwards (3:
    tutorial 03's order of 4-row groups on P - 1 - p, so that program 0 is in the short last group)."""
    pid = xl.program_id(0)
    num_m = xl.cdiv(M, BLOCK_M)
    num_n = xl.cdiv(N, BLOCK_N)
    if ORDER == 2:
        pid = (pid * 7) % (num_m * num_n)
    if ORDER == 3:
        pid = num_m * num_n - 1 - pid
        first_m = (pid // (4 * num_n)) * 4
        rows = xl.minimum(num_m - first_m, 4)
        pid_m = first_m + (pid % (4 * num_n)) % rows
        pid_n = (pid % (4 * num_n)) // rows
    elif ORDER == 1:
        pid_m = pid % num_m
        pid_n = pid // num_m
    else:
        pid_m = pid // num_n
        pid_n = pid % num_n
    offs_m = pid_m * BLOCK_M + xl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + xl.arange(0, BLOCK_N)
    offs_k = xl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * N + offs_n[None, :]
    acc = xl.zeros((BLOCK_M, BLOCK_N), dtype=xl.float32)
    for k in range(0, xl.cdiv(K, BLOCK_K)):
        a = xl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BLOCK_K), other=0.0)
        b = xl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BLOCK_K) & (offs_n[None, :] < N), other=0.0)
        acc = xl.dot(a, b, acc=acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    xl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], xl.where(acc > 0, acc, acc * 0.5),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _inputs(M, N, K, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K), dtype=np.float32).astype(np.float16)
    b = (rng.standard_normal((K, N), dtype=np.float32) / np.sqrt(K)).astype(np.float16)
    return a, b, a.astype(np.float64) @ b.astype(np.float64)


def _agree(x, y):
    """A joined kernel and one program at a time: the same products, summed in Mmads of other depths (a joined
    plan's L0 step is shallower, its L0A/L0B hold `join` slots: tiling.deepen_l0), so equal up to fp32 rounding
    (an f16 output: up to one f16 rounding)."""
    tol = 2e-3 if x.dtype == np.float16 else 1e-5
    np.testing.assert_allclose(x.astype(np.float64), y.astype(np.float64), rtol=tol, atol=tol)


@pytest.mark.parametrize("order", [0, 1, 2])
def test_any_program_order_matches_numpy(order):
    M, N, K = 300, 230, 150  # 10 x 8 = 80 tiles of 32 x 32 (prime to 7): a group of 4 on each of 20 cores; tails
    a, b, ref = _inputs(M, N, K, order)
    ref = np.where(ref > 0, ref, ref * 0.5)
    grid = (xblock.cdiv(M, 32) * xblock.cdiv(N, 32),)
    outs = {}
    for on in (True, False):
        c = np.full((M, N), 9, np.float32)
        ordered_dot[grid](a, b, c, M, N, K, target="ascend", ORDER=order, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32,
                          cube_join=on)
        np.testing.assert_allclose(c, ref, atol=1e-2, rtol=1e-2)
        outs[on] = c
        md = ordered_dot.warmup(a, b, c, M, N, K, target="ascend", ORDER=order, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32,
                                cube_join=on).metadata
        assert md["cube"][0].get("join", 1) == (8 if on else 1)
    _agree(outs[True], outs[False])


@pytest.mark.parametrize("M,N,K,block", [
    (300, 200, 333, (32, 32, 32)),  # 70 programs, 3 or 4 a core (a group with an inactive program); tails
    (130, 700, 100, (32, 32, 32)),  # 110 programs, 5 or 6 a core: a whole group and a partial one
    (256, 256, 64, (64, 64, 32)),   # 16 programs: one a core
])
def test_grouped_matmul_with_its_epilogue(M, N, K, block):
    """examples/matmul.py (grouped order, leaky-ReLU on the vector cores: one epilogue per joined program)."""
    a, b, ref = _inputs(M, N, K, 1)
    ref = np.where(ref >= 0, ref, 0.01 * ref)
    meta = dict(BLOCK_M=block[0], BLOCK_N=block[1], BLOCK_K=block[2], GROUP_M=8)
    grid = (xblock.cdiv(M, block[0]) * xblock.cdiv(N, block[1]),)
    outs = {}
    for on in (True, False):
        c = np.zeros((M, N), np.float16)
        args = (a, b, c, M, N, K, K, 1, N, 1, N, 1)
        matmul.matmul_kernel[grid](*args, target="ascend", cube_join=on, **meta)
        np.testing.assert_allclose(c.astype(np.float64), ref, atol=1e-2, rtol=1e-2)
        outs[on] = c
    _agree(outs[True], outs[False])
    md = matmul.matmul_kernel.warmup(*args, target="ascend", **meta).metadata
    assert md["cube"][0]["join"] == 8 and md["workspace_bytes"] == 8 * block[0] * block[1] * 4


def test_fixpipe_epilogue_on_a_2d_grid():
    """An AIC-only kernel (ReLU and the fp16 conversion in Fixpipe), programs over a 2-D grid."""
    M, N, K = 200, 330, 70
    a, b, ref = _inputs(M, N, K, 2)
    grid = (xblock.cdiv(M, 32), xblock.cdiv(N, 32))
    meta = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, RELU=1)
    outs = {}
    for on in (True, False):
        c = np.full((M, N), 5, np.float16)
        dot_kernel[grid](a, b, c, M, N, K, K, N, N, target="ascend", cube_join=on, **meta)
        np.testing.assert_allclose(c.astype(np.float64), np.maximum(ref, 0), atol=1e-2, rtol=1e-2)
        outs[on] = c
        md = dot_kernel.warmup(a, b, c, M, N, K, K, N, N, target="ascend", cube_join=on, **meta).metadata
        assert md["kernel_type"] == "KERNEL_TYPE_AIC_ONLY" and md["cube"][0].get("join", 1) == (8 if on else 1)
    _agree(outs[True], outs[False])


def test_shared_tiles_are_copied_once():
    """Row-major order: the four programs of a group share their A tile, so the joined kernel copies A once a
    group (the CPU model's counters: GM -> L1 bytes fall from 8 tile slices per K step to 5); joined by 8 (the
    pool, or by 4 with a slot per program), programs sharing an A tile next to each other run one Mmad over two B
    tiles: half the Mmads."""
    M, N, K = 256, 640, 128  # 8 x 20 = 160 programs of 32 x 32: 8 a core, two groups within one row of tiles
    a, b, _ = _inputs(M, N, K)
    c = np.zeros((M, N), np.float32)
    grid = (xblock.cdiv(M, 32) * xblock.cdiv(N, 32),)
    meta = dict(ORDER=0, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
    on = xblock.profile(ordered_dot, grid, a, b, c, M, N, K, **meta).counters
    off = xblock.profile(ordered_dot, grid, a, b, c, M, N, K, cube_join=False, **meta).counters
    four = xblock.profile(ordered_dot, grid, a, b, c, M, N, K, cube_pool=False, **meta).counters
    assert on["mmad_calls"] * 2 == four["mmad_calls"] * 2 == off["mmad_calls"]
    assert on["cube_ops"] == four["cube_ops"] == off["cube_ops"]
    assert on["gm_to_l1_bytes"] * 8 == off["gm_to_l1_bytes"] * 5


@pytest.mark.parametrize("order", [0, 2])
def test_large_launch_takes_aligned_groups(order):
    """1312 programs on 20 cores (at least ALIGNED_GROUPS groups a core): each core takes whole groups of 8
    programs (a pooled join) starting at multiples of 8, the last core's last group cut short by the launch."""
    M, N, K = 648, 512, 40  # 41 x 32 tiles of 16 x 16 (1312, prime to 7)
    a, b, ref = _inputs(M, N, K, 5)
    ref = np.where(ref > 0, ref, ref * 0.5)
    grid = (xblock.cdiv(M, 16) * xblock.cdiv(N, 16),)
    c = np.zeros((M, N), np.float32)
    ordered_dot[grid](a, b, c, M, N, K, target="ascend", ORDER=order, BLOCK_M=16, BLOCK_N=16, BLOCK_K=32)
    np.testing.assert_allclose(c, ref, atol=1e-2, rtol=1e-2)
    md = ordered_dot.warmup(a, b, c, M, N, K, target="ascend", ORDER=order, BLOCK_M=16, BLOCK_N=16,
                            BLOCK_K=32).metadata
    assert md["cube"][0]["join"] == 8


@xblock.jit
def banded_dot(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: xl.constexpr):
    """A K loop whose trip count depends on the program (row tile i sums the first i + 1 K slices): programs
    with different loops are not joined."""
    pid = xl.program_id(0)
    num_n = xl.cdiv(N, BLOCK)
    pid_m = pid // num_n
    pid_n = pid % num_n
    offs_m = pid_m * BLOCK + xl.arange(0, BLOCK)
    offs_n = pid_n * BLOCK + xl.arange(0, BLOCK)
    offs_k = xl.arange(0, BLOCK)
    acc = xl.zeros((BLOCK, BLOCK), dtype=xl.float32)
    for k in range(0, pid_m + 1):
        ks = k * BLOCK + offs_k
        a = xl.load(a_ptr + offs_m[:, None] * K + ks[None, :], mask=(offs_m[:, None] < M) & (ks[None, :] < K),
                    other=0.0)
        b = xl.load(b_ptr + ks[:, None] * N + offs_n[None, :], mask=(ks[:, None] < K) & (offs_n[None, :] < N),
                    other=0.0)
        acc = xl.dot(a, b, acc=acc)
    xl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def test_programs_with_different_k_loops_are_not_joined():
    M, N, K, B = 128, 320, 128, 32
    a, b, _ = _inputs(M, N, K, 4)
    c = np.zeros((M, N), np.float32)
    grid = (xblock.cdiv(M, B) * xblock.cdiv(N, B),)
    banded_dot[grid](a, b, c, M, N, K, target="ascend", BLOCK=B)
    ref = np.zeros((M, N))
    for i in range(M // B):
        rows = slice(i * B, (i + 1) * B)
        ref[rows] = a[rows, :(i + 1) * B].astype(np.float64) @ b[:(i + 1) * B].astype(np.float64)
    np.testing.assert_allclose(c, ref, atol=1e-2, rtol=1e-2)
    assert "join" not in banded_dot.warmup(a, b, c, M, N, K, target="ascend", BLOCK=B).metadata["cube"][0]


def test_2x2_groups_copy_half_the_tiles():
    """Grouped order (GROUP_M 8): the partner step found at run time is 8, so each group is programs q, q + 1,
    q + 8, q + 9 (a 2 x 2 block of tiles: two A tiles and two B tiles), not four consecutive programs (one B
    tile, four A tiles): GM -> L1 bytes are half those of one program at a time (4 tile copies of 8), not 5/8.
    Joined by 8 (the pool, the default) two such groups side by side make a 4 x 2 block: 6 tile copies of 16, the
    programs ordered q, q + 8, q + 1, q + 9 so that each pair on one A tile runs one Mmad over both B tiles."""
    M, N, K = 256, 1280, 128  # 8 x 40 = 320 programs of 32 x 32: 16 a core, one run of 16 (4 groups) each
    a, b, _ = _inputs(M, N, K, 6)
    c = np.zeros((M, N), np.float16)
    grid = (xblock.cdiv(M, 32) * xblock.cdiv(N, 32),)
    args = (a, b, c, M, N, K, K, 1, N, 1, N, 1)
    meta = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=8)
    on = xblock.profile(matmul.matmul_kernel, grid, *args, cube_pool=False, **meta).counters
    pooled = xblock.profile(matmul.matmul_kernel, grid, *args, **meta).counters
    off = xblock.profile(matmul.matmul_kernel, grid, *args, cube_join=False, **meta).counters
    assert on["mmad_calls"] == off["mmad_calls"] == pooled["mmad_calls"] * 2
    assert on["cube_ops"] == off["cube_ops"] == pooled["cube_ops"]
    assert on["gm_to_l1_bytes"] * 2 == off["gm_to_l1_bytes"]
    assert pooled["gm_to_l1_bytes"] * 16 == off["gm_to_l1_bytes"] * 6


@pytest.mark.parametrize("kernel,order", [("matmul", None), ("ordered", 0), ("ordered", 2), ("ordered", 3),
                                          ("dot2d", None)])
def test_2x2_groups_at_ragged_shapes(kernel, order):
    """400 programs of 32 x 32 (prime to 7; 20 a core: a run of 16 in 2 x 2 groups, then a consecutive group), M,
    N and K tails; the grouped order, row-major, scrambled and a backwards grouped order whose
    program 0 lies in a short group (the partner step found there is wrong for most programs: only which
    copies are skipped changes), and a 2-D grid of 8 x 50 (the partner step is the grid's x, 8; AIC only).
    Numpy and one program at a time agree."""
    M, N, K = (250, 1590, 100) if kernel == "dot2d" else (620, 610, 100)
    a, b, ref = _inputs(M, N, K, 7)
    grid = (xblock.cdiv(M, 32) * xblock.cdiv(N, 32),)
    outs = {}
    for on in (True, False):
        if kernel == "dot2d":
            c = np.zeros((M, N), np.float16)
            dot_kernel[(xblock.cdiv(M, 32), xblock.cdiv(N, 32))](a, b, c, M, N, K, K, N, N, target="ascend",
                                                                cube_join=on, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32,
                                                                RELU=0)
            want = ref
        elif kernel == "matmul":
            c = np.zeros((M, N), np.float16)
            matmul.matmul_kernel[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1, target="ascend", cube_join=on,
                                       BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=8)
            want = np.where(ref >= 0, ref, 0.01 * ref)
        else:
            c = np.zeros((M, N), np.float32)
            ordered_dot[grid](a, b, c, M, N, K, target="ascend", ORDER=order, BLOCK_M=32, BLOCK_N=32,
                              BLOCK_K=32, cube_join=on)
            want = np.where(ref > 0, ref, ref * 0.5)
        np.testing.assert_allclose(c.astype(np.float64), want, atol=1e-2, rtol=1e-2)
        outs[on] = c
    _agree(outs[True], outs[False])


@pytest.mark.parametrize("on", [True, False])
def test_l0a_loads_by_fractal_column(on):
    """A 64 x 32 fp16 step of A is 4 fractal rows of 2 K fractals: LoadData moves it by fractal column (2 calls of
    4 fractals, dstGap 1) instead of by row (4 calls of 2); K tails (a last step of 1 fractal column, dstGap 0)
    and M/N tails agree with numpy, joined or not. One BLOCK_K slice per L1 tile (cube_depth=False): with deep
    tiles the L0 step spans several slices (64 x 64 x 64 and deeper: test_l0_steps_span_k_slices)."""
    M, N, K = 200, 130, 104  # 4 x 3 tiles of 64 x 64; K: 3 steps of 32 and one of 8
    a, b, ref = _inputs(M, N, K, 8)
    grid = (xblock.cdiv(M, 64), xblock.cdiv(N, 64))
    c = np.zeros((M, N), np.float16)
    meta = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, RELU=1, cube_depth=False)
    dot_kernel[grid](a, b, c, M, N, K, K, N, N, target="ascend", cube_join=on, **meta)
    np.testing.assert_allclose(c.astype(np.float64), np.maximum(ref, 0), atol=1e-2, rtol=1e-2)
    ck = dot_kernel.warmup(a, b, c, M, N, K, K, N, N, target="ascend", cube_join=on, **meta)
    assert ", 4, 1, 0, (" in ck.asm["cpp"]  # LoadData2DParams: repeat 4 (the fractal rows), srcStride 1, a dstGap
    # 12 programs (one a core), each 4 K steps of 2, 2, 2 and 1 K fractals: A and B 7 calls each (by row: A 16)
    assert sum(e["load_data_calls"] for e in ck.launcher.last_block_counters) == 12 * (7 + 7)


@pytest.mark.parametrize("block,joined,base_k", [
    ((64, 64, 32), True, 64),     # 4 programs x 2 buffers x 8 KB: L0A and L0B exactly full
    ((64, 64, 32), False, 256),   # one program: the whole 256-deep L1 tile in one step (32 KB x 2)
    ((32, 32, 32), True, 128),
    ((64, 128, 32), True, 64),
    ((128, 256, 64), False, 64),  # L0B is full with one 64-deep slice double-buffered: unchanged
])
def test_l0_step_is_chosen_from_the_shapes(block, joined, base_k):
    p = plan_cube(*block, "f16", B3)
    d = deepen_l0(deepen(join(p, pooled=False) if joined else p))
    assert d.base_k == base_k and d.slice_k == max(base_k, d.k_pad) and d.l1_k % d.slice_k == 0
    assert all(u <= c for u, c in d.usage().values())
    assert (d.db_l0a, d.db_l0b) == (p.db_l0a, p.db_l0b)  # L0A/L0B keep their double buffering
    assert deepen_l0(join(plan_cube(64, 64, 32, "f32", B3), pooled=False)).base_k <= 32  # b16 only


def _typed(x, dtype):
    return x.astype(ml_dtypes.bfloat16) if dtype == "bf16" else x


@pytest.mark.parametrize("K", [33, 95, 128, 200, 256])
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_l0_steps_span_k_slices(K, dtype):
    """Joined 64 x 64 x 32 programs with 128-deep L1 tiles multiply in 64 x 64 x 64 Mmads (two of the kernel's K
    slices a step, tiling.deepen_l0): ceil(K / 64) Mmads a program, not ceil(K / 32); a ragged K (33: one
    Mmad of k 33; 95: 64 + 31; 200: a second L1 tile of 72 = 64 + 8) is exact, f16 and bf16, joined by 4 or
    not."""
    M, N = 200, 130  # 4 x 3 programs of 64 x 64 (one a core), M and N tails
    a, b, ref = _inputs(M, N, K, K)
    a, b = _typed(a, dtype), _typed(b, dtype)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    grid = (xblock.cdiv(M, 64), xblock.cdiv(N, 64))
    meta = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, RELU=0, cube_pool=False)  # (pooled: test_cube_pool.py)
    outs = {}
    for on in (True, False):
        c = np.zeros((M, N), np.float32)
        dot_kernel[grid](a, b, c, M, N, K, K, N, N, target="ascend", cube_join=on, **meta)
        np.testing.assert_allclose(c, ref, atol=1e-3, rtol=1e-3)
        outs[on] = c
    _agree(outs[True], outs[False])
    ck = dot_kernel.warmup(a, b, c, M, N, K, K, N, N, target="ascend", **meta)
    md = ck.metadata["cube"][0]
    assert md["join"] == 4 and tuple(md["tiles"]) == (64, 64, 64, 128)
    assert "a2Local[4096]" in ck.asm["cpp"]  # program 1's L0A slot: 64 x 64 elements (a 64-deep step of A)
    prof = xblock.profile(dot_kernel, grid, a, b, c, M, N, K, K, N, N, **meta).counters
    assert prof["mmad_calls"] == 12 * -(-K // 64)
    assert prof["cube_ops"] == 12 * 16 * -(-K // 16)  # the fractals of the real K, as with 32-deep steps
    one = xblock.profile(dot_kernel, grid, a, b, c, M, N, K, K, N, N, cube_join=False, **meta).counters
    assert one["mmad_calls"] == 12 * -(-K // 256) and one["cube_ops"] == prof["cube_ops"]


def test_l0_steps_of_a_grouped_matmul():
    """examples/matmul.py (leaky-ReLU on the vector cores) at 64 x 64 x 32 in 2 x 2 groups: 64-deep Mmads, half
    the Mmads of 32-deep steps, the same fractals; numpy agrees at a ragged K."""
    M, N, K = 256, 1280, 200  # 4 x 20 = 80 programs: 4 a core
    a, b, ref = _inputs(M, N, K, 11)
    ref = np.where(ref >= 0, ref, 0.01 * ref)
    grid = (xblock.cdiv(M, 64) * xblock.cdiv(N, 64),)
    c = np.zeros((M, N), np.float16)
    args = (a, b, c, M, N, K, K, 1, N, 1, N, 1)
    meta = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8)
    matmul.matmul_kernel[grid](*args, target="ascend", **meta)
    np.testing.assert_allclose(c.astype(np.float64), ref, atol=1e-2, rtol=1e-2)
    on = xblock.profile(matmul.matmul_kernel, grid, *args, **meta).counters
    flat = xblock.profile(matmul.matmul_kernel, grid, *args, cube_depth=False, **meta).counters
    assert on["mmad_calls"] == 80 * 4 and flat["mmad_calls"] == 80 * 7
    assert on["cube_ops"] == flat["cube_ops"]


@xblock.jit
def pid_in_loop_dot(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: xl.constexpr):
    """A K loop whose body reads the program id itself (its loads' offsets): programs are not joined (each
    program's body is lowered with the values of its prologue, not a program id of its own)."""
    num_n = xl.cdiv(N, BLOCK)
    pid = xl.program_id(0)
    rows = (pid // num_n) * BLOCK + xl.arange(0, BLOCK)
    cols = (pid % num_n) * BLOCK + xl.arange(0, BLOCK)
    acc = xl.zeros((BLOCK, BLOCK), dtype=xl.float32)
    for k in range(0, xl.cdiv(K, BLOCK)):
        here = xl.program_id(0)
        offs_m = (here // num_n) * BLOCK + xl.arange(0, BLOCK)
        offs_n = (here % num_n) * BLOCK + xl.arange(0, BLOCK)
        ks = k * BLOCK + xl.arange(0, BLOCK)
        a = xl.load(a_ptr + offs_m[:, None] * K + ks[None, :], mask=(offs_m[:, None] < M) & (ks[None, :] < K),
                    other=0.0)
        b = xl.load(b_ptr + ks[:, None] * N + offs_n[None, :], mask=(ks[:, None] < K) & (offs_n[None, :] < N),
                    other=0.0)
        acc = xl.dot(a, b, acc=acc)
    xl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


def test_program_id_in_the_k_loop_is_not_joined():
    M, N, K, B = 200, 330, 70, 32
    a, b, ref = _inputs(M, N, K, 9)
    c = np.zeros((M, N), np.float32)
    grid = (xblock.cdiv(M, B) * xblock.cdiv(N, B),)
    pid_in_loop_dot[grid](a, b, c, M, N, K, target="ascend", BLOCK=B)
    np.testing.assert_allclose(c, ref, atol=1e-2, rtol=1e-2)
    assert "join" not in pid_in_loop_dot.warmup(a, b, c, M, N, K, target="ascend", BLOCK=B).metadata["cube"][0]
