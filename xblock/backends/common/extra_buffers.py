"""The arrays of a launch's `buffers=` option a host target maps (sim, ascend's CPU model): one per
memory range (runtime/args.py, runtime/tables.py)."""

from __future__ import annotations

from ...errors import LaunchArgumentError


def unique_buffers(extra, arrays, arr_names, metadata: dict):
    """(k, array) of the `buffers=` arrays (numpy) not inside an argument or an earlier one: the launch
    maps one copy per memory range. A partial overlap (two copies of some bytes) is refused."""
    spans = [(a.ctypes.data, a.ctypes.data + a.nbytes, f"argument '{n}'")
             for a, n in zip(arrays, arr_names) if a.nbytes]
    for k, b in enumerate(extra):
        lo, hi = b.ctypes.data, b.ctypes.data + b.nbytes
        inside = False
        for s_lo, s_hi, what in spans:
            if s_lo <= lo and hi <= s_hi:
                inside = True
                break
            if lo < s_hi and s_lo < hi:
                raise LaunchArgumentError(metadata["file"], metadata["line"], metadata["name"],
                                          f"buffers[{k}] partly overlaps {what}: pass the array that holds both")
        if not inside and b.nbytes:
            spans.append((lo, hi, f"buffers[{k}]"))
            yield k, b
