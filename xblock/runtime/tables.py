"""Pointer tables into arrays the launch does not name, resolved from what the caller holds.

A kernel that turns integers into pointers (`tl.load(table + i).to(tl.pointer_type(...))`, Triton's
grouped-GEMM tutorial) reaches memory through addresses. On a GPU that just works; a host target
(sim, cpu, ascend's CPU model) checks every access against the buffers it knows, so it must be told
which arrays those addresses belong to. Two ways, both on the launch:

- `buffers=[a0, b0, ...]` (runtime/args.py): the checked mode. Exactly the arrays named are
  reachable; any other address is an out-of-bounds error at the access's line.
- nothing (the default): the launch looks at the values of its 64-bit integer arguments (the tables,
  and integer scalars) and, for each value that lies inside a live numpy array or CPU tensor the
  caller holds (its local and global variables, and the lists, tuples and dicts in them, in every
  frame up the stack), passes that array as if it were named in `buffers=`. A one-time warning per
  kernel says so. An address in no such array stays an error, whose message names both ways.

Only kernels that make pointers from integers (metadata "int_pointers", passes/written_args.py)
pay for this, and only on host targets; their launches take the full path (never the memo).
"""

from __future__ import annotations

import bisect
import sys
import warnings

import numpy as np

from ..errors import XBlockWarning

_SCAN_LIMIT = 200_000  # objects looked at in the caller's frames, at most
_MIN_ADDRESS = 1 << 16  # smaller integers are sizes and counts, never host addresses


def _on_host(t) -> bool:
    """Whether a torch tensor is in host memory (DLPack's device type 1)."""
    try:
        return t.__dlpack_device__()[0] == 1
    except Exception:  # no DLPack: a tensor-like we cannot place
        return False


def _root(v):
    """(lo, hi, array) of the memory `v` belongs to (the array that owns it), or None."""
    if isinstance(v, np.ndarray):
        while isinstance(v.base, np.ndarray):
            v = v.base
        if not v.flags.c_contiguous or v.nbytes == 0:
            return None
        lo = v.ctypes.data
        return lo, lo + v.nbytes, v
    if hasattr(v, "data_ptr") and hasattr(v, "is_contiguous"):  # a torch tensor
        if not _on_host(v):
            return None
        base = getattr(v, "_base", None)
        if base is not None:
            v = base
        if not v.is_contiguous() or v.numel() == 0:
            return None
        lo = v.data_ptr()
        return lo, lo + v.numel() * v.element_size(), v
    return None


def _held_arrays(frame) -> list:
    """Every array-like reachable from the frames at and above `frame`: their locals and globals,
    and one level into the lists, tuples and dicts there."""
    seen: set = set()
    out: list = []
    budget = [_SCAN_LIMIT]

    def visit(v, depth: int) -> None:
        if budget[0] <= 0:
            return
        budget[0] -= 1
        if isinstance(v, np.ndarray) or hasattr(v, "data_ptr"):
            if id(v) not in seen:
                seen.add(id(v))
                out.append(v)
        elif depth and isinstance(v, (list, tuple)):
            for x in v[:4096]:
                visit(x, depth - 1)
        elif depth and isinstance(v, dict):
            for x in list(v.values())[:4096]:
                visit(x, depth - 1)

    namespaces: set = set()
    while frame is not None:
        for ns in (frame.f_locals, frame.f_globals):
            if id(ns) in namespaces:
                continue
            namespaces.add(id(ns))
            for v in list(ns.values()):
                visit(v, 2)
        frame = frame.f_back
    return out


def _addresses(args) -> np.ndarray:
    """The values among the launch's arguments that may be host addresses."""
    found = []
    for a in args:
        if isinstance(a, np.ndarray):
            if a.dtype in (np.int64, np.uint64) and a.size:
                found.append(a.reshape(-1).view(np.uint64))
        elif hasattr(a, "data_ptr") and str(getattr(a, "dtype", "")) in ("torch.int64", "torch.uint64"):
            if _on_host(a) and a.numel():
                found.append(a.reshape(-1).numpy().view(np.uint64))
        elif isinstance(a, (int, np.integer)) and not isinstance(a, bool) and a >= _MIN_ADDRESS:
            found.append(np.array([int(a) & (2**64 - 1)], np.uint64))
    if not found:
        return np.zeros(0, np.uint64)
    vals = np.unique(np.concatenate(found))
    return vals[vals >= _MIN_ADDRESS]


def resolve(args, frame) -> list:
    """The arrays the caller holds that the launch's integer values point into: not arguments
    themselves, one per owning array (the launch's `buffers=` would name the same)."""
    values = _addresses(args)
    if not values.size:
        return []
    argued = [r for r in (_root(a) for a in args) if r is not None]
    spans = []
    for v in _held_arrays(frame):
        r = _root(v)
        if r is None or any(lo < r[1] and r[0] < hi for lo, hi, _ in argued):
            continue
        spans.append(r)
    spans.sort(key=lambda s: (s[0], -s[1]))
    kept, owners = [], set()
    for lo, hi, a in spans:  # one per owning memory: the first (widest) of those starting at an address
        if kept and lo < kept[-1][1]:
            continue
        kept.append((lo, hi, a))
    starts = [lo for lo, _, _ in kept]
    chosen = []
    for addr in values.tolist():
        i = bisect.bisect_right(starts, addr) - 1
        if i >= 0 and addr < kept[i][1] and i not in owners:
            owners.add(i)
            chosen.append(kept[i][2])
    return chosen


_WARNED: set = set()


def warn_resolved(metadata: dict, n: int) -> None:
    """Once per kernel and target: its pointer tables were resolved to `n` arrays the caller holds."""
    key = (metadata.get("file"), metadata.get("line"), metadata.get("name"), metadata.get("target"))
    if key in _WARNED:
        return
    _WARNED.add(key)
    warnings.warn(f"{metadata.get('file')}:{metadata.get('line')}: {metadata.get('name')}: the kernel reaches "
                  f"memory through addresses it reads (pointers made from integers); {n} array(s) the caller holds "
                  "contain those addresses and are checked as the launch's buffers=. Name them yourself with "
                  "kernel[grid](..., buffers=[...]) to check against exactly those", XBlockWarning, stacklevel=2)


def caller_frame():
    """The frame that launched the kernel: the first one outside the xblock package."""
    import os

    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    f = sys._getframe(1)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(pkg):
        f = f.f_back
    return f
