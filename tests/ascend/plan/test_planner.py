"""The ascend planner (backends/ascend/plan/planner.py) on made-up outcomes: which plans it tries, in
which order, and which it keeps, for the kinds of kernels that need each step (a layernorm whose
rows are small, a matmul with an epilogue, an attention whose blocks overflow UB). Nothing compiles.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from xblock.backends.ascend.options import MIX_AIC_1_1, MIX_AIC_1_2
from xblock.backends.ascend.plan import planner
from xblock.backends.ascend.plan.plan import (
    FIXPIPE,
    HAND_OFF,
    SECTIONS,
    AscendPlan,
    Failed,
    Fits,
    NeedsVectorCore,
    NoRoom,
    Overflow,
    SplitRefused,
)
from xblock.backends.ascend.plan.planner import Fail, Keep, Start

DOUBLE = Fits()  # fits with double-buffered queues, no warnings
SINGLE = Fits(single_buffered=True)
ASCEND = Path(__file__).resolve().parents[3] / "xblock" / "backends" / "ascend"


def drive(start: Start, outcome_of) -> tuple:
    """(the plans the planner asked for, in order; its verdict), `outcome_of(plan)` answering each."""
    asked = []

    def lower(plan):
        asked.append(plan)
        return outcome_of(plan)

    return asked, planner.run(start, lower)


# ----- a layernorm of 97 rows of 3001 floats, BLOCK 512: small rows, coarsened ------------------------
LAYERNORM = Start(row_bytes=2 * 512 * 4)  # a 512-float chunk of x read, one of y written, per program


def test_layernorm_rows_per_instance_make_16k_copies():
    assert planner.coarsen_rows(LAYERNORM) == [4, 2]
    assert planner.coarsen_rows(Start(row_bytes=4)) == [64, 32, 16, 8, 4, 2]  # at most 64 rows


def test_no_coarsening_with_a_weight_row_in_a_loop():
    """layernorm's w and b, read chunk by chunk in its third loop: the kernel as written first."""
    start = Start(row_bytes=2 * 512 * 4, loop_weights=True)
    assert planner.coarsen_rows(start) == []
    asked, verdict = drive(start, lambda plan: DOUBLE)
    assert [p.rows for p in asked] == [1] and verdict == Keep(asked[0])
    assert planner.coarsen_rows(Start(row_bytes=16384)) == []  # already moves 16 KB per program
    assert planner.coarsen_rows(Start(row_bytes=None)) == []  # not coarsenable
    assert planner.coarsen_rows(Start(row_bytes=64, coarsen=False)) == []


def test_layernorm_keeps_the_first_coarsened_plan_that_fits():
    asked, verdict = drive(LAYERNORM, lambda plan: DOUBLE)
    assert asked == [AscendPlan(rows=4)]
    assert verdict == Keep(AscendPlan(rows=4))


def test_layernorm_with_a_row_cache_too_big_takes_fewer_rows_then_drops_resident_loads():
    def outcome(plan):
        if plan.rows == 4:
            return NoRoom(what="cache")  # fewer rows leave room for the row cache
        if plan.resident:
            return NoRoom(what="resident")
        return DOUBLE

    asked, verdict = drive(LAYERNORM, outcome)
    assert asked == [AscendPlan(rows=4), AscendPlan(rows=2), AscendPlan(rows=2, resident=False)]
    assert verdict == Keep(AscendPlan(rows=2, resident=False))


def test_layernorm_single_buffered_coarse_plans_lose_to_the_kernel_as_written():
    asked, verdict = drive(LAYERNORM, lambda plan: SINGLE if plan.rows > 1 else DOUBLE)
    assert asked == [AscendPlan(rows=4), AscendPlan(rows=2), AscendPlan()]
    assert verdict == Keep(AscendPlan())
    # unless single buffers are what the options ask for
    single = Start(row_bytes=LAYERNORM.row_bytes, double_buffer=False)
    assert drive(single, lambda plan: SINGLE)[1] == Keep(AscendPlan(rows=4))


def test_a_coarse_plan_that_warns_of_more_than_the_plain_one_loses_to_it():
    gather = frozenset({("ascend: this load is a gather", 12)})

    def outcome(plan):
        return Fits(warned=gather) if plan.rows > 1 else DOUBLE

    asked, verdict = drive(LAYERNORM, outcome)
    assert asked == [AscendPlan(rows=4), AscendPlan()]
    assert verdict == Keep(AscendPlan())
    # the same warnings as written: the coarse plan wins
    assert drive(LAYERNORM, lambda plan: Fits(warned=gather))[1] == Keep(AscendPlan(rows=4))


def test_without_the_resident_option_no_plan_has_resident_loads_or_a_row_cache():
    asked, verdict = drive(Start(row_bytes=None, resident=False), lambda plan: DOUBLE)
    assert asked == [AscendPlan(resident=False, row_cache=False)]


