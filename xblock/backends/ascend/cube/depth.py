"""Deep L1 tiles: when may one copy of A and of B hold several steps of a dot's K loop?

The kernel's K loop is the user's: each step multiplies a BLOCK_M x BLOCK_K slice of A by a BLOCK_K x
BLOCK_N slice of B. `tiling.deepen` picks an L1 tile `k_depth` steps deep; the lowering (lower/ops/dot.py)
then steps the loop k_depth iterations at a time, copies the k_depth slices of A (and of B) in one Nd2Nz
DataCopy each, and runs their LoadData/Mmad steps from L1 (cube/ops.py mmad_steps). That is the same
product only when consecutive steps read consecutive slices, which `steps_side_by_side` proves from the
pointer structure of the operands' loads, step i + 1 against step i:

- A's offsets move BLOCK_K columns and B's BLOCK_K rows (row strides, row limits of A and column limits
  of B unchanged), so the k_depth slices lie side by side in GM;
- every K limit of the masks (A's columns, B's rows) drops by BLOCK_K a step (`k < K - i * BLOCK_K`,
  `k + i * BLOCK_K < K`): the valid K of one step is then clamp(limit_i, 0, BLOCK_K), and of n steps
  starting at step i clamp(limit_i, 0, n * BLOCK_K), a prefix of the deep tile, so the K tail (a K that is
  not a multiple of the tile, or a mask that ends it early) stays exact;
- the scalars the loop carries (a block pointer's offsets, `k0 += BLOCK_K`) advance by the same amount
  every step, as its pointers do (their lowering adds k_depth steps' worth at once).

Anything else (a K limit that does not move with the loop, offsets that depend on the step in another
way, a value of the loop body the structure cannot see through) keeps the user's tile (k_depth 1).
Comparisons see through the 32-bit wrapping of Triton's int32 offsets (two steps of one K loop do not
straddle a wrap: their K offsets differ by BLOCK_K).
"""

from __future__ import annotations

from mlir import ir

from ....passes.pointer_structure import Lin, Wrapped


def _inside(v, loop) -> bool:
    """Whether the scalar `v` is defined in the body of `loop` (the xb scf.for), or is one of its arguments."""
    if not isinstance(v, ir.Value):
        return True  # not a value of the kernel: keep the user's tile
    owner = v.owner
    op = owner.owner if isinstance(owner, ir.Block) else owner
    op = op.operation if hasattr(op, "operation") else op
    while op is not None:
        if op == loop.operation:
            return True
        op = op.parent
    return False


class Steps:
    """The polynomials of one K loop's step, and their value at the next step: `moves` maps the keys of the
    loop's counters (its induction variable, the iterations counter of a `range(0, K, BLOCK_K)` loop, the
    scalars it carries: a block pointer's offsets) to their increment per step (a Lin of values defined
    before the loop)."""

    def __init__(self, ps, loop, moves: dict):
        self.ps, self.loop, self.moves = ps, loop, moves

    def known(self, lin: Lin) -> bool:
        """Every variable of `lin` is a counter of the loop or defined before it (so `next` is exact)."""
        for mono in lin.terms:
            for k in mono:
                if k in self.moves:
                    continue
                v = self.ps.values[k]
                if isinstance(v, Wrapped):
                    if not self.known(v.lin):
                        return False
                elif _inside(v, self.loop):
                    return False
        return True

    def _map(self, lin: Lin, var) -> Lin:
        out = Lin()
        for mono, c in lin.terms.items():
            term = Lin.const(c)
            for k in mono:
                term = term * var(k)
            out = out + term
        return out

    def next(self, lin: Lin) -> Lin:
        """`lin` at the next step, wrapping as it does (no wrap left out)."""
        def var(k):
            if k in self.moves:
                return Lin.var(k) + self.moves[k]
            v = self.ps.values[k]
            if isinstance(v, Wrapped):
                inner = self.next(v.lin)
                return Lin.var(k) if inner == v.lin else Lin.var(self.ps.key(Wrapped(inner, v.bits)))
            return Lin.var(k)
        return self._map(lin, var)

    def plain(self, lin: Lin) -> Lin:
        """`lin` with its 32-bit wraps taken as exact (differences of two steps of one loop)."""
        def var(k):
            v = self.ps.values[k]
            return self.plain(v.lin) if isinstance(v, Wrapped) else Lin.var(k)
        return self._map(lin, var)

    def moves_by(self, lin: Lin, delta: Lin) -> bool:
        """`lin` at the next step is `lin + delta`."""
        return self.known(lin) and self.plain(self.next(lin)) - self.plain(lin) == delta

    def fixed(self, lins) -> bool:
        return all(self.moves_by(x, Lin()) for x in lins)


def steps_side_by_side(steps: Steps, a, b, block_k: int) -> bool:
    """Whether consecutive steps of the K loop read consecutive K slices of A (`a`, a TileAccess of the A load:
    rows M, columns K) and of B (`b`: rows K, columns N), with K masks that end them as one tile (module
    docstring)."""
    if a is None or b is None:
        return False
    if a.row_lower or a.col_lower or b.row_lower or b.col_lower or a.cols != block_k or b.rows != block_k:
        return False
    for acc, k_dim in ((a, 1), (b, 0)):  # wrapped offsets (`% M`) only on M and N
        if acc.assumed is not None and (acc.assumed.uniform or any(d == k_dim for d, _ in acc.assumed.dims)):
            return False
    if not (steps.fixed([a.row_stride, b.row_stride, *a.row_limits, *b.col_limits, *a.uniform, *b.uniform])):
        return False
    if not steps.moves_by(a.base, Lin.const(block_k)):
        return False
    if not steps.moves_by(b.base, steps.plain(b.row_stride) * Lin.const(block_k)):
        return False
    return all(steps.moves_by(lim, Lin.const(-block_k)) for lim in (*a.col_limits, *b.row_limits))
