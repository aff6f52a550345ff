"""The ascend planner: which plan to lower next, from the typed outcome of the last one.

`plans(start)` is a generator: it yields an `AscendPlan`, receives the `Outcome` of lowering it
(`plan.py`), and finally returns a verdict, `Keep(plan)` or `Fail(plan, detail)`. The pipeline
(`pipeline.make_ascendc`) is the one loop that drives it; the planner itself compiles nothing, so
its choices are tested on made-up outcomes (tests/ascend/plan/test_planner.py).

The order of the plans:
1. Coarsened (`rows` > 1) when the kernel's row accesses are small: R rows per instance so that each
   access moves about COARSEN_BYTES, halved while the plan does not fit double-buffered or its row
   cache does not fit; never when its loops read a weight row (`coarsen_rows`). A coarsened plan
   that warns of something the kernel as written does not (a contiguous row become a gather) loses
   to the kernel as written.
2. The kernel as written. A dot that cannot go out through Fixpipe is handed to the vector core
   (`dots` HAND_OFF), or, when the kernel has vector work of its own beside Fixpipe-only dots, its
   Cube and vector work go in sections of their cores (SECTIONS), failing that HAND_OFF. When the
   hand-off fails too, the verdict names it (`Fail.handoff`): its error is the real blocker, shown
   first, then the one of the kernel as written (pipeline._handoff_refused).
3. Blocks that overflow UB are split into 2, 4, 8, ... chunks until they fit (twice as many when
   that keeps the queues double-buffered); a dot's vector epilogue is split into row chunks that
   both vector cores of an AI Core share, when that fits double-buffered.
4. With the option `row_split`, a kernel whose dots hand their results to the vector core (attention)
   is tried with its rows in 2 chunks, one for each vector core of an AI Core (MIX_AIC_1_2,
   cube/rowsplit.py), kept when the lowering took the split and it fits as well; a kernel that overflows
   UB is tried that way first (2, 4, 8 chunks, the vector cores taking every other one) before step 3.
In every plan, resident loads and then the row cache are given up when they do not fit.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..options import MIX_AIC_1_2
from .plan import FIXPIPE, HAND_OFF, SECTIONS, AscendPlan, Fits, NeedsVectorCore, NoRoom, Overflow, SplitRefused

# bytes a coarsened program aims to move per load or store: 16 KB, twice the 8 KB above which the
# fixed cost of a DataCopy is small next to its bytes (docs/BENCHMARKS.md, "Ascend cost model")
COARSEN_BYTES = 16384
COARSEN_MAX_ROWS = 64
BOTH_CORES_CHUNKS = (2, 4, 8)  # the splits tried to share a dot's epilogue between both vector cores


@dataclass(frozen=True)
class Start:
    """What the planner knows before lowering anything.

    row_bytes: bytes one program's accesses that depend on the program id move, or None when the
        kernel cannot be coarsened (`passes/coarsen_programs.row_bytes`); coarsen, resident: the
        options; double_buffer: the queues may take two buffers (option buffer_num != 1); loop_weights: a
        loop of the kernel reads a weight row chunk by chunk, the same in every program; l2_bypass: the
        inputs every plan keeps out of L2 when the launch exceeds it (plan/streaming.py)."""

    row_bytes: int | None = None
    coarsen: bool = True
    resident: bool = True
    double_buffer: bool = True
    loop_weights: bool = False  # a loop reads tiles alike in every program (row_cache.loop_weights)
    l2_bypass: tuple = ()  # the inputs every program reads its own part of, once (plan/streaming.py)
    row_split: bool = False  # the option: hand-off kernels may run their rows on both vector cores
    row_chunks: int = 0  # the option: the chunk count a row split takes (0: the fewest that fit)

    def base(self) -> AscendPlan:
        return AscendPlan(resident=self.resident, row_cache=self.resident, l2_bypass=self.l2_bypass)


@dataclass(frozen=True)
class Keep:
    """The verdict: the lowering of `plan` is the kernel."""

    plan: AscendPlan


@dataclass(frozen=True)
class Fail:
    """The verdict: no plan lowers; the error of `plan`'s lowering stands, with `detail` (why computing
    the blocks in chunks did not help) at `loc`, after that of `handoff` when one was tried."""

    plan: AscendPlan
    detail: str | None = None
    loc: tuple | None = None
    handoff: AscendPlan | None = None  # the plan handing the dots to the vector core, tried after `plan`: it
    # failed too, and its error is the real blocker (the pipeline shows both, that one first)


def coarsen_rows(start: Start) -> list:
    """The rows per instance tried, largest first ([] when the kernel is not coarsened). A kernel whose
    loops read a weight row (`loop_weights`, kept per core by the row cache) is not coarsened: each
    instance would broadcast every weight tile over its R rows on the vector unit, and the weights'
    copies, the ones coarsening would enlarge, are made once per core anyway (layernorm 97 x 3001,
    BLOCK 1024, on the cost model: 10.5 us as written, 12.1 us with 2 rows per instance)."""
    if not start.coarsen or start.row_bytes is None or start.loop_weights:
        return []
    rows = 1
    while rows < COARSEN_MAX_ROWS and start.row_bytes * rows * 2 <= COARSEN_BYTES:
        rows *= 2
    out = []
    while rows > 1:
        out.append(rows)
        rows //= 2
    return out


def plans(start: Start):
    """The planner (module doc): yields plans, receives outcomes, returns Keep or Fail."""
    base = start.base()
    plain = None
    for rows in coarsen_rows(start):
        plan, got = yield from _settle(base.but(rows=rows), coarse=True)
        if got is None or not isinstance(got, Fits) or (start.double_buffer and got.single_buffered):
            continue  # fewer rows per instance
        if not got.warned:
            return Keep(plan)
        plain = yield from _settle(base)
        if not isinstance(plain[1], Fits) or got.warned <= plain[1].warned:
            return Keep(plan)
        break
    plan, got = plain if plain is not None else (yield from _settle(base))
    handed = None  # the hand-off plan tried, when it failed too
    if isinstance(got, NeedsVectorCore) and got.why in ("dot_store", "dot_operand") and plan.dots == FIXPIPE:
        # a dot's result stored in a shape Fixpipe cannot write, or an operand the Cube cannot copy from
        # GM: the vector core's store takes any shape, and it loads any operand for the Cube
        again = yield from _settle(base.but(dots=HAND_OFF))
        if isinstance(again[1], (Fits, Overflow)):
            plan, got = again
        else:
            handed = again[0]
    if isinstance(got, NeedsVectorCore) and got.why == "vector_work":
        # Fixpipe-only dots beside vector work of the kernel's own: a mixed kernel in core sections,
        # failing that every dot handed to the vector core
        for dots in (SECTIONS, HAND_OFF):
            again = yield from _settle(base.but(dots=dots))
            if isinstance(again[1], (Fits, Overflow)):
                plan, got = again
                break
            if dots == HAND_OFF:
                handed = again[0]
    if isinstance(got, Overflow):
        if start.row_split and got.handoff:
            both = yield from _row_split(base.but(dots=plan.dots), None, start.row_chunks)
            if both is not None:
                return Keep(both)
        return (yield from _split_to_fit(base.but(dots=plan.dots), plan))
    if isinstance(got, Fits):
        if got.vector_epilogue and plan.dots == FIXPIPE:
            return (yield from _both_vector_cores(base.but(dots=plan.dots), plan))
        if got.handoff and start.row_split and plan.split == 1 and got.kernel_type != MIX_AIC_1_2:
            both = yield from _row_split(base.but(dots=plan.dots), got, start.row_chunks)
            return Keep(both or plan)
        return Keep(plan)
    return Fail(plan, handoff=handed)


def _settle(plan: AscendPlan, coarse: bool = False):
    """Lower `plan`, giving up resident loads, then the row cache, while they do not fit:
    (the plan lowered last, its outcome). A coarsened plan whose row cache does not fit gives
    (plan, None) instead: fewer rows per instance leave room for it."""
    while True:
        got = yield plan
        if not isinstance(got, NoRoom):
            return plan, got
        if got.what == "cache":
            if coarse:
                return plan, None
            plan = plan.but(row_cache=False)
        else:
            plan = plan.but(resident=False)


def _split_to_fit(base: AscendPlan, first: AscendPlan):
    """The fewest chunks that fit (twice as many if those keep the queues double-buffered), or Fail
    with `first`'s error and why splitting did not help."""
    split, last = 2, None
    while True:
        plan, got = yield from _settle(base.but(split=split))
        if isinstance(got, SplitRefused):
            if got.exhausted and last is not None:
                return Fail(first, f"in {last[0]} they still need {last[1]} B")
            return Fail(first, f"cannot split this kernel's: {got.reason}", got.loc)
        if isinstance(got, Fits):
            if got.single_buffered:
                more, more_got = yield from _settle(base.but(split=split * 2))
                if isinstance(more_got, Fits) and not more_got.single_buffered:
                    return Keep(more)
            return Keep(plan)
        if not isinstance(got, Overflow):
            return Fail(first, f"in {got.chunks} the kernel does not lower: {got.message}")
        last = (got.chunks, got.total)
        split *= 2


