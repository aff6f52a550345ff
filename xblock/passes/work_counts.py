"""xb-count-work: the bytes and operations of one launch of a kernel, read from its xb IR (an analysis).

The autotuner's cost model (`runtime/cost_model.py`) prices these counts with a target's roofline
constants, so that configs are ranked before any backend compile. Per program:
- bytes: every `xb.load` and `xb.store` moves its whole block (lanes x element size); masks are
  counted as full, so lanes masked off past the end of an array cost as much as the others (the
  price of a block larger than the data); atomics read and write;
- ops: lanes of every elementwise `arith`/`math` op, `xb.addptr`, `xb.arange`, reductions, scans
  and transposes (shape ops and constants are free);
- dot_flops: 2*M*N*K of each `xb.dot`, keyed by (input element type, input_precision).
A `scf.for` multiplies its body by its trip count, computed from the launch's integer arguments
and constants; a bound that depends on `program_id` is evaluated for a few programs of the grid
and the counts are averaged. A `scf.if` whose condition is known takes its branch, else the larger
one. What cannot be counted before the run (a `while` loop, a loop bound computed from loaded data
or from an outer loop's index, a call left after inlining) raises `Uncountable`, with the line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir

from ..dialects import xb
from ..dialects.locations import kernel_of, op_loc

NAME = "xb-count-work"
FREE = {"arith.constant", "xb.splat", "xb.broadcast", "xb.expand_dims", "xb.reshape", "xb.program_id",
        "xb.num_programs", "xb.ptr_cast", "xb.print", "xb.assert", "scf.yield"}
MAX_SAMPLES = 3  # programs evaluated when a loop bound depends on program_id: first, middle, last


class Uncountable(Exception):
    """The kernel's work cannot be counted before it runs; `where` is (file, line) of the op."""

    def __init__(self, reason: str, where=("", 0)):
        super().__init__(reason)
        self.reason, self.where = reason, where


class _NeedsPid(Exception):
    """A loop bound or branch depends on the program's id: count again for sampled programs."""


@dataclass
class Work:
    """Counts of one launch: per program (averaged over sampled programs) and the number of programs."""

    programs: int
    bytes: float = 0.0
    ops: float = 0.0
    dot_flops: dict = field(default_factory=dict)  # (input element type, input_precision) -> flops

    def add(self, other: "Work", times: float = 1.0) -> None:
        self.bytes += other.bytes * times
        self.ops += other.ops * times
        for k, v in other.dot_flops.items():
            self.dot_flops[k] = self.dot_flops.get(k, 0.0) + v * times

    def size(self) -> float:
        return self.bytes + self.ops + sum(self.dot_flops.values())


def _numel(t: ir.Type) -> int:
    if isinstance(t, ir.RankedTensorType):
        n = 1
        for d in ir.RankedTensorType(t).shape:
            n *= d
        return n
    return 1


def _elem(t: ir.Type) -> ir.Type:
    return ir.RankedTensorType(t).element_type if isinstance(t, ir.RankedTensorType) else t


