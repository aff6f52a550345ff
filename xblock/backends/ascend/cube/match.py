"""The xb patterns the Cube path recognizes: the dot of a K loop, a fusable epilogue, the final store.

Pure queries of the xb IR (no lowering): which `scf.for` holds an `xb.dot`, whether the
accumulator goes through ReLU and a cast straight to a store (one Fixpipe), and which store the
dot's result reaches through element-wise ops.
"""

from __future__ import annotations

from mlir import ir


def owner_of(v):
    o = v.owner
    return None if isinstance(o, ir.Block) else (o.operation if hasattr(o, "operation") else o)


def users_of(v) -> list:
    return [u.owner.operation if hasattr(u.owner, "operation") else u.owner for u in v.uses]


def find_dot(loop) -> object | None:
    """The dot that `loop` is the K loop of: a dot in its body whose accumulator the loop carries
    (`acc = dot(a, b, acc)`). A dot whose accumulator starts fresh in the body (a K loop of one
    trip folded away inside a tile loop) is a lone dot, not this loop's."""
    body = loop.regions[0].blocks[0]
    for o in body.operations:
        o = o.operation
        if o.name == "xb.dot" and len(o.operands) > 2 and isinstance(o.operands[2].owner, ir.Block) \
                and o.operands[2].owner == body:
            return o
    return None


def k_loop_dot(loop) -> object | None:
    """The dot when `loop` is a plain Cube K loop: `acc = dot(a, b, acc)` the only dot, its result the
    loop's next accumulator, and nothing else computed on float blocks in the loop (loads of the
    operands, offsets, masks, pointers and scalars only). Any other loop of a dot hands the dot over
    to the vector core (cube_handoff.py)."""
    dot = find_dot(loop)
    if dot is None:
        return None
    body = loop.regions[0].blocks[0]
    y = body.operations[len(body.operations) - 1]
    k = list(body.arguments).index(dot.operands[2]) - 1
    if y.operands[k] != dot.results[0]:
        return None
    operands = {owner_of(v) for v in dot.operands[:2]}
    for o in body.operations:
        o = o.operation
        if o == dot or o in operands or o.name == "scf.yield":
            continue
        if o.name == "xb.dot" or any(_float_block(r.type) for r in o.results):
            return None
    for j, init in enumerate(loop.operands[3:]):  # besides acc: scalars and pointer blocks (cube._seed_pointers)
        if j != k and str(init.type).startswith("tensor<") and "!xb.ptr" not in str(init.type):
            return None
    return dot


def _float_block(t) -> bool:
    s = str(t)
    return s.startswith("tensor<") and any(f in s for f in ("xf16>", "xbf16>", "xf32>", "xf64>", "xf8"))


def splat_float(v) -> float | None:
    o = owner_of(v)
    if o is None:
        return None
    if o.name == "arith.constant":
        a = o.attributes["value"]
        if isinstance(a, ir.DenseElementsAttr) and a.is_splat:
            v = a.get_splat_value()
            return float(ir.IntegerAttr(v).value) if isinstance(v, ir.IntegerAttr) else ir.FloatAttr(v).value
        return None
    if o.name == "xb.splat":
        inner = owner_of(o.operands[0])
        if inner is not None and inner.name == "arith.constant" and isinstance(inner.attributes["value"], ir.FloatAttr):
            return ir.FloatAttr(inner.attributes["value"]).value
    return None


def match_epilogue(acc: ir.Value):
    """(ops absorbed, relu, store op) when acc -> [relu] -> [cast] -> store; else None."""
    absorbed, relu, v = [], False, acc
    users = users_of(v)
    if len(users) == 1 and users[0].name in ("arith.maximumf", "arith.maxnumf"):
        op = users[0]
        other = op.operands[1] if op.operands[0] == v else op.operands[0]
        if splat_float(other) == 0.0:
            absorbed, relu, v = [op], True, op.results[0]
    elif len(users) == 2 and {u.name for u in users} == {"arith.cmpf", "arith.select"}:
        cmp = next(u for u in users if u.name == "arith.cmpf")
        sel = next(u for u in users if u.name == "arith.select")
        pred = int(ir.IntegerAttr(cmp.attributes["predicate"]).value)  # ogt=2 oge=3
        if cmp.operands[0] == v and pred in (2, 3) and splat_float(cmp.operands[1]) == 0.0 and \
                sel.operands[0] == cmp.results[0] and sel.operands[1] == v and splat_float(sel.operands[2]) == 0.0:
            absorbed, relu, v = [cmp, sel], True, sel.results[0]
    users = users_of(v)
    if len(users) == 1 and users[0].name == "arith.truncf":
        absorbed.append(users[0])
        v = users[0].results[0]
        users = users_of(v)
    if len(users) == 1 and users[0].name == "xb.store" and users[0].operands[1] == v:
        return absorbed + [users[0]], relu, users[0]
    return None


def match_bias_epilogue(acc: ir.Value):
    """(bias load, ops absorbed, relu, store op) when acc + bias[None, :] -> [relu] -> [cast] -> store, the
    bias a 1-D load (either operand order of the add) that only this add reads; else None. Whether the
    bias fits the BiasTable (dtype, columns, mask) is the caller's to check (cube._bias_epilogue)."""
    users = users_of(acc)
    if len(users) != 1 or users[0].name != "arith.addf":
        return None
    add = users[0]
    if add.operands[0] == add.operands[1]:
        return None
    row = add.operands[1] if add.operands[0] == acc else add.operands[0]
    bcast = owner_of(row)
    if bcast is None or bcast.name != "xb.broadcast" or len(users_of(bcast.results[0])) != 1:
        return None
    ex = owner_of(bcast.operands[0])
    if ex is None or ex.name != "xb.expand_dims" or int(ir.IntegerAttr(ex.attributes["axis"]).value) != 0 or \
            len(users_of(ex.results[0])) != 1:
        return None
    load = owner_of(ex.operands[0])
    if load is None or load.name != "xb.load" or len(users_of(load.results[0])) != 1:
        return None
    rest = match_epilogue(add.results[0])
    if rest is None:
        return None
    absorbed, relu, store = rest
    return load, [load, ex, bcast, add] + absorbed, relu, store


def final_store(result):
    """The one store that the dot's result reaches through element-wise ops only, else None."""
    seen, todo, store = set(), [result], None
    while todo:
        v = todo.pop()
        for u in users_of(v):
            if u.name == "xb.store" and u.operands[1] == v and store in (None, u):
                store = u
            elif u.name.startswith(("arith.", "math.")) and str(u.results[0].type).startswith("tensor<"):
                if u not in seen:
                    seen.add(u)
                    todo.extend(u.results)
            else:
                return None
    return store
