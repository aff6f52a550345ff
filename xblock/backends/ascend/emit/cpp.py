"""ascendc dialect -> AscendC C++: a C-style printer (tinygrad's CStyleLanguage idea).

`CStyle` holds the spellings every C-like target shares (types, operators, literals, loops);
`AscendCEmitter` adds the AscendC calls, one method per ascendc op. Scalar arithmetic used once
is inlined into the expression that uses it; everything else gets a variable named after the
kernel's Python name where there is one. Each statement follows a comment (or `#line`) with the
Python source line it comes from.
"""

from __future__ import annotations

import linecache
import math
import os

from mlir import ir

from ....dialects import ascendc as A
from ....dialects.locations import source_loc
from ..options import MIX_AIC_1_2
from ..values import SIZE
from .api_surface import RESERVED_NAMES, SUPPORTED
from .cube import CubeCalls
from .layout import LayoutCalls


class CStyle:
    """Spellings shared by C-like printers."""

    types = {"i1": "bool", "i8": "int8_t", "i16": "int16_t", "i32": "int32_t", "i64": "int64_t", "ui8": "uint8_t",
             "ui16": "uint16_t", "ui32": "uint32_t", "f16": "half", "bf16": "bfloat16_t", "f32": "float",
             "f64": "double", "index": "int64_t"}
    binary = {"arith.addi": "+", "arith.subi": "-", "arith.muli": "*", "arith.divsi": "/", "arith.remsi": "%",
              "arith.addf": "+", "arith.subf": "-", "arith.mulf": "*", "arith.divf": "/", "arith.andi": "&",
              "arith.ori": "|", "arith.xori": "^", "arith.divui": "/", "arith.remui": "%", "arith.shli": "<<",
              "arith.shrsi": ">>"}
    # int32 + - * << wrap in Triton (two's complement); in C++ a signed overflow (and a left shift of a negative
    # value, before C++20) is undefined, so they are printed as calls of helpers that compute in uint32_t (the
    # kernel's own functions: lowerCamel, unlike the AscendC API)
    wrapping = {"arith.addi": "wrapAdd", "arith.subi": "wrapSub", "arith.muli": "wrapMul", "arith.shli": "wrapShl"}
    cmpi = ["==", "!=", "<", "<=", ">", ">=", "<", "<=", ">", ">="]  # predicates 6-9 (ult..uge): operands unsigned
    unsigned = {"i8": "uint8_t", "i16": "uint16_t", "i32": "uint32_t", "i64": "uint64_t", "index": "uint64_t"}
    cmpf = [None, "==", ">", ">=", "<", "<=", "!=", None, "==", ">", ">=", "<", "<=", "!=", None, None]
    casts = ("arith.extsi", "arith.extui", "arith.trunci", "arith.sitofp", "arith.fptosi", "arith.extf",
             "arith.truncf", "arith.index_cast", "arith.uitofp", "arith.fptoui", "arith.bitcast")
    indent_unit = "    "

    def ctype(self, t) -> str:
        return self.types[str(t)]

    @staticmethod
    def self_compare(name: str, k: int, a: str) -> str:
        """x OP x: integers are decided here; a float is equal to itself unless it is NaN."""
        if name == "arith.cmpi":
            return f"((void){a}, {'true' if k in (0, 3, 5, 7, 9) else 'false'})"  # (void): `a` stays used
        if k in (2, 4, 6):  # ogt, olt, one
            return f"((void){a}, false)"
        if k in (8, 10, 12):  # ueq, uge, ule
            return f"((void){a}, true)"
        return f"({a} == {a})" if k in (1, 3, 5) else f"({a} != {a})"

    def literal(self, op) -> str:
        t = str(op.result.type)
        a = op.attributes["value"]
        if t in ("f32", "f16", "bf16", "f64"):
            v = ir.FloatAttr(a).value
            if math.isinf(v):
                # NPU builds of kernel_operator.h have no <cmath> (no INFINITY/NAN): compiler builtins
                s = "-__builtin_inff()" if v < 0 else "__builtin_inff()"
            elif math.isnan(v):
                s = "__builtin_nanf(\"\")"
            else:
                s = repr(float(v))
                s = s + ("f" if "e" in s or "." in s else ".0f")
            return s if t == "f32" else f"static_cast<{self.ctype(t)}>({s})"
        if t == "i1":
            return "true" if ir.IntegerAttr(a).value else "false"
        n = ir.IntegerAttr(a).value
        # the most negative int32/int64 has no literal of its type in C++ (-2147483648 is a long)
        v = f"({n + 1} - 1)" if n in (-(2**31), -(2**63)) else str(n)
        if t == "i64" and n == -(2**63):
            v = f"({n + 1}LL - 1)"
        return v if t in ("i32", "i64", "index") else f"static_cast<{self.ctype(t)}>({v})"


