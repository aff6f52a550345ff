"""The Ascend cost model (xblock.profile, backends/ascend/model/cost.py): counters of known kernels, sane
pipes, bound, estimate and floor, the overlap rule, the CLI, and the errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.backends.ascend.model import cost

pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.fixture(scope="module")
def add_profile():
    from examples import add

    n = 3000  # 3 programs of BLOCK 1024, the last one partial
    case = add.case(n, np.float32)
    p = xblock.profile(case.kernel, case.grid, *case.copy_args(), **case.meta)
    # the launcher of that launch keeps the model's per-core counters
    per_block = case.kernel.warmup(*case.copy_args(), target="ascend", **case.meta).launcher.last_block_counters
    return n, p, per_block


def test_add_counters(add_profile):
    n, p, per_block = add_profile
    c = p.counters
    assert c["gm_read_bytes"] == 2 * n * 4 and c["gm_write_bytes"] == n * 4
    assert c["min_gm_bytes"] == 3 * n * 4
    # 3 programs x (2 loads + 1 store), one DataCopy(Pad) each
    assert (c["datacopy_calls"], c["datacopy_in_calls"], c["datacopy_out_calls"]) == (9, 6, 3)
    assert c["bytes_per_datacopy"] == pytest.approx(3 * n * 4 / 9)
    assert c["scalar_ub_accesses"] == c["scalar_gm_accesses"] == 0
    assert c["mmad_calls"] == c["gm_to_l1_bytes"] == c["l0c_to_gm_bytes"] == c["workspace_bytes"] == 0
    assert p.blocks == 3 and p.programs == 3
    assert len(per_block) == 3 and sum(b["datacopy_in_calls"] for b in per_block) == 6


def test_add_pipes_bound_estimate(add_profile):
    _, p, _ = add_profile
    assert set(p.pipes) == set(cost.PIPES) and all(v >= 0 for v in p.pipes.values())
    assert p.pipes["Cube"] == p.pipes["MTE1"] == p.pipes["Fixpipe"] == 0
    assert p.bound in ("MTE2", "MTE3")
    assert p.estimate_us >= p.floor_us > 0
    hz = cost.soc_cost("910B3").hz
    # one program per core: nothing to overlap with, the sum of the pipes, the GM latency of its copy-in and
    # copy-out, and the start-up of a one-kind kernel
    lat = 2 * cost.CONSTANTS["dma_latency_cycles"].value
    assert p.launch_us == cost.CONSTANTS["launch_us"].value
    assert p.estimate_us == pytest.approx((sum(p.pipes.values()) + lat) / hz * 1e6 + p.launch_us)
    assert "bound by" in p.report()


def test_overlap_rule():
    pipes = {"MTE2": 400.0, "MTE3": 200.0, "MTE1": 0.0, "V": 100.0, "Cube": 0.0, "Fixpipe": 0.0, "Scalar": 50.0}
    assert cost.overlap(pipes, 0.0, 4, double_buffered=False) == 750
    assert cost.overlap(pipes, 0.0, 4, double_buffered=True) == pytest.approx(3 / 4 * 400 + 750 / 4)
    assert cost.overlap(pipes, 0.0, 1, double_buffered=True) == 750
    # scalar read-backs serialize: added outside the overlap
    assert cost.overlap(pipes, 50.0, 4, double_buffered=True) == pytest.approx(3 / 4 * 400 + 700 / 4 + 50)


def test_constants_documented():
    for name, c in cost.CONSTANTS.items():
        assert c.value > 0 and c.unit and c.source, name
    for soc, sc in cost.SOC_CONSTANTS.items():
        assert sc.clock.source and sc.hbm.source and sc.hz > 1e8, soc


def test_matmul_is_cube_or_mte_bound():
    from examples import matmul

    case = matmul.case((64, 64, 64), np.float16)
    p = xblock.profile(case.kernel, case.grid, *case.copy_args(), **case.meta)
    c = p.counters
    assert c["mmad_calls"] > 0 and c["gm_to_l1_bytes"] > 0 and c["l0c_to_gm_bytes"] > 0
    assert c["gm_to_l1_calls"] > 0 and c["fixpipe_calls"] > 0
    assert p.pipes["Cube"] > 0 and p.pipes["MTE1"] > 0 and p.pipes["Fixpipe"] > 0
    assert p.bound in ("Cube", "MTE2", "MTE1", "MTE3", "Fixpipe")
    assert p.estimate_us >= p.floor_us > 0


@xblock.jit
def _scalar_sum(x_ptr, out_ptr, n):
    acc = 0.0
    for i in range(n):  # one scalar GM read per element
        acc += xl.load(x_ptr + i)
    xl.store(out_ptr + xl.program_id(0), acc)


def test_scalar_loop_is_scalar_bound():
    x = np.arange(200, dtype=np.float32)
    out = np.zeros(1, np.float32)
    p = xblock.profile(_scalar_sum, (1,), x, out, 200)
    assert out[0] == x.sum()
    assert p.counters["scalar_ub_accesses"] + p.counters["scalar_gm_accesses"] >= 200
    assert p.bound == "Scalar"
    assert p.estimate_us >= p.floor_us


def test_unknown_soc_and_target():
    from examples import add

    case = add.case(10, np.float32)
    with pytest.raises(ValueError, match=r"unknown soc '910Z'.*known: 910B1, 910B2, 910B3, 910B4"):
        xblock.profile(case.kernel, case.grid, *case.copy_args(), soc="910Z", **case.meta)
    with pytest.raises(ValueError, match="no cost model for the .*310P|310P.*no constants"):
        xblock.profile(case.kernel, case.grid, *case.copy_args(), soc="310P", **case.meta)
    with pytest.raises(ValueError, match="no cost model for target 'cpu'"):
        xblock.profile(case.kernel, case.grid, *case.copy_args(), target="cpu", **case.meta)


def test_cli_profile(capsys):
    from xblock.cli import main

    assert main(["profile", "examples/add.py:add_kernel", "--size", "3000"]) == 0
    out = capsys.readouterr().out
    assert "bound by MTE" in out and "9 DataCopy calls" in out
    assert main(["profile", "examples/add.py:add_kernel", "--size", "3000", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["counters"]["datacopy_calls"] == 9 and got["estimate_us"] >= got["floor_us"]
    assert main(["profile", "examples/add.py:add_kernel", "--size", "3000", "--soc", "nope"]) != 0
    assert "unknown soc 'nope'" in capsys.readouterr().err
