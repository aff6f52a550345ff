"""The 'cuda' target: xb -> Triton TTIR -> Triton's NVIDIA stages (ttgir, llir, ptx, cubin) -> launch.

Importing this package imports neither MLIR, Triton nor torch: the stages import what they need
when something compiles, and the loader imports torch and Triton at the first launch.
"""

from __future__ import annotations

from ..base import Backend
from .options import CudaOptions


def _stages(options: CudaOptions) -> dict:
    from .pipeline import make_stages

    return make_stages(options)


def _load(asm: dict, metadata: dict):
    from .launch import load

    return load(asm, metadata)


def _toolchain_key() -> str:
    from .pipeline import toolchain_key

    return toolchain_key()


def claims_arguments(args) -> bool:
    """True when a launch passes a torch CUDA tensor: cuda is then the default target."""
    for a in args:
        if getattr(a, "is_cuda", False) is True and type(a).__module__.startswith("torch"):
            return True
    return False


BACKEND = Backend("cuda", CudaOptions, _stages, _load, _toolchain_key, binary_stages=("cubin",))
