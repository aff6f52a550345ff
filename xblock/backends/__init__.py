"""The registry of targets. Backends are imported lazily; nothing outside `backends/` names a target."""

from __future__ import annotations

import importlib

# target name -> module defining `BACKEND` (an object with the Backend protocol of base.py)
_TARGETS = {
    "sim": "xblock.sim.backend",
    "cpu": "xblock.backends.cpu",
    "cuda": "xblock.backends.cuda",
    "ascend": "xblock.backends.ascend",
}
_LOADED: dict = {}
REFERENCE = "sim"  # the target that defines the semantics: diff compares the others with it


from ..errors import XBlockError  # noqa: E402


class TargetUnavailable(XBlockError):
    """The target exists but cannot compile or run here (not built yet, or missing a toolchain)."""


class MissingToolError(TargetUnavailable, RuntimeError):
    """A tool the target runs (`opt`, `llc` of a wheel) is missing from this installation."""


def targets() -> list[str]:
    return list(_TARGETS)


class UnknownTarget(XBlockError, ValueError):
    """A target name that is not registered."""


def get_backend(name: str):
    """The backend object of target `name`."""
    if name not in _TARGETS:
        import difflib

        close = difflib.get_close_matches(str(name), list(_TARGETS), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise UnknownTarget(f"unknown target '{name}' (known: {', '.join(_TARGETS)}){hint}")
    if name not in _LOADED:
        mod = importlib.import_module(_TARGETS[name])
        backend = getattr(mod, "BACKEND", None)
        if backend is None:
            raise TargetUnavailable(f"target '{name}' is not available in this version of xblock")
        _LOADED[name] = backend
    return _LOADED[name]


_DEFAULT = "cpu"  # the target of a launch whose arguments no backend claims (numpy arrays run natively)


def default_target(args) -> str:
    """The target implied by the launch arguments: each backend says which arrays it owns."""
    for name in _TARGETS:
        if get_backend(name).claims_arguments(args):
            return name
    return _DEFAULT


def exporting_targets() -> list[str]:
    """The targets that can write a buildable project of a compiled kernel."""
    return [name for name in _TARGETS if get_backend(name).export is not None]


def profiling_targets() -> list[str]:
    """The targets with a cost model (`xblock.profile`)."""
    return [name for name in _TARGETS if get_backend(name).profile is not None]


def all_option_names() -> frozenset:
    """Every launch option some target reads (popped from a launch's keyword arguments)."""
    names: set = set()
    for name in _TARGETS:
        names |= get_backend(name).option_names
    return frozenset(names)
