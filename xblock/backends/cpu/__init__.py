"""The 'cpu' target: xb -> upstream MLIR -> LLVM -> a native shared library run on every core.

Importing this package does not import MLIR: a warm cache loads the cached `.so` directly.
"""

from __future__ import annotations

from ..base import Backend
from .options import CpuOptions


def _stage(name: str):
    def run(src, metadata):
        from . import pipeline  # imports MLIR: only when something compiles

        return getattr(pipeline, name)(src, metadata)

    return run


def _stages(options) -> dict:
    """Stage ext -> maker; listing the stages (as a cache hit does) imports nothing."""
    return {"llvm.mlir": _stage("make_llvm_mlir"), "ll": _stage("make_ll"), "so": _stage("make_so")}


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


BACKEND = Backend("cpu", CpuOptions, _stages, _load, _toolchain_key, binary_stages=("so",))
