"""The core sections of a mixed kernel whose dots hand results to the vector cores (cube_handoff.py).

On the 910B the AIC (Cube) and the AIV (vector) of an AI Core run the same kernel, each taking
only its own `if ASCEND_IS_AIC { ... }` / `if ASCEND_IS_AIV { ... }` sections; everything outside
the sections (scalar code, control flow, address arithmetic) both run. After the walk has lowered
the kernel in program order, this pass puts every op where it belongs: Cube ops and the Cube's
queues in AIC sections, everything that touches the unified buffer in AIV sections, scalars on
both. Consecutive ops of one core share a section; a pure scalar op met inside a section moves
before it (both cores compute it). A loop or `if` holding both kinds runs on both cores with
sections inside; one holding one kind goes whole into a section of that core. Cross-core flag
ops say their core (`xb_core`). A value one core computes cannot reach the other through SSA (only
through GM and a flag): such a use is an error, as is a block held in a queue buffer across a
section boundary (scratch tiles are declared outside the sections, so they carry over). A scalar
that a later section of the same core reads leaves its section as the section's result. A section
drawn before (a mixed dot's, `cube_mixed.py`) counts as work of its core.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ....dialects import ascendc as A
from ..irwalk import ancestor_in

AIC, AIV, BOTH, MIXED, FIXED = "AIC", "AIV", "both", "mixed", "fixed"
CUBE_OPS = ("ascendc.data_copy_nd2nz", "ascendc.data_copy_bt", "ascendc.load_data", "ascendc.load_data_with_transpose",
            "ascendc.mmad", "ascendc.fixpipe")
QUEUE_OPS = ("ascendc.alloc_tensor", "ascendc.enque", "ascendc.deque", "ascendc.free_tensor")
PURE = ("ascendc.tiling_field", "ascendc.block_idx", "ascendc.block_num", "ascendc.gm_at", "ascendc.get_with_offset",
        "ascendc.set_global_buffer", "ascendc.l2_cache_hint", "ascendc.ub_at", "ascendc.reinterpret")
DECLS = ("ascendc.tque", "ascendc.tbuf", "ascendc.kernel_type")
REGIONS = ("scf.for", "scf.if", "scf.while")


class CrossCore(Exception):
    """A value of one core used by the other, or a queue block held across sections (at `op`)."""

    def __init__(self, message: str, op=None):
        super().__init__(message)
        self.op = op


def _op(x):
    return x.operation if hasattr(x, "operation") else x


class Sections:
    """Classify, then wrap. `kinds` maps each op to AIC/AIV/both/mixed/fixed; `home` each value
    defined on one core only to that core."""

    def __init__(self, cube_queues):
        self.cube_queues = set(cube_queues)
        self.kinds: dict = {}
        self.home: dict = {}

    # ----- classification ----------------------------------------------------------------
    def classify_block(self, block: ir.Block) -> set:
        found = set()
        for o in block.operations:
            op = _op(o)
            if op.name in ("scf.yield", "scf.condition", "func.return"):
                continue
            k = self.classify(op)
            # a section already drawn (a mixed dot's) is work of its core: a loop holding it and vector work
            # of the other core's runs on both
            found.add(_core_of(op) or k if k == FIXED else k)
        return found

    def _check_yields(self, op) -> None:
        """A loop or `if` both cores run may carry only values both compute."""
        for region in op.regions:
            for b in region.blocks:
                y = _op(b.operations[len(b.operations) - 1])
                if any(v in self.home for v in y.operands):
                    raise CrossCore("a loop or `if` that runs on both cores carries a value only one core "
                                    "computes (a scalar taken from a vector result, next to a dot)", op)

    def classify(self, op) -> str:
        k = self._own_kind(op)
        used = {self.home[v] for v in op.operands if v in self.home}
        if op.name in REGIONS and k != FIXED:
            inner = set()
            for region in op.regions:
                for b in region.blocks:
                    inner |= self.classify_block(b)
            inner.discard(BOTH)
            inner.discard(FIXED)
            if AIC in inner and AIV in inner or MIXED in inner:
                k = MIXED
            elif inner:
                k = inner.pop()
            else:
                k = BOTH
            if k == MIXED and used:
                raise CrossCore("control flow around a dot depends on a value only the vector core computes "
                                "(a scalar taken from a block); the Cube runs the same control flow", op)
            if k in (MIXED, BOTH):
                self._check_yields(op)
        if k == FIXED and _core_of(op) == AIV:
            cube = next((o for o in _walk_ops(op) if o.name in CUBE_OPS), None)
            if cube is not None:  # the model stops a kernel at a Cube API a vector core calls
                raise CrossCore("the Cube's work of a dot landed in a vector-core section", cube)
        if k == BOTH and used:
            if len(used) > 1:
                raise CrossCore("an op combines values of the Cube and of the vector core", op)
            k = used.pop()
        elif k in (AIC, AIV) and used - {k}:
            raise CrossCore(f"the {'Cube' if k == AIC else 'vector core'} uses a value only the other core "
                            "computes", op)
        self.kinds[op] = k
        if k in (AIC, AIV):
            for r in op.results:
                self.home[r] = k
            self._home_inside(op, k)
        return k

    def _home_inside(self, op, k) -> None:
        for region in op.regions:
            for b in region.blocks:
                for a in b.arguments:
                    self.home[a] = k

    def _own_kind(self, op) -> str:
        n = op.name
        if "xb_core" in op.attributes:
            return ir.StringAttr(op.attributes["xb_core"]).value
        if n in CUBE_OPS:
            return AIC
        if n in QUEUE_OPS:
            return AIC if ir.StringAttr(op.attributes["queue"]).value in self.cube_queues else AIV
        if n == "scf.if" and _core_of(op) is not None:
            return FIXED
        if n in REGIONS:
            return BOTH
        if n.startswith(("arith.", "math.")) or n in PURE or n in DECLS or n == "ascendc.core_is":
            return BOTH
        if n == "ascendc.get_value" and A.is_global(op.operands[0].type):
            return BOTH  # a scalar read of GM: either core can
        return AIV  # everything else touches the unified buffer

    # ----- wrapping ----------------------------------------------------------------------
    def wrap_block(self, block: ir.Block) -> None:
        runs, run = [], None
        ops = [_op(o) for o in block.operations]
        for op in ops:
            if op.name in ("scf.yield", "scf.condition", "func.return"):
                continue
            k = self.kinds.get(op, BOTH)
            if k == MIXED:
                for region in op.regions:
                    for b in region.blocks:
                        self.wrap_block(b)
            if k in (AIC, AIV):
                if run is not None and run[0] == k:
                    run[1].append(op)
                    continue
                run = (k, [op])
                runs.append(run)
            elif k == BOTH and run is not None and not _reads(op, run[1]) and \
                    (_pure(op) or _gm_read_before(op, run[1])):
                op.move_before(run[1][0])  # both cores compute it, ahead of the section
            elif k == BOTH and run is not None and (_pure(op) or _gm_read(op)) and self._only_for(op, run[0], block):
                run[1].append(op)  # only this core's work reads it (a GM scalar read after a store): it stays in
            else:
                run = None
        for k, members in runs:
            _wrap(k, members, self._check_escapes(block, members, k))

    def _check_escapes(self, block, members, core) -> list:
        """The scalars of section `members` (of `core`) used after it, each only in later sections of the same
        core (a `tl.sum` of a vector block before a dot's hand-off, used after it): the section yields them.
        A queue block, or a value the other core would read, is an error."""
        inside, out = set(members), []
        for op in members:
            for r in _all_results(op):
                for u in r.uses:
                    top = _top_in(block, _op(u.owner))
                    if top is None or top in inside:
                        continue
                    if A.is_local(r.type) or not _scalar(r.type) or self._user_core(_op(u.owner), top, block) != core:
                        what = "block held in a queue buffer" if A.is_local(r.type) else "value"
                        raise CrossCore(f"a {what} of one core section is used in another (across a dot's "
                                        "hand-off between the Cube and the vector core)", top)
                    if r not in out:
                        out.append(r)
        return out

    def _only_for(self, op, core, block) -> bool:
        """Whether every use of `op`'s results (through scalar arithmetic both cores would compute) is
        work of `core`."""
        stack, seen = list(op.results), set()
        while stack:
            for u in stack.pop().uses:
                owner = _op(u.owner)
                top = _top_in(block, owner)
                k = self.kinds.get(top) if top is not None else None
                if k == core or k == FIXED and _core_of(top) == core or k == MIXED and self.kinds.get(owner) == core:
                    continue
                if k != BOTH or top != owner or not _pure(owner):
                    return False
                if owner not in seen:
                    seen.add(owner)
                    stack.extend(owner.results)
        return bool(op.results)

    def _user_core(self, user, top, block):
        """The core that runs `user` (inside `top`, an op of `block`): its section's, or the section its top
        op will be wrapped in; None for code both cores run."""
        k = self.kinds.get(top)
        if k in (AIC, AIV):
            return k
        return _section_core(user, block)


def _all_results(op):
    yield from op.results
    for region in op.regions:
        for b in region.blocks:
            for o in b.operations:
                yield from _all_results(_op(o))


def _walk_ops(op):
    for region in op.regions:
        for b in region.blocks:
            for o in b.operations:
                yield _op(o)
                yield from _walk_ops(_op(o))


def _top_in(block, op):
    """The ancestor of `op` that is an op of `block` (None when op is not inside block)."""
    return None if op is None else ancestor_in(block, op)


def _pure(op) -> bool:
    return (op.name.startswith(("arith.", "math.")) or op.name in PURE) and not op.regions


def _gm_read(op) -> bool:
    return op.name == "ascendc.get_value" and A.is_global(op.operands[0].type)


def _reads(op, members) -> bool:
    """Whether `op` reads a result of one of `members`."""
    inside = set(members)
    return any(not isinstance(v.owner, ir.Block) and _op(v.owner) in inside for v in op.operands)


def _gm_read_before(op, members) -> bool:
    """Whether `op` is a scalar read of GM (`e = tl.load(expert_ids + pid_m)`, which both cores need) that
    may move ahead of the section `members`: nothing in it writes GM, touches the DataCache or syncs the
    scalar pipe. A section would otherwise end there, and a queue block of the vector core would have to
    live across two sections."""
    if op.name != "ascendc.get_value" or not A.is_global(op.operands[0].type):
        return False
    stack = list(members)
    while stack:
        o = stack.pop()
        n = o.name
        if n in ("ascendc.dcci", "ascendc.set_value", "ascendc.fixpipe") or n.startswith("ascendc.set_atomic") or \
                n.startswith("ascendc.cross_core") or \
                n in ("ascendc.data_copy", "ascendc.data_copy_pad") and A.is_global(o.operands[0].type):
            return False
        if n in ("ascendc.set_flag", "ascendc.wait_flag", "ascendc.fetch_event_id") and \
                "S" in ir.StringAttr(o.attributes["event"]).value.split("_"):
            return False
        for region in o.regions:
            for b in region.blocks:
                stack.extend(_op(x) for x in b.operations)
    return True


def _core_of(op):
    c = op.operands[0].owner
    if isinstance(c, ir.Block) or _op(c).name != "ascendc.core_is":
        return None
    return ir.StringAttr(_op(c).attributes["core"]).value


def _scalar(t) -> bool:
    return isinstance(t, (ir.IntegerType, ir.IndexType, ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type))


def _section_core(op, block):
    """The core of the innermost section holding `op` below `block` (None: code both cores run)."""
    while op is not None and op.operation != block.owner:
        parent = op.parent
        if parent is None:
            return None
        parent = _op(parent)
        if parent.name == "scf.if" and _core_of(parent) is not None:
            return _core_of(parent)
        op = parent
    return None


def _wrap(core: str, members: list, escaping=()) -> None:
    """`if ASCEND_IS_<core> { members }`; scalars used by later sections of the core (`escaping`) leave it as
    the `if`'s results (the other core's branch gives a zero it never reads)."""
    types = [v.type for v in escaping]
    with ir.InsertionPoint(members[0]), members[0].location:
        cond = A.op("core_is", [], ir.IntegerType.get_signless(1), core=core)
        sec = scf.IfOp(cond, types, has_else=bool(types))
        with ir.InsertionPoint(sec.then_block):
            y = scf.YieldOp(list(escaping))
        if types:
            with ir.InsertionPoint(sec.else_block):
                zeros = [arith.ConstantOp(t, 0.0 if not isinstance(t, (ir.IntegerType, ir.IndexType)) else 0).result
                         for t in types]
                scf.YieldOp(zeros)
    inside = set(members) | {sec.operation}  # (the section's yield reads them too)
    for v, res in zip(escaping, sec.results):
        for u in list(v.uses):
            owner = _op(u.owner)
            if ancestor_in(members[0].block, owner) not in inside:
                owner.operands[u.operand_number] = res
    for op in members:
        op.move_before(y)


def section_kernel(ctx, cube_queues) -> None:
    """Put the ops of the lowered kernel (`ctx.module`) into AIC and AIV sections."""
    fn = ctx.module.body.operations[0]
    entry = fn.regions[0].blocks[0]
    s = Sections(cube_queues)
    try:
        s.classify_block(entry)
        s.wrap_block(entry)
    except CrossCore as e:
        raise ctx.error(f"{e}; not supported yet", e.op.location if e.op is not None else None) from None
