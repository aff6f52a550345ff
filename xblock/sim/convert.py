"""Convert an xb module (MLIR) into the simulator's Program (plain data, see program.py)."""

from __future__ import annotations

import numpy as np
from mlir import ir

from ..dialects.locations import kernel_of, source_loc
from .program import _ELEM, Block, Dense, Instr, Loc, Program, TypeInfo


def type_info(t: ir.Type) -> TypeInfo:
    shape: tuple = ()
    if isinstance(t, ir.RankedTensorType) or str(t).startswith("tensor<"):
        rt = ir.RankedTensorType(t)
        shape = tuple(rt.shape)
        t = rt.element_type
    s = str(t)
    if s.startswith("!xb.ptr<"):
        return TypeInfo("ptr", np.dtype(np.int64), shape, s[len("!xb.ptr<"):-1])
    return TypeInfo(s, np.dtype(_ELEM[s]), shape)


def _loc(loc: ir.Location) -> Loc:
    return Loc(*source_loc(loc))


def _attr(a: ir.Attribute):
    """An attribute as a Python value (attributes arrive downcast to their concrete class)."""
    if isinstance(a, (ir.BoolAttr, ir.IntegerAttr, ir.FloatAttr, ir.StringAttr)):
        return a.value
    if isinstance(a, ir.DenseI32ArrayAttr):
        return list(a)
    if isinstance(a, ir.TypeAttr):
        return str(a.value)
    if isinstance(a, ir.DenseElementsAttr):
        if a.is_splat:
            v = a.get_splat_value()
            return Dense(v.value if hasattr(v, "value") else v, None)
        return Dense(None, np.array(a))
    if isinstance(a, ir.DenseI64ArrayAttr):
        return list(a)
    return str(a)


class _Converter:
    def __init__(self):
        self.slots: dict = {}

    def slot(self, v: ir.Value) -> int:
        if v not in self.slots:
            self.slots[v] = len(self.slots)
        return self.slots[v]

    def block(self, b: ir.Block) -> Block:
        out = Block([self.slot(a) for a in b.arguments], [type_info(a.type) for a in b.arguments])
        ops = list(b.operations)
        for op in ops:
            ins = self.instr(op.operation)
            if ins.name in ("scf.yield", "scf.condition", "gpu.yield", "func.return"):
                out.term = ins
            else:
                out.instrs.append(ins)
        return out

    def instr(self, op: ir.Operation) -> Instr:
        attrs = {n: _attr(op.attributes[n]) for n in op.attributes}
        regions = [self.block(r.blocks[0]) if len(r.blocks) else None for r in op.regions]
        return Instr(
            op.name,
            [self.slot(v) for v in op.operands],
            [self.slot(r) for r in op.results],
            attrs,
            [type_info(r.type) for r in op.results],
            [type_info(v.type) for v in op.operands],
            regions,
            _loc(op.location),
        )


def convert(module: ir.Module) -> Program:
    """The kernel of `module` as a Program."""
    kernel = kernel_of(module)
    conv = _Converter()
    with module.context:
        body = conv.block(kernel.regions[0].blocks[0])
        names = [ir.StringAttr(s).value for s in ir.ArrayAttr(kernel.attributes["xb.arg_names"])]
    return Program(ir.StringAttr(kernel.attributes["sym_name"]).value, names, body.arg_types, body,
                   len(conv.slots))


