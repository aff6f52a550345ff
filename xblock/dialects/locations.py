"""Op locations as the user's `file:line:col`, the kernel of a module, and errors raised at an op."""

from __future__ import annotations

import linecache
import os

from mlir import ir

from ..errors import CompilationError

UNKNOWN = ("<unknown>", 0, 0)
CALL_PREFIX = "\0call "  # the name of an inlined call site's location (`xb-inline-calls`)
# the language's library written in the language: its lines are not where users look for errors
LIBRARY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "language") + os.sep


def source_loc(loc: ir.Location) -> tuple:
    """(file, line, col) of a location, looking through name, fused and call-site locations.

    An inlined helper's op reports the helper's line (the callee), as Triton does, unless the
    helper is xblock's own language library (`tl.sort`, `tl.rand`): then the line that called it.
    Returns `UNKNOWN` when no file location is inside.
    """
    try:
        if loc.is_a_file():
            return loc.filename, loc.start_line, loc.start_col
        if loc.is_a_name():
            return source_loc(loc.child_loc)
        if loc.is_a_callsite():
            inner = source_loc(loc.callee)
            if inner[0].startswith(LIBRARY):
                outer = source_loc(loc.caller)
                return outer if outer[1] else inner
            return inner
        if loc.is_a_fused():
            for sub in loc.locations:
                found = source_loc(sub)
                if found[1]:
                    return found
    except (AttributeError, ValueError):
        pass
    return UNKNOWN


def library_call(loc: ir.Location) -> str | None:
    """The language library function (`sort`, `rand`) the user called, if `loc` is inside one."""
    try:
        while loc.is_a_name() and not loc.name_str.startswith(CALL_PREFIX):
            loc = loc.child_loc
        if not loc.is_a_callsite() or not source_loc(loc.callee)[0].startswith(LIBRARY):
            return None
        caller = loc.caller
        if not (caller.is_a_name() and caller.name_str.startswith(CALL_PREFIX)):
            return None
        return library_call(caller.child_loc) or caller.name_str[len(CALL_PREFIX):]
    except (AttributeError, ValueError):
        return None


def name_of(loc: ir.Location) -> str | None:
    """The variable name a frontend `NameLoc` gives a value, or None."""
    try:
        if loc.is_a_name():
            return None if loc.name_str.startswith(CALL_PREFIX) else loc.name_str
        if loc.is_a_callsite():  # a value of an inlined helper: the helper's own name for it
            return name_of(loc.callee)
        if loc.is_a_fused():
            for sub in loc.locations:
                found = name_of(sub)
                if found:
                    return found
    except (AttributeError, ValueError):
        pass
    return None


def op_loc(op) -> tuple:
    """(file, line, col) of an op (an `ir.Operation` or an op view)."""
    return source_loc(getattr(op, "operation", op).location)


def kernel_of(module: ir.Module):
    """The `func.func` marked `xb.kernel` in an xb module."""
    for op in module.body.operations:
        if op.operation.name == "func.func" and "xb.kernel" in op.attributes:
            return op
    raise ValueError("internal error: the module has no xb.kernel function")


# What users wrote, for the upstream ops a target may lack (messages name both)
SPELLING = {
    "arith.mului_extended": "tl.umulhi (a 32x32->64-bit product)", "arith.xori": "`^` or `~` (bitwise xor/not)",
    "arith.andi": "`&` (bitwise and)", "arith.ori": "`|` (bitwise or)", "arith.shli": "`<<`",
    "arith.shrsi": "`>>` on a signed integer", "arith.shrui": "`>>` on an unsigned integer",
    "arith.extui": "a cast from bool or an unsigned integer to a wider integer",
    "arith.extsi": "a cast to a wider integer", "arith.trunci": "a cast to a narrower integer",
    "arith.uitofp": "a cast from bool or an unsigned integer to float",
    "arith.fptoui": "a cast from float to an unsigned integer", "arith.fptosi": "a cast from float to integer",
    "arith.remf": "`%` on floats (fmod)", "arith.remsi": "`%` on integers", "arith.divsi": "`//` on integers",
    "arith.bitcast": "a bitcast (`.to(..., bitcast=True)`)", "math.fma": "tl.fma",
}


def missing_rule(op, target: str) -> CompilationError:
    """The error for an op a target has no rule for, naming what the user wrote where it is known."""
    name = getattr(op, "operation", op).name
    what = f"{SPELLING[name]} ({name})" if name in SPELLING else name
    return error_at(op, f"no '{target}' lowering for {what}")


def error_at(where, message: str, prefix: str = "") -> CompilationError:
    """A CompilationError at `where`: an op, an `ir.Location` or a (file, line, col) tuple.

    Args:
        where: where the error is.
        message: what is wrong, for the user.
        prefix: the target name; the message then reads `"<target>: message"`.
    """
    inside = None
    if isinstance(where, tuple):
        file, line, col = where
    elif isinstance(where, ir.Location):
        file, line, col = source_loc(where)
        inside = library_call(where)
    elif where is None:
        file, line, col = UNKNOWN
    else:
        file, line, col = op_loc(where)
        inside = library_call(getattr(where, "operation", where).location)
    text = f"{prefix}: {message}" if prefix and not message.startswith(f"{prefix}: ") else message
    if inside:
        text += f" (inside tl.{inside}, which xblock writes in the block language)"
    src = linecache.getline(file, line) if line else ""
    return CompilationError(file, line, col, text, src or None)
