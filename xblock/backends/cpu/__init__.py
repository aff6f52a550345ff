"""The 'cpu' target: xb -> upstream MLIR -> LLVM -> a native shared library run on every core.

Importing this package does not import MLIR: a warm cache loads the cached `.so` directly. The
functions below import `pipeline` (and with it MLIR) or `launch` only when they are called.
"""

from __future__ import annotations

from ..base import Backend
from .options import CpuOptions

STAGES = ("llvm.mlir", "ll", "so")  # the exts of `pipeline.stages`, listed without importing it


def _stages(options) -> dict:
    """Stage ext -> fn; listing the stages (as a cache hit does) imports nothing."""
    built: list = []

    def stage(ext: str):
        def run(src, metadata):
            if not built:
                from .pipeline import stages  # imports MLIR: only when something compiles

                built.append(stages(options))
            return built[0][ext](src, metadata)

        return run

    return {ext: stage(ext) for ext in STAGES}


def _load(asm: dict, metadata: dict):
    from .launch import load

    return load(asm, metadata)


def _source_digest() -> str:
    """Hash of this backend's own code and the analysis it uses: a change recompiles kernels."""
    import hashlib
    from pathlib import Path

    here = Path(__file__).parent
    h = hashlib.sha256()
    for p in sorted(here.glob("*.py")) + [here.parent.parent / "passes" / "axis_info.py"]:
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


_KEY: list = []


def _toolchain_key() -> str:
    if not _KEY:
        from .launch import host_cpu

        _KEY.append(f"cpu-llvm22|opt,llc,gcc|{_source_digest()}|{host_cpu()}")
    return _KEY[0]


def claims_arguments(args) -> bool:
    """numpy arrays default to the cpu target (when every array argument is one)."""
    import numpy as np

    arrays = [a for a in args if hasattr(a, "__array_interface__") or hasattr(a, "data_ptr")]
    return bool(arrays) and all(isinstance(a, np.ndarray) for a in arrays)


def _roofline():
    from .roofline import roofline

    return roofline()


def _coverage():
    """(the ops with a lowering rule, {xb op: reason} the target refuses); imports MLIR."""
    from . import pipeline  # noqa: F401  (imports the rule modules, which fill the table)
    from .rules import coverage

    return coverage()


BACKEND = Backend("cpu", CpuOptions, _stages, _load, _toolchain_key, binary_stages=("so",),
                  claims_arguments=claims_arguments, coverage=_coverage, roofline=_roofline)
