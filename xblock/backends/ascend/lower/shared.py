"""Every channel between modules of one lowering: `ctx.ext`, a `Shared` made fresh per lowering.

Each field says which module writes it and which reads it. A field whose type lives in a module
the lowering context does not import is named for type checkers only (no import at run time).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from mlir import ir

    from ..cube.mixed import CubeState


@dataclass(eq=False)
class Shared:
    """The state rule modules and their helpers hand each other during one lowering."""

    # fn(ctx) to run after the walk: cube/ops.py, cube/mixed.py, cube/handoff.py append; driver runs them
    after_walk: list[Callable] = field(default_factory=list)
    # the GlobalTensor<int64_t> over `assertStatus`: lower/ops/debug.py (status_buffer) sets and reads it
    assert_status: ir.Value | None = None
    # {addptr result: its held offset tile}: vector/lanes.py hold_offsets writes, release_offsets reads
    held_offsets: dict = field(default_factory=dict)
    # {loop-carried pointer block (block argument or loop result): (its start, Lin shift)} for a start whose
    # offsets depend on data, advanced by a uniform step: lower/ops/control.py writes, vector/lanes.py reads
    carried_ptrs: dict = field(default_factory=dict)
    # {(GM address argument, elem): GlobalTensor<elem> over it}: lower/ops/layout.py writes and reads
    ptr_casts: dict = field(default_factory=dict)
    # the Cube rules' per-lowering state: cube/mixed.py (state) makes it; cube/*, lower/ops/dot.py use it
    cube: CubeState | None = None
    # fn(loop op, lb, step) -> (lb, step) or (lb, step, ub) sharing a chunk loop's iterations between the
    # vector cores (and, ub, the AI Cores of a row-grouped kernel: cube/rowsplit.py):
    # cube/mixed.py sets it around an AIV section; lower/ops/control.py (scf.for) reads it
    share_loop: Callable | None = None
    # {scf.if op: {result index: Tile}}: lower/ops/control.py (scf.if) writes; vector/tiles.py dst_tile reads
    if_results: dict = field(default_factory=dict)
    # roots of the pointers the kernel stores through, None until computed: lower/ops/load.py writes and reads
    stored_roots: set | None = None
    # every xb.store/atomic of the kernel, None until computed: vector/store_order.py writes and reads
    store_sites: list | None = None
    # {absorbed op: the op at which it may be lowered after all}: cube/handoff.py writes (a dot's operand
    # load, lowered at the dot when the Cube cannot copy it); lower/driver.py last_uses reads (its operands
    # stay live until that op)
    deferred: dict = field(default_factory=dict)
    # {load op: row_cache.Use}: plan/row_cache.py plan writes; row_cache.py begin and place read
    row_cache: dict = field(default_factory=dict)
    # blocks being computed as data (a stack): vector/tiles.py _lower_as_data pushes, data_wanted reads
    as_data: list = field(default_factory=list)
