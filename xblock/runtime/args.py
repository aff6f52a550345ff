"""Launch arguments: their signature types and specialization, as Triton derives them."""

from __future__ import annotations

import numpy as np

_NP_SIG = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64", "int8": "i8",
           "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
           "uint64": "u64", "bool": "i1",
           # float8 arrays as ml_dtypes types (float8_e4m3b11fnuz is not fp8e4b15: pass its bits as uint8)
           "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5", "float8_e4m3fnuz": "fp8e4b8",
           "float8_e5m2fnuz": "fp8e5b16"}
_TORCH_SIG = {"torch.float16": "fp16", "torch.bfloat16": "bf16", "torch.float32": "fp32",
              "torch.float64": "fp64", "torch.int8": "i8", "torch.int16": "i16", "torch.int32": "i32",
              "torch.int64": "i64", "torch.uint8": "u8", "torch.bool": "i1", "torch.uint16": "u16",
              "torch.uint32": "u32", "torch.uint64": "u64", "torch.float8_e4m3fn": "fp8e4nv",
              "torch.float8_e5m2": "fp8e5", "torch.float8_e4m3fnuz": "fp8e4b8", "torch.float8_e5m2fnuz": "fp8e5b16"}


class ArgError(Exception):
    """An argument xblock cannot pass to a kernel; the caller adds the kernel's location."""


def from_dlpack(v):
    """An object exposing only DLPack as an array the targets take: numpy on the host, torch on a GPU."""
    if isinstance(v, np.ndarray) or hasattr(v, "data_ptr") or not hasattr(v, "__dlpack__"):
        return v
    device_type = v.__dlpack_device__()[0] if hasattr(v, "__dlpack_device__") else 1
    if device_type == 1:  # kDLCPU
        return np.from_dlpack(v)
    try:
        import torch
    except ImportError:
        raise ArgError("a device DLPack tensor needs torch to be passed to a kernel") from None
    return torch.from_dlpack(v)


def is_tensor_like(v) -> bool:
    return isinstance(v, np.ndarray) or hasattr(v, "data_ptr")


def describe(name: str, v) -> tuple:
    """(signature string, specialization key) of one runtime argument."""
    if isinstance(v, np.ndarray):
        sig = _NP_SIG.get(v.dtype.name)
        if sig is None:
            raise ArgError(f"argument '{name}' has dtype {v.dtype}, which kernels cannot take")
        if not v.flags.c_contiguous:
            raise ArgError(f"argument '{name}' is not contiguous; pass np.ascontiguousarray(...) instead")
        return "*" + sig, "D" if v.ctypes.data % 16 == 0 else ""
    if hasattr(v, "data_ptr") and hasattr(v, "dtype"):
        sig = _TORCH_SIG.get(str(v.dtype))
        if sig is None:
            raise ArgError(f"argument '{name}' has dtype {v.dtype}, which kernels cannot take")
        if hasattr(v, "is_contiguous") and not v.is_contiguous():  # as numpy views: same message everywhere
            raise ArgError(f"argument '{name}' is not contiguous; pass .contiguous() instead")
        return "*" + sig, "D" if v.data_ptr() % 16 == 0 else ""
    if isinstance(v, (bool, np.bool_)):
        return "i1", ""
    if isinstance(v, (int, np.integer)):
        v = int(v)
        if -(2**31) <= v < 2**31:
            sig = "i32"
        elif 2**31 <= v < 2**32:
            sig = "u32"
        elif -(2**63) <= v < 2**63:
            sig = "i64"
        elif v < 2**64:
            sig = "u64"
        else:
            raise ArgError(f"argument '{name}' = {v} does not fit in 64 bits")
        return sig, "1" if v == 1 else ("D" if v % 16 == 0 else "")
    if isinstance(v, (float, np.floating)):
        return ("fp64" if type(v) is np.float64 else "fp32"), ""
    raise ArgError(f"argument '{name}' has type {type(v).__name__}, which kernels cannot take "
                   "(expected an array, a tensor, an int, a float or a bool)")
