"""Run a simulator Program over a launch grid: all programs at once, split only where they diverge."""

from __future__ import annotations

import sys

import numpy as np

from ..errors import ExecutionError
from .lazy import PtrSum, materialize
from .memory import Memory
from .program import Block, Program
from .rules import LAZY_RULES, SIM_RULES

CHUNK_ELEMENTS = 1 << 22  # values per block op above which programs run in chunks


def _round_bf16(x: np.ndarray) -> np.ndarray:
    import ml_dtypes

    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def _sole_refcount() -> int:
    """What sys.getrefcount reports for an array held only by one list (as run_block reads it)."""
    vals = [np.empty(1)]
    return sys.getrefcount(vals[0])


_SOLE = _sole_refcount()


def _uniform(x: np.ndarray) -> bool:
    return x.shape[0] == 1 or bool((x == x[0]).all())


class NeedsSerial(Exception):
    """Programs run side by side wait for one another (a spin lock): run the launch again, serially."""


class Executor:
    """Executes one launch. `pids` are per-axis program ids of the programs being run now.

    By default all programs run at once. `serial=True` runs them one at a time, each to the end,
    in program order: what a launch whose programs wait for one another (spin locks, flags set by
    an earlier program) needs, since a program then never waits for one that cannot move.
    """

    def __init__(self, program: Program, memory: Memory, grid: tuple, serial: bool = False):
        self.program, self.memory, self.grid = program, memory, grid
        self.serial = serial
        self.env: dict = {}
        self.donor = None  # see run_block

    # ------------------------------------------------------------------------------ programs
    def set_programs(self, flat: np.ndarray) -> None:
        gx, gy, _ = self.grid
        self.flat_pid = flat
        self.n_programs = flat.size
        self.pids = [(flat % gx).astype(np.int32), ((flat // gx) % gy).astype(np.int32),
                     (flat // (gx * gy)).astype(np.int32)]

    def run(self, args: list) -> None:
        total = int(np.prod(self.grid))
        if total == 0:
            return
        biggest = max([1] + [int(np.prod(t.shape)) for t in _all_types(self.program.body)])
        chunk = 1 if self.serial else max(1, CHUNK_ELEMENTS // biggest)
        for start in range(0, total, chunk):
            self.set_programs(np.arange(start, min(total, start + chunk), dtype=np.int64))
            self.env = {}
            self.run_block(self.program.body, args)

    def on_subset(self, sel: np.ndarray, fn):
        """Run `fn()` for the programs `sel` (indices into the current ones); restore afterwards."""
        saved = (self.env, self.flat_pid, self.n_programs, self.pids)
        n = self.n_programs
        self.env = {k: _take(v, sel, n) for k, v in self.env.items()}
        self.set_programs(self.flat_pid[sel])
        try:
            return fn()
        finally:
            self.env, self.flat_pid, self.n_programs, self.pids = saved

    # ------------------------------------------------------------------------------ blocks
    def run_block(self, block: Block, args: list) -> list:
        env = self.env
        for slot, v in zip(block.args, args):
            env[slot] = v
        for ins in block.instrs:
            vals = [env[o] for o in ins.operands]
            for i in ins.eager:
                if type(vals[i]) is PtrSum:
                    vals[i] = vals[i].value()
            for o in ins.dead:
                del env[o]
            for i in ins.donors:
                # a dead operand that nothing else references (not even a view): its memory may take
                # the result (ufuncs write element by element, so out= an input is exact)
                if type(vals[i]) is np.ndarray and sys.getrefcount(vals[i]) <= _SOLE and vals[i].base is None \
                        and vals[i].flags.writeable:
                    self.donor = vals[i]
                    break
            ctl = _CONTROL.get(ins.name)
            if ctl is not None:
                out = ctl(self, ins, vals)
            else:
                r = ins.rule
                if r is None:
                    r = ins.rule = SIM_RULES.get(ins.name)
                    if r is None:
                        raise ExecutionError(f"{ins.loc}: the simulator has no rule for {ins.name}")
                    if r not in LAZY_RULES:
                        ins.eager = tuple(i for i, t in enumerate(ins.otypes) if t.is_ptr)
                        vals = [materialize(v) for v in vals]
                out = r(self, ins, *vals)
            self.donor = None
            for o in ins.dead_after:
                del env[o]
            if ins.results:
                outs = out if isinstance(out, (list, tuple)) else (out,)
                for slot, t, v in zip(ins.results, ins.rtypes, outs):
                    env[slot] = _round_bf16(v) if t.elem == "bf16" else v
                outs = v = None
            out = vals = None  # hold no reference past the env's: see the donor check above
        if block.term is None:
            return []
        return [env[o] for o in block.term.operands]

    def merge(self, parts, types, n):
        """Assemble per-subset results into arrays over the current programs."""
        outs = []
        for i, t in enumerate(types):
            full = np.empty((n,) + t.shape, dtype=t.dtype)
            for sel, vals in parts:
                full[sel] = materialize(vals[i])
            outs.append(full)
        return outs


def _take(v, sel, n):
    """`v` restricted to the programs `sel` where it has a program axis of size `n` (> 1)."""
    if type(v) is PtrSum:
        if n == 1 or v.shape[0] != n:
            return v
        return PtrSum([t[sel] if t.shape[0] == n else t for t in v.terms], (len(sel),) + v.shape[1:])
    if isinstance(v, np.ndarray) and v.ndim and v.shape[0] == n and n != 1:
        return v[sel]
    return v


def _all_types(block: Block):
    for ins in block.instrs:
        yield from ins.rtypes
        for r in ins.regions:
            if r is not None:
                yield from _all_types(r)


# ---------------------------------------------------------------------------------- control flow
def _sim_for(ex: Executor, ins, vals):
    lb, ub, step, *init = vals
    if _uniform(lb) and _uniform(ub) and _uniform(step):
        return _for_uniform(ex, ins, int(lb.flat[0]), int(ub.flat[0]), int(step.flat[0]), init)
    keys = np.stack([np.broadcast_to(v, (ex.n_programs,)) for v in (lb, ub, step)], axis=1)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    parts = []
    for g, (lo, hi, st) in enumerate(uniq):
        sel = np.flatnonzero(inverse.ravel() == g)
        res = ex.on_subset(sel, lambda: _for_uniform(ex, ins, int(lo), int(hi), int(st),
                                                      [ex.env_slice(v, sel) for v in init]))
        parts.append((sel, res))
    return ex.merge(parts, ins.rtypes, ex.n_programs)


def _for_uniform(ex, ins, lo, hi, st, carried):
    body = ins.regions[0]
    iv_dtype = body.arg_types[0].dtype
    for i in range(lo, hi, st):
        carried = ex.run_block(body, [np.array([i], dtype=iv_dtype)] + list(carried))
    return list(carried)


def _sim_if(ex: Executor, ins, vals):
    cond = vals[0]
    then_r, else_r = ins.regions
    if _uniform(cond):
        region = then_r if bool(cond.flat[0]) else else_r
        return ex.run_block(region, []) if region is not None else []
    c = np.broadcast_to(cond, (ex.n_programs,))
    parts = []
    for region, sel in ((then_r, np.flatnonzero(c)), (else_r, np.flatnonzero(~c))):
        res = ex.on_subset(sel, lambda: ex.run_block(region, []) if region is not None else [])
        parts.append((sel, res))
    return ex.merge(parts, ins.rtypes, ex.n_programs)


def _sim_while(ex: Executor, ins, vals):
    before, after = ins.regions
    carried = list(vals)
    watch = _Progress(ex, ins)
    while True:
        cond, *args = ex.run_block(before, carried)
        if not _uniform(cond):
            break
        if not bool(cond.flat[0]):
            return args
        carried = ex.run_block(after, args)
        watch.step(carried)
    # programs disagree: those whose condition is false are done; the others go on one at a time
    c = np.broadcast_to(cond, (ex.n_programs,))
    parts = []
    for p in range(ex.n_programs):
        sel = np.array([p])
        if not c[p]:
            parts.append((sel, [ex.env_slice(v, sel) for v in args]))
            continue
        parts.append((sel, ex.on_subset(sel, lambda: _while_one(
            ex, ins, ex.run_block(after, [ex.env_slice(v, sel) for v in args])))))
    return ex.merge(parts, ins.rtypes, ex.n_programs)


def _while_one(ex, ins, carried):
    """Finish a loop for the current programs, whose `before` region has not run for `carried` yet."""
    before, after = ins.regions
    watch = _Progress(ex, ins)
    while True:
        cond, *args = ex.run_block(before, carried)
        if not bool(cond.flat[0]):
            return args
        carried = ex.run_block(after, args)
        watch.step(carried)


class _Progress:
    """Tells a loop that can never end: an iteration that changes neither its values nor memory.

    Nothing else runs while the sim is inside a loop, so such an iteration repeats forever. When
    programs run side by side, the one they wait for may be among them (a spin lock's holder waits
    past the loop): the launch is run again serially. Run serially, the loop is an error.
    """

    def __init__(self, ex, ins):
        self.ex, self.ins = ex, ins
        self.last = None
        self.digest = None

    def step(self, carried) -> None:
        values = [np.asarray(materialize(v)) for v in carried]
        last, self.last = self.last, values
        if last is None or len(last) != len(values) or not all(
                a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
                for a, b in zip(last, values)):
            self.digest = None
            return
        digest, self.digest = self.digest, self.ex.memory.digest()
        if digest is None or digest != self.digest:
            return
        if not self.ex.serial:
            raise NeedsSerial()
        raise ExecutionError(
            f"{self.ins.loc}: this loop cannot make progress: program {int(self.ex.flat_pid[0])} (flat id) "
            "repeats an iteration that changes nothing. It waits for memory that no program can change "
            "when programs run one at a time in order (e.g. a spin lock never released, or a wait for a "
            "later program such as a grid-wide barrier)")


def _env_slice(self, v, sel):
    v = materialize(v)
    return v if v.shape[0] == 1 else v[sel]


Executor.env_slice = _env_slice

_CONTROL = {"scf.for": _sim_for, "scf.if": _sim_if, "scf.while": _sim_while}
