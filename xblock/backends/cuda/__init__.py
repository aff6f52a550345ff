"""The 'cuda' target: xb -> Triton TTIR -> Triton's NVIDIA stages (ttgir, llir, ptx, cubin) -> launch.

Importing this package imports neither MLIR, Triton nor torch: the stages import what they need
when something compiles, and the loader imports torch and Triton at the first launch.
`availability`, `to_device` and `to_host` (used by diff and the demo) import torch when called.
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


def _availability() -> str | None:
    """None when kernels can run here; otherwise why not (compiling needs no GPU)."""
    try:
        import torch
    except ImportError:
        return "torch is not installed (compiling to PTX/cubin works; running needs torch and a GPU)"
    if not torch.cuda.is_available():
        return "no CUDA GPU here (compiling to PTX/cubin works)"
    return None


def _to_device(a):
    """A numpy array as a torch CUDA tensor (bf16 arrays travel as their bits)."""
    import numpy as np
    import torch

    if a.dtype.name == "bfloat16":
        return torch.from_numpy(np.ascontiguousarray(a).view(np.int16)).cuda().view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(a)).cuda()


def _to_host(t):
    """A torch CUDA tensor back as a numpy array."""
    import torch

    if t.dtype == torch.bfloat16:
        import ml_dtypes

        return t.view(torch.int16).cpu().numpy().view(ml_dtypes.bfloat16)
    return t.cpu().numpy()


BACKEND = Backend("cuda", CudaOptions, _stages, _load, _toolchain_key, binary_stages=("cubin",),
                  availability=_availability, to_device=_to_device, to_host=_to_host)
