"""Lazy pointer blocks and the fast paths of loads and stores that use them.

A block of pointers is usually `row base (P, 1) + column offsets (1, N)`. `xb.addptr`, `xb.splat`,
`xb.broadcast`, `xb.expand_dims`, `xb.trans` and `xb.ptr_cast` keep it as a `PtrSum` of compact
int64 terms (byte addresses; broadcast axes of size 1) instead of materializing P x N addresses.
Any other consumer gets the materialized array (`PtrSum.value()`, see `Instr.eager`), so a rule
that does not know about laziness sees exactly what it saw before.

`xb.load` and `xb.store` take a fast path when
- the addresses split into a row part (every axis but the last) plus a column part (the last axis);
  a term over both is split as `t[..., :1] + (t - t[..., :1])` when the difference is the same in
  every row (offsets such as `pid * BLOCK + arange(BLOCK)`), exactly, in int64;
- the mask is an outer product of a row mask and a column mask, or, for a full mask, each row is
  either off or has one of at most MAX_GROUPS column patterns (one outer product per pattern:
  per-program tails of 2-D tiles);
- the active lanes provably lie in one buffer, in bounds and aligned: on an outer product, min/max
  over the active rows plus min/max over the active columns bound every active address exactly,
  and every address is aligned iff all rows agree modulo the size and the columns complement them.
Otherwise (several buffers, an out-of-bounds or misaligned lane, another mask, a race, rows of one
store overlapping) they fall back to the generic path on the materialized addresses, which finds
and reports faults as before; nothing is written before that decision.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .memory import _VIEW, SHIFT, _bf16_to_f32, _f32_to_bf16_bits


def compact(x: np.ndarray) -> np.ndarray:
    """`x` with every broadcast (stride-0) axis cut to size 1: the same values, broadcastable back."""
    idx = None
    for ax, (n, st) in enumerate(zip(x.shape, x.strides)):
        if st == 0 and n > 1:
            if idx is None:
                idx = [slice(None)] * x.ndim
            idx[ax] = slice(0, 1)
    return x if idx is None else x[tuple(idx)]


class PtrSum:
    """A block of byte addresses kept as the sum of compact int64 terms broadcast to `shape`."""

    __slots__ = ("terms", "shape")

    def __init__(self, terms: list, shape: tuple):
        self.terms = terms
        self.shape = tuple(shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @staticmethod
    def of(p) -> PtrSum:
        if isinstance(p, PtrSum):
            return p
        return PtrSum([compact(np.asarray(p)).astype(np.int64, copy=False)], p.shape)

    def add(self, term: np.ndarray, shape: tuple) -> PtrSum:
        """This block plus `term` (int64, compact), broadcast to `shape`; terms of one shape merge."""
        terms = list(self.terms)
        for i, t in enumerate(terms):
            if t.shape == term.shape:
                terms[i] = t + term
                break
        else:
            terms.append(term)
        return PtrSum(terms, shape)

    def value(self) -> np.ndarray:
        s = self.terms[0]
        for t in self.terms[1:]:
            s = s + t
        return np.broadcast_to(s, self.shape)


def materialize(v):
    return v.value() if type(v) is PtrSum else v


# ------------------------------------------------------------------------------ decomposition
def _selector(sel, n):
    """A boolean selector over `n` items as a slice where it is one run (None: all of them)."""
    if sel is None:
        return slice(None), n
    idx = np.flatnonzero(sel)
    if idx.size == n:
        return slice(None), n
    if idx.size == 0:
        return slice(0, 0), 0
    a, b = int(idx[0]), int(idx[-1]) + 1
    if b - a == idx.size:
        return slice(a, b), idx.size
    return idx, idx.size


class Split:
    """Active lanes of a pointer block as rows x columns: row addresses + column byte offsets."""

    __slots__ = ("shape", "rows", "cols", "rsel", "csel", "nrows", "ncols")

    def __init__(self, shape, rows, cols, rsel, csel):
        self.shape = shape
        self.rows, self.cols = rows, cols        # active row addresses (R,), column offsets (C,)
        self.rsel, self.csel = rsel, csel        # selectors (slice or index array) into rows/columns
        self.nrows, self.ncols = rows.size, cols.size


MAX_GROUPS = 8  # column patterns of a mask handled separately before giving up
_HALF = 1 << 62  # row and column parts beyond this take the generic path


def split(ptr: PtrSum, mask, shape: tuple) -> list | None:
    """The active lanes of `ptr` broadcast to `shape` as groups of rows x columns (a list of Split,
    one per distinct column pattern of the mask), or None where that does not apply."""
    k = len(shape)
    if k < 2 or any(t.ndim != k for t in ptr.terms):
        return None
    row_terms, col_terms = [], []
    for t in ptr.terms:
        if t.shape[-1] == 1:
            row_terms.append(t)
        elif all(d == 1 for d in t.shape[:-1]):
            col_terms.append(t)
        else:  # t = t[..., :1] + d exactly (int64); usable when d is the same in every row
            first = t[..., :1]
            d = t - first
            d0 = d[(slice(0, 1),) * (k - 1)]
            if not np.array_equal(d, np.broadcast_to(d0, d.shape)):
                return None
            row_terms.append(first)
            col_terms.append(d0)
    rows = _sum(row_terms, k)
    cols = _sum(col_terms, k)
    rshape, n = shape[:-1], shape[-1]
    rows_full = np.broadcast_to(rows[..., 0], rshape).reshape(-1)
    cols_full = np.broadcast_to(cols.reshape(-1), (n,))
    if mask is None:
        groups = [(None, None)]
    else:
        m = compact(np.asarray(mask))
        if m.ndim != k:
            return None
        if m.shape[-1] == 1:
            groups = [(np.broadcast_to(m[..., 0], rshape).reshape(-1), None)]
        elif all(d == 1 for d in m.shape[:-1]):
            groups = [(None, m.reshape(-1))]
        else:
            groups = _column_groups(np.broadcast_to(m, shape).reshape(-1, n))
            if groups is None:
                return None
    out = []
    for rsel, csel in groups:
        rs, _ = _selector(rsel, rows_full.size)
        cs, _ = _selector(csel, n)
        out.append(Split(shape, rows_full[rs], cols_full[cs], rs, cs))
    return out


def _column_groups(m2: np.ndarray):
    """A full (rows, columns) mask as [(row selector, column mask)], one per distinct nonzero row
    pattern (rows of a group have exactly that pattern), or None past MAX_GROUPS."""
    r, n = m2.shape
    pk = np.packbits(m2, axis=1)
    pad = (-pk.shape[1]) % 8
    if pad:
        pk = np.concatenate([pk, np.zeros((r, pad), np.uint8)], axis=1)
    w = np.ascontiguousarray(pk).view(np.uint64)  # (rows, words): a row's pattern as integers
    if w.shape[1] == 1:
        keys = w[:, 0]
        left = keys != 0
        groups = []
        while left.any():
            f = int(left.argmax())
            same = keys == keys[f]
            groups.append((same, m2[f]))
            left &= ~same
            if len(groups) > MAX_GROUPS:
                return None
        return groups
    left = w.any(axis=1)
    groups = []
    while left.any():
        f = int(left.argmax())
        same = (w == w[f]).all(axis=1)
        groups.append((same, m2[f]))
        left &= ~same
        if len(groups) > MAX_GROUPS:
            return None
    return groups


def _sum(terms, k):
    if not terms:
        return np.zeros((1,) * k, np.int64)
    s = terms[0]
    for t in terms[1:]:
        s = s + t
    return s


def decode(memory, sp: Split, size: int):
    """(buffer, row element indices, column element indices) when every active lane is in one
    buffer, in bounds and aligned; None otherwise (the generic path then reports the fault)."""
    rows, cols = sp.rows, sp.cols
    if not rows.size or not cols.size:
        return None
    rmin, rmax, cmin, cmax = int(rows.min()), int(rows.max()), int(cols.min()), int(cols.max())
    if min(rmin, cmin) <= -_HALF or max(rmax, cmax) >= _HALF:
        return None  # keep the int64 arithmetic below free of wrap-around
    lo, hi = rmin + cmin, rmax + cmax
    b = (lo >> SHIFT) - 1
    if b != (hi >> SHIFT) - 1 or not 0 <= b < len(memory.raw):
        return None
    base = memory.base(b)
    if lo - base < 0 or hi - base + size > memory.raw[b].size:
        return None
    r0 = 0
    if size > 1:
        m = size - 1
        r0 = int(rows[0]) & m
        if ((rows & m) != r0).any() or ((cols + r0) & m).any():
            return None
    shift = size.bit_length() - 1
    return b, (rows - (base + r0)) >> shift, (cols + r0) >> shift


def _contiguous(cidx) -> bool:
    return cidx.size == 1 or bool((np.diff(cidx) == 1).all())


def _windows(a: np.ndarray, width: int, writeable: bool) -> np.ndarray:
    """Row `i` is `a[i:i + width]` (a view)."""
    st = a.strides[0]
    if a.dtype.isbuiltin == 2:  # ml_dtypes' float8 types: as_strided takes numpy's own dtypes only
        return as_strided(a.view(np.uint8), (a.size - width + 1, width), (st, st), writeable=writeable).view(a.dtype)
    return as_strided(a, (a.size - width + 1, width), (st, st), writeable=writeable)


def _view(memory, b, size, pointee):
    raw = memory.raw[b]
    return raw[: raw.size // size * size].view(_VIEW[pointee])


def _size(pointee):
    return 1 if pointee == "i1" else int(np.dtype(_VIEW[pointee]).itemsize)


# ------------------------------------------------------------------------------ load / store
def load(memory, ptr: PtrSum, mask, other, shape, pointee: str, dtype):
    """The loaded block, or None to take the generic path."""
    groups = split(ptr, mask, shape)
    if not groups:
        return None
    size = _size(pointee)
    decoded = []
    for sp in groups:
        d = decode(memory, sp, size)
        if d is None:
            return None
        decoded.append(d)
    nr = int(np.prod(shape[:-1], dtype=np.int64))
    n = shape[-1]
    out = None
    for sp, (b, ridx, cidx) in zip(groups, decoded):
        view = _view(memory, b, size, pointee)
        if _contiguous(cidx):
            vals = _windows(view, cidx.size, False)[ridx + int(cidx[0])]
        else:
            vals = view[ridx[:, None] + cidx[None, :]]
        if pointee == "bf16":
            vals = _bf16_to_f32(vals)
        elif pointee == "i1":
            vals = vals != 0
        if sp.nrows == nr and sp.ncols == n:  # every lane active
            return vals.astype(dtype, copy=False).reshape(shape)
        if out is None:
            out = np.empty(shape, dtype=dtype)
            if other is None:
                out.fill(0)
            else:
                np.copyto(out, other, casting="unsafe")
            out2 = out.reshape(nr, n)
        rs, cs = sp.rsel, sp.csel
        if isinstance(rs, slice) or isinstance(cs, slice):
            out2[rs, cs] = vals
        else:
            out2[np.ix_(rs, cs)] = vals
    return out


def store(memory, ptr: PtrSum, val, mask, shape, pointee: str, flat_pid, loc) -> bool:
    """Store and return True, or return False (having written nothing) to take the generic path.

    Each active row writes a run of columns. With unit-stride columns, rows whose runs are disjoint
    (checked over all rows of all groups) cannot race within this store, and a race with an earlier
    store shows in the writers' record; either fault, or anything unusual, goes to the generic path
    before any write. Other column patterns (one group only) use the generic race check."""
    groups = split(ptr, mask, shape)
    if not groups:
        return False
    size = _size(pointee)
    decoded = []
    for sp in groups:
        d = decode(memory, sp, size)
        if d is None or (decoded and d[0] != decoded[0][0]):
            return False  # a fault, or groups in different buffers
        decoded.append(d)
    b = decoded[0][0]
    nr = int(np.prod(shape[:-1], dtype=np.int64))
    n = shape[-1]
    per_program = nr // shape[0]  # rows are grouped by program along the leading axis
    row_pid = np.repeat(flat_pid, per_program) if per_program > 1 else flat_pid
    contiguous = all(_contiguous(cidx) for _, _, cidx in decoded)
    if not contiguous and len(groups) > 1:
        return False
    if contiguous:
        starts = np.concatenate([ridx + int(cidx[0]) for _, ridx, cidx in decoded])
        if starts.size > 1:
            widths = np.concatenate([np.full(ridx.size, cidx.size) for _, ridx, cidx in decoded])
            order = np.argsort(starts, kind="stable")
            s_sorted = starts[order]
            if (s_sorted[1:] < s_sorted[:-1] + widths[order][:-1]).any():
                return False  # rows overlap: the generic path orders or reports them
    v = np.broadcast_to(val, shape)
    v2 = None
    work = []
    for sp, (_, ridx, cidx) in zip(groups, decoded):
        rs, cs = sp.rsel, sp.csel
        if isinstance(rs, slice) and rs == slice(None):
            vals = v[..., cs].reshape(sp.nrows, cidx.size)
        else:
            if v2 is None:
                v2 = v.reshape(nr, n)
            vals = v2[rs, cs] if isinstance(rs, slice) or isinstance(cs, slice) else v2[np.ix_(rs, cs)]
        if pointee == "bf16":
            vals = _f32_to_bf16_bits(vals)
        else:
            vals = vals.astype(_VIEW[pointee], copy=False)
        work.append((ridx, cidx, row_pid[rs], vals))
    key = (b, size)
    fresh = key not in memory.writers
    if not contiguous:
        ridx, cidx, pids, vals = work[0]
        idx = (ridx[:, None] + cidx[None, :]).reshape(-1)
        memory._check_race(b, size, idx, np.repeat(pids, cidx.size), loc, vals.reshape(-1))
        memory.mark_written(b)
        _view(memory, b, size, pointee)[idx] = vals.reshape(-1)
        return True
    if fresh:
        memory.writers[key] = np.full(memory.raw[b].size // size, -1, dtype=np.int32)
    writers = memory.writers[key]
    if not fresh:
        for ridx, cidx, pids, _ in work:
            prev = _windows(writers, cidx.size, False)[ridx + int(cidx[0])]
            p = pids.astype(np.int32)[:, None]
            if ((prev != p) & (prev != -1)).any():
                return False  # a race with an earlier store: the generic path reports it
    memory.mark_written(b)
    view = _view(memory, b, size, pointee)
    for ridx, cidx, pids, vals in work:
        st = ridx + int(cidx[0])
        _windows(writers, cidx.size, True)[st] = pids.astype(np.int32)[:, None]
        _windows(view, cidx.size, True)[st] = vals
    return True

