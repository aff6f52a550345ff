"""The launch hot path: per-argument specialization codes and the direct launches of cpu and cuda.

Each runtime argument of a launch maps to a small hashable *code* that holds everything the full
path of `JITFunction.run` reads from it (type, dtype, 16-byte alignment, contiguity, int range,
`== 1`); a launch whose codes were seen before reuses that launch's kernel without binding,
describing or hashing anything else. The codes come from a C helper (compiled once with the host
C compiler into the cache, loaded as a Python extension) or, where it cannot be built, from the
Python functions below, which compute the same codes.

Codes: an int in 0..11 (int range class * 3 + 0, 1 for `% 16 == 0`, 2 for `== 1`), 12 for a bool,
13 for a float, 16 + ((type_num * 2 + aligned) * 2 + c_contiguous) for a numpy array, None for
None; any other argument gets a tuple from `spec_other`, or `NoFastPath` when the launch must take
the full path (host tensor descriptors, DLPack-only objects).

The helper also launches: `cpu_launch` runs a cpu kernel's grid on the calling thread, and
`CudaLaunch`, the C base of cuda launchers, packs a cuda kernel's parameters and calls
`cuLaunchKernel` on the current torch stream. Both hand anything they do not cover back to Python.
And it dispatches: `dispatch(...)` is a kernel's memo of launches in C, whose `[grid]` is what
`kernel[grid]` returns once the kernel ran: calling it binds the arguments, computes their codes
and finds the launch without running Python (see the C source, `fastpath.c`, "the launch memo").
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import sysconfig
import threading
from pathlib import Path

import numpy as np

from ..backends.common import services
from ..backends.common.cachedir import cache_dir

MODES = {"all": 0, "no_align": 1, "none": 2}  # what of a value is specialized: Triton's three policies
_LITTLE = sys.byteorder == "little"


class NoFastPath(Exception):
    """The launch has an argument the hot path does not describe: it takes the full path."""


# ------------------------------------------------------------------------------ Python codes
def int_code(v: int, mode: int = 0):
    if -0x80000000 <= v < 0x80000000:
        cls = 0
    elif 0 <= v < 0x100000000:
        cls = 1
    elif -0x8000000000000000 <= v < 0x8000000000000000:
        cls = 2
    elif 0 <= v < 0x10000000000000000:
        cls = 3
    else:
        raise NoFastPath  # beyond 64 bits: the full path refuses it
    if mode <= 1 and v == 1 and cls == 0:
        return 2
    if mode == 0 and v & 15 == 0:
        return cls * 3 + 1
    return cls * 3


def _array_code(v, mode: int):
    if v.dtype.byteorder == (">" if _LITTLE else "<"):
        raise NoFastPath  # a byte-swapped array: the full path
    aligned = mode == 0 and v.__array_interface__["data"][0] & 15 == 0
    return 16 + ((v.dtype.num * 2 + aligned) * 2 + v.flags.c_contiguous)


def spec_py(v, mode: int = 0):
    """The code of one runtime argument (see the module's docstring); the C helper's twin."""
    t = type(v)
    if t is int:
        return int_code(v, mode)
    if t is np.ndarray:
        return _array_code(v, mode)
    if t is bool:
        return 12
    if t is float:
        return 13
    if v is None:
        return None
    return spec_other(v, mode)


def spec_other(v, mode: int = 0):
    """Code of an argument that is not an exact int, bool, float, numpy array or None."""
    t = type(v)
    if isinstance(v, np.integer) and not isinstance(v, np.bool_):
        return (t, int_code(int(v), mode))
    if isinstance(v, (np.floating, np.bool_)):
        return (t,)
    if isinstance(v, np.ndarray):  # a subclass (np.memmap, ...): the Python launchers take it
        return (t, _array_code(v, mode))
    try:  # a tensor: what describe() and the targets' claims read
        code = (t, v.dtype, mode == 0 and v.data_ptr() & 15 == 0, True if v.is_cuda else str(v.device),
                v.is_contiguous())
    except AttributeError:
        raise NoFastPath from None
    if t.__name__ == "Tensor" and t.__module__.startswith("torch") and _HELPER and _HELPER[0] is not None:
        _HELPER[0].set_tensor_type(t)  # the helper computes these codes from now on
    return code


def constexpr_code(v):
    """A constexpr's part of the key: the value, with its type where `==` would mix 1, 1.0 and True."""
    return v if type(v) is int else (type(v), v)


# ------------------------------------------------------------------------------ the C helper
C_FILE = Path(__file__).with_name("fastpath.c")  # its source, built with the host C compiler on first use
C_SOURCE = C_FILE.read_text() if C_FILE.exists() else ""  # missing: the Python codes and launches serve

_HELPER: list = []  # [module or None], once per process
_LOCK = threading.Lock()


def _build(path) -> None:
    """Compile C_SOURCE into the extension module at `path` (atomically: written aside, then renamed)."""
    include = sysconfig.get_paths()["include"]
    src = path.with_suffix(f".{os.getpid()}.c")
    part = path.with_suffix(f".{os.getpid()}.part")
    src.write_text(C_SOURCE)
    try:
        cc = os.environ.get("CC", "cc")
        subprocess.run([cc, "-O2", "-shared", "-fPIC", f"-I{include}", str(src), "-o", str(part)], check=True,
                       capture_output=True, timeout=120)
        os.replace(part, path)
    finally:
        for p in (src, part):
            try:
                p.unlink()
            except OSError:
                pass


def _load_helper():
    if os.environ.get("XBLOCK_NO_C_HELPER") or not C_SOURCE:
        return None
    tag = f"{sys.implementation.cache_tag}-{np.__version__}-{sys.platform}"
    digest = hashlib.sha256((C_SOURCE + tag).encode()).hexdigest()[:16]
    path = cache_dir() / ".ext" / f".fastpath-{digest}.so"  # hidden: not a cache entry
    try:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            _build(path)
        loader = importlib.machinery.ExtensionFileLoader("xblock_fastpath", str(path))
        spec = importlib.util.spec_from_loader("xblock_fastpath", loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
    except (OSError, subprocess.SubprocessError, ImportError):
        return None  # no compiler, no headers, or a cache that cannot hold it: the Python codes serve
    mod.init(np.ndarray, spec_other, ord(">" if _LITTLE else "<"))
    return mod if _agrees(mod) else None


def _agrees(mod) -> bool:
    """The helper reads arrays as numpy does, and computes the Python codes (else it is not used)."""
    probes = [np.zeros(5, np.float32), np.zeros((3, 4), np.int64).T, np.zeros(7, np.uint8)[1:],
              np.zeros(2, np.float16), 0, 1, 16, -16, 2**31, 2**32 + 16, 2**63, -(2**63), True, 1.5, None]
    a = probes[1]
    ro = np.zeros(3)
    ro.flags.writeable = False
    for arr in (*probes[:4], ro):
        addr, num, flags = mod.array_info(arr)
        if (addr, num) != (arr.__array_interface__["data"][0], arr.dtype.num):
            return False
        if bool(flags & 1) != arr.flags.c_contiguous or bool(flags & 0x400) != arr.flags.writeable:
            return False
    del a
    for mode, fn in enumerate((mod.spec, mod.spec_no_align, mod.spec_none)):
        if any(fn(v) != spec_py(v, mode) for v in probes):
            return False
    return True


def helper():
    """The C helper module, built and loaded on first use; None where it cannot be."""
    if not _HELPER:
        with _LOCK:
            if not _HELPER:
                _HELPER.append(_load_helper())
    return _HELPER[0]


def spec_functions() -> tuple:
    """(spec, spec_no_align, spec_none): the C helper's functions, or the Python ones."""
    mod = helper()
    if mod is not None:
        return mod.spec, mod.spec_no_align, mod.spec_none
    return spec_py, (lambda v: spec_py(v, 1)), (lambda v: spec_py(v, 2))


def cpu_launch():
    """The helper's direct cpu launch (see C_SOURCE), or None."""
    mod = helper()
    return None if mod is None else mod.cpu_launch


def cuda_launch_type():
    """The helper's `CudaLaunch`, the C base class of cuda launchers (see C_SOURCE), or None."""
    mod = helper()
    return None if mod is None else mod.CudaLaunch


# the cpu and cuda launchers reach the helper through backends/common/services.py (they import
# nothing of the runtime, which is above them)
services.hand_down(c_helper=helper)


MAX_PARAMS = 64  # the C memo's limit (XB_MAX_PARAMS): a kernel with more parameters keeps the Python path
CONSTEXPR = 3  # a dispatch mode beside MODES' values: the parameter's value itself is part of the key
_NO_DEFAULT = object()


def dispatch(kernel, params, modes, defaults: dict, options, miss, grid_miss, error_type, surface):
    """The C memo of `kernel`'s launches (see C_SOURCE, "the launch memo"), or None without the helper.

    Args:
        kernel: the JITFunction, handed back to `miss` and `grid_miss`.
        params: the kernel's parameter names, in order.
        modes: per parameter, its MODES value, or CONSTEXPR.
        defaults: parameter -> default value.
        options: keywords of a launch that are launch options (`target` among them).
        miss: miss(kernel, key or None, grid, args, kwargs) -> the CompiledKernel: the Python path,
            which calls `learn(key, ck)` on the dispatch once it launched.
        grid_miss: grid_miss(kernel, grid, values) -> (grid3, positions of the values it read, or None).
        error_type, surface: a launch's error of error_type is raised as surface(error).
    """
    mod = helper()
    if mod is None or len(params) > MAX_PARAMS:
        return None
    return mod.dispatch(kernel, tuple(params), bytes(modes), tuple(defaults.get(p, _NO_DEFAULT) for p in params),
                        _NO_DEFAULT, frozenset(options), miss, grid_miss, error_type, surface)