def _elem_bytes(t: ir.Type) -> int:
    e = _elem(t)
    if xb.is_ptr(e) or isinstance(e, ir.IndexType):
        return 8
    if isinstance(e, ir.IntegerType):
        return max(1, ir.IntegerType(e).width // 8)
    if isinstance(e, ir.FloatType):
        return max(1, ir.FloatType(e).width // 8)
    return 4


def _block_bytes(t: ir.Type) -> int:
    return _numel(t) * _elem_bytes(t)


def _where(op) -> tuple:
    file, line, _ = op_loc(op)
    return file, line


# ------------------------------------------------------------------------------ scalar values
def _wrap(x: int, width: int) -> int:
    x &= (1 << width) - 1
    return x - (1 << width) if x >> (width - 1) else x


def _unsigned(x: int, width: int) -> int:
    return x & ((1 << width) - 1)


def _div(a, b):
    return None if b == 0 else abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)


_CMP = [lambda a, b, w: a == b, lambda a, b, w: a != b, lambda a, b, w: a < b, lambda a, b, w: a <= b,
        lambda a, b, w: a > b, lambda a, b, w: a >= b,
        lambda a, b, w: _unsigned(a, w) < _unsigned(b, w), lambda a, b, w: _unsigned(a, w) <= _unsigned(b, w),
        lambda a, b, w: _unsigned(a, w) > _unsigned(b, w), lambda a, b, w: _unsigned(a, w) >= _unsigned(b, w)]

_BINARY = {
    "arith.addi": lambda a, b, w: a + b, "arith.subi": lambda a, b, w: a - b, "arith.muli": lambda a, b, w: a * b,
    "arith.divsi": lambda a, b, w: _div(a, b),
    "arith.divui": lambda a, b, w: None if b == 0 else _unsigned(a, w) // _unsigned(b, w),
    "arith.ceildivsi": lambda a, b, w: None if b == 0 else -(-a // b),
    "arith.floordivsi": lambda a, b, w: None if b == 0 else a // b,
    "arith.remsi": lambda a, b, w: None if b == 0 else a - b * _div(a, b),
    "arith.remui": lambda a, b, w: None if b == 0 else _unsigned(a, w) % _unsigned(b, w),
    "arith.minsi": lambda a, b, w: min(a, b), "arith.maxsi": lambda a, b, w: max(a, b),
    "arith.minui": lambda a, b, w: min(_unsigned(a, w), _unsigned(b, w)),
    "arith.maxui": lambda a, b, w: max(_unsigned(a, w), _unsigned(b, w)),
    "arith.andi": lambda a, b, w: a & b, "arith.ori": lambda a, b, w: a | b, "arith.xori": lambda a, b, w: a ^ b,
    "arith.shli": lambda a, b, w: a << b if 0 <= b < w else None,
    "arith.shrsi": lambda a, b, w: a >> b if 0 <= b < w else None,
    "arith.shrui": lambda a, b, w: _unsigned(a, w) >> b if 0 <= b < w else None,
}
_CASTS = {"arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci"}


def _width(t: ir.Type) -> int:
    return ir.IntegerType(t).width if isinstance(t, ir.IntegerType) else 64


class _Scalars:
    """Integer scalars of the kernel known before it runs: arguments, constants, program ids (when
    given), and arithmetic on them. Anything else (a loaded value, a loop index) is unknown."""

    def __init__(self, entry: ir.Block, args: dict, grid: tuple, pid):
        self.entry, self.args, self.grid, self.pid = entry, args, grid, pid
        self.memo: dict = {}

    def value(self, v: ir.Value):
        try:
            return self.memo[v]
        except KeyError:
            pass
        out = self._compute(v)
        self.memo[v] = out
        return out

    def _compute(self, v: ir.Value):
        owner = v.owner
        if isinstance(owner, ir.Block):
            return self.args.get(ir.BlockArgument(v).arg_number) if owner == self.entry else None
        op = owner.operation
        name, t = op.name, v.type
        if not (isinstance(t, ir.IntegerType) or isinstance(t, ir.IndexType)):
            return None
        w = _width(t)
        if name == "arith.constant":
            attr = op.attributes["value"]
            return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None
        if name in ("xb.program_id", "xb.num_programs"):
            axis = ir.IntegerAttr(op.attributes["axis"]).value
            if name == "xb.num_programs":
                return self.grid[axis]
            if self.pid is None:
                raise _NeedsPid
            return self.pid[axis]
        operands = [self.value(o) for o in op.operands]
        if any(x is None for x in operands):
            return None
        if name in _BINARY:
            r = _BINARY[name](operands[0], operands[1], w)
        elif name in _CASTS:
            src = _width(op.operands[0].type)
            r = _unsigned(operands[0], src) if name in ("arith.extui", "arith.index_castui") else operands[0]
        elif name == "arith.cmpi":
            pred = ir.IntegerAttr(op.attributes["predicate"]).value
            r = int(_CMP[pred](operands[0], operands[1], _width(op.operands[0].type)))
        elif name == "arith.select":
            r = operands[1] if operands[0] else operands[2]
        else:
            return None
        return None if r is None else (r & 1 if w == 1 else _wrap(r, w))


# ------------------------------------------------------------------------------ counting
def _count_op(op, work: Work) -> None:
    """Add the bytes, lanes and dot flops of one op without regions."""
    name = op.name
    if name == "xb.load":
        work.bytes += _block_bytes(op.results[0].type)
    elif name == "xb.store":
        work.bytes += _block_bytes(op.operands[1].type)
    elif name in ("xb.atomic_rmw", "xb.atomic_cas"):
        work.bytes += 2 * _block_bytes(op.results[0].type)
        work.ops += _numel(op.results[0].type)
    elif name == "xb.dot":
        a = op.operands[0].type
        k = ir.RankedTensorType(a).shape[-1]
        attr = op.attributes["input_precision"] if "input_precision" in op.attributes else None
        key = (str(_elem(a)), ir.StringAttr(attr).value if isinstance(attr, ir.StringAttr) else "")
        work.dot_flops[key] = work.dot_flops.get(key, 0.0) + 2.0 * _numel(op.results[0].type) * k
    elif name in ("xb.reduce", "xb.scan"):
        work.ops += sum(_numel(o.type) for o in op.operands)
    elif name not in FREE and len(op.results):
        work.ops += _numel(op.results[0].type)


def _count_block(block: ir.Block, scalars: _Scalars) -> Work:
    work = Work(programs=1)
    for op_view in block.operations:
        op = op_view.operation
        name = op.name
        if name == "scf.for":
            lb, ub, step = (scalars.value(op.operands[i]) for i in range(3))
            if lb is None or ub is None or step is None or step <= 0:
                raise Uncountable("a loop whose trip count is not known before the run (computed from loaded "
                                  "data or from an outer loop's index)", _where(op))
            trips = max(0, -(-(ub - lb) // step))
            work.add(_count_block(op.regions[0].blocks[0], scalars), trips)
        elif name == "scf.if":
            cond = scalars.value(op.operands[0])
            branches = [_count_block(r.blocks[0], scalars) for r in op.regions if len(r.blocks)]
            if cond is not None and len(branches) == 2:
                work.add(branches[0] if cond else branches[1])
            elif cond is not None:
                if cond:
                    work.add(branches[0])
            else:  # unknown at compile time: the larger branch
                work.add(max(branches, key=Work.size))
        elif name == "scf.while":
            raise Uncountable("a while loop (its trip count depends on values computed at run time)", _where(op))
        elif name in ("func.call", "scf.execute_region", "cf.br", "cf.cond_br"):
            raise Uncountable(f"control flow the cost model does not follow ({name})", _where(op))
        else:
            _count_op(op, work)
    return work


def _sample_pids(grid: tuple) -> list:
    total = grid[0] * grid[1] * grid[2]
    picks = sorted({0, total // 2, total - 1}) if total > MAX_SAMPLES else range(total)
    return [(i % grid[0], i // grid[0] % grid[1], i // (grid[0] * grid[1])) for i in picks]


def count(module: ir.Module, args: dict, grid: tuple) -> Work:
    """The Work of launching `module`'s kernel on `grid` (3 ints).

    Args:
        module: an xb module after the pass pipeline (one specialization).
        args: position of a runtime argument -> its int value (others are unknown).
        grid: the launch's grid, three non-negative ints.
    Returns:
        Work per program (averaged over sampled programs where it depends on program_id).
    Raises:
        Uncountable: what the kernel does cannot be counted before the run.
    """
    kernel = kernel_of(module)
    entry = kernel.regions[0].blocks[0]
    programs = grid[0] * grid[1] * grid[2]
    with module.context:
        try:
            work = _count_block(entry, _Scalars(entry, args, grid, None))
        except _NeedsPid:
            pids = _sample_pids(grid)
            work = Work(programs=1)
            for pid in pids:
                work.add(_count_block(entry, _Scalars(entry, args, grid, pid)), 1.0 / max(1, len(pids)))
    work.programs = programs
    return work
