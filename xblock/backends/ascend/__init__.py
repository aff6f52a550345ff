"""The 'ascend' target: xb -> ascendc dialect -> AscendC C++, run on xblock's CPU model of AscendC.

Importing this package does not import MLIR: the functions below import `pipeline` (the stages and
the rule modules), `launch` or `export` only when they are called. `pipeline.py` describes the layout.
"""

from __future__ import annotations

from ..base import Backend
from .options import SOCS, AscendOptions


def _stages(options):
    from .pipeline import stages

    return stages(options)


def _load(asm, metadata):
    from .model.launch import load

    return load(asm, metadata)


def _export(kernel, directory):
    from .export.cann import export

    return export(kernel.asm, kernel.metadata, directory)


def _profile(kernel, grid, *args, **meta):
    from .model.profile import profile

    return profile(kernel, grid, *args, **meta)


def _coverage():
    """(the ops with a lowering rule, {xb op: reason} the target refuses); imports MLIR."""
    from .pipeline import coverage

    return coverage()


def _toolchain_key() -> str:
    from .model.launch import CXX, _emu_digest

    return f"{CXX}|emu={_emu_digest()[:16]}"


def _dot_precision(asked: str) -> str:
    """The Cube multiplies f32 operands whole: Triton's tf32 (its default), tf32x3, bf16x3 and bf16x6
    are computed as ieee (docs/STATUS.md, ascend: dot)."""
    return "ieee"


def _capabilities(options: AscendOptions) -> frozenset:
    """tl.sort/tl.topk of float16/float32 rows reach the lowering as one xb.sort (AscendC Sort and
    Extract on the vector unit, lower/ops/sort.py) instead of the library's bitonic network of permutes."""
    return frozenset({"sort"})


BACKEND = Backend("ascend", AscendOptions, _stages, _load, toolchain_key=_toolchain_key, binary_stages=("so",),
                  export=_export, coverage=_coverage, profile=_profile,
                  timed_by_model=True,  # no NPU here: the CPU model's wall time says nothing of one
                  dot_precision=_dot_precision, capabilities=_capabilities)

__all__ = ["BACKEND", "SOCS", "AscendOptions"]
