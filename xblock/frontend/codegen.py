"""Python AST to the xb dialect: one code generator per kernel or helper function.

Every visited node sets the MLIR location to the user's `file:line:col`, and any failure while
visiting it becomes a `CompilationError` at that node. Helper `@jit` calls become `func.call`s
to private specialized functions, inlined later by the `xb-inline-calls` pass.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import inspect
import operator
import sys
import types

from mlir import ir
from mlir.dialects import func, gpu

from .. import language as xl
from ..dialects import xb
from ..dialects.locations import LIBRARY
from ..errors import CompilationError, XBlockError, debug
from ..language.core import _unwrap, builtin, constexpr, is_builtin, tensor
from ..language.descriptors import aggregate, host_descriptor_type
from .control import ControlFlow, _has_tensor, _is_py_value, flatten, lift_returns, rebuild, spec_key
from .semantic import Semantic, SemanticError
from .source import KernelSource, is_jit_function, unwrap_function
from .triton_compat import translate
from .type_rules import check_bool_operand
from .types import ir_type

_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
           ast.Mod: "mod", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor", ast.LShift: "lshift",
           ast.RShift: "rshift"}
_PY_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
              ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.BitAnd: operator.and_,
              ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift,
              ast.RShift: operator.rshift, ast.Pow: operator.pow}
_CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
_PY_CMPOPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
              ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not,
              ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
_PY_BUILTINS = {"len", "min", "max", "int", "float", "bool", "abs", "isinstance", "tuple", "list", "getattr",
                "hasattr", "str", "round", "divmod", "enumerate", "zip", "range", "print", "type", "repr",
                "ValueError", "TypeError", "AssertionError", "sum", "any", "all", "reversed", "sorted",
                "None", "True", "False", "dict", "set", "frozenset", "slice", "map", "filter", "chr", "ord"}
_TENSOR_METHODS = {"to": "cast", "cast": "cast", "reshape": "reshape", "view": "view", "trans": "trans",
                   "permute": "permute", "expand_dims": "expand_dims", "broadcast_to": "broadcast_to",
                   "sum": "sum", "max": "max",
                   "min": "min", "argmax": "argmax", "argmin": "argmin", "cumsum": "cumsum",
                   "cumprod": "cumprod", "reduce": "reduce", "associative_scan": "associative_scan",
                   "xor_sum": "xor_sum", "exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2",
                   "sqrt": "sqrt", "rsqrt": "rsqrt", "sin": "sin", "cos": "cos", "abs": "abs",
                   "sigmoid": "sigmoid", "erf": "erf", "floor": "floor", "ceil": "ceil",
                   "split": "split", "gather": "gather", "histogram": "histogram", "item": "item",
                   "flip": "flip", "sort": "sort", "ravel": "ravel", "softmax": "softmax", "reduce_or": "reduce_or",
                   "sqrt_rn": "sqrt_rn", "cdiv": "cdiv", "store": "store", "atomic_add": "atomic_add",
                   "atomic_and": "atomic_and", "atomic_cas": "atomic_cas", "atomic_max": "atomic_max",
                   "atomic_min": "atomic_min", "atomic_or": "atomic_or", "atomic_xchg": "atomic_xchg",
                   "atomic_xor": "atomic_xor"}


def _logical(kind: str):
    """A block's `logical_and`/`logical_or` method (Triton's tensor methods: bool operands, as `and`/`or`)."""
    @builtin
    def method(input, other, _semantic=None):
        for v in (input, other):
            check_bool_operand(_unwrap(v), f"logical_{kind}")
        return _semantic.logical(kind, _unwrap(input), _unwrap(other))
    return method


_LOGICAL_METHODS = {"logical_and": _logical("and"), "logical_or": _logical("or")}
_BLOCK_ATTRS = ("dtype", "shape", "type", "numel", "T", *_LOGICAL_METHODS,
                *(n for n, v in _TENSOR_METHODS.items() if v))



def _language_helper(fn) -> bool:
    """A function of xblock's language written in the language (`tl.standard`'s `_indicator`): compiled
    as a helper even without block arguments; its constexpr helpers (`_log2`) run in Python."""
    if not fn.__module__.startswith("xblock.language") or getattr(fn, "__xblock_constexpr__", False):
        return False
    return getattr(sys.modules.get(fn.__module__), fn.__name__, None) is fn  # not a lambda (`dt.is_int32`)


class _Method:
    """A builtin bound to a block value (`x.to(...)`, `x.sum(0)`)."""

    def __init__(self, fn, self_value):
        self.fn, self.self_value = fn, self_value


class ModuleBuilder:
    """Owns the module being built and the cache of specialized helper functions."""

    def __init__(self, module: ir.Module, capabilities=frozenset()):
        self.module = module
        self.capabilities = frozenset(capabilities)  # optional xb op families the target takes (xb.NATIVE_OPS)
        self.helpers: dict = {}
        self.sources: dict = {}

    def source(self, fn) -> KernelSource:
        fn = unwrap_function(fn)
        if fn not in self.sources:
            self.sources[fn] = KernelSource(fn)
        return self.sources[fn]


class CodeGenerator(ControlFlow, ast.NodeVisitor):
    """Generates IR for one function body into the current insertion point."""

    def __init__(self, ks: KernelSource, mb: ModuleBuilder, scope: dict):
        self.ks, self.mb, self.scope = ks, mb, scope
        self.sem = Semantic(self)
        self.ret = None
        self.ret_node = None
        self.returned = False
        self.naming: str | None = None  # the name the statement being generated binds (`x = ...`)
        self.tail = False  # the statement being generated is the function's last (see visit_stmts)
        self.loops = 0  # how many loops (`for`, `while`, unrolled `static_range`) enclose the statement

    # ----------------------------------------------------------------------------- errors, locs
    def file_loc(self, node) -> ir.Location:
        return ir.Location.file(self.ks.file, self.ks.abs_line(node.lineno), node.col_offset + self.ks.indent + 1)

    def loc(self, node) -> ir.Location:
        """The node's file location; wrapped in a `NameLoc` while the value of `name = ...` is built."""
        loc = self.file_loc(node)
        return ir.Location.name(self.naming, childLoc=loc) if self.naming else loc

    def visit_named(self, target, value_node):
        """Visit the value of an assignment; its ops are located at `NameLoc(target name, ...)`.

        Backends read variable names from these locations (as Triton's code generator names the
        values it binds), so generated code can use the user's names.
        """
        saved = self.naming
        self.naming = target.id if isinstance(target, ast.Name) else None
        try:
            return self.visit(value_node)
        finally:
            self.naming = saved

    def error(self, node, msg) -> CompilationError:
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0) + self.ks.indent + 1
        return CompilationError(self.ks.file, self.ks.abs_line(line), col, msg, self.ks.source_line(line))

    def visit(self, node):
        if node is None:
            return None
        if not hasattr(node, "lineno"):
            return super().visit(node)
        with self.loc(node):
            try:
                return super().visit(node)
            except CompilationError:
                raise
            except (SemanticError, TypeError, ValueError, NameError, AttributeError, IndexError, KeyError,
                    ZeroDivisionError, AssertionError, RuntimeError, OverflowError) as e:
                if debug():
                    raise
                msg = str(e) if isinstance(e, (SemanticError, NameError, XBlockError)) else f"{type(e).__name__}: {e}"
                raise self.error(node, msg) from None
            except Exception as e:  # an MLIR or internal failure still points at the user's line
                if debug():
                    raise
                raise self.error(node, f"internal error: {type(e).__name__}: {e}") from None

    def generic_visit(self, node):
        raise SemanticError(f"unsupported syntax: {type(node).__name__}")

    def visit_stmts(self, stmts, tail: bool = False):
        """Visit statements; `tail`: the last one ends the function (a `return` there may be partial)."""
        for i, st in enumerate(stmts):
            if self.returned:
                raise self.error(st, "statements after `return` are not supported")
            self.tail = tail and i == len(stmts) - 1
            self.visit(st)

    # ----------------------------------------------------------------------------- statements
    def visit_Expr(self, node):
        self.visit(node.value)

    def visit_Pass(self, node):
        pass

    def visit_Assign(self, node):
        value = self.visit_named(node.targets[0], node.value) if len(node.targets) == 1 else self.visit(node.value)
        for target in node.targets:
            self.assign(target, value)

    def visit_AnnAssign(self, node):
        if node.value is None:
            return
        self.assign(node.target, self.visit_named(node.target, node.value))

    def visit_AugAssign(self, node):
        if not isinstance(node.target, ast.Name):
            raise SemanticError("augmented assignment needs a plain name on the left")
        cur = self.lookup(node.target.id)
        saved, self.naming = self.naming, node.target.id
        try:
            with self.loc(node):
                value = self.binop(type(node.op), cur, self.visit(node.value))
        finally:
            self.naming = saved
        self.assign(node.target, value)

    def assign(self, target, value):
        if isinstance(target, ast.Name):
            self.scope[target.id] = _unwrap(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            value = _unwrap(value)
            if not isinstance(value, (tuple, list)) or len(value) != len(target.elts):
                raise SemanticError(f"cannot unpack {value!r} into {len(target.elts)} names")
            for t, v in zip(target.elts, value):
                self.assign(t, v)
        else:
            raise SemanticError("only names and tuples of names can be assigned to (blocks are immutable)")

    def visit_Return(self, node):
        if self.loops:
            raise SemanticError("`return` inside a `for` or `while` loop is not supported (as in Triton: a "
                                "kernel cannot leave a loop early); carry a flag and guard the body instead")
        self.ret = self.visit(node.value) if node.value is not None else None
        self.ret_node = node
        self.returned = True

    def visit_Assert(self, node):
        cond = self.visit(node.test)
        msg = self.visit(node.msg) if node.msg is not None else ast.unparse(node.test)
        if _is_py_value(cond):
            if not cond:
                raise SemanticError(f"assertion failed: {msg}")
            return
        self.sem.device_assert(cond, msg)

    def visit_Break(self, node):
        raise SemanticError("`break` is not supported in kernels; use a `while` condition")

    def visit_Continue(self, node):
        raise SemanticError("`continue` is not supported in kernels")

    # ----------------------------------------------------------------------------- expressions
    def visit_Constant(self, node):
        return node.value

    def visit_Tuple(self, node):
        return tuple(self.visit(e) for e in node.elts)

    def visit_List(self, node):
        return [self.visit(e) for e in node.elts]

    def visit_JoinedStr(self, node):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            else:
                val = _unwrap(self.visit(v.value))
                if isinstance(val, tensor):
                    raise SemanticError("f-strings may only format constexpr values")
                parts.append(format(val, self.visit(v.format_spec) if v.format_spec else ""))
        return "".join(parts)

    def visit_FormattedValue(self, node):
        return self.visit(node.value)

    def lookup(self, name):
        if name in self.scope:
            return self.scope[name]
        g = self.ks.globals
        if name in g:
            v = g[name]
            if isinstance(v, (list, dict, set, bytearray)) or hasattr(v, "__array_interface__") \
                    or hasattr(v, "data_ptr"):
                raise SemanticError(
                    f"the kernel reads the global variable '{name}' ({type(v).__name__}): kernels can read only "
                    f"constant globals (numbers, strings, dtypes, tl.constexpr(...)); pass it as an argument")
            return _unwrap(translate(v))
        if name in _PY_BUILTINS and hasattr(builtins, name):
            return getattr(builtins, name)
        raise NameError(f"name '{name}' is not defined")

    def visit_Name(self, node):
        return self.lookup(node.id)

    def binop(self, op_type, a, b):
        a, b = _unwrap(a), _unwrap(b)
        if _is_py_value(a) and _is_py_value(b):
            return _PY_BINOPS[op_type](a, b)
        if op_type not in _BINOPS:
            raise SemanticError(f"operator {op_type.__name__} is not supported on blocks")
        return self.sem.binary(_BINOPS[op_type], a, b)

    def visit_BinOp(self, node):
        return self.binop(type(node.op), self.visit(node.left), self.visit(node.right))

    def visit_UnaryOp(self, node):
        v = _unwrap(self.visit(node.operand))
        op = type(node.op)
        if _is_py_value(v):
            return {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
                    ast.Invert: operator.invert}[op](v)
        if op is ast.USub:
            return self.sem.neg(v)
        if op is ast.UAdd:
            return v
        if op is ast.Not:
            check_bool_operand(v, "not")
            return self.sem.logical_not(v)
        return self.sem.invert(v)

    def visit_BoolOp(self, node):
        """As Triton's: a Python value that decides the result is returned, one that does not is dropped,
        and two or more blocks combine with logical_and/or (bool operands only)."""
        kind = "and" if isinstance(node.op, ast.And) else "or"
        acc = None
        for e in node.values:
            v = _unwrap(self.visit(e))
            if _is_py_value(v):
                if bool(v) == (kind == "or"):
                    return v
                acc = v if acc is None or _is_py_value(acc) else acc
            elif acc is None or _is_py_value(acc):
                acc = v
            else:
                check_bool_operand(acc, kind)
                check_bool_operand(v, kind)
                acc = self.sem.logical(kind, acc, v)
        return acc

    def visit_Compare(self, node):
        if len(node.ops) != 1:
            raise SemanticError("chained comparisons are not supported; combine them with `&`")
        a, b = _unwrap(self.visit(node.left)), _unwrap(self.visit(node.comparators[0]))
        op = type(node.ops[0])
        if op in (ast.Is, ast.IsNot, ast.In, ast.NotIn) or (_is_py_value(a) and _is_py_value(b)):
            return _PY_CMPOPS[op](a, b)
        return self.sem.compare(_CMPOPS[op], a, b)

    def visit_IfExp(self, node):
        """`a if c else b`: a constexpr `c` picks a side; a runtime scalar `c` is an `scf.if` with a result
        that evaluates only the side taken (as in Triton)."""
        cond = _unwrap(self.visit(node.test))
        if _is_py_value(cond):
            return self.visit(node.body if cond else node.orelse)
        return self.if_expression(cond, node)

    def visit_Attribute(self, node):
        base = _unwrap(self.visit(node.value))
        name = node.attr
        if name == "value" and not isinstance(base, tensor) and not hasattr(base, "value"):
            return base  # constexprs are plain values here: `tl.constexpr(x).value` is x
        if isinstance(base, tensor):
            if name == "dtype":
                return base.dtype
            if name == "shape":
                return tuple(base.shape)
            if name == "type":
                return base.type
            if name == "numel":
                return base.numel
            if name == "T":
                return self.sem.permute(base, None)
            if name in _TENSOR_METHODS and _TENSOR_METHODS[name]:
                return _Method(getattr(xl, _TENSOR_METHODS[name]), base)
            if name in _LOGICAL_METHODS:
                return _Method(_LOGICAL_METHODS[name], base)
            raise SemanticError(f"a block has no attribute '{name}'" + _did_you_mean(name, _BLOCK_ATTRS))
        if isinstance(base, aggregate):
            if not hasattr(base, name) or name.startswith("_"):
                raise SemanticError(f"{base!r} has no attribute '{name}'")
            attr = getattr(base, name)
            return _Method(attr, base) if is_builtin(attr) else attr
        if isinstance(base, types.ModuleType):
            if not hasattr(base, name):
                public = [n for n in dir(getattr(base, "_triton", base)) if not n.startswith("_")]  # Triton's names
                raise SemanticError(f"module '{base.__name__}' has no attribute '{name}'" + _did_you_mean(name, public))
            return _unwrap(translate(getattr(base, name)))
        return _unwrap(translate(getattr(base, name)))

    def visit_Subscript(self, node):
        base = _unwrap(self.visit(node.value))
        sl = node.slice
        if isinstance(base, tensor):
            items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
            x, dim = base, 0
            for it in items:
                if isinstance(it, ast.Slice):
                    if it.lower or it.upper or it.step:
                        raise SemanticError("only full slices `:` and `None` can index a block")
                    dim += 1
                elif isinstance(it, ast.Constant) and it.value is None:
                    x = self.sem.expand_dims(x, dim)
                    dim += 1
                else:
                    raise SemanticError("only full slices `:` and `None` can index a block")
            if dim > len(x.shape) or len([i for i in items if isinstance(i, ast.Slice)]) != len(base.shape):
                raise SemanticError(f"index has {len(items)} entries for a block of shape {list(base.shape)}")
            return x
        idx = _unwrap(self.visit(sl))
        if isinstance(idx, tensor):
            raise SemanticError("cannot index a Python value with a block")
        return base[idx]

    def visit_Slice(self, node):
        """`a:b:c` indexing a Python value (a shape, a tuple): a Python slice of constexprs."""
        parts = [None if p is None else _unwrap(self.visit(p)) for p in (node.lower, node.upper, node.step)]
        if any(isinstance(p, tensor) for p in parts):
            raise SemanticError("slice bounds must be constexpr integers")
        return slice(*parts)

    # ----------------------------------------------------------------------------- calls
    def visit_Call(self, node):
        fn = _unwrap(self.visit(node.func))
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(_unwrap(self.visit(a.value)))
            else:
                args.append(self.visit(a))
        kwargs = {k.arg: self.visit(k.value) for k in node.keywords}
        return self.call(fn, args, kwargs)

    def call(self, fn, args, kwargs):
        if isinstance(fn, _Method):
            if not is_builtin(fn.fn):  # a method written in the language (`x.flip()`, `x.softmax()`)
                return self.call(fn.fn, [fn.self_value, *args], kwargs)
            return fn.fn(fn.self_value, *args, _semantic=self.sem, **kwargs)
        if is_builtin(fn):
            return fn(*args, _semantic=self.sem, **kwargs)
        if fn is constexpr:
            return _unwrap(args[0])
        if isinstance(fn, xl.dtype) and not isinstance(fn, xl.pointer_type) and len(args) == 1 and not kwargs:
            value = _unwrap(args[0])  # `tl.float32(x)`: a cast (a constant for a Python number)
            return self.sem.cast(value, fn) if isinstance(value, tensor) else self.sem.to_tensor(value, fn)
        if fn is xl.range or fn is xl.static_range:
            raise SemanticError(f"{fn.__name__}() can only be used as the iterable of a `for` loop")
        if fn is builtins.print:
            if any(_has_tensor(a) for a in args):  # as Triton: a device print, a leading string its prefix
                first = _unwrap(args[0]) if args else None
                if isinstance(first, str):
                    return self.sem.device_print(first, args[1:], False)
                return self.sem.device_print("", args, False)
            return self.sem.static_print(args)
        if fn in (builtins.len, builtins.isinstance, builtins.tuple, builtins.list) and not kwargs:
            return fn(*[_unwrap(a) for a in args])  # structural: tuples of blocks are Python tuples
        if fn in (builtins.min, builtins.max) and any(_has_tensor(a) for a in args):
            if len(args) < 2 or kwargs:
                raise SemanticError(f"{fn.__name__}() of blocks takes two or more positional arguments")
            acc = args[0]
            for a in args[1:]:  # as Triton: min/max of blocks are elementwise minimum/maximum
                acc = self.sem.minmax(fn.__name__, acc, a, False)
            return acc
        if is_jit_function(fn):
            return self.call_helper(fn, args, kwargs)
        has_tensors = any(_has_tensor(a) for a in args) or any(_has_tensor(v) for v in kwargs.values())
        if inspect.isfunction(fn) and (has_tensors or _language_helper(fn)):
            return self.call_helper(fn, args, kwargs)
        if has_tensors:
            raise SemanticError(f"cannot call {getattr(fn, '__name__', fn)!r} on blocks inside a kernel")
        return fn(*[_unwrap(a) for a in args], **{k: _unwrap(v) for k, v in kwargs.items()})

    def call_helper(self, fn, args, kwargs):
        """Call a helper function: specialize it once per argument types, then `func.call` it."""
        ks = self.mb.source(fn)
        active = self.mb.__dict__.setdefault("active_helpers", [])
        if ks.fn in active or ks.fn is getattr(self.ks, "fn", None):
            raise SemanticError(f"'{ks.name}' calls itself: kernels and their helpers cannot recurse (Triton "
                                "inlines every call); write the recursion as a loop")
        try:
            bound = inspect.signature(ks.fn).bind(*args, **kwargs)
        except TypeError as e:
            raise SemanticError(f"bad call to {ks.name}: {e}") from None
        bound.apply_defaults()
        params = list(bound.arguments.items())
        key_parts, tensor_args = [], []
        for name, v in params:
            v = _unwrap(v)
            if isinstance(v, tensor):
                key_parts.append((name, "t", v.dtype.name, v.shape))
                tensor_args.append(v)
            elif _has_tensor(v):  # a tuple of blocks or an aggregate: its blocks are the arguments
                leaves, spec = flatten(v)
                key_parts.append((name, "s", spec_key(spec), tuple((x.dtype.name, x.shape) for x in leaves)))
                tensor_args += leaves
            else:
                key_parts.append((name, "c", repr(v)))
        key = (ks.fn, tuple(key_parts))
        if key not in self.mb.helpers:
            active.append(ks.fn)
            try:
                self.mb.helpers[key] = self._gen_helper(ks, params, tensor_args, key)
            except CompilationError as err:
                if err.file.startswith(LIBRARY) and not self.ks.file.startswith(LIBRARY):
                    # an error inside tl.sort & co.: at the user's line, naming the library function
                    raise SemanticError(f"{err.message} (inside tl.{ks.name}, which xblock writes in the block "
                                        "language)") from None
                raise
            finally:
                active.pop()
        sym, ret_spec, result_types = self.mb.helpers[key]
        call = ir.Operation.create("func.call", results=result_types,
                                   operands=[v.handle for v in tensor_args],
                                   attributes={"callee": ir.FlatSymbolRefAttr.get(sym)})
        return _rebuild(ret_spec, list(call.results))

    def _gen_helper(self, ks, params, tensor_args, key):
        digest = hashlib.sha256(repr(key[1]).encode()).hexdigest()[:10]
        sym = f"{ks.name}__{digest}"
        arg_types = [v.handle.type for v in tensor_args]
        kernel_func = self._enclosing_func()
        with ir.InsertionPoint(kernel_func), ir.Location.file(ks.file, ks.first_line, 1):
            f = func.FuncOp(sym, ir.FunctionType.get(arg_types, []))
            f.attributes["sym_visibility"] = ir.StringAttr.get("private")
            entry = f.add_entry_block()
        blocks = iter([tensor(a, v.dtype, v.shape) for a, v in zip(entry.arguments, tensor_args)])
        scope = {}
        for name, v in params:
            v = _unwrap(v)
            scope[name] = rebuild(flatten(v)[1], blocks) if _has_tensor(v) else v
        gen = CodeGenerator(ks, self.mb, scope)
        with ir.InsertionPoint(entry):
            gen.visit_stmts(lift_returns(ks.tree.body), tail=True)
            flat, spec = _flatten(gen.ret)
            with gen.loc(ks.tree.body[-1]):
                func.ReturnOp([t.handle for t in flat])
        result_types = [t.handle.type for t in flat]
        f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(arg_types, result_types))
        return sym, spec, result_types

    def _enclosing_func(self):
        """The top-level func.func that contains the current insertion point."""
        op = ir.InsertionPoint.current.block.owner
        while op is not None and op.operation.name != "func.func":
            op = op.parent
        return op

    def build_combine(self, region, combine_fn, dtypes):
        """Fill a reduce/scan combine region: 2N scalar arguments, the helper's body, gpu.yield."""
        arg_types = [ir_type(d) for d in dtypes] * 2
        block = region.blocks.append(*arg_types)
        with ir.InsertionPoint(block):
            args = [tensor(a, d, ()) for a, d in zip(block.arguments, list(dtypes) * 2)]
            out = self.call(combine_fn, args, {})
            outs = list(out) if isinstance(out, (tuple, list)) else [out]
            if len(outs) != len(dtypes):
                raise SemanticError(f"the combine function returns {len(outs)} values, expected {len(dtypes)}")
            vals = [self.sem.cast(self.sem.to_tensor(o, d if not isinstance(o, tensor) else None), d)
                    for o, d in zip(outs, dtypes)]
            gpu.YieldOp([v.handle for v in vals])


