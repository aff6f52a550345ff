"""A row-split kernel's pairs of chunks spread over AI Cores (cube/rowsplit.py `plan_groups`, option
`row_groups`): fused attention (examples/triton/attention.py, unmodified) at BLOCK_M 128, whose rows are in
4 or more chunks, launched as G instances a program (the host's choice, options.row_groups_for), each
computing 1 / G of the program's chunks. Numerics on the ascend CPU model against a float64 softmax
attention (causal or not, ragged sequence ends, BLOCK_M 128 and 64, BLOCK_N 64 and 128, D 128, fp16); the
emitted decoding of the instance; the cases refused (the option off, one pair of chunks a program), which
keep each program on one AI Core; the host's choice of G."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import xblock
from xblock.backends.ascend.export.hostcheck import model_toolkit, run_project
from xblock.backends.ascend.model.launch import coarse_grid
from xblock.backends.ascend.options import MIX_AIC_1_2, row_groups_for
from xblock.errors import LaunchArgumentError, XBlockWarning

triton = pytest.importorskip("triton")

from examples.triton.attention import attention_fwd, grid  # noqa: E402
from tests.ascend.cube.test_row_split import _reference  # noqa: E402

attention = xblock.jit(attention_fwd)


def _run(seq, bm, bn, causal, heads=2, head_dim=128, **opts):
    rng = np.random.default_rng(seq + bm + bn)
    shape = (1, heads, seq, head_dim)
    q, k, v = (rng.standard_normal(shape).astype(np.float16) for _ in range(3))
    args = (q, k, v, np.zeros(shape, np.float16), float(1 / np.sqrt(head_dim)), heads * seq * head_dim,
            seq * head_dim, head_dim, heads, seq)
    g = grid(seq, 1, heads, bm)
    meta = dict(HEAD_DIM=head_dim, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, **opts)
    attention[g](*args, target="ascend", **meta)
    compiled = attention.warmup(*args, grid=g, target="ascend", **meta)
    np.testing.assert_allclose(args[3].astype(np.float64), _reference(q, k, v, args[4], causal), atol=1e-2, rtol=1e-2)
    return compiled.metadata, compiled.asm["cpp"], g


# causal runs need BLOCK_N to divide BLOCK_M (the kernel's causal stages)
@pytest.mark.parametrize("seq,bm,bn,causal", [(200, 128, 128, False), (300, 128, 64, False),
                                               (200, 128, 128, True), (260, 128, 64, True)])
def test_block_m_128_spreads_its_chunks_over_ai_cores(seq, bm, bn, causal):
    md, cpp, g = _run(seq, bm, bn, causal)
    assert md["kernel_type"] == MIX_AIC_1_2 and md["plan"]["row_split"]
    chunks = md["split"]["factor"]
    assert chunks >= 4 and md["split"]["chunk"] * chunks == bm
    assert md["row_split"]["groups"] == {"most": md["row_groups"]["most"]} and md["row_groups"]["most"] >= 2
    # the launch: G instances along x (few programs here: the host spreads them)
    launched = coarse_grid(md, (g[0], g[1], 1), scalars := {})
    assert scalars["xbRowGroups"] >= 2 and launched == (g[0] * scalars["xbRowGroups"], g[1], 1)
    # the instance's program and group from its x, and the group's share of the chunks
    assert "const int32_t pidx = static_cast<int32_t>((t / xbRowGroups));" in cpp
    assert "const int64_t group = (t % xbRowGroups);" in cpp
    assert f"({chunks} / static_cast<int32_t>(xbRowGroups))" in cpp


def test_a_launch_that_fills_the_cores_runs_each_program_once():
    """20 programs on the 910B3's 20 AI Cores: the host picks G = 1, the grouped build runs whole programs."""
    md, cpp, g = _run(130, 128, 128, False, heads=10)
    assert md["row_groups"]["most"] >= 2 and "xbRowGroups" in cpp
    launched = coarse_grid(md, (g[0], g[1], 1), scalars := {})
    assert scalars["xbRowGroups"] == 1 and launched == (g[0], g[1], 1)


def test_option_off_keeps_each_program_on_one_ai_core():
    md, cpp, _ = _run(200, 128, 128, False, row_groups=False)
    assert md["plan"]["row_split"] and "row_groups" not in md
    assert md["row_split"]["groups"] == {"most": 1, "why": "the option row_groups is off"}
    assert "xbRowGroups" not in cpp


