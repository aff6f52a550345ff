"""Control flow of the code generator: `if`, `for` and `while` to scf, with loop-carried values."""

from __future__ import annotations

import ast
import builtins

from mlir import ir
from mlir.dialects import scf

from .. import language as xl
from ..language.core import _unwrap, tensor
from ..language.descriptors import aggregate
from .semantic import SemanticError
from .types import python_scalar_dtype

# xl.range keywords kept on the loop as `xb.<name>` (Triton's pipelining and unrolling hints)
_LOOP_HINTS = ("num_stages", "loop_unroll_factor", "disallow_acc_multi_buffer", "flatten", "warp_specialize")


def _is_py_value(v) -> bool:
    return not _has_tensor(v)


def _has_tensor(v) -> bool:
    if isinstance(v, (tensor, aggregate)):
        return True
    if isinstance(v, (tuple, list)):
        return any(_has_tensor(x) for x in v)
    return False


# ------------------------------------------------------------------------------- structured values
def flatten(v, numbers: bool = False) -> tuple:
    """(leaves, spec) of a value: its blocks in order, and the structure that `rebuild` fills again.

    Tuples, lists and aggregates (block pointers, descriptors) are walked; other Python values are
    static parts of the spec. With `numbers`, Python numbers are leaves too (a loop-carried or
    `if`-assigned number becomes a block).
    """
    v = _unwrap(v)
    if isinstance(v, tensor) or (numbers and isinstance(v, (bool, int, float))):
        return [v], ("t",)
    if isinstance(v, (tuple, list)):
        leaves, specs = [], []
        for x in v:
            f, sp = flatten(x, numbers)
            leaves += f
            specs.append(sp)
        return leaves, ("seq", type(v), tuple(specs))
    if isinstance(v, aggregate):
        leaves, spec = flatten(tuple(v._parts()), numbers)
        return leaves, ("agg", type(v), v._static(), spec)
    return [], ("py", v)


def rebuild(spec, leaves):
    """The value `flatten` described, with its blocks taken in order from the iterator `leaves`."""
    kind = spec[0]
    if kind == "t":
        return next(leaves)
    if kind == "seq":
        items = [rebuild(sp, leaves) for sp in spec[2]]
        t = spec[1]
        return t._make(items) if hasattr(t, "_make") else t(items)
    if kind == "agg":
        return spec[1]._rebuild(spec[2], list(rebuild(spec[3], leaves)))
    return spec[1]


def same_structure(a, b) -> bool:
    """Whether two specs rebuild the same kind of value: same structure, equal static parts."""
    if a[0] != b[0]:
        return False
    if a[0] == "t":
        return True
    if a[0] == "seq":
        return a[1] is b[1] and len(a[2]) == len(b[2]) and all(map(same_structure, a[2], b[2]))
    if a[0] == "agg":
        return a[1] is b[1] and a[2] == b[2] and same_structure(a[3], b[3])
    x, y = a[1], b[1]
    try:
        return x is y or (type(x) is type(y) and bool(x == y))
    except Exception:
        return False


def spec_key(spec) -> tuple:
    """A printable key of a spec (static parts by repr), for specializing helpers."""
    kind = spec[0]
    if kind == "seq":
        return ("seq", spec[1].__name__, tuple(spec_key(sp) for sp in spec[2]))
    if kind == "agg":
        return ("agg", spec[1].__name__, repr(spec[2]), spec_key(spec[3]))
    return ("t",) if kind == "t" else ("py", repr(spec[1]))


def _assigned_names(stmts) -> set[str]:
    out = set()
    for st in stmts:
        for node in ast.walk(st):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
    return out


_RET = "\0return"  # scope names that carry the values a branch returns (no Python name can clash)


def _return_slots(ret) -> dict:
    """A branch's returned value as scope entries, one per block (tuples flattened in order)."""
    if ret is None:
        return {}
    if isinstance(ret, (tuple, list)):
        return {f"{_RET}t{i:04d}": _unwrap(v) for i, v in enumerate(ret)}
    return {f"{_RET}s": _unwrap(ret)}


