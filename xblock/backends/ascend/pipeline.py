"""The ascend stages, keyed by file extension: xb -> ascendc.mlir -> cpp -> so (the emulator build)."""

from __future__ import annotations

from collections import OrderedDict

from mlir import ir


def make_ascendc(module: ir.Module, metadata: dict, options) -> str:
    """xb -> ascendc dialect; records the UB plan, tiling fields and warnings in the metadata."""
    from .driver import Lowering
    from .lowering import RULES  # noqa: F401  (fills the rule table)

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
    from ...dialects import ascendc, xb

    ctx = xb.context()
    ascendc.load(ctx)
    with ctx:
        return ir.Module.parse(text)


def make_cpp(text: str, metadata: dict, options) -> str:
    """ascendc dialect -> AscendC C++ (kernel.cpp)."""
    from .emit import emit

    module = parse_ascendc(text)
    with module.context:
        return emit(module, metadata, options)


def make_so(cpp: str, metadata: dict, options) -> bytes:
    """kernel.cpp compiled with g++ against xblock's AscendC model into a loadable library."""
    from .launch import build_emulator_library

    return build_emulator_library(cpp, metadata)


def stages(options) -> "OrderedDict[str, object]":
    return OrderedDict([
        ("ascendc.mlir", lambda m, md: make_ascendc(m, md, options)),
        ("cpp", lambda t, md: make_cpp(t, md, options)),
        ("so", lambda c, md: make_so(c, md, options)),
    ])
