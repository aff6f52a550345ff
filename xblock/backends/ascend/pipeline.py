"""The ascend stages, keyed by file extension: xb -> ascendc.mlir -> cpp -> so (the emulator build).

Layout of the backend (each module imports only those below it; rule modules never each other):
- `__init__`: the `Backend`; imports this module (and MLIR) only when something compiles.
- `pipeline` (here): the stages `make_<ext>`, `coverage()`, and the one place that imports the
  rule modules, which fill the table in `rules` as they load. `make_ascendc` lowers a kernel whose
  blocks overflow the unified buffer again, split into chunks by `passes/strip_mine.py`.
- rule modules: `lowering` (element-wise ops, constants, splats, the grid), `bits` (integer bit
  operations and umulhi), `intmath` (unsigned max/min, integer abs), `load`, `store`,
  `atomics`, `layout` (expand_dims, reshape, broadcast, trans), `reduce` (reductions, with the
  scalar-loop fallback), `scan` (scans on rows, with `combine`), `shapes` (join, split, cat,
  gather, histogram), `control` (scf.for/if/while), `debug` (device_assert), `cube`
  (xb.dot and its K loop on the Cube unit).
- `driver`: the one walk (kernel skeleton, rule per op, liveness, the UB plan check).
- helpers: `context` (the rule context `ctx`: lowered values, tiles, queues, names, errors),
  `tiles` (element types, result tiles, vector calls, materializing structure, fences), `casts`
  (conversions between element types, fills), `vmath`
  (math the vector API has no instruction for, composed from those it has),
  `access` (DataCopy/DataCopyPad parameters, gathers and scatters), `cube_match`, `cube_mixed`,
  `cube_plan` (the Cube path's patterns, AIC/AIV protocol and tile plan), `builders`, `values`,
  `rules` (the table and `UNSUPPORTED`).
- `emit` (+ `cube_emit`): ascendc dialect -> AscendC C++; `export`: a CANN project directory.
- `launch`: g++ against `emu/` (xblock's model of AscendC), load and run on numpy; `options`.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import asdict, dataclass

from mlir import ir

from ...dialects import ascendc, xb
from ...errors import CompilationError
from ...passes import coarsen_programs, strip_mine, verify
from .emit.api_surface import check_source
from .emit.cpp import emit
from .lower.driver import Lowering
from .lower.ops import (  # noqa: F401  (register rules)
    atomics,
    bits,
    control,
    debug,
    dot,
    elementwise,
    intmath,
    layout,
    load,
    reduce,
    scan,
    shapes,
    store,
)
from .lower.rules import coverage  # noqa: F401  (complete here, where every rule module is loaded)
from .model.launch import build_emulator_library
from .options import MIX_AIC_1_2


def make_ascendc(module: ir.Module, metadata: dict, options) -> str:
    """xb -> ascendc dialect; records the UB plan, tiling fields and warnings in the metadata.

    Blocks that overflow the unified buffer are computed in chunks: the lowering runs again on copies
    of the module that `xb-strip-mine` split into 2, 4, 8, ... chunks until one fits (`metadata["split"]`
    says how); if none does, the first error stands, with the reason. A kernel whose dots would run on
    the Cube alone beside vector work of its own is lowered again with its dots handed to the vector
    core (a mixed kernel). Only the warnings of the lowering kept are shown.
    """
    given = metadata
    coarse, plain = _coarsened(module, metadata, options)
    if coarse is not None:
        _show(coarse.shown)
        return _kept(coarse, metadata, options)
    tried = plain or _lower(module, given, options)
    if tried.error is not None and tried.meta.get("dot_store_to_vector") and not given.get("hand_off_dots"):
        # a dot's result stored in a shape Fixpipe cannot write (transposed, or past what the operands
        # load): the dot handed to the vector core, whose store takes any shape
        again = _lower(module, dict(metadata, hand_off_dots=True), options)
        if again.error is None or again.low.overflow is not None:
            given, tried = dict(metadata, hand_off_dots=True), again
    if tried.error is not None and tried.meta.get("aic_with_vector"):
        # dots that would go out through Fixpipe alone, beside vector work of the kernel's own: a mixed
        # (AIC + AIV) kernel, its Cube and vector work in sections of their cores; failing that, every
        # dot handed to the vector core
        for ask in ({"cube_sections": True}, {"hand_off_dots": True}):
            again = _lower(module, dict(metadata, **ask), options)
            if again.error is None or again.low.overflow is not None:
                given, tried = dict(metadata, **ask), again
                break
    if tried.low.overflow is not None:
        tried = _split_to_fit(module, given, options, tried)
    elif tried.error is None and _vector_epilogue(tried):
        tried = _both_vector_cores(module, given, options, tried)
    _show(tried.shown)
    if tried.error is not None:
        raise tried.error
    return _kept(tried, metadata, options)


def _kept(tried, metadata: dict, options) -> str:
    """The text of the lowering kept, its metadata (UB plan, tiling fields, warnings) recorded."""
    metadata.update(tried.meta)
    metadata["ub_plan"] = tried.low.ub_plan()
    metadata["tiling_fields"] = tried.low.fields
    metadata["warnings"] = tried.low.warnings
    metadata["soc"] = options.soc
    return tried.out.operation.get_asm(enable_debug_info=True)


@dataclass
class _Attempt:
    """One lowering of an xb module: the result or the error, its metadata and its warnings."""

    low: Lowering
    out: ir.Module | None
    error: CompilationError | None
    meta: dict
    shown: list


def _lower(module: ir.Module, metadata: dict, options) -> _Attempt:
    """One lowering, its warnings recorded (an unexpected exception shows them and propagates)."""
    meta = dict(metadata)
    low = Lowering(module, options, meta)
    out = error = None
    try:
        with warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter("always")
            try:
                with module.context:
                    out = low.run()
                    out.operation.verify()
            except CompilationError as e:
                error = e
    except Exception:
        _show(shown)
        raise
    return _Attempt(low, out, error, meta, shown)


def _show(shown: list) -> None:
    for w in shown:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


# bytes a coarsened program aims to move per load or store: 16 KB, twice the 8 KB above which the
# fixed cost of a DataCopy is small next to its bytes (docs/BENCHMARKS.md, "Ascend cost model")
COARSEN_BYTES = 16384
COARSEN_MAX_ROWS = 64


def _coarsened(module: ir.Module, metadata: dict, options) -> tuple:
    """(the lowering of the kernel with R programs of axis 0 per program instance, or None; the
    lowering as written, when it was made to compare the two, or None).

    `passes/coarsen_programs.py` does the rewrite. R is chosen so that each load and store that
    depends on the program id moves about COARSEN_BYTES, halved until the blocks fit with
    double-buffered queues and leave room for the row cache (row_cache.py) where the kernel has
    one. The coarsened kernel is kept only if it warns of nothing the kernel as written does not (a
    contiguous row that becomes a gather, say, is worse than small copies). None
    when the kernel cannot be coarsened, already moves that much per program, or no R > 1 lowers:
    the kernel is then lowered as written (an optimisation, never a reason to fail)."""
    if options.coarsen is False:
        return None, None
    try:
        per_row, flat = coarsen_programs.row_bytes(module)
    except coarsen_programs.Refused:
        return None, None
    if flat:  # R rows of a flat range under a flat mask would be gathers here: not worth lowering
        return None, None
    rows = 1
    while rows < COARSEN_MAX_ROWS and per_row * rows * 2 <= COARSEN_BYTES:
        rows *= 2
    while rows > 1:
        with module.context:
            copy = ir.Module.parse(module.operation.get_asm(enable_debug_info=True))
            coarsen_programs.run(copy, rows)
            verify(copy, coarsen_programs.NAME)
        meta = dict(metadata, coarsen={"rows": rows, "arg": coarsen_programs.ARG,
                                       "rows_arg": coarsen_programs.ARG_ROWS})
        tried = _lower(copy, meta, options)
        if tried.meta.get("row_cache_dropped"):  # fewer rows per instance leave UB for the row cache
            rows //= 2
            continue
        if tried.error is None and (options.buffer_num == 1 or not _single_buffered(tried.low)):
            if not tried.shown:
                return tried, None
            plain = _lower(module, metadata, options)
            said = {(str(w.message), w.lineno) for w in plain.shown}
            if plain.error is not None or all((str(w.message), w.lineno) in said for w in tried.shown):
                return tried, None
            return None, plain
        rows //= 2
    return None, None


def _split_to_fit(module: ir.Module, metadata: dict, options, first: _Attempt) -> _Attempt:
    """The lowering of the module split into the fewest chunks that fit, or `first` with the reason.

    When those chunks fit only with single-buffered queues, twice as many chunks are taken if they
    fit double-buffered (the copy-in of the next chunk overlaps the work on this one)."""
    factor, last = 2, None
    while True:
        try:
            tried, split = _split(module, metadata, options, factor)
        except strip_mine.Refused as r:
            if r.exhausted and last is not None:
                split, total = last
                return _with_reason(first, f"in {split.describe()} they still need {total} B")
            return _with_reason(first, f"cannot split this kernel's: {r.reason}", r.loc)
        if tried.error is None:
            if _single_buffered(tried.low):
                try:
                    more, more_split = _split(module, metadata, options, factor * 2)
                    if more.error is None and not _single_buffered(more.low):
                        tried, split = more, more_split
                except strip_mine.Refused:
                    pass
            tried.meta["split"] = asdict(split)
            return tried
        if tried.low.overflow is None:
            return _with_reason(first, f"in {split.describe()} the kernel does not lower: {tried.error.message}")
        last = (split, tried.low.overflow["total"])
        factor *= 2


def _vector_epilogue(tried: _Attempt) -> bool:
    """A mixed kernel whose dots' epilogues run on the vector core after the Cube (cube_mixed.py)."""
    cubes = tried.meta.get("cube") or []
    return bool(cubes) and all(c.get("epilogue") == "vector" for c in cubes) and \
        not tried.meta.get("hand_off_dots") and not tried.meta.get("cube_sections")


