"""xblock.profile(sample=True) (model/profile.py): a launch priced from a few of its blocks agrees with
the full run on the CPU model, says it was extrapolated, and leaves the outputs alone."""

from __future__ import annotations

import numpy as np
import pytest

import xblock
from xblock.backends.ascend.model import profile as prof

pytestmark = pytest.mark.filterwarnings("ignore")


def _both(mod, size):
    case = mod.case(size)
    full = xblock.profile(case.kernel, case.grid, *case.copy_args(), sample=False, **case.meta)
    part = xblock.profile(case.kernel, case.grid, *case.copy_args(), sample=True, **case.meta)
    return full, part


def _agree(full, part, tol):
    assert not full.extrapolated and part.extrapolated
    assert (part.blocks, part.programs) == (full.blocks, full.programs)
    assert len(part.sampled_blocks) < full.blocks and part.sampled_programs < full.programs
    assert part.estimate_us == pytest.approx(full.estimate_us, rel=tol)
    assert part.bound == full.bound
    for k in ("gm_read_bytes", "gm_write_bytes", "vector_repeats", "hbm_bytes"):
        assert part.counters[k] == pytest.approx(full.counters[k], rel=tol), k
    assert "extrapolated from" in part.report() and "extrapolated" not in full.report()


def test_grouped_matmul_with_tails():
    """70 tiles of 32x32 (tails in M and N) on 20 AICs in grouped order: a mixed kernel, Cube and vector cores."""
    from examples import matmul

    full, part = _both(matmul, (300, 200, 333))
    _agree(full, part, 0.03)
    assert part.counters["cube_ops"] == pytest.approx(full.counters["cube_ops"], rel=0.03)


def test_layernorm_rows_of_every_alignment():
    """97 rows of 3001 floats on 40 AIVs: rows start at every 4-byte offset (unaligned copies differ by block)."""
    from examples import layernorm

    full, part = _both(layernorm, (97, 3001))
    _agree(full, part, 0.05)
    assert full.counters["window_excess_read_bytes"] > 0


def test_sample_choice_and_outputs():
    from examples import add

    # the blocks of the launch's last program and of each axis' last are always run
    assert prof.sample_blocks(97, 40, (97, 1, 1)) == sorted({0, 39, 16} | {6, 11, 17, 22, 28, 33})
    assert {0, 39, 99 % 40, 9, 90 % 40} <= set(prof.sample_blocks(100, 40, (10, 10, 1)))
    case = add.case(98432, np.float32)
    args = case.copy_args()
    args[2][:] = -7
    p = xblock.profile(case.kernel, case.grid, *args, sample=True, **case.meta)
    assert p.sampled_blocks and (args[2] == -7).all()  # a sampled launch writes nothing back
    q = xblock.profile(case.kernel, case.grid, *args, **case.meta)  # small: a full run by default
    assert not q.extrapolated and np.allclose(args[2], case.expected["out"])
    assert p.estimate_us == pytest.approx(q.estimate_us, rel=1e-9)