@pytest.mark.parametrize("causal", [False, True])
def test_row_chunks_takes_more_chunks_for_more_groups(causal):
    """`row_chunks=8`: BLOCK_M 128 in 8 chunks of 16 rows (the planner's choice is 4 of 32), so a program may
    spread over 4 AI Cores; 5 programs on 20 AI Cores: G = 4 (20 instances of a quarter)."""
    md, cpp, g = _run(260, 128, 64, causal, heads=1, row_chunks=8)
    assert md["plan"]["row_split"] and md["split"]["factor"] == 8 and md["split"]["chunk"] == 16
    assert md["row_groups"]["most"] == 4
    launched = coarse_grid(md, (g[0], g[1], 1), scalars := {})
    assert scalars["xbRowGroups"] == 4 and launched == (g[0] * 4, g[1], 1)


def test_row_chunks_that_do_not_split_are_warned_about():
    """BLOCK_M 32 in 4 chunks would give each vector core 8 rows, not a whole 16-row fractal of the Cube's A
    tile: warned at the kernel's line, and the planner's 2 chunks kept."""
    with pytest.warns(XBlockWarning, match=r"row_chunks=4 not used \(.*16-row fractals.*\); the plan is"):
        md, _, _ = _run(100, 32, 64, False, heads=1, row_chunks=4)
    assert md["plan"]["row_split"] and md["split"]["factor"] == 2


@pytest.mark.parametrize("bad", [1, 3, 128, -2, True, 2.0])
def test_row_chunks_must_be_a_power_of_two(bad):
    with pytest.raises(LaunchArgumentError, match=r"attention.py:\d+: attention_fwd: row_chunks must be 0"):
        _run(100, 64, 64, False, heads=1, row_chunks=bad)


@pytest.mark.parametrize("seq,bn,causal", [(100, 128, False), (130, 64, True)])
def test_one_pair_of_chunks_is_not_spread(seq, bn, causal):
    """BLOCK_M 64 (D 128) fits in 2 chunks of 32 rows, one for each vector core: nothing to spread."""
    md, cpp, _ = _run(seq, 64, bn, causal)
    assert md["plan"]["row_split"] and md["split"]["factor"] == 2 and "row_groups" not in md
    assert md["row_split"]["groups"] == {"most": 1, "why": "one pair of chunks a program (nothing to spread)"}
    assert "xbRowGroups" not in cpp


@pytest.mark.parametrize("programs,most,cores,want", [
    (32, 2, 24, 2),   # S = 4096, BLOCK_M 128: 2 rounds of whole programs -> 3 rounds of halves
    (64, 2, 24, 1),   # S = 8192: 3 rounds either way; the fewest groups
    (64, 4, 24, 4),   # 11 quarters (2.75 programs) against 3
    (8, 2, 24, 2),    # S = 1024: half the cores idle
    (48, 4, 24, 1),   # already even
    (5, 8, 24, 4),    # 20 instances on 24 cores; 8 would take 2 rounds of eighths, the same 1 / 4
])
def test_the_hosts_choice_of_groups(programs, most, cores, want):
    assert row_groups_for(programs, most, cores) == want


@pytest.mark.skipif(shutil.which("g++") is None or shutil.which("cmake") is None,
                    reason="the model toolkit builds with cmake and g++")
def test_the_exported_host_picks_the_groups_and_passes_its_checker(tmp_path):
    """The CANN project's main.cpp sets `tiling.xbRowGroups` and the launched x (export/project/host.py)."""
    seq, heads, d = 200, 2, 128
    rng = np.random.default_rng(11)
    shape = (1, heads, seq, d)
    q, k, v = (rng.standard_normal(shape).astype(np.float16) for _ in range(3))
    args = (q, k, v, np.zeros(shape, np.float16), float(1 / np.sqrt(d)), heads * seq * d, seq * d, d, heads, seq)
    xblock.export(attention, grid(seq, 1, heads, 128), *args, directory=tmp_path / "p", target="ascend",
                  HEAD_DIM=d, BLOCK_M=128, BLOCK_N=128, CAUSAL=False)
    main = (tmp_path / "p" / "main.cpp").read_text()
    assert "tiling.xbRowGroups = groups;" in main and "tiling.gridX = static_cast<int32_t>(gx * groups);" in main
    res = run_project(tmp_path / "p", model_toolkit(tmp_path / "toolkit"))
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    assert "PASS: 1 of 1 outputs" in res.stdout, res.stdout[-2000:]