def test_a_row_cache_that_does_not_fit_as_written_is_dropped():
    asked, verdict = drive(Start(), lambda plan: NoRoom(what="cache") if plan.row_cache else DOUBLE)
    assert verdict == Keep(AscendPlan(row_cache=False))


# ----- a matmul with an epilogue: where its dots go out -------------------------------------------
MATMUL = Start(row_bytes=None)


def test_matmul_whose_epilogue_runs_on_the_vector_core_shares_it_between_both_vector_cores():
    def outcome(plan):
        if plan.split == 1:
            return Fits(kernel_type=MIX_AIC_1_1, vector_epilogue=True)
        return Fits(kernel_type=MIX_AIC_1_2, vector_epilogue=True, single_buffered=plan.split == 2)

    asked, verdict = drive(MATMUL, outcome)
    assert [p.split for p in asked] == [1, 2, 4]  # 2 chunks fit only single-buffered
    assert verdict == Keep(AscendPlan(split=4))


def test_matmul_whose_epilogue_carries_a_value_keeps_one_vector_core():
    def outcome(plan):
        return Fits(kernel_type=MIX_AIC_1_1, vector_epilogue=True)  # the chunks are not shared

    asked, verdict = drive(MATMUL, outcome)
    assert [p.split for p in asked] == [1, *planner.BOTH_CORES_CHUNKS]
    assert verdict == Keep(AscendPlan())


def test_matmul_fixpipe_epilogue_is_kept_as_is():
    asked, verdict = drive(MATMUL, lambda plan: Fits(kernel_type="KERNEL_TYPE_AIC_ONLY"))
    assert asked == [AscendPlan()] and verdict == Keep(AscendPlan())


def test_a_dot_store_fixpipe_cannot_write_hands_the_dot_to_the_vector_core():
    def outcome(plan):
        return NeedsVectorCore(why="dot_store", message="no") if plan.dots == FIXPIPE else DOUBLE

    asked, verdict = drive(MATMUL, outcome)
    assert asked == [AscendPlan(), AscendPlan(dots=HAND_OFF)]
    assert verdict == Keep(AscendPlan(dots=HAND_OFF))


def test_fixpipe_dots_beside_vector_work_go_in_core_sections_else_hand_off():
    def outcome(plan):
        if plan.dots == FIXPIPE:
            return NeedsVectorCore(why="vector_work", message="mixed")
        return Failed(message="sections") if plan.dots == SECTIONS else DOUBLE

    asked, verdict = drive(MATMUL, outcome)
    assert [p.dots for p in asked] == [FIXPIPE, SECTIONS, HAND_OFF]
    assert verdict == Keep(AscendPlan(dots=HAND_OFF))
    # when nothing lowers, the error of the kernel as written stands, after the hand-off's (the pipeline
    # shows both)
    asked, verdict = drive(MATMUL, lambda plan: NeedsVectorCore(why="vector_work") if plan.dots == FIXPIPE
                           else Failed(message="x"))
    assert verdict == Fail(AscendPlan(), handoff=AscendPlan(dots=HAND_OFF))


def test_a_failed_hand_off_of_a_dot_operand_is_named_in_the_verdict():
    def outcome(plan):
        return NeedsVectorCore(why="dot_operand", message="acc") if plan.dots == FIXPIPE else Failed(message="3-D")

    asked, verdict = drive(MATMUL, outcome)
    assert [p.dots for p in asked] == [FIXPIPE, HAND_OFF]
    assert verdict == Fail(AscendPlan(), handoff=AscendPlan(dots=HAND_OFF))
    # a hand-off that lowers is kept, and no verdict names a failed one otherwise
    asked, verdict = drive(MATMUL, lambda plan: NeedsVectorCore(why="dot_operand") if plan.dots == FIXPIPE
                           else DOUBLE)
    assert verdict == Keep(AscendPlan(dots=HAND_OFF))
    asked, verdict = drive(MATMUL, lambda plan: Failed(message="x"))
    assert verdict == Fail(AscendPlan()) and [p.dots for p in asked] == [FIXPIPE]


# ----- an attention whose blocks overflow UB: computed in chunks ----------------------------------
ATTENTION = Start(row_bytes=None)