def _both_vector_cores(base: AscendPlan, first: AscendPlan):
    """A dot's vector epilogue in row chunks that both vector cores of each AI Core share
    (MIX_AIC_1_2), when that fits double-buffered; else `first`."""
    for split in BOTH_CORES_CHUNKS:
        plan, got = yield from _settle(base.but(split=split))
        if isinstance(got, Fits) and got.kernel_type == MIX_AIC_1_2 and not got.single_buffered:
            return Keep(plan)
        if not isinstance(got, (Fits, Overflow)):
            return Keep(first)
    return Keep(first)


def _row_split(base: AscendPlan, first: Fits | None, chunks: int = 0):
    """A hand-off kernel's rows in chunks that the two vector cores of an AI Core share (MIX_AIC_1_2: the
    lowering takes the split only where every row-indexed block halves, cube/rowsplit.py): 2 chunks when
    the kernel fits whole (`first`, its outcome), and then only if they fit as well (double-buffered if it
    is); 2, 4, 8 while they overflow when it does not (first None), double-buffered. `chunks` (the option
    row_chunks): that count first, kept when it fits (double-buffered if the kernel whole is), else as
    without it. The plan, or None."""
    if chunks:
        plan, got = yield from _settle(base.but(split=chunks, row_split=True))
        if isinstance(got, Fits) and got.kernel_type == MIX_AIC_1_2 and \
                (not got.single_buffered or first is not None and first.single_buffered):
            return plan
    for split in BOTH_CORES_CHUNKS:
        plan, got = yield from _settle(base.but(split=split, row_split=True))
        if isinstance(got, Fits) and got.kernel_type == MIX_AIC_1_2 and \
                (not got.single_buffered or first is not None and first.single_buffered):
            return plan
        taken = isinstance(got, Fits) and got.kernel_type == MIX_AIC_1_2  # (single-buffered: try more chunks)
        if first is not None or not (isinstance(got, Overflow) or taken):
            return None
    return None


def run(start: Start, lower) -> Keep | Fail:
    """Drive the planner: `lower(plan) -> Outcome` for each plan it yields; the verdict."""
    gen = plans(start)
    try:
        plan = next(gen)
        while True:
            plan = gen.send(lower(plan))
    except StopIteration as stop:
        return stop.value


__all__ = ["BOTH_CORES_CHUNKS", "COARSEN_BYTES", "COARSEN_MAX_ROWS", "Fail", "Keep", "Start", "coarsen_rows",
           "plans", "run"]
