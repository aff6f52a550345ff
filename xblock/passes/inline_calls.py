"""xb-inline-calls: inline every `func.call` to a helper, then erase the private helpers.

The upstream inliner refuses ops of dialects without an inliner interface (IRDL dialects have
none), so this pass clones the callee, rewires its arguments and moves its body to the call site.
"""

from __future__ import annotations

from mlir import ir

from ..dialects.locations import CALL_PREFIX

NAME = "xb-inline-calls"


def _calls(op) -> list:
    found = []

    def walk(o):
        if o.name == "func.call":
            found.append(o)
        return ir.WalkResult.ADVANCE

    op.walk(walk)
    return found


def run(module: ir.Module) -> None:
    """Inline helper calls until none are left; drop the helpers."""
    funcs = {f.attributes["sym_name"].value: f for f in module.body.operations if f.operation.name == "func.func"}
    kernels = [f for f in funcs.values() if "xb.kernel" in f.attributes]
    for kernel in kernels:
        while True:
            calls = _calls(kernel.operation)
            if not calls:
                break
            for call in calls:
                _inline_one(module, call, funcs)
    for name, f in funcs.items():
        if "xb.kernel" not in f.attributes:
            f.operation.erase()


def _at_call_site(op, site) -> None:
    """Give an inlined op (and the ops of its regions) the location `callee` called from `site`."""
    def walk(o):
        o.location = ir.Location.callsite(o.location, [site])
        return ir.WalkResult.ADVANCE

    op.walk(walk)


def _inline_one(module, call, funcs) -> None:
    callee = funcs[ir.FlatSymbolRefAttr(call.attributes["callee"]).value]
    with ir.InsertionPoint(module.body):
        clone = callee.operation.clone()
    body = clone.regions[0].blocks[0]
    for arg, actual in zip(body.arguments, call.operands):
        arg.replace_all_uses_with(actual)
    ops = list(body.operations)
    ret = ops[-1]
    # the call site, named after the helper: errors inside xblock's library name what the user called
    helper = ir.FlatSymbolRefAttr(call.attributes["callee"]).value.split("__")[0]
    site = ir.Location.name(CALL_PREFIX + helper, childLoc=call.location)
    for op in ops[:-1]:
        op.move_before(call)
        _at_call_site(op, site)
    for res, val in zip(call.results, ret.operands):
        res.replace_all_uses_with(val)
    call.erase()
    clone.erase()