def test_attention_blocks_split_into_the_fewest_chunks_that_fit_double_buffered():
    def outcome(plan):
        if plan.split < 4:
            return Overflow(total=400000 // plan.split, message="too big", chunks=f"{plan.split} chunks")
        return SINGLE if plan.split == 4 else DOUBLE

    asked, verdict = drive(ATTENTION, outcome)
    assert [p.split for p in asked] == [1, 2, 4, 8]
    assert verdict == Keep(AscendPlan(split=8))


def test_attention_that_cannot_be_split_further_fails_with_the_first_error_and_the_last_size():
    def outcome(plan):
        if plan.split == 4:
            return SplitRefused(reason="no axis left", exhausted=True)
        return Overflow(total=300000 // plan.split, message="too big", chunks=f"{plan.split} chunks of 32 rows")

    asked, verdict = drive(ATTENTION, outcome)
    assert verdict == Fail(AscendPlan(), "in 2 chunks of 32 rows they still need 150000 B")
    refused = drive(ATTENTION, lambda plan: Overflow(total=9) if plan.split == 1 else
                    SplitRefused(reason="a scan along the rows", loc=("k.py", 7, 3)))[1]
    assert refused == Fail(AscendPlan(), "cannot split this kernel's: a scan along the rows", ("k.py", 7, 3))
    broken = drive(ATTENTION, lambda plan: Overflow(total=9) if plan.split == 1 else
                   Failed(message="a gather", chunks="2 chunks of 8 rows"))[1]
    assert broken == Fail(AscendPlan(), "in 2 chunks of 8 rows the kernel does not lower: a gather")


def test_handed_off_dots_that_overflow_are_split_keeping_the_hand_off():
    def outcome(plan):
        if plan.dots == FIXPIPE:
            return NeedsVectorCore(why="dot_store")
        return Overflow(total=1) if plan.split == 1 else DOUBLE

    asked, verdict = drive(MATMUL, outcome)
    assert verdict == Keep(AscendPlan(dots=HAND_OFF, split=2))


@pytest.mark.parametrize("chunks,eight", [(0, "fits"), (8, "fits"), (8, "refused")])
def test_row_chunks_are_tried_first_and_else_the_fewest(chunks, eight):
    """A BLOCK_M 128 attention that overflows whole, its handed-off dots' rows splitting from 4 chunks on: the
    planner's row split is 4 chunks; with the option row_chunks 8, 8 first, and 4 when 8 does not lower."""
    def outcome(plan):
        if plan.split == 1:
            return Overflow(total=400000, message="too big", handoff=True)
        if not plan.row_split:
            return DOUBLE
        if plan.split == 8 and eight == "refused":
            return SplitRefused(reason="8 rows a vector core")
        return Fits(kernel_type=MIX_AIC_1_2) if plan.split >= 4 else Overflow(total=1, handoff=True)

    start = Start(row_bytes=None, row_split=True, row_chunks=chunks)
    asked, verdict = drive(start, outcome)
    want = 8 if chunks and eight == "fits" else 4
    assert verdict == Keep(AscendPlan(split=want, row_split=True))
    assert [p.split for p in asked] == [1] + ([8] if chunks else []) + ([2, 4] if want == 4 else [])


# ----- the plan is a value ------------------------------------------------------------------------
def test_a_plan_is_frozen_hashable_and_checked():
    p = AscendPlan(rows=4)
    assert {p: 1}[AscendPlan(rows=4)] == 1
    with pytest.raises(AttributeError):
        p.rows = 2  # type: ignore[misc]
    with pytest.raises(ValueError):
        AscendPlan(dots="somewhere")
    assert p.as_dict()["rows"] == 4 and "rows of axis 0 per instance" in p.describe()
    assert AscendPlan.from_dict(AscendPlan(split=2, cube_tiles=(128, 256, 64)).as_dict()) == \
        AscendPlan(split=2, cube_tiles=(128, 256, 64))


def test_no_module_of_the_backend_reads_or_writes_a_retry_flag():
    flags = ("row_cache_dropped", "dot_store_to_vector", "aic_with_vector", "hand_off_dots", '"cube_sections"')
    found = [f"{p.relative_to(ASCEND)}: {f}" for p in ASCEND.rglob("*.py") for f in flags if f in p.read_text()]
    assert found == []


# ----- the plan that won, where users see it --------------------------------------------------------
def test_the_kept_plan_is_in_the_metadata_and_the_profile():
    import numpy as np

    import xblock
    from examples import layernorm, matmul, rmsnorm

    case = rmsnorm.case((97, 1024), np.float16)
    prof = xblock.profile(case.kernel, case.grid, *case.copy_args(), **case.meta)
    plan = AscendPlan.from_dict(prof.plan)
    assert plan.rows > 1 and plan.split == 1  # coarsened, whole blocks (planner unit tests above)
    assert f"plan: {plan.describe()}" in prof.report()
    case = layernorm.case((97, 3001), np.float32)  # w and b read in a loop: not coarsened
    ck = case.kernel.warmup(*case.copy_args(), target="ascend", **dict(case.meta, BLOCK=512))
    assert ck.metadata["plan"]["rows"] == 1 and ck.metadata["per_core_args"] == ["b_ptr", "w_ptr"]
    mm = matmul.case((64, 64, 64), np.float16)
    ck = mm.kernel.warmup(*mm.copy_args(), target="ascend", **mm.meta)
    # the epilogue in row chunks shared by both vector cores (the planner's last step)
    assert AscendPlan.from_dict(ck.metadata["plan"]).split > 1 and ck.metadata["kernel_type"] == MIX_AIC_1_2
    assert ck.metadata["plan"]["dots"] == FIXPIPE
