"""What backends use of the runtime, which sits above them: handed down here by the runtime.

Backends import nothing of `runtime/` (docs/DESIGN.md, "Layers and data flow";
tests/unit/test_architecture.py checks it). The few runtime pieces a backend calls are handed down
when the runtime's modules are imported (which `import xblock` does, before any backend module):

- `jit`: runtime/jit.py's `jit`, for the backend helpers that take a plain function or a
  `@triton.jit` kernel where they need an `@xblock.jit` one (cuda's `precompile`, ascend's
  `model.profile`);
- `c_helper`: runtime/fastpath.py's `helper`, the C helper module (built on first use), whose
  direct cpu launch (`cpu_launch`) and `CudaLaunch` base class the cpu and cuda launchers use.
"""

from __future__ import annotations

_HANDED: dict = {}  # name -> what the runtime handed down (set once, when its module is imported)


def hand_down(**entries) -> None:
    """Called by the runtime's modules as they are imported (runtime/jit.py, runtime/fastpath.py)."""
    _HANDED.update(entries)


def jit(fn):
    """`xblock.jit(fn)`: an `@xblock.jit` kernel as is, any other kernel or function wrapped."""
    try:
        make = _HANDED["jit"]
    except KeyError:
        raise RuntimeError("xblock's runtime is not imported (import xblock first)") from None
    return make(fn)


def c_helper():
    """The runtime's C helper module (runtime/fastpath.py), or None where it cannot be built."""
    get = _HANDED.get("c_helper")
    return None if get is None else get()


def cpu_launch():
    """The C helper's direct cpu launch (see runtime/fastpath.c), or None."""
    mod = c_helper()
    return None if mod is None else mod.cpu_launch


def cuda_launch_type():
    """The C helper's `CudaLaunch`, the C base class of cuda launchers (see runtime/fastpath.c), or None."""
    mod = c_helper()
    return None if mod is None else mod.CudaLaunch
