"""Launch arguments: their signature types and specialization, as Triton derives them."""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from ..language.descriptors import host_descriptor_type
from .fastpath import NoFastPath, int_code

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
        return "fp32", ""  # np.float64 too, as Triton 3.6 (a float subclass); an fp64 scalar: a signature's fp64
    raise ArgError(f"argument '{name}' has type {type(v).__name__}, which kernels cannot take "
                   "(expected an array, a tensor, an int, a float or a bool)")


# ------------------------------------------------------------------------------- buffers=
# `kernel[grid](..., buffers=[a0, b0, ...])`: arrays the launch does not pass as arguments but that the
# kernel reaches through addresses (pointer tables of `data_ptr()` / `arr.ctypes.data` values). A launch
# option, not a compile option: it is not part of the kernel's key. Host targets (sim, cpu, ascend's CPU
# model) map and check accesses through integer-made pointers against them as they do arguments, and
# copy what the kernel writes there back to them; targets that cannot take it refuse it.
BUFFERS_OPTION = "buffers"


def extra_buffers(value) -> tuple:
    """The arrays of a `buffers=` launch option, checked: a list or tuple of contiguous host arrays."""
    if value is None:
        return ()
    if is_tensor_like(value) or not isinstance(value, (list, tuple)):
        raise ArgError(f"buffers= takes a list of arrays (buffers=[a0, b0, ...]), got {type(value).__name__}")
    out = []
    for k, v in enumerate(value):
        v = from_dlpack(v)
        if not is_tensor_like(v):
            raise ArgError(f"buffers[{k}] has type {type(v).__name__}: buffers= takes numpy arrays or CPU tensors")
        if getattr(v, "is_cuda", False) or (hasattr(v, "__dlpack_device__") and v.__dlpack_device__()[0] != 1):
            raise ArgError(f"buffers[{k}] is on {v.device}: buffers= names host memory (numpy arrays or CPU "
                           "tensors); a GPU reads device addresses itself")
        contiguous = v.flags.c_contiguous if isinstance(v, np.ndarray) else v.is_contiguous()
        if not contiguous:
            raise ArgError(f"buffers[{k}] is not contiguous: pass the array whose memory the table points into")
        out.append(v)
    return tuple(out)


