"""Read unmodified `@triton.jit` kernels: map `triton.language` objects to `xblock.language` ones.

Triton need not be installed: this only inspects module and type names.
"""

from __future__ import annotations

import importlib
import types

from .. import language as xl
from ..host import cdiv, next_power_of_2
from ..language import extra
from ..language.core import NAME_TO_DTYPE, constexpr, pointer_type
from .types import SemanticError


class _TritonModule:
    """Stands in for the `triton` module inside a kernel (`triton.cdiv`, `triton.language`)."""

    cdiv = staticmethod(cdiv)
    next_power_of_2 = staticmethod(next_power_of_2)

    def __getattr__(self, name):
        if name == "language":
            import triton.language

            return translate(triton.language)
        raise AttributeError(f"module 'triton' has no attribute '{name}' inside a kernel")


_TRITON = _TritonModule()

# the Triton modules a kernel may name, and the xblock module that holds what they hold
_MODULES = {
    "triton.language": xl,
    "triton.language.math": xl.math,
    "triton.language.random": xl.random,
    "triton.language.extra": extra,
    "triton.language.extra.cuda": extra,
    "triton.language.extra.libdevice": extra.libdevice,
    "triton.language.extra.cuda.libdevice": extra.libdevice,
    "triton.language.extra.hip": extra,
    "triton.language.extra.hip.libdevice": extra.libdevice,
    "triton.language.standard": xl.standard,
    "triton.language.core": xl.core,
}

# names a module held in older Triton that xblock keeps reading: `tl.math.<name>` was libdevice's set
_LEGACY = {"triton.language.math": xl.math}


class _Mirror(types.ModuleType):
    """A Triton module as a kernel sees it: a name resolves only where the Triton module has it (what
    the user wrote is checked against Triton, not against xblock's wider namespace), then to xblock's
    object of that name; one that xblock lacks is an error naming it."""

    def __init__(self, triton_module, xb_module):
        super().__init__(triton_module.__name__)
        self._triton, self._xb = triton_module, xb_module

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        tmod = self._triton
        if not hasattr(tmod, name):
            try:  # a submodule not imported yet (`tl.extra.libdevice`)
                importlib.import_module(f"{tmod.__name__}.{name}")
            except ImportError:
                pass
        if not hasattr(tmod, name):
            if tmod.__name__ in _LEGACY and hasattr(_LEGACY[tmod.__name__], name):
                return getattr(_LEGACY[tmod.__name__], name)
            raise AttributeError(name)  # the frontend says: module 'triton.language' has no attribute ...
        v = getattr(tmod, name)
        if isinstance(v, types.ModuleType):
            return translate(v)
        if hasattr(self._xb, name):
            return getattr(self._xb, name)
        return translate(v)


_MIRRORS: dict = {}


def _mirror(module):
    m = _MIRRORS.get(module.__name__)
    if m is None or m._triton is not module:
        name = module.__name__
        if name not in _MODULES:
            raise SemanticError(f"{name} is not supported by xblock: it is not one of the triton.language "
                                f"modules xblock reads ({', '.join(sorted(_MODULES))})")
        m = _MIRRORS[name] = _Mirror(module, _MODULES[name])
    return m


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
            return _TRITON
        if name == "triton.language" or name.startswith("triton.language."):
            return _mirror(v)
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
        for ns in (xl, xl.core, xl.standard, extra.libdevice):  # standard: its private helpers (`_log2`, ...)
            if hasattr(ns, name):
                return getattr(ns, name)
        raise TypeError(f"triton.language.{name} is not supported by xblock yet")
    return v
