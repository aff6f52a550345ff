"""The Cube tile planner: tiles, buffer depths and the limits, against the 910B's L1/L0 capacities."""

from __future__ import annotations

import pytest

from xblock.backends.ascend.cube.tiling import CUBE_SOCS, CubeLimit, estimate, plan_cube

B3 = CUBE_SOCS["910B3"]


def test_small_blocks_double_buffer_everything():
    p = plan_cube(32, 32, 32, "f16", B3)
    assert (p.base_m, p.base_n, p.base_k, p.k_steps) == (32, 32, 32, 1)
    assert (p.depth_a1, p.depth_b1, p.db_l0a, p.db_l0b) == (2, 2, 2, 2)
    assert p.usage() == {"L1": (8192, 524160), "L0A": (4096, 65536), "L0B": (4096, 65536), "L0C": (4096, 131072)}


def test_unaligned_blocks_round_to_fractals():
    p = plan_cube(20, 40, 24, "bf16", B3)
    assert (p.base_m, p.base_n, p.k_pad, p.base_k) == (32, 48, 32, 32)


def test_4096_plan_fills_l0c_and_l0b():
    p = plan_cube(128, 256, 64, "f16", B3)
    assert (p.base_m, p.base_n, p.base_k, p.db_l0a, p.db_l0b) == (128, 256, 64, 2, 2)
    u = p.usage()
    assert u["L0C"] == (131072, 131072) and u["L0B"] == (65536, 65536) and u["L0A"] == (32768, 65536)
    e = estimate(p, 4096, 4096, 4096)
    assert e["programs"] == 512 and e["cube_ops"] == 4096 ** 3 // 16 ** 3
    assert e["gm_min_bytes"] == 3 * 4096 * 4096 * 2
    assert round(e["gm_ratio"], 2) == 16.33  # A re-read 16x, B 32x: no L1 reuse across tiles yet


def test_wide_k_splits_into_steps():
    p = plan_cube(128, 256, 256, "f16", B3)  # 2 x 128x256 halves do not fit L0A/L0B with double buffering
    assert p.k_pad == 256 and p.base_k == 64 and p.k_steps == 4 and p.db_l0b == 2


def test_accumulator_overflowing_l0c_is_a_limit():
    with pytest.raises(CubeLimit, match=r"needs 262144 B of L0C, which holds 131072 B on Ascend910B3"):
        plan_cube(256, 256, 32, "f16", B3)


def test_l1_overflow_is_a_limit():
    with pytest.raises(CubeLimit, match=r"of L1 .* which holds 524160 B"):
        plan_cube(128, 128, 4000, "f16", B3)


def test_fp64_inputs_have_no_cube_type():
    with pytest.raises(CubeLimit, match="dot of f64 blocks has no Cube unit type on Ascend910B3"):
        plan_cube(32, 32, 32, "f64", B3)