def _flatten(v):
    """A helper's return value as blocks, plus a spec (and each block's type) to rebuild it."""
    flat, spec = flatten(v)
    return flat, (spec, [(t.dtype, t.shape) for t in flat])


def _rebuild(ret_spec, results):
    spec, types_ = ret_spec
    return rebuild(spec, iter([tensor(r, dt, shape) for r, (dt, shape) in zip(results, types_)]))


def generate(ks: KernelSource, arg_types: dict, constexprs: dict, divisibility: dict,
             capabilities=frozenset()) -> ir.Module:
    """Build the xb module of one kernel specialization.

    Args:
        ks: the kernel's source.
        arg_types: parameter name -> dtype, for runtime (non-constexpr) parameters.
        constexprs: parameter name -> Python value, for constexpr parameters.
        divisibility: parameter name -> 16 where the argument is known divisible by 16.
        capabilities: the optional xb op families the target takes (`xb.NATIVE_OPS`); others are
            lowered here (tensor descriptors to masked pointer accesses).
    Returns:
        The module, with one `func.func` marked `xb.kernel`.
    """
    ctx = xb.context()
    with ctx, ir.Location.file(ks.file, ks.first_line, 1):
        module = ir.Module.create()
        mb = ModuleBuilder(module, capabilities)
        runtime = list(arg_types)  # parameter order; a host tensor descriptor adds its parts (see runtime.args)
        types_ = [ir_type(arg_types[p]) for p in runtime]
        with ir.InsertionPoint(module.body):
            f = func.FuncOp(ks.name, ir.FunctionType.get(types_, []))
        f.attributes["xb.kernel"] = ir.UnitAttr.get()
        f.attributes["xb.arg_names"] = ir.ArrayAttr.get([ir.StringAttr.get(p) for p in runtime])
        arg_attrs = []
        for p in runtime:
            d = {}
            if divisibility.get(p):
                d["xb.divisibility"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), divisibility[p])
            arg_attrs.append(ir.DictAttr.get(d))
        f.attributes["arg_attrs"] = ir.ArrayAttr.get(arg_attrs)
        entry = f.add_entry_block()
        args = {p: tensor(a, arg_types[p], ()) for p, a in zip(runtime, entry.arguments)}
        scope = {p: v for p, v in args.items() if p in ks.params}
        gen = CodeGenerator(ks, mb, scope)
        scope.update(_constexpr_scope(gen, constexprs))
        mb.sources[ks.fn] = ks
        with ir.InsertionPoint(entry):
            _bind_host_descriptors(gen, args, constexprs)
            gen.visit_stmts(lift_returns(ks.tree.body), tail=True)
            if gen.ret is not None:
                raise gen.error(gen.ret_node, "a kernel cannot return a value")
            func.ReturnOp([])
    return module


