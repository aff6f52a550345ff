"""Compile kernels for a GPU launch on a machine without a GPU (to deploy them as a cache bundle).

`TensorSpec` stands for a torch CUDA tensor in a launch: it has the dtype name and an aligned
`data_ptr`, so the specialization (and the cache key) is the one the real launch computes.
`precompile(kernel, args, meta, **options)` compiles that launch for cuda and caches it; on the GPU
machine, `kernel[grid](*tensors, **meta)` then finds it in `XBLOCK_CACHE_DIR` (or an imported bundle).
"""

from __future__ import annotations

from ...errors import ArgumentError
from ..common import services

_NUMPY_TO_TORCH = {"float16": "torch.float16", "bfloat16": "torch.bfloat16", "float32": "torch.float32",
                   "float64": "torch.float64", "int8": "torch.int8", "int16": "torch.int16",
                   "int32": "torch.int32", "int64": "torch.int64", "uint8": "torch.uint8", "bool": "torch.bool",
                   "uint16": "torch.uint16", "uint32": "torch.uint32", "uint64": "torch.uint64",
                   "float8_e4m3fn": "torch.float8_e4m3fn", "float8_e5m2": "torch.float8_e5m2",
                   "float8_e4m3fnuz": "torch.float8_e4m3fnuz", "float8_e5m2fnuz": "torch.float8_e5m2fnuz"}


class _DtypeName:
    def __init__(self, name: str):
        self.name = name

    def __str__(self) -> str:
        return self.name


class TensorSpec:
    """A stand-in for a torch CUDA tensor: shape, dtype ("float32", torch or numpy dtypes), 16-byte aligned."""

    is_cuda = True

    def __init__(self, shape, dtype, aligned: bool = True):
        name = str(dtype).replace("torch.", "")
        name = getattr(dtype, "name", name) if not isinstance(dtype, str) and hasattr(dtype, "name") else name
        if name not in _NUMPY_TO_TORCH:
            raise ArgumentError(f"TensorSpec: unsupported dtype {dtype} (known: {', '.join(sorted(_NUMPY_TO_TORCH))})")
        self.dtype = _DtypeName(_NUMPY_TO_TORCH[name])
        self.shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        self._ptr = 0x7F0000000000 if aligned else 0x7F0000000004

    @classmethod
    def like(cls, array) -> "TensorSpec":
        return cls(array.shape, array.dtype)

    def data_ptr(self) -> int:
        return self._ptr


def precompile(kernel, args, meta=None, **options):
    """Compile `kernel[grid](*args, **meta, **options)` for cuda without launching it.

    Args:
        kernel: an @xblock.jit kernel (or a @triton.jit / plain function).
        args: the launch's positional arguments; TensorSpec (or numpy arrays) for tensors.
        meta: constexpr keyword arguments (launch options may be among them, as in a launch).
        **options: launch options (num_warps, num_stages, arch, ...).
    Returns:
        The CompiledKernel.
    """
    import numpy as np

    args = tuple(TensorSpec.like(a) if isinstance(a, np.ndarray) else a for a in args)
    return services.jit(kernel).warmup(*args, target="cuda", **{**(meta or {}), **options})
