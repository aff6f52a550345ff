"""The rule of xb.atomic_rmw: atomic add, max and min as copies to GM under the data-copy atomics.

On Atlas A2 (910B) AscendC's atomics act on the way out: after SetAtomicAdd/SetAtomicMax/
SetAtomicMin<T>(), every DataCopy/DataCopyPad to GM combines each element with the one GM holds,
until DisableDmaAtomic (asc-devkit docs/zh/api/SIMD-API/基础API/原子操作/: SetAtomicAdd.md,
SetAtomicMax(ISASI).md, SetAtomicMin(ISASI).md). They return nothing. The scalar atomics that return
the old value (AtomicAdd, AtomicMax, AtomicMin, AtomicCas, AtomicExch, declared in
basic_api/kernel_operator_atomic_intf.h) are documented for Ascend 950PR/950DT only ("Atlas A2 ...
不支持" on each page), and no data-copy atomic does and/or/xor (SetStoreAtomicConfig's AtomicOp has
only ATOMIC_SUM). So add, max and min of a block or of one scalar run when their old value is unused;
every other atomic is an error naming the API it would need; xb.atomic_cas is in `rules.UNSUPPORTED`.
"""

from __future__ import annotations

from mlir import ir

from ...values import elem_of
from ...vector.access import gm_tensor, scalar_to_gm, segments, store_tile
from ..rules import rule

DOCS = "asc-devkit docs/zh/api/SIMD-API/基础API/原子操作/"
DMA = {"add": "add", "fadd": "add", "max": "max", "min": "min"}  # xb kind -> the data-copy atomic
_ALL = ("i8", "i16", "f16", "bf16", "i32", "f32")
# T of SetAtomicAdd/Max/Min per NPU arch (SetAtomicAdd.md: 310P AI Core int16/half/float; Max/Min: A2/A3/950)
TYPES = {"dav-2201": {"add": _ALL, "max": _ALL, "min": _ALL}, "dav-2002": {"add": ("i16", "f16", "f32")}}
USER = {"add": "atomic_add", "fadd": "atomic_add", "max": "atomic_max", "min": "atomic_min", "umax": "atomic_max",
        "umin": "atomic_min", "xchg": "atomic_xchg", "and": "atomic_and", "or": "atomic_or", "xor": "atomic_xor"}
ONLY_950 = ("which asc-devkit documents for Ascend 950PR/950DT only, not for Atlas A2 (910B) ({docs}{api}.md); "
            "Atlas A2 has only the data-copy atomics SetAtomicAdd/SetAtomicMax/SetAtomicMin, which return nothing")


def refusal(kind: str) -> str | None:
    """Why xb.atomic_rmw of `kind` has no AscendC lowering (None when it has one)."""
    what = f"{USER.get(kind, kind)} (xb.atomic_rmw {kind}) is not supported on ascend"
    if kind == "xchg":
        return f"{what}: it needs AscendC's scalar AtomicExch, " + ONLY_950.format(docs=DOCS, api="AtomicExch")
    if kind in ("and", "or", "xor"):
        return (f"{what}: AscendC has no atomic bitwise {kind}: the data-copy atomics of Atlas A2 (910B) are "
                f"SetAtomicAdd/SetAtomicMax/SetAtomicMin (SetStoreAtomicConfig's AtomicOp has only ATOMIC_SUM), "
                f"and the scalar atomics (AtomicAdd/Max/Min/Cas/Exch) are Ascend 950 only ({DOCS})")
    if kind in ("umax", "umin"):
        api = "SetAtomicMax" if kind == "umax" else "SetAtomicMin"
        return (f"{what} on unsigned integers: {api} takes int8_t, int16_t, half, bfloat16_t, int32_t or float, "
                f"no unsigned type ({DOCS}{api}(ISASI).md)")
    return None if kind in DMA else f"{what}"


@rule("xb.atomic_rmw")
def _lower_atomic_rmw(ctx, op):
    kind = ir.StringAttr(op.attributes["kind"]).value
    why = refusal(kind)
    if why:
        raise ctx.error(why)
    user, which = USER[kind], DMA[kind]
    if any(True for _ in op.result.uses):
        api = {"add": "AtomicAdd", "max": "AtomicMax", "min": "AtomicMin"}[which]
        raise ctx.error(f"the old value {user} returns is not available on ascend: it needs AscendC's scalar "
                        f"{api}, " + ONLY_950.format(docs=DOCS, api=api))
    elem = elem_of(op.operands[1].type)
    types = TYPES.get(ctx.soc.npu_arch, {}).get(which, ())
    if elem not in types:
        api = "SetAtomic" + which.capitalize()
        have = f"takes {', '.join(types)}" if types else "is not available"
        raise ctx.error(f"{user} of {elem} is not supported on ascend: {api} on {ctx.soc.name} {have} "
                        f"({DOCS}{api}{'' if which == 'add' else '(ISASI)'}.md)")
    if str(op.operands[1].type).startswith("tensor<"):
        store_tile(ctx, op, which)
    else:
        _scalar_atomic(ctx, op, which, elem)


def _scalar_atomic(ctx, op, which: str, elem: str) -> None:
    """One element: SetValue into a 32-byte scratch block, then a one-element DataCopyPad to GM (it
    writes exactly those bytes) under the data-copy atomic."""
    p = ctx.ps.pointer(op.operands[0])
    if p is None:
        raise ctx.error("this atomic's address is not a kernel argument plus an offset")
    gm = ctx.at(gm_tensor(ctx, p.root), ctx.lin(p.offset.base))
    value = ctx.scalar(op.operands[1])

    ctx.when(ctx.scalar(op.operands[2]) if segments(op)[2] else None,
             lambda: scalar_to_gm(ctx, gm, value, elem, which))
