"""The 'cpu' target: xb -> upstream MLIR -> LLVM -> a native shared library run on every core.

Importing this package does not import MLIR: a warm cache loads the cached `.so` directly.
"""

from __future__ import annotations

from ..base import Backend
from .options import CpuOptions


def _stages(options) -> dict:
    from .pipeline import stages

    return stages(options)


def _load(asm: dict, metadata: dict):
    from .launch import load

    return load(asm, metadata)


def _toolchain_key() -> str:
    from .launch import host_cpu

    return "cpu-llvm22|opt,llc,gcc|" + host_cpu()


def claims_arguments(args) -> bool:
    """numpy arrays default to the cpu target (when every array argument is one)."""
    import numpy as np

    arrays = [a for a in args if hasattr(a, "__array_interface__") or hasattr(a, "data_ptr")]
    return bool(arrays) and all(isinstance(a, np.ndarray) for a in arrays)


BACKEND = Backend("cpu", CpuOptions, _stages, _load, _toolchain_key, binary_stages=("so",))
