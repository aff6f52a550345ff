"""Load a compiled cpu kernel (.so) and launch it over the grid on every core, without MLIR.

The library is written once under the cache (`common.native`, kind "cpu-so") and loaded with ctypes.

Arguments go to the native code as an array of 8-byte slots. One thread calls `xb_launch` on the
whole grid; several (the caller and pool threads) call `xb_run`, which hands out contiguous
ranges of the linear grid index from a shared counter. ctypes releases the GIL during the
calls, so the threads run in parallel. Each program runs whole on one thread, so results are
deterministic unless the kernel itself uses atomics.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import queue
import struct
import threading

from ...errors import BUFFERS_HINT, ArgumentError, ExecutionError, LaunchArgumentError, LaunchError
from ..common import services
from ..common.native import load_library

# the runtime slots after the kernel's arguments (debug.py, bounds.py; EXTRA: the buffers= table)
STATUS, PRINT, BOUNDS, EXTRA = 0, 1, 2, 3
RUNTIME_SLOTS = 4
STACK_BYTES = 256 << 20  # worker stacks: block buffers live on the stack
GRAINS_PER_THREAD = 16  # ranges of programs per thread, taken from a shared counter


def _address(v) -> int:
    ai = getattr(v, "__array_interface__", None)
    if ai is not None:
        return ai["data"][0]
    if hasattr(v, "data_ptr"):
        if str(getattr(v, "device", "cpu")) != "cpu":
            raise ArgumentError("the cpu target runs on host memory: pass numpy arrays or CPU tensors")
        if hasattr(v, "is_contiguous") and not v.is_contiguous():  # a view (`.T`): its storage is not its order
            raise ArgumentError("a non-contiguous tensor (a view such as `.T`) cannot be passed: use .contiguous()")
        return v.data_ptr()
    raise ArgumentError(f"expected an array, got {type(v).__name__}")


_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")
_MASK = (1 << 64) - 1


def _extent(v) -> tuple[int, int]:
    """[first byte, end) of an array argument (bounds checks)."""
    start = _address(v)
    nbytes = getattr(v, "nbytes", None)
    if nbytes is None:  # a torch tensor
        nbytes = v.numel() * v.element_size()
    return start, start + int(nbytes)


def _packer(sig: str):
    if sig.startswith("*"):
        return _address
    if sig == "fp32":
        return lambda v: int.from_bytes(_F32.pack(float(v)), "little")
    if sig == "fp64":
        return lambda v: int.from_bytes(_F64.pack(float(v)), "little")
    if sig == "fp16":
        return lambda v: int.from_bytes(struct.pack("<e", float(v)), "little")
    if sig == "bf16":
        return lambda v: int.from_bytes(_F32.pack(float(v)), "little") >> 16
    return lambda v: int(v) & _MASK


class _Pool:
    """Worker threads with large stacks, created once per process."""

    def __init__(self, n: int):
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        old = threading.stack_size(STACK_BYTES)
        try:
            for _ in range(n):
                threading.Thread(target=self._work, daemon=True).start()
        finally:
            threading.stack_size(old)

    def _work(self):
        while True:
            fn, args, done = self.jobs.get()
            fn(*args)
            done.release()

    def run(self, fn, args, workers: int, here: bool) -> None:
        """`fn(*args)` on `workers` pool threads, and on the calling thread too when `here`."""
        done = threading.Semaphore(0)
        for _ in range(workers):
            self.jobs.put((fn, args, done))
        if here:
            fn(*args)
        for _ in range(workers):
            done.acquire()


_POOL: _Pool | None = None
_POOL_LOCK = threading.Lock()


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _pool() -> _Pool:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = _Pool(cores())
    return _POOL


def load(asm: dict, metadata: dict):
    """A launcher(grid, args) for the kernel in `asm["so"]`."""
    lib = load_library(asm["so"], "cpu-so")
    fn = lib.xb_launch
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_int64,
                   ctypes.c_int64]
    fn.restype = None
    run = lib.xb_run
    run.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p,
                    ctypes.c_int64, ctypes.c_int64]
    run.restype = None
    sigs = metadata["arg_types"]
    packers = [_packer(s) for s in sigs]
    nargs = len(sigs)
    Slots = ctypes.c_uint64 * (nargs + RUNTIME_SLOTS)
    prints, asserts = metadata.get("prints", []), metadata.get("asserts", [])
    callback = _print_callback(prints) if prints else None
    # a printing kernel runs its programs in order on one thread: its output reads like the sim's
    threads = 1 if prints else int(metadata.get("options", {}).get("num_threads", 0)) or cores()
    big_frame = metadata.get("stack_bytes", 0) > (1 << 20)  # too big for the caller's stack
    written = metadata.get("written_args") or ()  # None (not traceable): nothing to check up front
    pointers = [i for i, s in enumerate(sigs) if s.startswith("*")] if metadata.get("bounds_check") else None
    Extents = ctypes.c_uint64 * (2 * len(pointers)) if pointers else None
    # accesses through pointers made from integers read the buffers= table (bounds.py): always passed
    unrooted = any(a.get("kind") == "bounds" and a.get("arg") is None for a in asserts)

    def launch(grid, args, buffers=()):
        """`buffers`: the `buffers=` launch option (runtime/args.py): arrays pointer tables point into."""
        if len(args) != len(sigs):
            raise LaunchError(metadata["file"], metadata["line"], metadata["name"],
                              f"expected {len(sigs)} runtime arguments, got {len(args)}")
        for i in written:
            flags = getattr(args[i], "flags", None)
            if flags is not None and not flags.writeable:
                raise LaunchError(metadata["file"], metadata["line"], metadata["name"],
                                  f"argument '{metadata['arg_names'][i]}' is read-only but the kernel writes to it")
        try:
            slots = Slots(*[p(a) for p, a in zip(packers, args)])
        except TypeError as err:
            raise LaunchArgumentError(metadata["file"], metadata["line"], metadata["name"], str(err)) from None
        if pointers:
            table = Extents(*[x for i in pointers for x in _extent(args[i])])
            slots[nargs + BOUNDS] = ctypes.addressof(table)
        extra = None
        if unrooted:
            try:
                spans = [x for b in buffers for x in _extent(b)]
            except ArgumentError as err:
                raise LaunchArgumentError(metadata["file"], metadata["line"], metadata["name"],
                                          f"buffers=: {err}") from None
            extra = (ctypes.c_uint64 * (2 + len(spans)))(len(spans) // 2, _MASK, *spans)
            slots[nargs + EXTRA] = ctypes.addressof(extra)
        status = None
        if asserts:
            status = ctypes.c_uint64(_MASK)
            slots[nargs + STATUS] = ctypes.addressof(status)
        if callback is not None:
            slots[nargs + PRINT] = ctypes.cast(callback, ctypes.c_void_p).value
        g0, g1, g2 = grid
        total = g0 * g1 * g2
        if total <= 0:
            return
        n = min(threads, total)
        if n <= 1 and not big_frame:
            fn(slots, g0, g1, g2, 0, total)
        else:  # the calling thread works too, unless the frame needs a big stack
            nxt = ctypes.c_int64(0)
            grain = max(1, total // (n * GRAINS_PER_THREAD))
            work = (slots, g0, g1, g2, ctypes.addressof(nxt), total, grain)
            _pool().run(run, work, n if big_frame else n - 1, not big_frame)
        if status is not None and status.value != _MASK:
            _assert_failed(asserts, status.value, grid, metadata, args, extra[1] if extra is not None else None)

    launch.library = lib
    launch.callback = callback  # kept alive with the launcher
    launch.takes_buffers = True
    if callback is not None or big_frame or unrooted:  # the C direct launch passes no buffers= table
        return launch
    return _with_direct_path(launch, lib, metadata, threads, bool(asserts), bool(pointers))


_KINDS = {"fp32": ord("f"), "fp64": ord("d"), "fp16": ord("x"), "bf16": ord("x")}
_BYTES = {"i1": 1, "i8": 1, "u8": 1, "i16": 2, "u16": 2, "fp16": 2, "bf16": 2, "i32": 4, "u32": 4, "fp32": 4}


def _with_direct_path(launch, lib, metadata, threads, asserts, bounds):
    """`launch`, preceded by the C helper's direct launch (runtime/fastpath.py, handed down through
    common/services.py) of a grid that runs on the calling thread; an argument the helper does not
    take goes to `launch`, which checks it."""
    direct = services.cpu_launch()
    if direct is None:
        return launch
    sigs, written = metadata["arg_types"], metadata.get("written_args") or ()
    entry = ctypes.cast(lib.xb_launch, ctypes.c_void_p).value
    kinds = bytes(ord("p") if s.startswith("*") else _KINDS.get(s, ord("i")) for s in sigs)
    mask = bytes(int(i in written) for i in range(len(sigs)))
    sizes = bytes(_BYTES.get(s[1:], 1 if s[1:].startswith("fp8") else 8) if s.startswith("*") else 0 for s in sigs)
    status_slot, bounds_slot = STATUS if asserts else -1, BOUNDS if bounds else -1
    asserted = metadata.get("asserts", [])

    def fast(grid, args, buffers=()):  # no pointer made from an integer is checked: buffers= changes nothing
        g0, g1, g2 = grid
        if threads <= 1 or g0 * g1 * g2 <= 1:
            status = direct(entry, kinds, mask, sizes, args, g0, g1, g2, status_slot, bounds_slot)
            if status is None:
                return
            if status is not NotImplemented:
                _assert_failed(asserted, status, grid, metadata, args)
        launch(grid, args)

    fast.library, fast.callback = launch.library, launch.callback
    fast.takes_buffers = True
    # what the C memo of launches (runtime/fastpath.py, `dispatch`) needs to do what `fast` does, in C
    fast.c_direct = (entry, kinds, mask, sizes, status_slot, bounds_slot, threads,
                     lambda status, grid, args: _assert_failed(asserted, status, grid, metadata, args))
    return fast


def _assert_failed(asserts: list, key: int, grid, metadata: dict, args, bad_address=None) -> None:
    """Raise the failure of the lowest failing program, at its assert's kernel line (as the sim says it)."""
    lin, aid = key >> 16, key & 0xFFFF
    g0, g1, _ = grid
    pid = (lin % g0, lin // g0 % g1, lin // (g0 * g1))
    a = asserts[aid]
    if a.get("kind") == "bounds":
        k = a.get("arg")
        if k is None and bad_address is not None and bad_address != _MASK:
            where = (f"address {bad_address:#x} (a pointer made from an integer), outside every argument buffer of "
                     f"the launch and of its buffers= option: {BUFFERS_HINT}")
        elif k is None:
            where = "an address outside every argument buffer"
        else:
            arr = args[k]
            n = getattr(arr, "size", None) if hasattr(arr, "__array_interface__") else arr.numel()
            size = getattr(arr, "itemsize", None) or arr.element_size()
            where = f"memory outside argument '{metadata['arg_names'][k]}' ({n} elements of {size} bytes)"
        raise ExecutionError(f"{a['file']}:{a['line']}: out-of-bounds {a['what']} in program {pid}: an unmasked "
                             f"lane accesses {where} (cpu bounds check; bounds_check=False turns it off)")
    raise ExecutionError(f"{a['file']}:{a['line']}: device_assert failed in program {pid}: {a['message']}")


_PRINT_LOCK = threading.Lock()
_NP = {"i1": "i1", "i8": "i1", "i16": "i2", "i32": "i4", "i64": "i8", "f16": "f2", "bf16": "u2", "f32": "f4",
       "f64": "f8"}


def _print_callback(prints: list):
    """The native code's `print(id, pid0, pid1, pid2, addresses)`: format the values as the sim does."""
    import numpy as np

    def read(addr: int, shape, ety: str):
        n = 1
        for d in shape:
            n *= d
        dt = np.dtype(_NP[ety])
        a = np.frombuffer((ctypes.c_char * (n * dt.itemsize)).from_address(addr), dt).copy()
        if ety == "i1":
            a = a.view(np.int8).astype(np.bool_)
        elif ety == "bf16":
            a = (a.astype(np.uint32) << 16).view(np.float32)
        a = a.reshape(shape)
        return a[()] if not shape else a

    def callback(pid, p0, p1, p2, values):
        spec = prints[pid]
        addrs = ctypes.cast(values, ctypes.POINTER(ctypes.c_uint64))
        shown = [read(addrs[k], tuple(shape), ety) for k, (shape, ety) in enumerate(spec["values"])]
        text = " ".join(str(x) for x in [f"pid {(p0, p1, p2)} {spec['prefix']}", *shown])
        with _PRINT_LOCK:
            print(text)

    proto = ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32,
                             ctypes.c_void_p)
    return proto(callback)


def host_cpu() -> str:
    """The CPU the native code is generated for (part of the cache key)."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = f.read().splitlines()
    except OSError:
        return "unknown"
    flags = next((ln for ln in lines if ln.startswith("flags")), "")
    model = next((ln for ln in lines if ln.startswith("model name")), "")
    return f"{model}|{hashlib.sha256(flags.encode()).hexdigest()[:16]}"
