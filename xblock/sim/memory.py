"""Global memory of a simulated launch: argument buffers, address decoding and checking.

A pointer is an int64 byte address: buffer `i` starts at `(i + 1) << 40`. Every access is
checked (unmasked lanes out of bounds, misalignment), and plain stores record which program
wrote each element so that two programs writing the same element is reported as a race.

A kernel can also see real addresses: `ptr.to(tl.int64)` gives the host address of the caller's
array (as the cpu target does), and an int64 turned into a pointer (a table of `arr.ctypes.data`
values) is mapped back to the argument buffer it points into, or into one of the arrays of the
launch's `buffers=[...]` option (arrays no argument names: they are buffers after the arguments'). An
address in none of them becomes a pointer tagged UNMAPPED, which every access reports as out of
bounds, naming the address and the option.

Messages name the buffer nearest to the address (an access before a buffer's start is a negative
element of that buffer, not a huge element of the one below it). A store race is two programs storing
different values to one element; the same value is not a race (every program writing the same result,
as a histogram kernel may). The `races="warn"` launch option turns a race into a warning.
"""

from __future__ import annotations

import hashlib
import warnings

import numpy as np

from ..errors import BUFFERS_HINT, ExecutionError, XBlockWarning
from .program import FP8

SHIFT = 40
OFFSET_MASK = (1 << SHIFT) - 1
UNMAPPED = 1 << 62  # tag of a pointer made from an address outside every argument buffer


def _bf16_to_f32(u16: np.ndarray) -> np.ndarray:
    return (u16.astype(np.uint32) << 16).view(np.float32)


def _f32_to_bf16_bits(x: np.ndarray) -> np.ndarray:
    import ml_dtypes

    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)


