"""The simulator's program: plain data (no MLIR), pickled into the cache and executed by the sim.

Each op is an `Instr` (its rule, operand and result slots, attributes as Python values, result
types as numpy dtypes and shapes, nested blocks, and its source location). `convert.py` builds
a Program from an xb module; running one needs only numpy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

# float8 values are held in ml_dtypes' types of the same bits; Triton's fp8e4b15 (f8E4M3B11FNUZ in
# xb) in float8_e4m3b11fnuz, whose bits it shares but not their meaning (only copies and bitcasts
# touch it: its conversions are the sim's own, see rules.fp_to_fp)
FP8 = {"f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2,
       "f8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz, "f8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz,
       "f8E4M3B11FNUZ": ml_dtypes.float8_e4m3b11fnuz}
_ELEM = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
         "f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64, **FP8}
_ITEMSIZE = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "f32": 4, "f64": 8,
             **{k: 1 for k in FP8}}


@dataclass(frozen=True)
class TypeInfo:
    """A value's element kind ('f32', 'ptr', ...), numpy dtype, block shape and pointee."""

    elem: str
    dtype: np.dtype
    shape: tuple
    pointee: str | None = None

    @property
    def is_ptr(self) -> bool:
        return self.pointee is not None


def itemsize(elem: str) -> int:
    return _ITEMSIZE[elem]


@dataclass
class Loc:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class Instr:
    name: str
    operands: list
    results: list
    attrs: dict
    rtypes: list
    otypes: list
    regions: list
    loc: Loc
    rule: object = None
    eager: tuple = ()  # operands to materialize if lazy (pointer operands of rules that need arrays)
    dead: tuple = ()  # slots defined in this block whose last use is this instruction (no regions)
    dead_after: tuple = ()  # the same, for an instruction with regions: freed once it has run
    donors: tuple = ()  # operand positions whose array the rule may overwrite if nothing else holds it


@dataclass
class Block:
    args: list
    arg_types: list
    instrs: list = field(default_factory=list)
    term: Instr | None = None


@dataclass
class Program:
    name: str
    arg_names: list
    arg_types: list
    body: Block
    n_slots: int


@dataclass
class Dense:
    """A dense constant as plain data: a splat value, or an array."""

    splat: object
    array: object


def bind_rules(block: Block, rules: dict, lazy_rules: frozenset | set) -> None:
    """Attach each instruction's rule now (`rules`: op name -> rule).

    Rules in `lazy_rules` take lazy pointer blocks; the others get pointer operands materialized.
    """
    for ins in block.instrs:
        ins.rule = rules.get(ins.name)
        lazy_ok = ins.rule in lazy_rules or ins.name in ("scf.for", "scf.if", "scf.while")
        ins.eager = () if lazy_ok else tuple(i for i, t in enumerate(ins.otypes) if t.is_ptr)
        for region in ins.regions:
            if region is not None:
                bind_rules(region, rules, lazy_rules)
    _plan_lifetimes(block)


def _uses(ins: Instr) -> set:
    """Slots an instruction reads, in its operands or anywhere in its regions."""
    out = set(ins.operands)
    for r in ins.regions:
        if r is not None:
            for sub in r.instrs:
                out |= _uses(sub)
            if r.term is not None:
                out |= set(r.term.operands)
    return out


def _plan_lifetimes(block: Block) -> None:
    """Mark where values defined in `block` die, so the executor can free them (or reuse their
    memory for a result) right after their last use. Values the terminator yields never die here."""
    defined = set()
    for ins in block.instrs:
        defined.update(ins.results)
    live = set(block.term.operands) if block.term is not None else set()
    for ins in reversed(block.instrs):
        uses = _uses(ins)
        dead = tuple(sorted((uses & defined) - live))
        if ins.regions:
            ins.dead, ins.dead_after, ins.donors = (), dead, ()
        else:
            ins.dead, ins.dead_after = dead, ()
            ins.donors = tuple(i for i, o in enumerate(ins.operands) if o in dead and ins.operands.count(o) == 1)
        live |= uses