class AscendCEmitter(CStyle, CubeCalls, LayoutCalls):
    """Prints one ascendc kernel module as an AscendC source file (Cube calls from `CubeCalls`)."""

    def __init__(self, module: ir.Module, metadata: dict, options):
        self.module, self.meta, self.opts = module, metadata, options
        self.names: dict = {}
        self.used: set = set()
        self.lines: list = []
        self.depth = 0
        self.last_src = None
        self.inline: dict = {}
        self.wraps: set = set()  # the wrap* helpers the kernel uses (emitted after the includes)

    # ----- names and expressions -----------------------------------------------------------------
    def fresh(self, base: str) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base) or "v"
        if base[0].isdigit():
            base = "v" + base
        elif base in RESERVED_NAMES:  # a kernel's `do`, `new`, `half` ...
            base += "_"
        name, k = base, 1
        while name in self.used:
            name, k = f"{base}_{k}", k + 1
        self.used.add(name)
        return name

    def bind(self, v: ir.Value, base: str) -> str:
        n = self.fresh(base)
        self.names[v] = n
        return n

    def expr(self, v: ir.Value) -> str:
        if v in self.names:
            return self.names[v]
        op = v.owner
        if isinstance(op, ir.Block):
            raise RuntimeError("internal: unnamed block argument")
        return self.value_expr(op)

    def arm(self, op, v) -> str:
        """An arm of `?:`: half and bfloat16 arithmetic promotes to float in C++, so arms of those
        types are cast back to the result's type (mixed arms do not compile)."""
        e = self.expr(v)
        t = str(op.result.type)
        return f"static_cast<{self.ctype(t)}>({e})" if t in ("f16", "bf16") else e

    def as_unsigned(self, v: ir.Value) -> str:
        """`v` read as unsigned (the C++ types are signed: an unsigned compare or division needs the cast)."""
        t = str(v.type)
        return f"static_cast<{self.unsigned[t]}>({self.expr(v)})" if t in self.unsigned else self.expr(v)

    def value_expr(self, op) -> str:
        n = op.name
        if n == "arith.constant":
            return self.literal(op)
        if n in ("arith.divui", "arith.remui"):  # (uint64 keys and hashes: 2**63 and above are not negative)
            t = str(op.result.type)
            e = f"({self.as_unsigned(op.operands[0])} {self.binary[n]} {self.as_unsigned(op.operands[1])})"
            return f"static_cast<{self.ctype(t)}>{e}"
        if n in self.binary:
            lhs = self.expr(op.operands[0])
            t = str(op.result.type)
            if n in ("arith.shli", "arith.shrsi", "arith.shrui") and t in ("i64", "ui64") and \
                    getattr(op.operands[0].owner, "name", "") == "arith.constant":
                lhs = f"static_cast<{self.ctype(t)}>({lhs})"  # a literal is an int: 7 >> 32 would be 7
            if t == "i32" and n in self.wrapping:
                self.wraps.add(self.wrapping[n])
                return f"{self.wrapping[n]}({lhs}, {self.expr(op.operands[1])})"
            e = f"({lhs} {self.binary[n]} {self.expr(op.operands[1])})"
            # C++ computes 8- and 16-bit integers in int: wrap back to the type
            return f"static_cast<{self.ctype(t)}>{e}" if t in ("i8", "i16", "ui8", "ui16") else e
        if n in ("arith.cmpi", "arith.cmpf"):
            k = int(ir.IntegerAttr(op.attributes['predicate']).value)
            a, b = self.expr(op.operands[0]), self.expr(op.operands[1])
            if a == b:  # a value compared with itself (CSE made two conditions one): no self-comparison in C++
                return self.self_compare(n, k, a)
            if n == "arith.cmpi" and k >= 6:  # ult, ule, ugt, uge
                a, b = self.as_unsigned(op.operands[0]), self.as_unsigned(op.operands[1])
            return f"({a} {(self.cmpi if n == 'arith.cmpi' else self.cmpf)[k]} {b})"
        if n == "arith.select":
            a, b = self.arm(op, op.operands[1]), self.arm(op, op.operands[2])
            return f"({self.expr(op.operands[0])} ? {a} : {b})"
        if n in ("arith.maxsi", "arith.maxnumf", "arith.maximumf", "arith.minsi", "arith.minnumf", "arith.minimumf"):
            a, b = self.expr(op.operands[0]), self.expr(op.operands[1])
            if a == b:  # of a value and itself (CSE made the operands one): no self-comparison in C++
                return self.arm(op, op.operands[0])
            cmp = ">" if "max" in n else "<"
            return f"({a} {cmp} {b} ? {self.arm(op, op.operands[0])} : {self.arm(op, op.operands[1])})"
        if n == "math.fma":  # scalar code: a product and a sum (device code has no fmaf)
            x, y, z = (self.expr(o) for o in op.operands)
            return f"({x} * {y} + {z})"
        if n == "arith.negf":
            return f"(-{self.expr(op.operands[0])})"
        if n == "arith.bitcast":  # the same bits as another type (static_cast would convert the value)
            return f"__builtin_bit_cast({self.ctype(op.result.type)}, {self.expr(op.operands[0])})"
        if n in ("arith.extui", "arith.uitofp") and str(op.operands[0].type) not in ("i1", "index"):
            # zero extension: through the unsigned type of the source's width (C++ scalars are signed)
            src = "u" + self.ctype(op.operands[0].type)
            return f"static_cast<{self.ctype(op.result.type)}>(static_cast<{src}>({self.expr(op.operands[0])}))"
        if n == "arith.fptoui":
            dst = "u" + self.ctype(op.result.type)
            return f"static_cast<{self.ctype(op.result.type)}>(static_cast<{dst}>({self.expr(op.operands[0])}))"
        if n in self.casts:
            return f"static_cast<{self.ctype(op.result.type)}>({self.expr(op.operands[0])})"
        if n == "ascendc.block_idx":  # the AI Core's index: an AIV of a 1:2 kernel counts AIVs (two per core)
            return "(GetBlockIdx() / GetSubBlockNum())" if self.meta.get("kernel_type") == MIX_AIC_1_2 \
                else "GetBlockIdx()"
        if n == "ascendc.sub_block_idx":
            return "GetSubBlockIdx()"
        if n == "ascendc.sub_block_num":
            return "GetSubBlockNum()"
        if n == "ascendc.block_num":
            return "GetBlockNum()"
        if n in ("ascendc.gm_at", "ascendc.ub_at"):
            return f"{self.expr(op.operands[0])}[{self.expr(op.operands[1])}]"
        if n == "ascendc.reinterpret":
            elem = A.elem_of(op.result.type)
            return f"{self.expr(op.operands[0])}.ReinterpretCast<{self.ctype(elem)}>()"
        raise RuntimeError(f"internal: no C++ expression for {n}")

    def as_int(self, v: ir.Value, ctype: str = "int32_t") -> str:
        e = self.expr(v)
        return e if e.lstrip("-").isdigit() else f"static_cast<{ctype}>({e})"

    def typed(self, v: ir.Value, elem: str) -> str:
        """A scalar passed where the API wants exactly T."""
        e = self.expr(v)
        if str(v.type) == elem:
            return e
        return f"static_cast<{self.ctype(elem)}>({e})"

    # ----- statements ------------------------------------------------------------------------
    def line(self, text: str) -> None:
        self.lines.append(self.indent_unit * self.depth + text if text else "")

    def trace(self, op) -> None:
        file, line, _ = source_loc(op.location)
        if not line or (file, line) == self.last_src:
            return
        self.last_src = (file, line)
        if self.opts.line_directives:
            self.lines.append(f'#line {line} "{file}"')
            return
        src = linecache.getline(file, line).strip().rstrip("\\").rstrip()  # a trailing `\` would continue the comment
        self.line(f"// {os.path.basename(file)}:{line}: {src}")

    def inlinable(self, op) -> bool:
        if op.name == "arith.constant":
            return True
        if op.name in ("ascendc.block_idx", "ascendc.block_num", "ascendc.sub_block_idx", "ascendc.sub_block_num",
                       "ascendc.gm_at", "ascendc.ub_at", "ascendc.reinterpret", "ascendc.core_is"):
            return True
        if not (op.name.startswith("arith.") and len(op.results) == 1):
            return False
        uses = list(op.result.uses)
        if len(uses) != 1 or "name" in op.attributes:
            return False
        # operands of a min/max are spelled twice: give them a name unless they are trivial
        user = uses[0].owner.name
        trivial = all(o.owner.name == "arith.constant" if hasattr(o.owner, "name") else True for o in op.operands)
        return not (user in ("arith.maxsi", "arith.minsi") and not trivial and op.name not in self.casts)

    def emit(self) -> str:
        fn = next(iter(self.module.body.operations))
        name = ir.StringAttr(fn.attributes["sym_name"]).value
        args = [ir.StringAttr(a).value for a in ir.ArrayAttr(fn.attributes["ascendc.arg_names"])]
        entry = fn.regions[0].blocks[0]
        for a, n in zip(entry.arguments, args):
            self.names[a] = n
            self.used.add(n)
        self.used.update({"pipe", "tiling"})
        tiling = tiling_struct_name(name)
        params = ", ".join([f"GM_ADDR {a}" for a in args] + [f"{tiling} tiling"])
        self.header(name)
        self.line(f'extern "C" __global__ __aicore__ void {name}({params})')
        self.line("{")
        self.depth = 1
        for op in entry.operations:  # the kernel type is the entry's first statement, as in Huawei's samples
            if op.name == "ascendc.kernel_type":
                self.op_kernel_type(op)
        self.line("TPipe pipe;")
        at = self.lines.index('extern "C" __global__ __aicore__ void ' + f"{name}({params})")
        self.block(entry)
        self.depth = 0
        self.line("}")
        self.lines[at:at] = self.wrap_helpers()
        return "\n".join(self.lines) + "\n"

    def wrap_helpers(self) -> list:
        """The wrap* helpers the kernel uses: int32 arithmetic that wraps as Triton's does."""
        if not self.wraps:
            return []
        out = ["// int32 arithmetic wraps in Triton; a signed overflow is undefined in C++: computed in uint32_t."]
        ops = {"wrapAdd": "+", "wrapSub": "-", "wrapMul": "*"}
        for w in sorted(self.wraps):
            if w == "wrapShl":  # the shift count as it is (a count outside [0, 31] is undefined in Triton too)
                body = "static_cast<uint32_t>(a) << b"
            else:
                body = f"static_cast<uint32_t>(a) {ops[w]} static_cast<uint32_t>(b)"
            out.append(f"__aicore__ inline int32_t {w}(int32_t a, int32_t b) "
                       f"{{ return static_cast<int32_t>({body}); }}")
        return out + [""]

    def header(self, name: str) -> None:
        m = self.meta
        plan = m.get("ub_plan", {})
        self.line(f"// {name}: AscendC generated by xblock from {os.path.basename(m.get('file', '?'))}:"
                  f"{m.get('line', 0)} for {self.opts.profile.name}.")
        parts = [f"{q} {v['buffers']} x {v['bytes']} B" for q, v in plan.get("queues", {}).items()]
        parts.append(f"calcBuf {plan.get('scratch', 0)} B")
        self.line(f"// Unified buffer: {', '.join(parts)}; {plan.get('total', 0)} of {plan.get('usable', 0)} B.")
        self.cube_header()
        self.line("// Each program instance of the grid is one iteration of the loop over pid; the cores take")
        bufs = {v["buffers"] for v in plan.get("queues", {}).values()}
        if bufs == {1}:
            self.line("// turns (pid += GetBlockNum()); the queues are single-buffered (two would not fit in UB).")
        elif 1 in bufs:
            self.line("// turns (pid += GetBlockNum()); queues with two buffers overlap copy-in and compute (the")
            self.line("// others have one: more blocks are live than double buffers allow).")
        else:
            self.line("// turns (pid += GetBlockNum()), and the queues' two buffers overlap copy-in and compute.")
        self.line("// Synchronisation: queues and explicit SetFlag/WaitFlag order every hand-over between pipes;")
        self.line("// the barrier between dependent vector instructions is left to the compiler's automatic")
        self.line("// synchronisation (--cce-auto-sync, on by default in kernel-launch projects).")
        self.line('#include "kernel_operator.h"')
        self.line(f'#include "{name}_tiling.h"')
        self.line("")
        renamed = sorted({RENAMED[o.name] for o in _walk(self.module.operation) if o.name in RENAMED})
        if renamed:
            pairs = ", ".join(f"{old} (CANN 9: {new})" for old, new in renamed)
            first, last = SUPPORTED[0], SUPPORTED[-1]
            self.line(f"// {pairs}: the names every CANN from {first} to {last} declares (9.x keeps them,")
            self.line("// deprecated by a comment), so this file builds with each of them unchanged.")
            self.line("")
        self.line("using namespace AscendC;")
        self.line("")

    def block(self, block: ir.Block) -> None:
        for op in block.operations:
            if op.name in ("func.return", "scf.yield", "scf.condition", "ascendc.kernel_type"):
                continue
            if self.inlinable(op):
                continue
            self.statement(op)

    def statement(self, op) -> None:
        n = op.name
        if n.startswith("ascendc."):
            if n not in ("ascendc.tque", "ascendc.tbuf", "ascendc.tiling_field", "ascendc.set_global_buffer"):
                self.trace(op)
            getattr(self, "op_" + n[len("ascendc."):])(op)
        elif n == "scf.for":
            self.trace(op)
            self.emit_for(op)
        elif n == "scf.if":
            self.trace(op)
            self.emit_if(op)
        elif n == "scf.while":
            self.trace(op)
            self.emit_while(op)
        else:  # a scalar used more than once, or named by the kernel
            self.trace(op)
            base = self.temp_name(op)
            e = self.value_expr(op)
            self.line(f"const {self.ctype(op.result.type)} {self.bind(op.result, base)} = {e};")

    # what a part of a Python expression computes, for its variable name (`first_pid_m_div`)
    parts = {"arith.divsi": "div", "arith.divui": "div", "arith.remsi": "rem", "arith.remui": "rem",
             "arith.addi": "sum", "arith.subi": "diff", "arith.muli": "prod", "arith.minsi": "min",
             "arith.maxsi": "max", "arith.select": "sel", "arith.cmpi": "cond", "arith.addf": "sum",
             "arith.subf": "diff", "arith.mulf": "prod", "arith.divf": "quot"}

    def temp_name(self, op) -> str:
        """A variable name: the kernel's Python name; a cast of a named value (`stride_am64`); a part
        of the expression assigned on the op's line (`first_pid_m_div`); else `t`."""
        if "name" in op.attributes:
            return ir.StringAttr(op.attributes["name"]).value
        if op.name in self.casts and op.operands[0] in self.names:
            src = self.names[op.operands[0]]
            t = str(op.result.type)
            sep = "_" if src[-1].isdigit() else ""
            return src + (sep + "64" if t == "i64" else "_" + self.ctype(t).replace("_t", ""))
        if "line_name" in op.attributes:
            return f"{ir.StringAttr(op.attributes['line_name']).value}_{self.parts.get(op.name, 't')}"
        return "t"

    def emit_for(self, op) -> None:
        body = op.regions[0].blocks[0]
        lb, ub, step = op.operands[:3]
        grid = "ascendc.grid_loop" in op.attributes
        base = "pid" if grid else (ir.StringAttr(op.attributes["name"]).value if "name" in op.attributes else "i")
        iters = []
        bases = [ir.StringAttr(a).value for a in ir.ArrayAttr(op.attributes["names"])] if "names" in op.attributes \
            else ["run"] * len(op.results)  # names: a carried pointer's offset (lower/ops/control.py)
        for init, arg, res, name in zip(op.operands[3:], body.arguments[1:], op.results, bases):
            v = self.bind(arg, name)
            self.names[res] = v
            self.line(f"{self.ctype(arg.type)} {v} = {self.expr(init)};")
            iters.append(v)
        iv = self.bind(body.arguments[0], base)
        ctype = self.ctype(body.arguments[0].type)
        stp = self.expr(step)
        inc = f"{iv}++" if stp == "1" else f"{iv} += {stp}"
        self.line(f"for ({ctype} {iv} = {self.expr(lb)}; {iv} < {self.expr(ub)}; {inc}) {{")
        self.depth += 1
        self.block(body)
        y = body.operations[len(body.operations) - 1]
        for v, val in zip(iters, y.operands):
            self.line(f"{v} = {self.expr(val)};")
        self.depth -= 1
        self.line("}")

    def emit_if(self, op) -> None:
        cond = op.operands[0].owner
        if not isinstance(cond, ir.Block) and cond.name == "ascendc.core_is":  # a mixed kernel's core section
            outs = []
            for r in op.results:  # scalars later sections of this core read (the other core's branch: none)
                v = self.bind(r, "sec")
                self.line(f"{self.ctype(r.type)} {v} = 0;")
                outs.append(v)
            self.line(f"if ASCEND_IS_{self.attr(cond, 'core')} {{")
            self.depth += 1
            blk = op.regions[0].blocks[0]
            self.block(blk)
            y = blk.operations[len(blk.operations) - 1]
            for v, val in zip(outs, y.operands):
                self.line(f"{v} = {self.expr(val)};")
            self.depth -= 1
            self.line("}")
            return
        outs = []
        for r in op.results:
            v = self.bind(r, "sel")
            self.line(f"{self.ctype(r.type)} {v};")
            outs.append(v)
        self.line(f"if ({self.expr(op.operands[0])}) {{")
        for k, region in enumerate(op.regions):
            if not len(region.blocks):
                continue
            if k == 1:
                self.line("} else {")
            self.depth += 1
            blk = region.blocks[0]
            self.block(blk)
            y = blk.operations[len(blk.operations) - 1]
            for v, val in zip(outs, y.operands):
                self.line(f"{v} = {self.expr(val)};")
            self.depth -= 1
        self.line("}")

    def assign(self, names: list, values: list) -> None:
        """names = values, all at once: through temporaries when there are several (a swap)."""
        if len(names) == 1:
            self.line(f"{names[0]} = {self.expr(values[0])};")
            return
        tmps = []
        for n, v in zip(names, values):
            t = self.fresh(n + "_next")
            self.line(f"const {self.ctype(v.type)} {t} = {self.expr(v)};")
            tmps.append(t)
        for n, t in zip(names, tmps):
            self.line(f"{n} = {t};")

    def emit_while(self, op) -> None:
        """`while (true) { before; if (!cond) break; after; run = yielded; }` (a forwarded value that is not
        the before block's argument goes to its own variable before the test)."""
        before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
        cond = before.operations[len(before.operations) - 1]
        y = after.operations[len(after.operations) - 1]
        bases = [ir.StringAttr(a).value for a in ir.ArrayAttr(op.attributes["names"])] if "names" in op.attributes \
            else ["run"] * len(op.operands)
        runs, curs, fwd = [], [], []
        for init, arg, base in zip(op.operands, before.arguments, bases):
            v = self.bind(arg, base)
            self.line(f"{self.ctype(arg.type)} {v} = {self.expr(init)};")
            runs.append(v)
        for res, arg, val in zip(op.results, after.arguments, cond.operands[1:]):
            if val in self.names and val in list(before.arguments):  # forwarded unchanged: the same variable
                self.names[arg] = self.names[res] = self.names[val]
                continue
            v = self.bind(res, "cur")
            self.names[arg] = v
            self.line(f"{self.ctype(res.type)} {v}{{}};")
            curs.append(v)
            fwd.append(val)
        self.line("while (true) {")
        self.depth += 1
        self.block(before)
        if curs:
            self.assign(curs, fwd)
        c = self.expr(cond.operands[0])
        self.line(f"if (!{c if c.startswith('(') else '(' + c + ')'}) {{")
        self.line(self.indent_unit + "break;")
        self.line("}")
        self.block(after)
        if runs:
            self.assign(runs, list(y.operands))
        self.depth -= 1
        self.line("}")

    # ----- AscendC calls, one per ascendc op -------------------------------------------------------
    def _name(self, op, default: str) -> str:
        return ir.StringAttr(op.attributes["name"]).value if "name" in op.attributes else default

    def attr(self, op, key: str):
        """Attribute `key` of `op` as a Python str, bool or int."""
        a = op.attributes[key]
        if isinstance(a, ir.StringAttr) or str(a).startswith('"'):
            return ir.StringAttr(a).value
        if isinstance(a, ir.BoolAttr) or str(a) in ("true", "false"):
            return ir.BoolAttr(a).value
        return ir.IntegerAttr(a).value

    def _elem(self, v: ir.Value) -> str:
        return A.elem_of(v.type)

    def op_tiling_field(self, op):
        f = self.attr(op, "name")
        v = self.bind(op.result, f)
        self.line(f"const {self.ctype(op.result.type)} {v} = tiling.{f};")

    def op_set_global_buffer(self, op):
        t = self.ctype(self.attr(op, "dtype"))
        v = self.bind(op.result, self._name(op, "gm"))
        self.line(f"GlobalTensor<{t}> {v};")
        self.line(f"{v}.SetGlobalBuffer((__gm__ {t} *){self.expr(op.operands[0])});")

    def op_l2_cache_hint(self, op):
        mode = {"disable": "CACHE_MODE_DISABLE"}[self.attr(op, "mode")]
        self.line(f"{self.expr(op.operands[0])}.SetL2CacheHint(CacheMode::{mode});")

    def op_tque(self, op):
        q = self.attr(op, "sym_name")
        self.used.add(q)
        self.line(f"TQue<TPosition::{self.attr(op, 'position')}, {self.attr(op, 'depth')}> {q};")
        self.line(f"pipe.InitBuffer({q}, {self.attr(op, 'num')}, {self.attr(op, 'bytes')});")

    def op_tbuf(self, op):
        b = self.attr(op, "sym_name")
        self.used.add(b)
        self.line(f"TBuf<TPosition::VECCALC> {b};")
        self.line(f"pipe.InitBuffer({b}, {self.attr(op, 'bytes')});")

    def _local(self, op, rhs: str, default: str):
        t = self.ctype(self._elem(op.result))
        v = self.bind(op.result, self._name(op, default))
        self.line(f"LocalTensor<{t}> {v} = {rhs};")

    def op_alloc_tensor(self, op):
        t = self.ctype(self._elem(op.result))
        self._local(op, f"{self.attr(op, 'queue')}.AllocTensor<{t}>()", "local")

    def op_deque(self, op):
        t = self.ctype(self._elem(op.result))
        self._local(op, f"{self.attr(op, 'queue')}.DeQue<{t}>()", "local")

    def op_get_with_offset(self, op):
        t = self.ctype(self._elem(op.result))
        rhs = f"{self.attr(op, 'buf')}.GetWithOffset<{t}>({self.attr(op, 'count')}, {self.attr(op, 'offset')})"
        self._local(op, rhs, "tmp")

    def op_enque(self, op):
        self.line(f"{self.attr(op, 'queue')}.EnQue({self.expr(op.operands[0])});")

    def op_free_tensor(self, op):
        self.line(f"{self.attr(op, 'queue')}.FreeTensor({self.expr(op.operands[0])});")

    def op_data_copy(self, op):
        d, s, n = op.operands
        self.line(f"DataCopy({self.expr(d)}, {self.expr(s)}, {self.as_int(n, 'uint32_t')});")

    # DataCopyExtParams' gap between GM rows, in bytes (asc-devkit DataCopyPad docs: srcStride / dstStride)
    GM_GAP_MAX = 2**32 - 1

    def op_data_copy_pad(self, op):
        """DataCopyPad with its DataCopyExtParams printed uncast (as Nd2NzParams, emit/cube.py): the CPU model
        sees each field's value and refuses one outside its range; a static_cast would wrap it silently. The
        GM-side gap of a runtime row stride can leave [0, 2^32 - 1] (a stride below the row length: rows that
        overlap or repeat; above 2^32 B): it is tested at run time, and outside the range the rows are copied
        one at a time (one DataCopyPad a row, no gap)."""
        o = list(op.operands)
        to_ub = A.is_local(o[0].type)
        count, blen, src_gap, dst_gap = (self.expr(v) for v in o[2:6])
        pad = ""
        if to_ub:
            t = self._elem(o[0])
            if self.attr(op, "is_pad"):
                pad = f", DataCopyPadExtParams<{self.ctype(t)}>(true, 0, {self.as_int(o[6], 'uint8_t')}, " \
                      f"{self.typed(o[7], t)})"
            else:
                pad = f", DataCopyPadExtParams<{self.ctype(t)}>(false, 0, 0, 0)"
        dst, src = self.expr(o[0]), self.expr(o[1])
        gm_gap = src_gap if to_ub else dst_gap
        one = f"DataCopyPad({dst}, {src}, DataCopyExtParams({count}, {blen}, {src_gap}, {dst_gap}, 0){pad});"
        if gm_gap.lstrip("-").isdigit() or self.const_count(o[2]) == 1:
            return self.line(one)
        esize = SIZE[self._elem(o[0] if to_ub else o[1])]
        if not gm_gap.isidentifier():
            g = self.fresh("gmGap")
            self.line(f"const int64_t {g} = {gm_gap};")
            gm_gap = g
            one = f"DataCopyPad({dst}, {src}, DataCopyExtParams({count}, {blen}, " \
                  f"{g if to_ub else src_gap}, {dst_gap if to_ub else g}, 0){pad});"
        r = self.fresh("row")
        padded = to_ub and self.attr(op, "is_pad")
        right = self.const_count(o[6]) if padded else 0
        ub_gap = self.const_count(o[5] if to_ub else o[4])
        if self.const_count(o[3]) is not None and ub_gap is not None and right is not None:
            ub_pitch = str(((self.const_count(o[3]) + right * esize + 31) // 32 + ub_gap) * 32 // esize)
        else:  # UB rows start 32-byte aligned
            pad_bytes = f" + {self.as_int(o[6], 'int64_t')} * {esize}" if padded else ""
            ub_pitch = f"((({blen}{pad_bytes} + 31) / 32 + {dst_gap if to_ub else src_gap}) * 32 / {esize})"
        gm_pitch = f"(({blen} + {gm_gap}) / {esize})"
        ub_at, gm_at = f"{r} * {ub_pitch}", f"{r} * {gm_pitch}"
        self.line(f"if ({gm_gap} >= 0 && {gm_gap} <= {self.GM_GAP_MAX}LL) {{")
        self.line(self.indent_unit + one)
        self.line("} else {  // the GM row gap is outside DataCopyExtParams' [0, 2^32 - 1] B: one copy a row")
        self.line(f"{self.indent_unit}for (int64_t {r} = 0; {r} < {count}; {r}++) {{")
        row_dst, row_src = (f"{dst}[{ub_at}]", f"{src}[{gm_at}]") if to_ub else (f"{dst}[{gm_at}]", f"{src}[{ub_at}]")
        if not to_ub:  # rows that overlap in GM land in order (copies of one pipe may overlap in flight)
            self.line(f"{self.indent_unit * 2}PipeBarrier<PIPE_MTE3>();")
        self.line(f"{self.indent_unit * 2}DataCopyPad({row_dst}, {row_src}, "
                  f"DataCopyExtParams(1, {blen}, 0, 0, 0){pad});")
        self.line(f"{self.indent_unit}}}")
        self.line("}")

    def const_count(self, v):
        e = self.expr(v)
        return int(e) if e.lstrip("-").isdigit() else None

    def op_vec(self, op):
        api = self.attr(op, "api")
        o = list(op.operands)
        args = ", ".join(self.expr(v) for v in o[:-1])
        if "form" in op.attributes:  # a mask/repeat form (rowvec.py): the last operand is the repeat count
            return self.line(self.repeat_call(op, api, args, self.as_int(o[-1])))
        self.line(f"{api}({args}, {self.as_int(o[-1])});")

    # the mask/repeat ("high-dimensional") forms of rowvec.py: form -> its strides' parameter struct
    repeat_params = {"binary": "BinaryRepeatParams", "copy": "CopyRepeatParams", "brcb": "BrcbRepeatParams"}

    def repeat_call(self, op, api: str, args: str, repeat: str) -> str:
        form = self.attr(op, "form")
        strides = ", ".join(str(s) for s in ir.DenseI64ArrayAttr(op.attributes["strides"]))
        if form == "brcb":
            return f"{api}({args}, {repeat}, BrcbRepeatParams({strides}));"
        mask = self.attr(op, "mask")
        if form == "whole_reduce":
            order = ", ReduceOrder::ORDER_ONLY_VALUE" if api != "WholeReduceSum" else ""
            return f"{api}({args}, {mask}, {repeat}, {strides}{order});"
        if form == "block_reduce":  # BlockReduce*(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride)
            return f"{api}({args}, {repeat}, {mask}, {strides});"
        return f"{api}({args}, {mask}, {repeat}, {self.repeat_params[form]}({strides}));"

    def op_vec_scalar(self, op):
        d, s, x, n = op.operands
        self.line(f"{self.attr(op, 'api')}({self.expr(d)}, {self.expr(s)}, {self.typed(x, self._elem(d))}, "
                  f"{self.as_int(n)});")

    def op_duplicate(self, op):
        d, x, n = op.operands
        self.line(f"Duplicate({self.expr(d)}, {self.typed(x, self._elem(d))}, {self.as_int(n)});")

    def op_cast(self, op):
        d, s, n = op.operands
        self.line(f"Cast({self.expr(d)}, {self.expr(s)}, RoundMode::{self.attr(op, 'round')}, "
                  f"{self.as_int(n, 'uint32_t')});")

    def op_gather_mask(self, op):
        d, s = op.operands
        mask = self.attr(op, "mask")
        cnt = self.fresh("rsvdCnt")
        self.line(f"uint64_t {cnt} = 0;")
        self.line(f"GatherMask({self.expr(d)}, {self.expr(s)}, static_cast<uint8_t>({self.attr(op, 'pattern')}), "
                  f"{'true' if mask else 'false'}, {mask}, GatherMaskParams(1, {self.attr(op, 'repeat')}, 8, 0), "
                  f"{cnt});")

    def op_gather(self, op):
        d, s, o, base, n = op.operands
        self.line(f"Gather({self.expr(d)}, {self.expr(s)}, {self.expr(o)}, {self.as_int(base, 'uint32_t')}, "
                  f"{self.as_int(n, 'uint32_t')});")

    def op_sort(self, op):
        d, c, i, t, r = op.operands
        self.line(f"Sort<{self.ctype(self._elem(d))}, true>({self.expr(d)}, {self.expr(c)}, {self.expr(i)}, "
                  f"{self.expr(t)}, {self.as_int(r, 'int32_t')});")

    def op_extract(self, op):
        v, i, s, r = op.operands
        self.line(f"Extract({self.expr(v)}, {self.expr(i)}, {self.expr(s)}, {self.as_int(r, 'int32_t')});")

    def op_compare(self, op):
        d, a, b, n = op.operands
        self.line(f"Compare({self.expr(d)}, {self.expr(a)}, {self.expr(b)}, CMPMODE::{self.attr(op, 'mode')}, "
                  f"{self.as_int(n, 'uint32_t')});")

    def op_compare_scalar(self, op):
        d, a, s, n = op.operands
        args = (f"({self.expr(d)}, {self.expr(a)}, {self.typed(s, self._elem(a))}, CMPMODE::{self.attr(op, 'mode')}, "
                f"{self.as_int(n, 'uint32_t')});")
        self.line("CompareScalar" + args)

    def op_select(self, op):
        d, m, a, b, n = op.operands
        other = self.expr(b) if A.is_local(b.type) else self.typed(b, self._elem(d))
        self.line(f"Select({self.expr(d)}, {self.expr(m)}, {self.expr(a)}, {other}, "
                  f"SELMODE::{self.attr(op, 'mode')}, {self.as_int(n, 'uint32_t')});")

    def op_reduce(self, op):
        d, s, t, n = op.operands
        api = self.attr(op, "api")
        extra = ", true" if self.attr(op, "cal_index") else ""
        self.line(f"{api}({self.expr(d)}, {self.expr(s)}, {self.expr(t)}, {self.as_int(n)}{extra});")

    def op_get_value(self, op):
        v = self.bind(op.result, self._name(op, "val"))
        self.line(f"const {self.ctype(op.result.type)} {v} = {self.expr(op.operands[0])}.GetValue("
                  f"{self.expr(op.operands[1])});")

    def op_set_value(self, op):
        t, i, x = op.operands
        elem = self._elem(t)
        self.line(f"{self.expr(t)}.SetValue({self.expr(i)}, {self.typed(x, elem)});")

    def op_fetch_event_id(self, op):
        ev = self.attr(op, "event")
        v = self.bind(op.result, "evt" + ev.replace("_", ""))
        self.line(f"event_t {v} = static_cast<event_t>(pipe.FetchEventID(HardEvent::{ev}));")

    def op_set_flag(self, op):
        self.line(f"SetFlag<HardEvent::{self.attr(op, 'event')}>({self.expr(op.operands[0])});")

    def op_wait_flag(self, op):
        self.line(f"WaitFlag<HardEvent::{self.attr(op, 'event')}>({self.expr(op.operands[0])});")

    def op_pipe_barrier(self, op):
        self.line(f"PipeBarrier<{self.attr(op, 'pipe')}>();")

    def op_set_atomic_add(self, op):
        self.line(f"SetAtomicAdd<{self.ctype(self.attr(op, 'dtype'))}>();")

    def op_set_atomic_max(self, op):
        self.line(f"SetAtomicMax<{self.ctype(self.attr(op, 'dtype'))}>();")

    def op_set_atomic_min(self, op):
        self.line(f"SetAtomicMin<{self.ctype(self.attr(op, 'dtype'))}>();")

    def op_set_atomic_none(self, op):
        self.line("SetAtomicNone();")

    def op_dcci(self, op):
        t = self.ctype(self._elem(op.operands[0]))
        self.line(f"DataCacheCleanAndInvalid<{t}, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>("
                  f"{self.expr(op.operands[0])});")


# ops whose AscendC name CANN 9 changed: (the name every supported CANN declares, CANN 9's new name);
# api_surface.py records which releases declare each
RENAMED = {"ascendc.compare_scalar": ("CompareScalar", "Compares"),
           "ascendc.set_atomic_none": ("SetAtomicNone", "DisableDmaAtomic")}


def _walk(op):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield inner
                yield from _walk(inner.operation)


def tiling_struct_name(kernel: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in kernel.split("_")) + "TilingData"


def workspace_const_name(kernel: str) -> str:
    return kernel.upper() + "_WORKSPACE_BYTES"


def tiling_header(kernel: str, fields: list, workspace_bytes: int = 0) -> str:
    """The tiling header: the POD struct of the kernel's scalar arguments and grid, passed by value.

    A mixed Cube kernel also takes a GM `workspace` argument of `workspace_bytes` per launched block;
    the header records that size for the host.
    """
    guard = kernel.upper() + "_TILING_H"
    types = CStyle.types
    lines = [f"// Tiling data of {kernel}: its scalar arguments and the grid, passed to the kernel by value.",
             f"#ifndef {guard}", f"#define {guard}", "#include <cstdint>", ""]
    if workspace_bytes:
        lines += ["// Bytes of the `workspace` argument per block of the launch (one fp32 accumulator tile,",
                  "// handed from the AIC to its AIV); the host allocates this times blockDim.",
                  f"constexpr uint64_t {workspace_const_name(kernel)} = {workspace_bytes};", ""]
    lines += [f"struct {tiling_struct_name(kernel)} {{"]
    lines += [f"    {types[t]} {n};" for n, t in fields]
    lines += ["};", "", f"#endif  // {guard}", ""]
    return "\n".join(lines)


def emit(module: ir.Module, metadata: dict, options) -> str:
    """The AscendC source of the kernel in `module`."""
    return AscendCEmitter(module, metadata, options).emit()