_VIEW = {"i1": np.uint8, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
         "f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64, **FP8}


class Memory:
    """The argument buffers of one launch."""

    def __init__(self, arrays: list, names: list, shared: bool = False, n_args: int | None = None):
        """`shared`: the arrays are the caller's; each is copied before the launch first writes to it.
        `n_args`: how many of the arrays are arguments (the rest are the `buffers=` option's)."""
        self.arrays = list(arrays)
        self.n_args = len(self.arrays) if n_args is None else n_args
        self.races = "error"  # or "warn" (the races= option)
        self._warned: set = set()
        self.raw = [a.reshape(-1).view(np.uint8) for a in self.arrays]
        # where the caller's arrays live: what `ptr.to(tl.int64)` shows and pointer tables hold
        self.host = np.array([a.ctypes.data for a in self.arrays], dtype=np.int64)
        self.host_end = self.host + np.array([r.size for r in self.raw], dtype=np.int64)
        self.names = names
        self.writers: dict = {}
        self.written: set = set()  # buffers a store or an atomic touched
        self.race_checks = True  # off when programs run one at a time (they synchronize through atomics)
        self._shared = set(range(len(self.arrays))) if shared else set()
        for b in self._shared:
            self.raw[b].flags.writeable = False  # reads only until the copy

    def mark_written(self, b: int) -> None:
        """Note a write to buffer `b`, giving it a private copy first if it is still the caller's."""
        if b in self._shared:
            self._shared.discard(b)
            self.arrays[b] = self.arrays[b].copy()
            self.raw[b] = self.arrays[b].reshape(-1).view(np.uint8)
        self.written.add(b)

    def base(self, i: int) -> int:
        return (i + 1) << SHIFT

    def from_host(self, addrs: np.ndarray) -> np.ndarray:
        """Pointers for int64 host addresses: into the argument buffer each one points into, else
        tagged UNMAPPED (an access through them is an out-of-bounds error)."""
        addrs = np.asarray(addrs, dtype=np.int64)
        out = (addrs & (UNMAPPED - 1)) | UNMAPPED
        for b in range(len(self.raw)):
            inside = (addrs >= self.host[b]) & (addrs < self.host_end[b])
            if inside.any():
                out = np.where(inside, addrs - self.host[b] + self.base(b), out)
        return out

    def to_host(self, ptrs: np.ndarray) -> np.ndarray:
        """The host addresses of pointers (the inverse of `from_host`)."""
        ptrs = np.asarray(ptrs, dtype=np.int64)
        tagged = (ptrs & UNMAPPED) != 0
        b = ((ptrs + (1 << (SHIFT - 1))) >> SHIFT) - 1  # the nearest buffer: offsets may be negative
        known = ~tagged & (b >= 0) & (b < len(self.raw))
        bi = np.clip(b, 0, max(len(self.raw) - 1, 0))
        host = self.host[bi] + (ptrs - (bi + 1) * (1 << SHIFT)) if len(self.raw) else ptrs
        return np.where(tagged, ptrs & (UNMAPPED - 1), np.where(known, host, ptrs))

    def _decode(self, addrs: np.ndarray, size: int, what: str, loc, pid_of):
        """(buffer ids, element indices) of byte addresses; raises on out-of-bounds or misalignment."""
        shift = size.bit_length() - 1
        if addrs.size:
            lo, hi = int(addrs.min()), int(addrs.max())
            b = (lo >> SHIFT) - 1
            if b == (hi >> SHIFT) - 1 and 0 <= b < len(self.raw):  # one buffer: check the range only
                base = self.base(b)
                if lo - base >= 0 and hi - base + size <= self.raw[b].size:
                    if addrs.dtype.kind == "i" and (addrs & (size - 1)).any():
                        self._misaligned(what, size, loc)
                    return np.broadcast_to(np.int64(b), addrs.shape), (addrs - base) >> shift
        tagged = (addrs & UNMAPPED) != 0
        if tagged.any():  # a pointer from an integer may have moved into a buffer since
            addrs = np.where(tagged, self.from_host(addrs & (UNMAPPED - 1)), addrs)
            tagged = (addrs & UNMAPPED) != 0
        # the nearest buffer: an offset before a buffer's start is negative, not past the one below's end
        buf = ((addrs + (1 << (SHIFT - 1))) >> SHIFT) - 1
        off = addrs - ((buf + 1) << SHIFT)
        ok = ~tagged & (buf >= 0) & (buf < len(self.raw)) & (off >= 0)
        if len(self.raw):  # every lane checked, so the first bad one is the lowest program's
            nbytes = np.array([r.size for r in self.raw], dtype=np.int64)[np.clip(buf, 0, len(self.raw) - 1)]
            ok &= off + size <= nbytes
        if not ok.all():
            bad = int(np.flatnonzero(~ok)[0])
            b = int(buf.flat[bad])
            pid = pid_of(bad)
            if bool(tagged.flat[bad]):
                raise ExecutionError(f"{loc}: out-of-bounds {what} in program {pid}: an unmasked lane accesses "
                                     + unmapped_detail(int(addrs.flat[bad]) & (UNMAPPED - 1)))
            if 0 <= b < len(self.raw):
                n = self.raw[b].size // size
                detail = (f"element {int(off.flat[bad]) // size} of {self.buffer_name(b)} "
                          f"({n} elements of {size} bytes)")
            else:
                detail = "an address outside every argument buffer"
            raise ExecutionError(f"{loc}: out-of-bounds {what} in program {pid}: an unmasked lane "
                                 f"accesses {detail}")
        if (off & (size - 1)).any():
            self._misaligned(what, size, loc)
        return buf, off >> shift

    def buffer_name(self, b: int) -> str:
        """How messages name buffer `b`: "argument 'x'", or "buffers[k] of the launch (...)"."""
        if b < self.n_args:
            return f"argument '{self.names[b]}'"
        return f"{self.names[b]} (an array of the launch's buffers= option)"

    def _misaligned(self, what, size, loc):
        raise ExecutionError(f"{loc}: misaligned {what}: address is not a multiple of {size} bytes")

    def _groups(self, buf):
        if buf.size == 0:
            return []
        first = int(buf.flat[0])
        if buf.size == 1 or (buf.ndim and buf.strides[0] == 0) or (buf == first).all():
            return [(first, slice(None))]
        return [(int(b), buf == b) for b in np.unique(buf)]

    def load(self, addrs, pointee: str, loc, pid_of) -> np.ndarray:
        size = 1 if pointee == "i1" else int(np.dtype(_VIEW[pointee]).itemsize)
        buf, idx = self._decode(addrs, size, "load", loc, pid_of)
        out = np.empty(addrs.shape, dtype=_VIEW[pointee])
        for b, sel in self._groups(buf):
            view = self.raw[b][: self.raw[b].size // size * size].view(_VIEW[pointee])
            out[sel] = view[idx[sel]]
        if pointee == "bf16":
            return _bf16_to_f32(out)
        if pointee == "i1":
            return out != 0
        return out

    def store(self, addrs, values, pointee: str, loc, pid_of, lanes_flat_pid, check_race=True) -> None:
        size = 1 if pointee == "i1" else int(np.dtype(_VIEW[pointee]).itemsize)
        buf, idx = self._decode(addrs, size, "store", loc, pid_of)
        if pointee == "bf16":
            values = _f32_to_bf16_bits(values)
        else:
            values = values.astype(_VIEW[pointee], copy=False)
        for b, sel in self._groups(buf):
            self.mark_written(b)
            i = idx[sel]
            view = self.raw[b][: self.raw[b].size // size * size].view(_VIEW[pointee])
            v = values[sel]
            if check_race:
                self._check_race(b, size, i, lanes_flat_pid[sel], loc, v)
            view[i] = v

    def digest(self) -> bytes:
        """A digest of everything the launch has written so far (to tell a loop that changes nothing)."""
        h = hashlib.blake2b(digest_size=16)
        for b in sorted(self.written):
            h.update(self.raw[b].data)
        return h.digest()

    def _check_race(self, b, size, idx, pids, loc, values=None) -> None:
        """Before buffer `b`'s elements `idx` get `values` (in memory's element type; None: unknown, any
        two programs race): two programs storing different values to one element is a race."""
        if not self.race_checks:
            return
        key = (b, size)
        fresh = key not in self.writers
        if fresh:
            self.writers[key] = np.full(self.raw[b].size // size, -1, dtype=np.int32)
        w = self.writers[key]
        if values is not None:
            values = np.broadcast_to(values, idx.shape)
        if not fresh:
            prev = w[idx]
            clash = (prev != -1) & (prev != pids)
            if clash.any() and values is not None:  # what another program stored is still there: same bits, no race
                held = self.raw[b][: self.raw[b].size // size * size].view(f"u{size}")[idx]
                clash &= held != _bits(values)
            if clash.any():
                j = int(np.flatnonzero(clash)[0])
                self._race(b, int(idx[j]), int(prev[j]), int(pids[j]), loc)
        w[idx] = pids
        if idx.size > 1 and not (idx[1:] > idx[:-1]).all():
            after = w[idx]  # two programs writing one element in this store leave only one of them
            lost = after != pids
            if lost.any() and values is not None:
                uniq, inv = np.unique(idx, return_inverse=True)
                kept = np.empty(uniq.shape, values.dtype)
                kept[inv.ravel()] = values.ravel()  # the value the element ends with (the last lane's)
                lost &= _bits(kept[inv].reshape(idx.shape)) != _bits(values)
            if lost.any():
                j = int(np.flatnonzero(lost)[0])
                self._race(b, int(idx[j]), int(after[j]), int(pids[j]), loc)

    def _race(self, b, element, p1, p2, loc):
        p1, p2 = sorted((p1, p2))
        msg = (f"write-write race: programs {p1} and {p2} (flat ids) both store to element {element} of "
               f"{self.buffer_name(b)} without an atomic, and the values differ (the same value would be no race)")
        if self.races == "warn":
            if str(loc) not in self._warned:
                self._warned.add(str(loc))
                file, line = getattr(loc, "file", None), getattr(loc, "line", None)
                if file:
                    warnings.warn_explicit(f"sim: {msg}; the value stored last is kept", XBlockWarning,
                                           file, line or 1)
                else:
                    warnings.warn(f"{loc}: sim: {msg}", XBlockWarning, stacklevel=2)
            return
        raise ExecutionError(
            f"{loc}: {msg}. On a GPU which value is kept is undefined; to run it anyway, launch with the sim "
            "option races=\"warn\" (kernel[grid](..., races=\"warn\")), which warns and keeps the value stored last")

    def atomic(self, kind, addrs, vals, cmp, pointee, loc, pid_of):
        """Apply atomics lane by lane in program order; returns the old values."""
        size = int(np.dtype(_VIEW[pointee]).itemsize)
        buf, idx = self._decode(addrs, size, "atomic", loc, pid_of)
        old = np.empty(addrs.shape, dtype=_VIEW[pointee])
        if pointee == "bf16":
            raise ExecutionError(f"{loc}: atomics on bfloat16 are not supported")
        for b, sel in self._groups(buf):
            self.mark_written(b)
            view = self.raw[b][: self.raw[b].size // size * size].view(_VIEW[pointee])
            lane_idx = idx[sel] if not isinstance(sel, slice) else idx
            lane_val = (vals[sel] if not isinstance(sel, slice) else vals).astype(view.dtype, copy=False)
            lane_cmp = None if cmp is None else (cmp[sel] if not isinstance(sel, slice) else cmp)
            o = _apply_atomic(kind, view, lane_idx.ravel(), lane_val.ravel(),
                              None if lane_cmp is None else lane_cmp.ravel())
            if isinstance(sel, slice):
                old[...] = o.reshape(old.shape)
            else:
                old[sel] = o
        return old


def _bits(x: np.ndarray) -> np.ndarray:
    """The bits of values, to compare them exactly (NaNs, -0.0)."""
    x = np.asarray(x)
    return x.view(f"u{x.dtype.itemsize}") if x.dtype != np.bool_ else x.astype(np.uint8)


def unmapped_detail(address: int) -> str:
    """What an access through a pointer made from an integer that lies in no buffer of the launch is."""
    return (f"address {address:#x} (a pointer made from an integer), outside every argument buffer of the launch "
            f"and of its buffers= option: {BUFFERS_HINT}")


def _apply_atomic(kind, view, idx, vals, cmp):
    """Rounds of unique addresses, each round applied vectorized, lanes in order."""
    old = np.empty(idx.shape, dtype=view.dtype)
    pending = np.arange(idx.size)
    with np.errstate(all="ignore"):
        while pending.size:
            _, first = np.unique(idx[pending], return_index=True)
            lanes = pending[np.sort(first)]
            i = idx[lanes]
            cur = view[i]
            old[lanes] = cur
            v = vals[lanes]
            if kind in ("add", "fadd"):
                new = cur + v
            elif kind == "max":
                new = np.fmax(cur, v) if view.dtype.kind == "f" else np.maximum(cur, v)
            elif kind == "min":
                new = np.fmin(cur, v) if view.dtype.kind == "f" else np.minimum(cur, v)
            elif kind in ("umax", "umin"):
                u = cur.dtype.str.replace("i", "u")
                fn = np.maximum if kind == "umax" else np.minimum
                new = fn(cur.view(u), v.view(u)).view(cur.dtype)
            elif kind == "xchg":
                new = v
            elif kind == "and":
                new = cur & v
            elif kind == "or":
                new = cur | v
            elif kind == "xor":
                new = cur ^ v
            elif kind == "cas":
                new = np.where(cur == cmp[lanes], v, cur)
            else:
                raise ValueError(f"internal error: unknown atomic kind {kind}")
            view[i] = new
            keep = np.ones(pending.size, dtype=bool)
            keep[np.sort(first)] = False
            pending = pending[keep]
    return old