def _constexpr_scope(gen, constexprs: dict) -> dict:
    """The kernel's constexpr parameters as the kernel sees them (e.g. OUT=tl.float8e4nv, translated);
    a value the language cannot hold is an error at the kernel's `def` line."""
    scope = {}
    for k, v in constexprs.items():
        if k in gen.ks.params and not isinstance(v, host_descriptor_type):
            try:
                scope[k] = translate(v)
            except TypeError as e:
                raise gen.error(gen.ks.tree, f"constexpr '{k}': {e}") from None
    return scope


def _bind_host_descriptors(gen, args: dict, constexprs: dict) -> None:
    """Bind each host `TensorDescriptor` parameter to a descriptor made of its argument parts."""
    for p, spec in constexprs.items():
        if not isinstance(spec, host_descriptor_type):
            continue
        ndim = len(spec.block_shape)
        parts = []
        names = host_descriptor_type.arg_names(p, ndim)
        for name in names:  # a part specialized to 1 is that constant
            parts.append(gen.sem.to_tensor(constexprs[name], args[name].dtype) if name in constexprs else args[name])
        gen.scope[p] = gen.sem.host_descriptor(spec, parts[0], parts[1:1 + ndim], parts[1 + ndim:], names[0])


def _did_you_mean(name: str, names) -> str:
    """"; did you mean 'load'?" for the closest of `names`, or nothing."""
    import difflib

    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.7)
    return f"; did you mean '{close[0]}'?" if close else ""
