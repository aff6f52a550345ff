"""The 'cuda' target: xb -> Triton TTIR -> Triton's NVIDIA stages (ttgir, llir, ptx, cubin) -> launch.

Importing this package imports neither MLIR, Triton nor torch: the stages import what they need
when something compiles, and the loader imports torch and Triton at the first launch.
`availability`, `device_name`, `to_device` and `to_host` (used by diff, autotune and the demo)
import torch when called.
"""

from __future__ import annotations

from ..base import Backend
from .options import PINNED_TRITON, CudaOptions, triton_installed, triton_version

STAGES = ("ttir", "ttgir", "llir", "ptx", "cubin")  # the exts of `pipeline.stages`, listed without importing it


def _require_triton() -> None:
    from .. import TargetUnavailable

    if not triton_installed():
        raise TargetUnavailable("the cuda target needs Triton to compile: pip install 'xblock[cuda]' "
                                f"(triton=={PINNED_TRITON})")


def _stages(options: CudaOptions) -> dict:
    """Stage ext -> fn; listing the stages (as a cache hit does) imports nothing."""
    built: list = []

    def stage(ext: str):
        def run(src, metadata):
            if not built:
                _require_triton()
                from .pipeline import stages  # imports MLIR and Triton: only when something compiles

                built.append(stages(options))
            return built[0][ext](src, metadata)

        return run

    return {ext: stage(ext) for ext in STAGES}


def _load(asm: dict, metadata: dict):
    from .launch import load

    return load(asm, metadata)


def _toolchain_key() -> str:
    return f"triton=={triton_version()}"


def claims_arguments(args) -> bool:
    """True when a launch passes a torch CUDA tensor: cuda is then the default target."""
    for a in args:
        if getattr(a, "is_cuda", False) is True and type(a).__module__.startswith("torch"):
            return True
    return False


def _availability() -> str | None:
    """None when kernels can run here; otherwise why not (compiling needs Triton, not a GPU)."""
    compiles = "compiling to PTX/cubin works" if triton_installed() else \
        "compiling needs Triton too: pip install 'xblock[cuda]'"
    try:
        import torch
    except ImportError:
        return f"torch is not installed ({compiles}; running needs torch and a GPU)"
    if not torch.cuda.is_available():
        return f"no CUDA GPU here ({compiles})"
    return None


def _device_name() -> str:
    """The GPU's name (autotune results are kept per device), or "cuda" where torch cannot tell."""
    try:
        import torch

        return torch.cuda.get_device_name()
    except Exception:
        return "cuda"


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


def _roofline():
    from .roofline import roofline

    return roofline()


TMA_ARCH = 90  # the first compute capability with the Tensor Memory Accelerator (Hopper)


def _capabilities(options: CudaOptions) -> frozenset:
    """Tensor descriptors reach the TTIR as Triton's descriptor ops (TMA) from sm_90 on; below, the
    frontend lowers them to masked pointer accesses, as Triton's own RewriteTensorDescriptorToPointer does."""
    return frozenset({"tensor_descriptors"}) if options.arch >= TMA_ARCH else frozenset()


def _coverage():
    """(the ops with a lowering rule, {xb op: reason} the target refuses); imports MLIR, not Triton."""
    from . import pipeline  # noqa: F401  (imports the rule module, which fills the table)
    from .rules import coverage

    return coverage()


BACKEND = Backend("cuda", CudaOptions, _stages, _load, _toolchain_key, binary_stages=("cubin",),
                  availability=_availability, to_device=_to_device, to_host=_to_host,
                  claims_arguments=claims_arguments, device_name=_device_name, coverage=_coverage,
                  roofline=_roofline, capabilities=_capabilities)
