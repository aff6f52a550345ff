"""Options of the 'cuda' target: Triton's launch options, passed through to Triton's NVIDIA stages.

Also the installed Triton's version, which keys the cache; neither needs Triton imported.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

from ...errors import OptionError
from ..base import BaseOptions

DEFAULT_ARCH = 90  # compute capability compiled for when no GPU says otherwise (an H100/H200)
PINNED_TRITON = "3.6.0"  # the Triton the cuda target is built and tested against (pyproject's cuda extra)


def triton_version() -> str:
    """The installed Triton's version, read without importing it (cache keys need no import)."""
    try:
        return version("triton")
    except PackageNotFoundError:
        return "none"


def triton_installed() -> bool:
    """Whether Triton can be imported, without importing it. A folder named `triton` on sys.path
    without an `__init__.py` (`examples/triton/`, where the CLI put a kernel file's folder on the
    path) is a namespace package: it does not count."""
    import importlib.util

    spec = importlib.util.find_spec("triton")
    return spec is not None and spec.origin is not None


def detect_arch() -> int:
    """The compute capability of the current torch CUDA device, or DEFAULT_ARCH without one.

    Only looks at torch when the caller already imported it (a launch on torch tensors), so that
    compiling on a machine without a GPU neither imports torch nor depends on it.
    """
    torch = sys.modules.get("torch")
    if torch is None:
        return DEFAULT_ARCH
    try:
        if not torch.cuda.is_available():
            return DEFAULT_ARCH
        major, minor = torch.cuda.get_device_capability()
        return major * 10 + minor
    except Exception:  # no driver, no device: compile for the default
        return DEFAULT_ARCH


@dataclass(frozen=True)
class CudaOptions(BaseOptions):
    """Triton's option names and defaults (`triton.backends.nvidia.compiler.CUDAOptions`).

    `arch` is the compute capability (80, 90, ...); None means the current GPU's (90 without one),
    resolved here so that it is part of the cache key. `debug` keeps `device_assert`s, as in Triton.
    """

    arch: int | None = None
    num_ctas: int = 1
    maxnreg: int | None = None
    enable_fp_fusion: bool = True
    launch_pdl: bool = False
    debug: bool = False

    def __post_init__(self):
        arch = self.arch
        if arch is None:
            arch = detect_arch()
        elif isinstance(arch, str):  # "sm_90", "sm90", "90"
            arch = int(arch.lower().replace("sm_", "").replace("sm", ""))
        object.__setattr__(self, "arch", int(arch))
        if self.num_warps <= 0 or self.num_warps & (self.num_warps - 1):
            raise OptionError(f"num_warps must be a power of 2, got {self.num_warps}")

    def triton_options(self) -> dict:
        """The options dict handed to Triton's `CUDABackend.parse_options`."""
        opts = dict(num_warps=self.num_warps, num_stages=self.num_stages, num_ctas=self.num_ctas,
                    enable_fp_fusion=self.enable_fp_fusion, launch_pdl=self.launch_pdl, debug=self.debug)
        if self.maxnreg is not None:
            opts["maxnreg"] = self.maxnreg
        return opts