# ------------------------------------------------------------------------------- tensor descriptors
class TensorDescriptor:
    """A host tensor descriptor (the fields of `triton.tools.tensor_descriptor.TensorDescriptor`) that
    also takes numpy arrays: a kernel parameter receiving one sees a `tl.tensor_descriptor`.

    Args:
        base: the array (numpy, or a tensor with `data_ptr`).
        shape, strides: the tensor's shape and strides in elements (the last stride 1).
        block_shape: the tile shape, powers of 2.
        padding: what out-of-bounds elements read as, "zero" or "nan".
    """

    def __init__(self, base, shape, strides, block_shape, padding: str = "zero"):
        self.base, self.shape, self.strides = base, list(shape), list(strides)
        self.block_shape, self.padding = list(block_shape), padding

    @staticmethod
    def from_tensor(tensor, block_shape, padding: str = "zero") -> "TensorDescriptor":
        if isinstance(tensor, np.ndarray):
            strides = [s // tensor.itemsize for s in tensor.strides]
        else:
            strides = list(tensor.stride())
        return TensorDescriptor(tensor, tensor.shape, strides, block_shape, padding)

    def __repr__(self) -> str:
        return (f"TensorDescriptor(shape={list(self.shape)}, strides={list(self.strides)}, "
                f"block_shape={list(self.block_shape)}, padding={self.padding!r})")


def is_host_descriptor(v) -> bool:
    """A `TensorDescriptor` (Triton's or xblock's): base, shape, strides and block_shape."""
    return type(v).__name__ == "TensorDescriptor" and all(
        hasattr(v, f) for f in ("base", "shape", "strides", "block_shape"))


def _descriptor_flag(v: int) -> str:
    return "1" if v == 1 else ("D" if v % 16 == 0 else "")


def describe_descriptor(name: str, v, taken) -> tuple:
    """(static type, [(arg name, signature, specialization flag, value)]) of a host descriptor.

    The kernel receives its base pointer, shape (int32) and strides (int64) as separate arguments,
    named after the parameter (`x_desc_base`, `x_desc_shape0`, ...); `taken` are the kernel's
    parameter names, which they must not clash with.
    """
    base = from_dlpack(v.base)
    sig, flag = describe(name, base)
    shape, strides, block = ([int(x) for x in getattr(v, f)] for f in ("shape", "strides", "block_shape"))
    ndim = len(shape)
    if not 1 <= ndim <= 5 or len(strides) != ndim or len(block) != ndim:
        raise ArgError(f"argument '{name}': a tensor descriptor needs 1 to 5 dimensions and as many strides and "
                       f"block sizes (got shape {shape}, strides {strides}, block_shape {block})")
    if strides[-1] != 1:
        raise ArgError(f"argument '{name}': a tensor descriptor's last stride must be 1, got {strides[-1]}")
    if any(b <= 0 or b & (b - 1) for b in block):
        raise ArgError(f"argument '{name}': block_shape {block} must be powers of 2")
    if any(not 0 < s < 2**31 for s in shape):
        raise ArgError(f"argument '{name}': descriptor shape {shape} must be positive and fit in int32")
    padding = getattr(v, "padding", "zero") or "zero"
    if padding not in ("zero", "nan"):
        raise ArgError(f"argument '{name}': padding must be 'zero' or 'nan', got {padding!r}")
    if padding == "nan" and not sig[1:].startswith(("fp", "bf")):
        raise ArgError(f"argument '{name}': padding 'nan' needs a floating-point tensor, got {sig[1:]}")
    names = host_descriptor_type.arg_names(name, ndim)
    clash = sorted(set(names) & set(taken))
    if clash:
        raise ArgError(f"argument '{name}': a tensor descriptor passes its parts as {', '.join(names)}, but the "
                       f"kernel has a parameter named {clash[0]}")
    parts = [(names[0], sig, flag, base)]
    parts += [(n, "i32", _descriptor_flag(s), s) for n, s in zip(names[1:1 + ndim], shape)]
    parts += [(n, "i64", _descriptor_flag(s), s) for n, s in zip(names[1 + ndim:], strides)]
    return host_descriptor_type(sig[1:], block, padding), parts


# ------------------------------------------------------------------------------ buckets
def pow2_bucket(v: int) -> int:
    return 1 << (v - 1).bit_length() if v > 0 else v


def _list_bucket(bounds):
    def bucket(v: int):
        for b in bounds:
            if v <= b:
                return b
        return ("above", bounds[-1], pow2_bucket(v))  # beyond the list: powers of two

    return bucket


def bucket_rule(name, rule):
    """The function from a value to its bucket, for `buckets={name: "pow2" | [bounds]}`."""
    if rule == "pow2":
        return pow2_bucket
    if isinstance(rule, (list, tuple)) and rule and all(type(b) is int for b in rule):
        if list(rule) != sorted(set(rule)):
            raise ConfigError(f"buckets['{name}']: the bounds must be increasing, got {list(rule)}")
        return _list_bucket(tuple(rule))
    raise ConfigError(f"buckets['{name}'] must be 'pow2' or a list of increasing ints, got {rule!r}")


def bucket_code(bucket, mode: int):
    """The code of a bucketed int: its bucket, its int class, and `% 16 == 0` unless `mode` drops
    it; never `== 1` (the kernel takes any value of its bucket)."""

    def code(v):
        if type(v) is not int:
            raise NoFastPath
        c = int_code(v, 2)
        if mode == 0 and v & 15 == 0:
            c += 1
        return (bucket(v), c)

    return code
