"""The TTIR printer: MLIR's generic op form, the one syntax every Triton version's parser reads.

The rules of `lowering.py` call `TTIRWriter.op(...)` once per TTIR op they produce; the writer
names SSA values, maps xb types to Triton's (`!xb.ptr<T>` -> `!tt.ptr<T>`), prints regions and
source locations. Spellings that changed between Triton versions live in `TTIRDialect`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..common.rules import LoweringError

# Triton's I32 enums, as `tt.load`/`tt.store`/`tt.atomic_*`/`tt.dot` store them (3.6 through 3.9).
CACHE_MODIFIER = {"": 1, "none": 1, "ca": 2, "cg": 3, "wb": 4, "cs": 5, "wt": 6, "cv": 7}
EVICTION_POLICY = {"": 1, "evict_normal": 1, "normal": 1, "evict_first": 2, "evict_last": 3}
RMW_OP = {"and": 1, "or": 2, "xor": 3, "add": 4, "fadd": 5, "max": 6, "min": 7, "umax": 8, "umin": 9,
          "xchg": 10}
MEM_SEMANTIC = {"relaxed": 1, "acquire": 2, "release": 3, "acq_rel": 4}
MEM_SCOPE = {"gpu": 1, "cta": 2, "sys": 3}
INPUT_PRECISION = {"tf32": 0, "tf32x3": 1, "ieee": 2, "bf16x3": 3, "bf16x6": 4}
PADDING_OPTION = {"zero": 1, "nan": 2}  # tt.make_tensor_descriptor's `padding`
DESCRIPTOR_REDUCE_KIND = {"add": 1, "min": 2, "max": 3, "and": 6, "or": 7, "xor": 8}  # tt.descriptor_reduce's `kind`


@dataclass(frozen=True)
class TTIRDialect:
    """What differs between the TTIR dialects of the supported Triton versions.

    `cache_policy`: Triton >= 3.9 spells a load's or store's cache modifier and eviction policy as
    one optional `#tt.cache_policy<...>` attribute; earlier versions as two I32 enum properties
    `cache`, `evict`, which the generic form must spell out (a missing property reads as 0).
    """

    cache_policy: bool = False

    def memory_attrs(self, cache: str, evict: str) -> dict:
        cache = cache.lstrip(".").lower() or "none"
        evict = evict.lower() or "evict_normal"
        if evict == "normal":
            evict = "evict_normal"
        if cache not in CACHE_MODIFIER or evict not in EVICTION_POLICY:
            caches = ", ".join("." + c for c in CACHE_MODIFIER if c not in ("", "none"))
            evicts = ", ".join(e for e in EVICTION_POLICY if e.startswith("evict_"))
            raise LoweringError(f"unknown cache modifier '{cache}' or eviction policy '{evict}' (cache modifiers: "
                                f"{caches}; eviction policies: {evicts})")
        if self.cache_policy:
            if cache == "none" and evict == "evict_normal":
                return {}  # an optional attribute since 3.9
            return {"cachePolicy": f"#tt.cache_policy<cache_modifier = {cache}, eviction_policy = {evict}>"}
        return {"cache": f"{CACHE_MODIFIER[cache]} : i32", "evict": f"{EVICTION_POLICY[evict]} : i32"}


def string(s: str) -> str:
    """An MLIR string literal."""
    out = []
    for ch in s:
        if ch in '"\\' or not 32 <= ord(ch) < 127:
            out.extend(f"\\{b:02X}" for b in ch.encode())
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def loc(op) -> str:
    """An op's location as TTIR carries it (`loc(...)`): Triton keeps it down to the cubin's line info."""
    return str(op.location)


def i32_array(values) -> str:
    return "array<i32" + "".join(f", {int(v)}" if i else f": {int(v)}" for i, v in enumerate(values)) + ">"


class TTIRWriter:
    """Accumulates TTIR text; owns SSA names and indentation."""

    def __init__(self, dialect: TTIRDialect):
        self.dialect = dialect
        self.lines: list[str] = []
        self.names: dict = {}  # xb ir.Value -> TTIR reference ("%3", "%5#1", "%arg0")
        self._count = 0
        self._depth = 0
        self._types: dict = {}

    # ------------------------------------------------------------------------------- names
    def fresh(self, prefix: str = "") -> str:
        self._count += 1
        return f"%{prefix}{self._count}"

    def bind(self, value, ref: str) -> None:
        self.names[value] = ref

    def ref(self, value) -> str:
        return self.names[value]

    # ------------------------------------------------------------------------------- types
    def type(self, t) -> str:
        """TTIR spelling of an xb type (an `ir.Type` or its text)."""
        key = str(t)
        s = self._types.get(key)
        if s is None:
            # fp8e4b15 is an i8 in TTIR, as Triton's frontend holds it
            s = self._types[key] = (key.replace("!xb.ptr<", "!tt.ptr<").replace("!xb.tensordesc<", "!tt.tensordesc<")
                                    .replace("f8E4M3B11FNUZ", "i8"))
        return s

    # ------------------------------------------------------------------------------- ops
    def line(self, text: str) -> None:
        self.lines.append("  " * self._depth + text)

    def op(self, name: str, operands=(), operand_types=(), result_types=(), attrs=None, loc: str = "",
           regions=()) -> list[str]:
        """Print one op; returns the references of its results.

        Args:
            name: TTIR op name ("tt.load").
            operands, operand_types: TTIR references and type strings.
            result_types: TTIR type strings of the results.
            attrs: name -> attribute text.
            loc: the location suffix (`loc(...)`), or "".
            regions: callables, each printing one region's blocks through `block(...)`.
        """
        results = []
        head = ""
        if len(result_types) == 1:
            r = self.fresh()
            results, head = [r], f"{r} = "
        elif result_types:
            r = self.fresh()
            results, head = [f"{r}#{i}" for i in range(len(result_types))], f"{r}:{len(result_types)} = "
        text = f'{head}"{name}"({", ".join(operands)})'
        if regions:
            self.line(text + " (")
            self._depth += 1
            for i, region in enumerate(regions):
                self.line("{")
                region()
                self.line("}" + ("," if i + 1 < len(regions) else ""))
            self._depth -= 1
            text = ")"
        if attrs:
            text += " {" + ", ".join(f"{k} = {v}" for k, v in attrs.items()) + "}"
        rt = result_types[0] if len(result_types) == 1 else "(" + ", ".join(result_types) + ")"
        text += f" : ({', '.join(operand_types)}) -> {rt}"
        if loc:
            text += " " + loc
        self.line(text)
        return results

    def block(self, arg_types, body, arg_values=None, loc="") -> list[str]:
        """Print a block header with fresh arguments (bound to `arg_values`, if given), then `body()`.

        `loc` is one location for every argument, or a list of one per argument.
        """
        args = [self.fresh("arg") for _ in arg_types]
        if arg_values is not None:
            for v, a in zip(arg_values, args):
                self.bind(v, a)
        if args:
            locs = loc if isinstance(loc, list) else [loc] * len(args)
            self.line("^bb0(" + ", ".join(f"{a}: {t}{' ' + lc if lc else ''}"
                                          for a, t, lc in zip(args, arg_types, locs)) + "):")
        self._depth += 1
        body(args)
        self._depth -= 1
        return args

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"
