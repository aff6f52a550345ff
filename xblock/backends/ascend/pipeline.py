"""The ascend stages, keyed by file extension: xb -> ascendc.mlir -> cpp -> so (the CPU model's build).

The backend, one line per folder (each folder's `__init__` says the same):
- `plan/`: the plan of one lowering (`AscendPlan`), the planner, and the resident-load and row-cache UB plans.
- `lower/`: the walk (`driver`), the rule context, the rule table, the state modules share (`shared`).
- `lower/ops/`: the rule modules, one per family of xb ops; imported here, and nowhere else.
- `vector/`: what the rules build on the vector core: tiles, casts, math, copies, gathers, row work.
- `cube/`: the Cube unit: dot patterns, tiling, L1/L0 operand paths, mixed AIC/AIV kernels.
- `emit/`: the ascendc dialect printed as AscendC C++, checked against the API-surface table.
- `model/`: the CPU model: g++ against `emu/`, the launch on numpy, the cost model, timeline, profile.
- `export/`: a compiled kernel as a CANN kernel-launch project, and the host-side check of it.
Beside them: `options`, `values` (what a block lowers to), `builders`, and this module: the stages
`make_<ext>` and `coverage()`.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import asdict, dataclass

from mlir import ir

from ...dialects import ascendc, xb
from ...dialects.locations import UNKNOWN, error_at, kernel_of, source_loc
from ...errors import CompilationError, XBlockWarning
from ...errors import debug as debugging
from ...passes import coarsen_programs, column_accesses, combine_dot_add, strip_mine, verify
from .cube import rowsplit
from .emit.api_surface import RESERVED_NAMES, check_source
from .emit.cpp import emit
from .lower.driver import Lowering
from .lower.ops import (  # noqa: F401  (register rules)
    atomics,
    bits,
    control,
    debug,
    dot,
    elementwise,
    fmod,
    intmath,
    layout,
    load,
    reduce,
    scan,
    shapes,
    sort,
    store,
)
from .lower.rules import (
    TARGET,
    coverage,  # noqa: F401  (complete here, where every rule module is loaded)
)
from .model.launch import build_emulator_library
from .plan import planner, resident, row_cache, streaming
from .plan.plan import (
    AscendPlan,
    Failed,
    Fits,
    HandOffRefused,
    NeedsVectorCore,
    NoRoom,
    Outcome,
    Overflow,
    SplitRefused,
    VectorCoreNeeded,
)
from .vector.transpose import can_transpose


def make_ascendc(module: ir.Module, metadata: dict, options) -> str:
    """xb -> ascendc dialect; records the plan, the UB plan, tiling fields and warnings in the metadata.

    One loop: the planner (plan/planner.py) yields a plan, `_attempt` prepares the module for it
    (coarsens, strip-mines a copy) and lowers it, and the planner reads the typed outcome, until it
    keeps a plan or gives up with the error of the kernel as written (and why computing its blocks
    in chunks did not help). Only the warnings of the lowering kept are shown.
    """
    attempts: dict = {}
    _cpp_names(module, metadata)
    if combine_dot_add.run(module):  # `acc += dot(a, b)` is a Cube K loop too (TorchInductor's templates)
        verify(module, combine_dot_add.NAME)
    if column_accesses.run(module, _vector_transpose):  # a column-major load or store: row copies, a UB transpose
        verify(module, column_accesses.NAME)

    def lower(plan: AscendPlan):
        if plan not in attempts:
            attempts[plan] = _attempt(module, plan, metadata, options)
        return attempts[plan].outcome

    try:
        verdict = planner.run(_start(module, options, metadata), lower)
    except CompilationError:
        raise
    except Exception as e:  # a bug outside the walk (coarsening, strip-mining): at the kernel's def line
        raise internal_error(e, kernel_of(module).location) from (e if debugging() else None)
    tried = attempts[verdict.plan]
    _show(tried.shown)
    if isinstance(verdict, planner.Fail):
        error = tried.error
        if verdict.handoff is not None and attempts[verdict.handoff].error is not None:
            error = _handoff_refused(attempts[verdict.handoff].error, error)
        raise _with_reason(error, verdict.detail, verdict.loc)
    metadata.update(tried.meta)
    for plan, attempt in attempts.items():  # why a row split tried was not kept (cube/rowsplit.py)
        if plan.row_split and plan != verdict.plan and "row_split" in attempt.meta:
            why = attempt.meta["row_split"]
            if why.get("taken"):  # the lowering took it, the planner did not keep it
                got = attempt.outcome
                why = {"taken": False, "why": f"the row-split plan did not fit as well ({type(got).__name__}"
                                              f"{': ' + got.message[:200] if got.message else ''})"}
            metadata.setdefault("row_split", why)
        elif plan.row_split and plan != verdict.plan and isinstance(attempt.outcome, SplitRefused):
            metadata.setdefault("row_split", {"taken": False, "why": "xb-strip-mine cannot split the rows: "
                                                                     f"{attempt.outcome.reason}"})
    metadata["plan"] = verdict.plan.but(cube_tiles=_cube_tiles(metadata)).as_dict()
    metadata["ub_plan"] = tried.low.ub_plan()
    metadata["tiling_fields"] = tried.low.fields
    metadata["warnings"] = list(tried.low.warnings)
    chunks = getattr(options, "row_chunks", 0)
    if chunks and not (verdict.plan.row_split and verdict.plan.split == chunks):
        # (kept with the lowering's warnings: a process that loads the kernel from the cache is warned too)
        file, line, _ = source_loc(kernel_of(module).location)
        text = (f"ascend: row_chunks={chunks} not used ({_row_chunks_refused(attempts, chunks)}); the plan is "
                f"{verdict.plan.describe()}")
        metadata["warnings"].append(f"{file}:{line or 1}: {text}")
        warnings.warn_explicit(text, XBlockWarning, file, line or 1)
    metadata["soc"] = options.soc
    return tried.out.operation.get_asm(enable_debug_info=True)


def _cpp_names(module: ir.Module, metadata: dict) -> None:
    """A kernel or argument named like a C++ keyword or a type the AscendC source spells (`new`, `half`,
    `int`) takes a trailing "_" on ascend: the name becomes a C++ function, GM_ADDR parameter and tiling
    field (a kernel's own locals are renamed by the emitter, emit/cpp.py `fresh`)."""
    kernel = kernel_of(module)
    names = [ir.StringAttr(a).value for a in ir.ArrayAttr(kernel.attributes["xb.arg_names"])]
    if any(n in RESERVED_NAMES for n in names):
        names = [n + "_" if n in RESERVED_NAMES else n for n in names]
        with module.context:
            kernel.attributes["xb.arg_names"] = ir.ArrayAttr.get([ir.StringAttr.get(n) for n in names])
        metadata["arg_names"] = [n + "_" if n in RESERVED_NAMES else n for n in metadata["arg_names"]]
    name = ir.StringAttr(kernel.attributes["sym_name"]).value
    if name in RESERVED_NAMES:
        with module.context:
            kernel.attributes["sym_name"] = ir.StringAttr.get(name + "_")
        metadata["name"] = name + "_"


def _row_chunks_refused(attempts: dict, chunks: int) -> str:
    """Why the row split in `chunks` chunks (the option row_chunks) is not the kernel's plan."""
    tried = [a for p, a in attempts.items() if p.row_split and p.split == chunks]
    if not tried:
        return "no dot of the kernel hands its result to the vector core (the row split is for those)"
    got, why = tried[-1].outcome, tried[-1].meta.get("row_split") or {}
    if isinstance(got, SplitRefused):
        return f"xb-strip-mine cannot split the rows: {got.reason}"
    if not why.get("taken", True):
        return why.get("why", "the lowering did not take the split")
    if isinstance(got, Overflow):
        return f"the chunks overflow the unified buffer ({got.total} B)"
    if isinstance(got, Fits):
        return "the chunks fit single-buffered only, where the planner's choice is double-buffered"
    return f"{type(got).__name__}: {(got.message or '')[:200]}"


def _cube_tiles(metadata: dict) -> tuple | None:
    """The Cube tiles the lowering chose for the kernel's first dot: (baseM, baseN, baseK, the K of its L1
    tile), or None without a dot (cube/tiling.py CubePlan.tiles)."""
    dots = metadata.get("cube") or []
    return tuple(dots[0]["tiles"]) if dots and dots[0].get("tiles") else None


def _vector_transpose(elem: str, rows: int, cols: int) -> bool:
    """Whether a rows x cols block of `elem` is transposed by TransDataTo5HD (no lane loop), with at
    least 16 of each: a smaller column-major tile is one vector Gather as written (vector/gathers.py)."""
    return rows >= 16 and cols >= 16 and can_transpose(elem, rows, cols)


def _start(module: ir.Module, options, metadata: dict) -> planner.Start:
    """What the planner knows before any lowering: the options, the bytes one program's row accesses
    move when the kernel can be coarsened (R rows of a flat range under a flat mask would be gathers
    here: such a kernel is not coarsened), whether its loops read a weight row, and the inputs every plan
    keeps out of L2 when the launch exceeds it (plan/streaming.py; recorded as metadata["streamed"] for
    the lowering's guard)."""
    row_bytes = None
    if options.coarsen is not False:
        try:
            per_row, flat = coarsen_programs.row_bytes(module)
            row_bytes = None if flat else per_row
        except coarsen_programs.Refused:
            pass
    resident_on = getattr(options, "resident", True)
    streamed = streaming.Streamed()
    if options.profile.l2_bytes and getattr(options, "l2_bypass", True):
        streamed = streaming.analyse(module, metadata.get("written_args"), bool(metadata.get("int_pointers")))
    metadata["streamed"] = {"args": [[n, list(a)] for n, a in streamed.args],
                            "program_bytes": streamed.program_bytes}
    return planner.Start(row_bytes=row_bytes, coarsen=options.coarsen is not False, resident=resident_on,
                         l2_bypass=streamed.names(),
                         double_buffer=options.buffer_num != 1, row_split=getattr(options, "row_split", False),
                         row_chunks=getattr(options, "row_chunks", 0),
                         loop_weights=bool(resident_on) and
                         row_cache.loop_weights(module, metadata.get("written_args")))


@dataclass
class _Attempt:
    """One lowering of a plan: the result or the error, its metadata, warnings and outcome."""

    low: Lowering | None
    out: ir.Module | None
    error: CompilationError | None
    meta: dict
    shown: list
    outcome: Outcome


def _attempt(module: ir.Module, plan: AscendPlan, metadata: dict, options) -> _Attempt:
    """`plan` applied to a copy of the module (rows coarsened, blocks strip-mined) and lowered."""
    meta = dict(metadata)
    chunks = ""
    if plan.rows > 1 or plan.split > 1:
        with module.context:
            module = ir.Module.parse(module.operation.get_asm(enable_debug_info=True))
            if plan.rows > 1:
                coarsen_programs.run(module, plan.rows)
                verify(module, coarsen_programs.NAME)
                meta["coarsen"] = {"rows": plan.rows, "arg": coarsen_programs.ARG,
                                   "rows_arg": coarsen_programs.ARG_ROWS}
            if plan.split > 1:
                try:
                    split = strip_mine.run(module, plan.split, keep=dot.keeps_whole,
                                           along=rowsplit.dot_rows if plan.row_split else None)
                except strip_mine.Refused as r:
                    refused = SplitRefused(reason=r.reason, loc=r.loc, exhausted=r.exhausted)
                    return _Attempt(None, None, None, meta, [], refused)
                verify(module, strip_mine.NAME)
                meta["split"] = asdict(split)
                chunks = split.describe()
    return _lower(module, plan, meta, options, chunks)


def _lower(module: ir.Module, plan: AscendPlan, meta: dict, options, chunks: str) -> _Attempt:
    """One lowering, its warnings recorded (an unexpected exception shows them and propagates)."""
    low = Lowering(module, options, meta, plan)
    out = error = None
    try:
        with warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter("always")
            try:
                with module.context:
                    out = low.run()
                    out.operation.verify()
            except resident.NoRoom as e:  # the planner gives up what did not fit; these warnings go
                return _Attempt(low, None, None, meta, [], NoRoom(what=e.what))
            except CompilationError as e:
                error = e
            except Exception as e:  # a bug of the lowering: at the kernel line it was lowering
                where = low.where if low.loc != UNKNOWN else kernel_of(module).location
                raise internal_error(e, where) from (e if debugging() else None)
    except Exception:
        _show(shown)
        raise
    return _Attempt(low, out, error, meta, shown, _outcome(low, error, meta, shown, chunks))


def _outcome(low: Lowering, error, meta: dict, shown: list, chunks: str) -> Outcome:
    """What the planner reads of a lowering (plan/plan.py)."""
    if error is None:
        cubes = meta.get("cube") or []
        return Fits(single_buffered=bool(low.queues) and all(q.num == 1 for q in low.queues),
                    warned=frozenset((str(w.message), w.lineno) for w in shown), chunks=chunks,
                    kernel_type=meta.get("kernel_type", ""),
                    vector_epilogue=bool(cubes) and all(c.get("epilogue") == "vector" for c in cubes),
                    handoff=any(c.get("epilogue") == "handoff" for c in cubes))
    if isinstance(error, VectorCoreNeeded):
        return NeedsVectorCore(why=error.why, message=error.message, chunks=chunks)
    if low.overflow is not None:
        return Overflow(total=low.overflow["total"], message=error.message, chunks=chunks,
                        handoff=any(c.get("epilogue") == "handoff" for c in meta.get("cube") or []))
    return Failed(message=error.message, chunks=chunks)


def internal_error(e: Exception, where) -> CompilationError:
    """A Python exception inside the ascend backend (a bug of xblock, not of the kernel) as the error
    users see: at the kernel line being compiled, naming the exception; `XBLOCK_DEBUG=1` chains the
    original traceback."""
    what = f"{type(e).__name__}: {e}".splitlines()[0][:300]
    return error_at(where, f"internal error while compiling this line ({what}); this is a bug in xblock, not "
                           "in the kernel: please report it (XBLOCK_DEBUG=1 shows the traceback)", prefix="ascend")


def _show(shown: list) -> None:
    for w in shown:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _handoff_refused(handoff: CompilationError, first: CompilationError) -> CompilationError:
    """The error of a kernel whose dot the Cube could not take (`first`, a VectorCoreNeeded) and which
    the planner's answer, handing the dots to the vector core, could not lower either (`handoff`): the
    hand-off's reason first, at its line, as the real blocker, then the Cube's."""
    cube = _bare(first.message)
    if isinstance(handoff, HandOffRefused):
        at = f" (line {first.line})" if first.line != handoff.line else ""
        text = f"{handoff.reason}, and the Cube cannot take it{at}: {cube}"
        text += f"; {handoff.hint}" if handoff.hint else ""
    else:
        at = f" of line {first.line}" if first.line != handoff.line else ""
        text = f"{_bare(handoff.message)} (xblock hands the dots to the vector core here because the Cube cannot " \
               f"take the dot{at}: {cube})"
    return CompilationError(handoff.file, handoff.line, handoff.col, f"{TARGET}: {text}", handoff.source_line)


def _bare(message: str) -> str:
    return message[len(TARGET) + 2:] if message.startswith(f"{TARGET}: ") else message


def _with_reason(e: CompilationError, detail: str | None, loc=None) -> CompilationError:
    """The error a user sees: `e` (as a plain CompilationError), with why computing the blocks in
    chunks did not help when the planner tried that."""
    if detail is None:
        return e if type(e) is CompilationError else CompilationError(e.file, e.line, e.col, e.message,
                                                                      e.source_line)
    at = f" (line {loc[1]})" if loc and loc[1] and loc[1] != e.line else ""
    return CompilationError(e.file, e.line, e.col, f"{e.message} (xblock computes blocks that do not fit in "
                            f"chunks, but {detail}{at})", e.source_line)


def parse_ascendc(text: str) -> ir.Module:
    ctx = xb.context()
    ascendc.load(ctx)
    with ctx:
        return ir.Module.parse(text)


def make_cpp(text: str, metadata: dict, options) -> str:
    """ascendc dialect -> AscendC C++ (kernel.cpp); every AscendC name in it must be one the API-surface
    table (api_surface.py) has checked against asc-devkit."""
    module = parse_ascendc(text)
    with module.context:
        cpp = emit(module, metadata, options)
    check_source(cpp)
    return cpp


def make_so(cpp: str, metadata: dict, options) -> bytes:
    """kernel.cpp compiled with g++ against xblock's AscendC model into a loadable library."""
    return build_emulator_library(cpp, metadata)


STAGES = (("ascendc.mlir", make_ascendc), ("cpp", make_cpp), ("so", make_so))


def stages(options) -> dict:
    """Stage ext -> fn(previous output, metadata), in order."""
    return {ext: functools.partial(make, options=options) for ext, make in STAGES}
