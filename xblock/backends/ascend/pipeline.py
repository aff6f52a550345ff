"""The ascend stages, keyed by file extension: xb -> ascendc.mlir -> cpp -> so (the emulator build).

Layout of the backend (each module imports only those below it; rule modules never each other):
- `__init__`: the `Backend`; imports this module (and MLIR) only when something compiles.
- `pipeline` (here): the stages `make_<ext>`, `coverage()`, and the one place that imports the
  rule modules, which fill the table in `rules` as they load.
- rule modules: `lowering` (element-wise ops, constants, splats, the grid), `bits` (integer bit
  operations and umulhi), `load`, `store`,
  `atomics`, `layout` (expand_dims, reshape, broadcast, trans), `reduce` (reductions and scans,
  with the scalar-loop fallback), `shapes` (join, split, cat, gather, histogram), `control`
  (scf.for/if/while), `debug` (device_assert), `cube`
  (xb.dot and its K loop on the Cube unit).
- `driver`: the one walk (kernel skeleton, rule per op, liveness, the UB plan check).
- helpers: `context` (the rule context `ctx`: lowered values, tiles, queues, names, errors),
  `tiles` (element types, result tiles, vector calls, materializing structure, fences), `vmath`
  (math the vector API has no instruction for, composed from those it has),
  `access` (DataCopy/DataCopyPad parameters, gathers and scatters), `cube_match`, `cube_mixed`,
  `cube_plan` (the Cube path's patterns, AIC/AIV protocol and tile plan), `builders`, `values`,
  `rules` (the table and `UNSUPPORTED`).
- `emit` (+ `cube_emit`): ascendc dialect -> AscendC C++; `export`: a CANN project directory.
- `launch`: g++ against `emu/` (xblock's model of AscendC), load and run on numpy; `options`.
"""

from __future__ import annotations

import functools

from mlir import ir

from ...dialects import ascendc, xb
from . import atomics, bits, control, cube, debug, layout, load, lowering, reduce, shapes, store  # noqa: F401  (register rules)
from .api_surface import check_source
from .driver import Lowering
from .emit import emit
from .launch import build_emulator_library
from .rules import coverage  # noqa: F401  (complete here, where every rule module is loaded)


def make_ascendc(module: ir.Module, metadata: dict, options) -> str:
    """xb -> ascendc dialect; records the UB plan, tiling fields and warnings in the metadata."""
    low = Lowering(module, options, metadata)
    with module.context:
        out = low.run()
        out.operation.verify()
    metadata["ub_plan"] = low.ub_plan()
    metadata["tiling_fields"] = low.fields
    metadata["warnings"] = low.warnings
    metadata["soc"] = options.soc
    return out.operation.get_asm(enable_debug_info=True)


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
