"""Semantics of reductions, scans, `dot`, atomics and debug ops (a mixin of `Semantic`)."""

from __future__ import annotations

from mlir import ir

from .. import language as xl
from ..dialects import xb
from ..language.core import _unwrap, tensor
from .type_rules import check_atomic_cas_dtype, check_atomic_rmw_dtype, check_not_pointer
from .types import SemanticError, _is_py, ir_type


class BlockOps:
    """Builders for the ops that work on whole blocks; `self` is the `Semantic` instance."""

    # ----------------------------------------------------------------------------- reductions
    def _reduce_axis(self, x: tensor, axis):
        axis = _unwrap(axis)
        if axis is None:
            if len(x.shape) > 1:
                x = self.reshape(x, (x.numel,))
            return x, 0
        if not isinstance(axis, int):
            raise SemanticError(f"reduction axis must be a constexpr integer, got {axis!r}")
        rank = len(x.shape)
        if not -rank <= axis < rank:
            raise SemanticError(f"reduction axis {axis} out of range for a block of shape {list(x.shape)}")
        return x, axis % rank

    def reduce_kind(self, kind, x, axis, keep_dims, dt=None, widen=True) -> tensor:
        """A built-in reduction; `widen=False` keeps 8/16-bit values (max/min with return_indices)."""
        x = self.to_tensor(x)
        if not x.shape:
            if kind in ("max", "min"):  # Triton 3.6 refuses it too: its second argument is the axis
                raise SemanticError(f"tl.{kind} reduces a block along an axis (its second argument), got a scalar; "
                                    f"for the {'larger' if kind == 'max' else 'smaller'} of two values use "
                                    f"tl.{kind}imum(a, b) or {kind}(a, b)")
            raise SemanticError(f"{kind} needs a block, got a scalar")
        check_not_pointer(x, kind)
        x, ax = self._reduce_axis(x, axis)
        dt = _unwrap(dt)
        if kind == "sum":
            if dt is not None:
                x = self.cast(x, dt)
            elif x.dtype.is_int_signed() and x.dtype.primitive_bitwidth < 32:
                x = self.cast(x, xl.int32)
            elif x.dtype.is_int_unsigned() and x.dtype.primitive_bitwidth < 32:
                x = self.cast(x, xl.uint32)
        if kind in ("max", "min", "argmax", "argmin") and x.dtype.is_bf16():
            x = self.cast(x, xl.float32)  # Triton 3.6 promotes bf16 before max/min reductions
        if kind in ("max", "min") and widen and x.dtype.primitive_bitwidth < 32:
            x = self.cast(x, xl.float32 if x.dtype.is_floating() else xl.int32)
        if kind == "xor_sum" and not x.dtype.is_int():
            raise SemanticError(f"xor_sum needs an integer block, got {x.dtype}")
        if x.dtype.is_fp8():  # max/min widened above; the rest would compute in float8
            raise SemanticError(f"{kind} of {x.dtype} values is not supported: convert them first (x.to(tl.float32))")
        out_dt = xl.int32 if kind in ("argmax", "argmin") else x.dtype
        shape = x.shape[:ax] + x.shape[ax + 1:]
        sign = self._unsigned_order(kind, x)
        if sign is not None:  # xb.reduce compares signless integers as signed (Triton: umax/umin)
            x = self.binary("xor", x, sign)
        op = xb.reduce([x.handle], ax, kind, [ir_type(out_dt, shape)])
        res = tensor(op.results[0], out_dt, shape)
        if sign is not None and kind in ("max", "min"):
            res = self.binary("xor", res, sign)
        if _unwrap(keep_dims):
            res = self.expand_dims(res, ax)
        return res

    def _unsigned_order(self, kind, x):
        """The sign bit of an unsigned block that max/min/argmax/argmin order: flipping it orders unsigned
        values as signed ones, so the reduction's signed comparisons give the unsigned extreme."""
        if kind not in ("max", "min", "argmax", "argmin") or not x.dtype.is_int_unsigned():
            return None
        bits = x.dtype.primitive_bitwidth
        return None if bits == 1 else self.constant(1 << (bits - 1), x.dtype)

    def reduce_generic(self, inputs, axis, combine_fn, keep_dims):
        single = not isinstance(inputs, (tuple, list))
        xs = [self.to_tensor(v) for v in ([inputs] if single else inputs)]
        shapes = {x.shape for x in xs}
        if len(shapes) != 1 or not xs[0].shape:
            raise SemanticError("reduce() inputs must be blocks of one shape")
        if _unwrap(axis) is None:
            xs = [self._reduce_axis(x, None)[0] for x in xs]
            ax = 0
        else:
            ax = self._reduce_axis(xs[0], axis)[1]
        shape = xs[0].shape[:ax] + xs[0].shape[ax + 1:]
        op = xb.reduce([x.handle for x in xs], ax, "generic", [ir_type(x.dtype, shape) for x in xs])
        self.codegen.build_combine(op.regions[0], combine_fn, [x.dtype for x in xs])
        res = [tensor(r, x.dtype, shape) for r, x in zip(op.results, xs)]
        if _unwrap(keep_dims):
            res = [self.expand_dims(r, ax) for r in res]
        return res[0] if single else tuple(res)

    def scan_kind(self, kind, x, axis, reverse, dt=None) -> tensor:
        x = self.to_tensor(x)
        if not x.shape:
            raise SemanticError(f"{kind} needs a block, got a scalar")
        check_not_pointer(x, kind)
        x, ax = self._reduce_axis(x, axis)
        dt = _unwrap(dt)
        if dt is not None:
            x = self.cast(x, dt)
        elif x.dtype.is_bf16():
            x = self.cast(x, xl.float32)  # as Triton 3.6's cumsum/cumprod
        elif kind == "cumsum" and x.dtype.is_int() and x.dtype.primitive_bitwidth < 32:
            x = self.cast(x, xl.int32 if x.dtype.is_int_signed() else xl.uint32)  # cumprod keeps int8
        if x.dtype.is_fp8():
            raise SemanticError(f"{kind} of {x.dtype} values is not supported: convert them first (x.to(tl.float32))")
        op = xb.scan([x.handle], ax, kind, bool(_unwrap(reverse)), [x.handle.type])
        return tensor(op.results[0], x.dtype, x.shape)

    def scan_generic(self, inputs, axis, combine_fn, reverse):
        single = not isinstance(inputs, (tuple, list))
        xs = [self.to_tensor(v) for v in ([inputs] if single else inputs)]
        ax = self._reduce_axis(xs[0], axis)[1]
        op = xb.scan([x.handle for x in xs], ax, "generic", bool(_unwrap(reverse)), [x.handle.type for x in xs])
        self.codegen.build_combine(op.regions[0], combine_fn, [x.dtype for x in xs])
        res = [tensor(r, x.dtype, x.shape) for r, x in zip(op.results, xs)]
        return res[0] if single else tuple(res)

    # ----------------------------------------------------------------------------- dot
    # Triton 3.6's choices for NVIDIA GPUs (docs/LANGUAGE.md, "dot precision")
    DOT_PRECISIONS = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")

    def dot(self, a, b, acc, input_precision, allow_tf32, max_num_imprecise_acc, out_dtype) -> tensor:
        a, b = self.to_tensor(a), self.to_tensor(b)
        precision = self._dot_precision(input_precision, allow_tf32)
        batch = self._dot_shapes(a, b)
        shape = a.shape[:-1] + b.shape[-1:]
        acc = _unwrap(acc)
        if acc is not None:
            acc = self.to_tensor(acc)
            if acc.shape != shape:
                raise SemanticError(f"dot accumulator has shape {list(acc.shape)}, expected {list(shape)}")
        if len(batch) > 1:  # as Triton: a rank-3 dot over the flattened batch dimensions
            nb = a.numel // (a.shape[-2] * a.shape[-1])
            a3, b3, acc3 = (None if x is None else self.reshape(x, (nb,) + x.shape[-2:]) for x in (a, b, acc))
            return self.reshape(self.dot(a3, b3, acc3, precision, None, max_num_imprecise_acc, out_dtype), shape)
        a, b = self._dot_operands(a, b)
        res_dt = self._dot_result_dtype(a.dtype, _unwrap(out_dtype), acc)
        acc = self.constant(0, res_dt, shape) if acc is None else acc
        attrs = {"input_precision": precision if a.dtype.is_fp32() else "ieee", "out_dtype": ir_type(res_dt)}
        imprecise = self._dot_imprecise(a, b, _unwrap(max_num_imprecise_acc))
        if imprecise is not None:
            attrs["max_num_imprecise_acc"] = imprecise
        return tensor(xb.dot(a.handle, b.handle, acc.handle, **attrs), res_dt, shape)

    def _dot_precision(self, input_precision, allow_tf32) -> str:
        precision, allow = _unwrap(input_precision), _unwrap(allow_tf32)
        if precision is not None and allow is not None:
            raise SemanticError("dot takes input_precision or the older allow_tf32, not both")
        if precision is None:
            return "tf32" if allow is None or allow else "ieee"
        if not isinstance(precision, str) or precision.lower() not in self.DOT_PRECISIONS:
            raise SemanticError(f"dot input_precision must be one of {', '.join(self.DOT_PRECISIONS)} "
                                f"(Triton 3.6 on NVIDIA GPUs), got {precision!r}")
        return precision.lower()

    def _dot_shapes(self, a, b) -> tuple:
        """The batch dimensions of a dot of `a` and `b`, after checking their shapes."""
        if len(a.shape) < 2 or len(a.shape) != len(b.shape):
            raise SemanticError(f"dot needs two 2-D blocks, or two 3-D blocks (a batch of matrices, [B, M, K] and "
                                f"[B, K, N]), got shapes {list(a.shape)} and {list(b.shape)}")
        if a.shape[:-2] != b.shape[:-2]:
            raise SemanticError(f"dot shapes {list(a.shape)} and {list(b.shape)} do not agree on the batch dimensions")
        if a.shape[-1] != b.shape[-2]:
            raise SemanticError(f"dot shapes {list(a.shape)} and {list(b.shape)} do not agree on K")
        return a.shape[:-2]

    def _dot_operands(self, a, b):
        """The operands as the dot takes them: both float8 (any two formats), or both of one dtype."""
        if a.dtype.is_fp8() and b.dtype.is_fp8():
            if a.dtype.is_fp8e4b15() or b.dtype.is_fp8e4b15():  # no MLIR type for it: Triton goes through fp16
                return self.cast(a, xl.float16), self.cast(b, xl.float16)
            return a, b
        if a.dtype != b.dtype:
            raise SemanticError(f"dot operands must have the same dtype (or both be float8), got {a.dtype} and "
                                f"{b.dtype}")
        if a.dtype.name not in ("int8", "uint8", "fp16", "bf16", "fp32", "fp64"):
            raise SemanticError(f"dot of {a.dtype} blocks is not supported: its operands are int8, float16, "
                                "bfloat16, float32, float64 or float8 blocks")
        if a.dtype.is_int_unsigned():
            raise SemanticError("dot of uint8 blocks is not supported: only int8 (as in Triton)")
        return a, b

    def _dot_result_dtype(self, in_dt, out_dt, acc):
        """Triton's result dtype: int32 for int8, fp32 for fp32/bf16, fp64 for fp64, else out_dtype."""
        if in_dt.is_int():
            res = xl.int32
        elif out_dt.is_bf16():
            raise SemanticError("dot out_dtype=bfloat16 is not supported: use out_dtype=float32 (or float16) "
                                "and cast the result with .to(tl.bfloat16)")
        elif in_dt.is_fp32() or in_dt.is_bf16() or in_dt.is_fp64():
            res = xl.float64 if in_dt.is_fp64() else xl.float32
        elif out_dt.is_fp16() or out_dt.is_fp32():
            res = out_dt
        else:
            raise SemanticError(f"dot of {in_dt} blocks gives float32 or float16 (out_dtype), not {out_dt}")
        if acc is not None and acc.dtype != out_dt:
            raise SemanticError(f"dot accumulator has dtype {acc.dtype} but out_dtype is {out_dt}: they must match "
                                f"(as in Triton): pass out_dtype=tl.{acc.dtype}")
        if acc is not None and acc.dtype != res:
            raise SemanticError(f"dot of {in_dt} blocks gives {res}, so its accumulator must be {res}, not {acc.dtype}")
        return res

    def _dot_imprecise(self, a, b, n):
        """max_num_imprecise_acc as given (None: the cuda target uses Triton's default)."""
        if n is None:
            return None
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise SemanticError(f"dot max_num_imprecise_acc must be a non-negative constexpr integer, got {n!r}")
        if a.dtype.is_fp8() and b.dtype.is_fp8() and n > a.shape[-1]:
            raise SemanticError(f"dot max_num_imprecise_acc ({n}) must be at most K ({a.shape[-1]})")
        return n

    def dot_scaled(self, lhs_format, rhs_format):
        fmts = f"{_unwrap(lhs_format)} x {_unwrap(rhs_format)}"
        raise SemanticError(f"dot_scaled ({fmts} microscaled operands) is not supported on any xblock target: "
                            "convert the operands to bfloat16 or float16, apply the e8m0 scales (x * 2**(scale - "
                            "127)) and use tl.dot")

    # ----------------------------------------------------------------------------- atomics
    def _atomic_operands(self, ptr, val, mask, kind):
        ptr = self._ptr(ptr)
        et = ptr.dtype.element_ty
        if kind == "cas":
            check_atomic_cas_dtype(et)
        else:
            check_atomic_rmw_dtype(kind, et)
        val = _unwrap(val)
        val = self.cast(self.to_tensor(val, et if _is_py(val) else None), et)
        shape = self.broadcast_shapes(ptr.shape, val.shape)
        ptr, val = self.broadcast_to(ptr, shape), self.broadcast_to(val, shape)
        mask = self._mask(mask, shape, f"atomic_{kind}")
        if mask is not None:
            mask = self.broadcast_to(mask, shape)
        return ptr, val, mask

    def atomic_rmw(self, kind, ptr, val, mask, sem, scope) -> tensor:
        ptr, val, mask = self._atomic_operands(ptr, val, mask, kind)
        et = val.dtype
        if kind in ("and", "or", "xor") and not et.is_int():
            raise SemanticError(f"atomic_{kind} needs an integer pointer, got {ptr.dtype}")
        ir_kind = kind
        if kind == "add" and et.is_floating():
            ir_kind = "fadd"
        elif kind in ("max", "min") and et.is_int_unsigned():
            ir_kind = "u" + kind
        h = xb.atomic_rmw(ir_kind, ptr.handle, val.handle, mask.handle if mask is not None else None,
                          sem=str(_unwrap(sem) or "acq_rel"), scope=str(_unwrap(scope) or "gpu"))
        return tensor(h, et, val.shape)

    def atomic_cas(self, ptr, cmp, val, sem, scope) -> tensor:
        ptr, val, _ = self._atomic_operands(ptr, val, None, "cas")
        cmp = self.broadcast_to(self.cast(self.to_tensor(_unwrap(cmp), val.dtype), val.dtype), val.shape)
        h = xb.atomic_cas(ptr.handle, cmp.handle, val.handle, sem=str(_unwrap(sem) or "acq_rel"),
                          scope=str(_unwrap(scope) or "gpu"))
        return tensor(h, val.dtype, val.shape)

    # ----------------------------------------------------------------------------- debug
    def static_assert(self, cond, msg):
        cond = _unwrap(cond)
        if isinstance(cond, tensor):
            raise SemanticError("static_assert needs a constexpr condition")
        if not cond:
            raise SemanticError(f"static_assert failed: {_unwrap(msg)}")

    def static_print(self, values):
        print(*[_unwrap(v) for v in values])

    def device_print(self, prefix, args, hex):
        vals = [self.to_tensor(_unwrap(a)) for a in args]
        xb.print_(str(_unwrap(prefix)), [v.handle for v in vals], bool(_unwrap(hex)))

    def device_assert(self, cond, msg, mask=None):
        cond = _unwrap(cond)
        if _is_py(cond):
            if not cond:
                raise SemanticError(f"device_assert is always false: {_unwrap(msg)}")
            return
        c = self.to_bool(cond)
        if _unwrap(mask) is not None:
            c = self.logical("or", c, self.logical_not(mask))
        xb.assert_(c.handle, str(_unwrap(msg)))

    def assume(self, cond):
        """`tl.assume`: an `xb.assert` marked `xb.assume` (checked by the sim, a hint elsewhere)."""
        cond = _unwrap(cond)
        if _is_py(cond):
            if not cond:
                raise SemanticError("assume() of a condition that is always false")
            return
        c = self.to_bool(cond)
        op = xb.assert_(c.handle, "tl.assume: the assumed condition is false")
        getattr(op, "operation", op).attributes["xb.assume"] = ir.UnitAttr.get()

    def hint(self, x, kind, values):
        x = self.to_tensor(x)
        vals = _unwrap(values)
        vals = [int(_unwrap(v)) for v in (vals if isinstance(vals, (tuple, list)) else [vals])]
        owner = x.handle.owner
        if isinstance(owner, ir.OpView) or hasattr(owner, "attributes"):
            try:
                owner.attributes["xb." + kind] = ir.DenseI32ArrayAttr.get(vals)
            except Exception:  # block arguments have no owner op to annotate
                pass
        return x
