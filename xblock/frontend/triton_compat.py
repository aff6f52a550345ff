"""Read unmodified `@triton.jit` kernels: map `triton.language` objects to `xblock.language` ones.

Triton need not be installed: this only inspects module and type names.
"""

from __future__ import annotations

import types

from .. import language as xl
from ..host import cdiv, next_power_of_2
from ..language import extra
from ..language.core import NAME_TO_DTYPE, constexpr, pointer_type


class _TritonModule:
    """Stands in for the `triton` module inside a kernel (`triton.cdiv`, `triton.language`)."""

    language = xl

    cdiv = staticmethod(cdiv)
    next_power_of_2 = staticmethod(next_power_of_2)


_MODULES = {
    "triton.language": xl,
    "triton.language.math": xl.math,
    "triton.language.random": xl.random,
    "triton.language.extra": extra,
    "triton.language.extra.cuda": extra.libdevice,
    "triton.language.extra.libdevice": extra.libdevice,
    "triton.language.extra.cuda.libdevice": extra.libdevice,
    "triton.language.standard": xl.standard,
    "triton.language.core": xl,
}


def _dtype(v):
    name = getattr(v, "name", None)
    if type(v).__name__ == "pointer_type":
        return pointer_type(_dtype(v.element_ty))
    if name in NAME_TO_DTYPE:
        return NAME_TO_DTYPE[name]
    raise TypeError(f"triton dtype {v!r} is not supported by xblock")


def translate(v):
    """The xblock equivalent of a global a kernel refers to (itself when not a Triton object)."""
    if isinstance(v, types.ModuleType):
        name = v.__name__
        if name == "triton":
            return _TritonModule
        if name.startswith("triton.language"):
            return _MODULES.get(name, xl)
        return v
    mod = getattr(type(v), "__module__", "") or ""
    if isinstance(v, type):
        mod = v.__module__ or ""
        if mod.startswith("triton.language"):
            if v.__name__ == "constexpr":
                return constexpr
            if hasattr(xl, v.__name__):
                return getattr(xl, v.__name__)
        return v
    if mod.startswith("triton.language"):
        tname = type(v).__name__
        if tname == "constexpr":
            return translate(v.value)
        if tname in ("dtype", "pointer_type"):
            return _dtype(v)
        if tname == "PropagateNan" or tname.endswith("Enum"):
            return v
    fmod = getattr(v, "__module__", "") or ""
    if callable(v) and fmod.startswith("triton.language"):
        name = getattr(v, "__name__", "")
        for ns in (xl, xl.standard, extra.libdevice):  # standard: its private helpers (`_log2`, ...)
            if hasattr(ns, name):
                return getattr(ns, name)
        raise TypeError(f"triton.language.{name} is not supported by xblock yet")
    return v
