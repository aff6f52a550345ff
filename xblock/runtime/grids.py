"""Grids on the launch hot path: tuples of ints checked without conversions, and grid callables
evaluated once per distinct value of the meta-parameters they read."""

from __future__ import annotations

import functools
import operator
import types

from .compiler import _normalize_grid

MEMO_LIMIT = 4096  # remembered grids per kernel; beyond, the memo starts again


def no_grid(grid):
    return None


def _grid1(g):
    x = g[0]
    return (x, 1, 1) if type(x) is int and x >= 0 else None


def _grid2(g):
    x, y = g
    return (x, y, 1) if type(x) is int and type(y) is int and x >= 0 and y >= 0 else None


def _grid3(g):
    x, y, z = g
    return g if type(x) is int and type(y) is int and type(z) is int and min(g) >= 0 else None


FAST_GRIDS = {1: _grid1, 2: _grid2, 3: _grid3}  # tuples of ints: the common grids, checked without conversions


class _ReadRecorder(dict):
    """A grid's `meta`: records which names the grid reads; anything but `meta[k]`/`meta.get(k)`
    (iteration, `**meta`, a membership test) makes the reads unknown: that grid is not memoized."""

    def __init__(self, *a):
        super().__init__(*a)
        self.read: list = []
        self.untracked = False

    def __getitem__(self, k):
        self.read.append(k)
        return dict.__getitem__(self, k)

    def get(self, k, default=None):
        self.read.append(k)
        return dict.get(self, k, default)

    def _any(self):
        self.untracked = True

    def __iter__(self):
        self._any()
        return dict.__iter__(self)

    def __contains__(self, k):
        self._any()
        return dict.__contains__(self, k)

    def __len__(self):
        self._any()
        return dict.__len__(self)

    def keys(self):
        self._any()
        return dict.keys(self)

    def items(self):
        self._any()
        return dict.items(self)

    def values(self):
        self._any()
        return dict.values(self)

    def copy(self):
        self._any()
        return dict(dict.items(self))


_PURE_TYPES = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type, functools.partial)


def _pure(fn) -> bool:
    """A grid function whose result depends only on `meta`: it closes over, and reads as globals,
    nothing but modules, functions and classes (`triton.cdiv`, `min`), never data that may change."""
    if type(fn) is not types.FunctionType:
        return False
    for cell in fn.__closure__ or ():
        try:
            if not isinstance(cell.cell_contents, _PURE_TYPES):
                return False
        except ValueError:  # an empty cell
            return False
    glb = fn.__globals__

    def names(code):
        out = set(code.co_names)
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                out |= names(c)
        return out

    return all(isinstance(glb[n], _PURE_TYPES) for n in names(fn.__code__) if n in glb)


class GridMemo:
    """Results of grid callables per distinct value of the meta-parameters each one reads."""

    def __init__(self, params):
        self.params = params
        self.index = {p: i for i, p in enumerate(params)}
        self.reads: dict = {}  # grid -> itemgetter over the bound values, or False (evaluate every time)
        self.read_positions: dict = {}  # grid -> positions of the values it reads (memoized grids only)
        self.results: dict = {}

    def grid(self, grid, vals):
        reads = self.reads.get(grid)
        if reads:
            try:
                hit = self.results.get((grid, reads(vals)))
            except TypeError:
                hit = None
            if hit is not None:
                return hit
        if reads is None and len(self.reads) < MEMO_LIMIT:
            meta = _ReadRecorder(zip(self.params, vals))
            g3 = _normalize_grid(grid, meta)
            self.reads[grid] = reads = self._getter(grid, meta)
        else:
            g3 = _normalize_grid(grid, dict(zip(self.params, vals)))
        if reads:
            if len(self.results) > MEMO_LIMIT:
                self.results.clear()
            try:
                self.results[(grid, reads(vals))] = g3
            except TypeError:
                self.reads[grid] = False
        return g3

    def positions(self, grid):
        """The positions of the values `grid` reads, as a tuple; None when it is evaluated every time."""
        return self.read_positions.get(grid) if self.reads.get(grid) else None

    def _getter(self, grid, meta):
        if meta.untracked or not _pure(grid) or any(k not in self.index for k in meta.read):
            return False
        idx = sorted({self.index[k] for k in meta.read})
        self.read_positions[grid] = tuple(idx)
        if not idx:
            return lambda vals: ()
        return operator.itemgetter(*idx) if len(idx) > 1 else (lambda vals, i=idx[0]: (vals[i],))