def _rebuild_return(slots: list, values: list):
    if not slots:
        return None  # bare `return`s (a kernel's, or a helper's that returns nothing)
    return values[0] if slots == [f"{_RET}s"] else tuple(values)


def _always_returns(stmts) -> bool:
    """Every path through `stmts` ends in a `return`."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _always_returns(last.body) and _always_returns(last.orelse)


def _may_return(stmts) -> bool:
    """Some path through `stmts` has a `return` (in any nested statement)."""
    return any(isinstance(n, ast.Return) for st in stmts for n in ast.walk(st))


def lift_returns(stmts: list) -> list:
    """Early returns as structured control flow, for every form compiled Triton accepts.

    `if c: ...; return` followed by more statements becomes `if c: ... else: <the rest>` (and the
    mirror case for the `else` branch). An `if` with a `return` on some paths of a branch only
    (`if HAS_X: ... if pid >= n: return ...`, constexpr or not) gets the rest of the statements
    appended to both branches. Recursively, so that a `return` only ever ends a branch whose `if`
    is the last statement of the function; for a constexpr `if` only the branch taken is generated.
    Loop bodies are left alone (a `return` there is an error, as in Triton).
    """
    out = []
    for i, st in enumerate(stmts):
        if not isinstance(st, ast.If):
            out.append(st)
            continue
        body, orelse, rest = lift_returns(st.body), lift_returns(st.orelse), stmts[i + 1:]
        if rest and _always_returns(body) and not _always_returns(orelse):
            orelse = lift_returns(orelse + rest)
            rest = []
        elif rest and _always_returns(orelse) and not _always_returns(body):
            body = lift_returns(body + rest)
            rest = []
        elif rest and not _always_returns(body) and (_may_return(body) or _may_return(orelse)):
            body, orelse = lift_returns(body + rest), lift_returns(orelse + rest)
            rest = []
        out.append(ast.copy_location(ast.If(test=st.test, body=body, orelse=orelse), st))
        if not rest:
            return out
    return out


def _if_with_results(probe, cond, yields):
    """Replace the result-less scf.if `probe` by one yielding `yields` (then's, else's); its results."""
    with ir.InsertionPoint(probe):
        real = scf.IfOp(cond.handle, [t.handle.type for t in yields[0]], has_else=True)
    for src, dst, ys in ((probe.then_block, real.then_block, yields[0]),
                         (probe.else_block, real.else_block, yields[1])):
        with ir.InsertionPoint(dst):
            y = scf.YieldOp([t.handle for t in ys])
        for op in list(src.operations):
            op.move_before(y)
    probe.operation.erase()
    return iter([tensor(r, t.dtype, t.shape) for r, t in zip(real.results, yields[0])])


# ops that a side of `a if c else b` may run even when not taken (see if_expression)
_SPECULATABLE_XB = frozenset("xb." + n for n in ("program_id num_programs arange splat broadcast expand_dims reshape "
                                                "trans join ptr_cast int_to_ptr ptr_to_int fp_to_fp addptr").split())
_TRAPPING_ARITH = frozenset("arith." + n for n in ("divsi divui remsi remui floordivsi ceildivsi ceildivui "
                                                  "fptosi fptoui").split())


def _speculatable(op) -> bool:
    name = op.operation.name
    if op.operation.regions and len(op.operation.regions):
        return False
    if name.startswith("arith."):
        return name not in _TRAPPING_ARITH
    return name.startswith("math.") or name in _SPECULATABLE_XB


def _side_dtype(v, other):
    """The dtype a Python number `v` takes on one side of `a if c else b`: the other side's when that is a
    block it converts to exactly (an int into any number type, a float into a float type), float32 when
    either number is a float, else None (the number's own type)."""
    if isinstance(v, tensor):
        return None
    if isinstance(other, tensor):
        dt = other.dtype
        if isinstance(v, bool) or (isinstance(v, int) and (dt.is_int() or dt.is_floating())) \
                or (isinstance(v, float) and dt.is_floating()):
            return dt
        return None
    if isinstance(v, float) or isinstance(other, float):
        return xl.float32
    return xl.int64 if xl.int64 in (python_scalar_dtype(v), python_scalar_dtype(other)) else None


class ControlFlow:
    """Mixin of CodeGenerator: statements that build scf ops."""

    # ----------------------------------------------------------------------------- if
    def visit_If(self, node):
        tail = self.tail
        cond = self.visit(node.test)
        if _is_py_value(cond):
            self.visit_stmts(node.body if cond else node.orelse, tail)
            return
        cond = self.sem.to_bool(cond)
        if cond.shape:
            raise SemanticError(f"an `if` condition must be a scalar, got a block of shape {list(cond.shape)}")
        saved, tail = dict(self.scope), self.tail
        probe = scf.IfOp(cond.handle, [], has_else=True)
        branches, returns = [], []
        for block, stmts in ((probe.then_block, node.body), (probe.else_block, node.orelse)):
            self.scope = dict(saved)
            with ir.InsertionPoint(block):
                self.visit_stmts(stmts, tail)
            returns.append(self.returned)
            if self.returned:
                self.scope.update(_return_slots(self.ret))
            self.returned, self.ret = False, None
            branches.append(self.scope)
        self.scope = saved
        names = self._if_result_names(node, saved, branches, returns, tail)
        results, consts = [], {}
        for n in names:
            tv, ev = branches[0].get(n, saved.get(n)), branches[1].get(n, saved.get(n))
            if _is_py_value(tv) and _is_py_value(ev) and (tv is ev or (type(tv) is type(ev) and tv == ev)):
                consts[n] = tv
            else:
                results.append(n)
        yields, specs = [[], []], {}
        for n in results:
            tv, ev = branches[0].get(n, saved.get(n)), branches[1].get(n, saved.get(n))
            specs[n] = self._if_yields(n, tv, ev, probe, yields)
        if not results:
            for block in (probe.then_block, probe.else_block):
                with ir.InsertionPoint(block):
                    scf.YieldOp([])
            self._finish_if(consts, returns, tail)
            return
        leaves = _if_with_results(probe, cond, yields)
        for n in results:
            consts[n] = rebuild(specs[n], leaves)
        self._finish_if(consts, returns, tail)

    def _if_yields(self, n, tv, ev, probe, yields):
        """Append the blocks of `n` after each branch to `yields` (numbers made blocks); returns its spec."""
        (t_leaves, t_spec), (e_leaves, e_spec) = flatten(tv, True), flatten(ev, True)
        if t_spec[0] == "py" or e_spec[0] == "py":
            raise SemanticError(f"variable '{n}' must be a block or number in both branches of `if`")
        if not same_structure(t_spec, e_spec):
            raise SemanticError(f"variable '{n}' is {tv!r} after the `if` branch but {ev!r} after `else`; "
                                "its structure and static parts (block shapes, constexprs) must be the same")
        for a, b in zip(t_leaves, e_leaves):
            dt = a.dtype if isinstance(a, tensor) else b.dtype if isinstance(b, tensor) else None
            for i, (block, v) in enumerate(((probe.then_block, a), (probe.else_block, b))):
                with ir.InsertionPoint(block):
                    yields[i].append(self.sem.to_tensor(v, dt if not isinstance(v, tensor) else None))
            t0, t1 = yields[0][-1], yields[1][-1]
            if t0.dtype != t1.dtype or t0.shape != t1.shape:
                what = f"'{n}'" if len(t_leaves) == 1 else f"a block of '{n}'"
                raise SemanticError(
                    f"variable {what} has type {t0.type} after the `if` branch but {t1.type} after `else`")
        return t_spec

    def _if_result_names(self, node, saved, branches, returns, tail) -> list:
        """Names whose value after a runtime `if` comes from its branches (returned values too)."""
        if returns[0] and returns[1]:
            slots = [sorted(k for k in b if k.startswith(_RET)) for b in branches]
            if slots[0] != slots[1]:
                raise SemanticError("both branches of the `if` return, but different numbers of values")
            return slots[0]
        if returns[0] or returns[1]:
            if not tail:
                raise SemanticError("a `return` inside a non-constexpr `if` must end every path of its branch "
                                    "or be the last statement of the function")
            returned = branches[0] if returns[0] else branches[1]
            if any(k.startswith(_RET) for k in returned):
                raise SemanticError("only one branch of the `if` returns a value: every path must return one")
            return []  # the function ends after this `if`: nothing it assigns is read again
        if tail and (_may_return(node.body) or _may_return(node.orelse)):
            return []  # the same, for an `if` whose branches return on some paths only
        return sorted(n for n in _assigned_names(node.body) | _assigned_names(node.orelse)
                      if n in saved or (n in branches[0] and n in branches[1]))

    def _finish_if(self, values: dict, returns, tail) -> None:
        """Bind what a runtime `if` produced; when both branches returned, so does the `if`."""
        if returns[0] and returns[1]:
            slots = sorted(k for k in values if k.startswith(_RET))
            self.returned = True
            self.ret = _rebuild_return(slots, [values[k] for k in slots])
            return
        self.scope.update(values)

    # ----------------------------------------------------------------------------- a if c else b
    def if_expression(self, cond, node):
        """`a if c else b` with a runtime `c`, as Triton 3.6 generates it: an scf.if whose branches
        compute `a` and `b` and yield them, so only the side taken runs (its loads included)."""
        cond = self.sem.to_bool(cond)
        if cond.shape:
            raise SemanticError(
                f"the condition of `a if c else b` is a block of shape {list(cond.shape)}: it must be a scalar, "
                "as in Triton; write tl.where(c, a, b) to select elementwise")
        probe = scf.IfOp(cond.handle, [], has_else=True)
        sides = []
        for block, expr in ((probe.then_block, node.body), (probe.else_block, node.orelse)):
            with ir.InsertionPoint(block):
                sides.append(_unwrap(self.visit(expr)))
        tv, ev = sides
        if tv is None and ev is None:  # `tl.store(p, x) if c else tl.store(q, x)`
            for block in (probe.then_block, probe.else_block):
                with ir.InsertionPoint(block):
                    scf.YieldOp([])
            return None
        (t_leaves, t_spec), (e_leaves, e_spec) = flatten(tv, True), flatten(ev, True)
        if t_spec[0] == "py" or e_spec[0] == "py" or not same_structure(t_spec, e_spec):
            raise SemanticError(f"the two sides of `a if c else b` (with a runtime `c`) must be blocks or numbers "
                                f"of the same structure, got {tv!r} and {ev!r}")
        yields = [[], []]
        for a, b in zip(t_leaves, e_leaves):
            dts = [_side_dtype(a, b), _side_dtype(b, a)]
            for i, (block, v) in enumerate(((probe.then_block, a), (probe.else_block, b))):
                with ir.InsertionPoint(block):
                    yields[i].append(self.sem.to_tensor(v, dts[i]))
            t0, t1 = yields[0][-1], yields[1][-1]
            if t0.dtype != t1.dtype or t0.shape != t1.shape:
                raise SemanticError(f"the two sides of `a if c else b` (with a runtime `c`) have types {t0.type} and "
                                    f"{t1.type}; they must have one type, as in Triton (cast one side)")
        if all(_speculatable(op) for block in (probe.then_block, probe.else_block) for op in block.operations):
            # both sides are cheap, pure and cannot trap (no load, no division...): evaluating both and
            # selecting is the same, and keeps combine functions and vector targets free of scf.if
            for block in (probe.then_block, probe.else_block):
                for op in list(block.operations):
                    op.move_before(probe)
            probe.operation.erase()
            return rebuild(t_spec, iter([self.sem.where(cond, a, b) for a, b in zip(*yields)]))
        return rebuild(t_spec, _if_with_results(probe, cond, yields))

    # ----------------------------------------------------------------------------- loops
    def visit_For(self, node):
        if node.orelse:
            raise SemanticError("`for ... else` is not supported")
        it = node.iter
        if not isinstance(it, ast.Call):
            raise SemanticError("`for` must iterate over range(...), xl.range(...) or xl.static_range(...)")
        fn = self.visit(it.func)
        args = [self.visit(a) for a in it.args]
        kwargs = {k.arg: self.visit(k.value) for k in it.keywords}
        if (fn is xl.static_range or fn is xl.range) and "step" in kwargs:  # tl.range(0, n, step=2)
            args = ([0, *args] if len(args) == 1 else args[:2]) + [kwargs.pop("step")]
        if fn is xl.static_range:
            bounds = [_unwrap(a) for a in args]
            if not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
                raise SemanticError("static_range bounds must be constexpr integers")
            if len(bounds) > 2 and bounds[2] == 0:
                raise SemanticError("range step must not be zero")
            if not isinstance(node.target, ast.Name):
                raise SemanticError("the loop variable must be a plain name")
            self.loops += 1
            try:
                for v in range(*bounds):
                    self.scope[node.target.id] = v
                    self.visit_stmts(node.body)
            finally:
                self.loops -= 1
            return
        if fn is not builtins.range and fn is not xl.range:
            raise SemanticError("`for` must iterate over range(...), xl.range(...) or xl.static_range(...)")
        if not isinstance(node.target, ast.Name):
            raise SemanticError("the loop variable must be a plain name")
        hints = {k: _unwrap(v) for k, v in kwargs.items() if k in _LOOP_HINTS}  # no semantics: kept for targets
        args = [_unwrap(a) for a in args]
        for a in args:
            if isinstance(a, float) or (isinstance(a, tensor) and not a.dtype.is_int()):
                raise SemanticError(f"range bounds must be integers, got {a!r}")
        lb, ub, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
        if isinstance(step, int) and step == 0:
            raise SemanticError("range step must not be zero")
        # A constexpr negative step, as Triton 3.6 lowers it (scf.for needs a positive step): the loop
        # runs over [ub, lb) with step -step, and the body sees iv' = lb + ub - iv, which is the same
        # sequence lb, lb + step, ... (> ub) as Python's range. A runtime step goes to scf.for as it is.
        reverse = isinstance(step, int) and step < 0
        if reverse:
            lb, ub, step = ub, lb, -step
        iv_dt = xl.int64 if any(isinstance(b, tensor) and b.dtype.primitive_bitwidth == 64
                                for b in (lb, ub, step)) else xl.int32
        lb, ub, step = (self.sem.cast(self.sem.to_tensor(b), iv_dt) for b in (lb, ub, step))
        for b in (lb, ub, step):
            if b.shape:
                raise SemanticError("range bounds must be scalars")
        self.gen_loop(node, node.target.id, lb, ub, step, hints, reverse)

    def _loop_inits(self, names) -> dict:
        """name -> (spec, [[block, weak], ...], repr): the blocks each loop-carried variable is made of."""
        inits = {}
        for n in names:
            v = self.scope[n]
            leaves, spec = flatten(v, numbers=True)
            if spec[0] == "py" and v is not None:  # None stays None through the loop, as in Triton
                raise SemanticError(f"loop-carried variable '{n}' must be a block or a number, got {v!r}")
            blocks = [[x, False] if isinstance(x, tensor) else [self.sem.to_tensor(x), True] for x in leaves]
            inits[n] = (spec, blocks, repr(v))
        return inits

    @staticmethod
    def _carried_blocks(carried, inits) -> list:
        return [b for n in carried for b, _ in inits[n][1]]

    def _bind_carried(self, carried, inits, handles, like) -> None:
        """Bind each loop-carried name to its value rebuilt from `handles`, typed as the blocks `like`."""
        values = iter([tensor(h, t.dtype, t.shape) for h, t in zip(handles, like)])
        for n in carried:
            self.scope[n] = rebuild(inits[n][0], values)

    def gen_loop(self, node, iv_name, lb, ub, step, hints=None, reverse=False):
        carried = sorted(n for n in _assigned_names(node.body) if n in self.scope and n != iv_name)
        inits = self._loop_inits(carried)
        saved = dict(self.scope)
        for attempt in range(2):
            blocks = self._carried_blocks(carried, inits)
            loop = scf.ForOp(lb.handle, ub.handle, step.handle, [b.handle for b in blocks],
                             loc=ir.Location.name(iv_name, childLoc=self.file_loc(node)))
            self.scope = dict(saved)
            with ir.InsertionPoint(loop.body):
                iv = tensor(loop.induction_variable, lb.dtype, ())
                if reverse:  # a negative constexpr step: counts down from the original lower bound
                    with ir.Location.name(iv_name, childLoc=self.file_loc(node)):
                        iv = self.sem.binary("add", self.sem.binary("sub", ub, iv), lb)
                self.scope[iv_name] = iv
                self._bind_carried(carried, inits, loop.inner_iter_args, blocks)
                self.loops += 1
                try:
                    self.visit_stmts(node.body)
                finally:
                    self.loops -= 1
                outs, retry = self._loop_yields(carried, inits, attempt)
                if not retry:
                    scf.YieldOp([o.handle for o in outs])
            self.scope = saved
            if not retry:
                break
            # a number that became a block (or changed dtype) in the body: start from that type
            loop.operation.erase()
            slots = [b for n in carried for b in inits[n][1]]
            for k in retry:
                slots[k][0] = self.sem.broadcast_to(self.sem.cast(slots[k][0], outs[k].dtype), outs[k].shape)
                slots[k][1] = False
        for name, v in (hints or {}).items():  # xl.range(..., num_stages=2): `xb.num_stages = 2 : i32`
            if isinstance(v, bool) and v:
                loop.operation.attributes["xb." + name] = ir.UnitAttr.get()
            elif isinstance(v, int) and not isinstance(v, bool):
                loop.operation.attributes["xb." + name] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), v)
        self._bind_carried(carried, inits, loop.results, outs)

    def _loop_yields(self, carried, inits, attempt, where="at the end of the body"):
        """The blocks each loop-carried variable yields, and the weak numbers to widen (flat indices)."""
        outs, retry = [], set()
        for n in carried:
            spec, blocks, before = inits[n]
            v = self.scope[n]
            leaves, new_spec = flatten(v, numbers=True)
            if not same_structure(spec, new_spec):
                raise SemanticError(f"loop-carried variable '{n}' is {before} before the loop but {v!r} {where}; "
                                    "its structure and static parts (block shapes, constexprs) must stay the same")
            for (init, weak), x in zip(blocks, leaves):
                x = self.sem.to_tensor(x, init.dtype if not isinstance(x, tensor) else None)
                if x.dtype != init.dtype or x.shape != init.shape:
                    if not (weak and attempt == 0):
                        what = f"'{n}'" if len(blocks) == 1 else f"a block of '{n}'"
                        hint = "make its type the same (e.g. start from xl.zeros(...))"
                        if x.dtype.is_fp64() and not init.dtype.is_fp64():  # SGLang's sm_scale = 1 / np.sqrt(d)
                            hint = ("a float64 reached it (an fp64 scalar argument, or a float64 block): cast with "
                                    ".to(tl.float32), or start the block as float64")
                        raise SemanticError(
                            f"loop-carried variable {what} has type {init.type} before the loop but {x.type} "
                            f"{where}; {hint}")
                    retry.add(len(outs))
                outs.append(x)
        return outs, retry

    def visit_While(self, node):
        if node.orelse:
            raise SemanticError("`while ... else` is not supported")
        carried = sorted(n for n in _assigned_names(node.body) if n in self.scope)
        inits = self._loop_inits(carried)
        blocks = self._carried_blocks(carried, inits)
        types_ = [b.handle.type for b in blocks]
        loop = scf.WhileOp(types_, [b.handle for b in blocks])
        before = loop.before.blocks.append(*types_)
        after = loop.after.blocks.append(*types_)
        saved = dict(self.scope)
        with ir.InsertionPoint(before):
            self._bind_carried(carried, inits, before.arguments, blocks)
            cond = self.visit(node.test)
            if _is_py_value(cond):
                raise SemanticError("a `while` condition must depend on values computed in the kernel")
            cond = self.sem.to_bool(cond)
            if cond.shape:
                raise SemanticError("a `while` condition must be a scalar")
            scf.ConditionOp(cond.handle, list(before.arguments))
        self.scope = dict(saved)
        with ir.InsertionPoint(after):
            self._bind_carried(carried, inits, after.arguments, blocks)
            self.loops += 1
            try:
                self.visit_stmts(node.body)
            finally:
                self.loops -= 1
            outs, _ = self._loop_yields(carried, inits, 1, "in the `while` body")
            scf.YieldOp([o.handle for o in outs])
        self.scope = saved
        self._bind_carried(carried, inits, loop.results, blocks)