def _both_vector_cores(module: ir.Module, metadata: dict, options, first: _Attempt) -> _Attempt:
    """The kernel with its dot's epilogue split into row chunks that both vector cores of each AI Core
    share (MIX_AIC_1_2, cube_mixed.py), when that lowers with double-buffered queues; else `first`."""
    for factor in (2, 4, 8):
        try:
            tried, split = _split(module, metadata, options, factor)
        except strip_mine.Refused:
            return first
        if tried.error is None and tried.meta.get("kernel_type") == MIX_AIC_1_2 and not _single_buffered(tried.low):
            tried.meta["split"] = asdict(split)
            return tried
        if tried.error is not None and tried.low.overflow is None:
            return first
    return first


def _split(module: ir.Module, metadata: dict, options, factor: int):
    """The lowering of a copy of the module split into `factor` chunks, and the split (a dot's K loop
    stays whole: the Cube computes it, and the vector core reads its result chunk by chunk)."""
    with module.context:
        copy = ir.Module.parse(module.operation.get_asm(enable_debug_info=True))
        split = strip_mine.run(copy, factor, keep=dot.keeps_whole)
        verify(copy, strip_mine.NAME)
    return _lower(copy, metadata, options), split


def _single_buffered(low: Lowering) -> bool:
    return bool(low.queues) and all(q.num == 1 for q in low.queues)


def _with_reason(attempt: _Attempt, detail: str, loc=None) -> _Attempt:
    """`attempt` whose unified-buffer error says why computing the blocks in chunks did not help."""
    e = attempt.error
    at = f" (line {loc[1]})" if loc and loc[1] and loc[1] != e.line else ""
    error = CompilationError(e.file, e.line, e.col, f"{e.message} (xblock computes blocks that do not fit in "
                             f"chunks, but {detail}{at})", e.source_line)
    return _Attempt(attempt.low, None, error, attempt.meta, attempt.shown)


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
