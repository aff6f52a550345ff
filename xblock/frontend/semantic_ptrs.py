"""Block pointers and tensor descriptors, lowered to blocks of pointers with bounds masks.

A load through `make_block_ptr(base, shape, strides, offsets, block_shape, order)` becomes an
`xb.load` of `base + sum_d (offsets[d] + arange(0, block_shape[d])) * strides[d]`, masked where a
checked dimension's index leaves `[0, shape[d])`: what Triton's RewriteTensorPointer pass builds
for targets without TMA. Index arithmetic is in int64, as there (offsets are int32, shape and
strides int64). A descriptor access checks every dimension, as TMA does. `0 <= i < n` is
written as one unsigned comparison (`i < n` on unsigned values), which is the same predicate
for `n >= 0` and stays a plain upper limit for targets that read masks as bounds.

For a target that takes tensor descriptors natively (its capabilities include "tensor_descriptors":
cuda from sm_90, through Triton's TMA path), descriptor loads, stores and atomics are instead
`xb.descriptor_load`/`descriptor_store`/`descriptor_reduce` of an `xb.make_tensor_descriptor`
value (gathers and scatters stay pointer accesses).
"""

from __future__ import annotations

import numbers

from mlir import ir

from .. import language as xl
from ..dialects import xb
from ..language.core import _unwrap, pointer_type, tensor
from ..language.descriptors import block_pointer, host_descriptor_type, is_aggregate, tensor_descriptor
from .types import SemanticError, _is_py, ir_type

_I32 = (-(2**31), 2**31)
_I64 = (-(2**63), 2**63)
NATIVE = "tensor_descriptors"  # the capability (xb.NATIVE_OPS) of targets that take descriptors as they are
_DESC_ATOMIC_DTYPES = {
    "add": ("uint32", "int32", "uint64", "fp32", "fp16", "bf16"),
    "min": ("uint32", "int32", "uint64", "int64"),
    "max": ("uint32", "int32", "uint64", "int64"),
    "and": ("uint32", "int32", "uint64", "int64"),
    "or": ("uint32", "int32", "uint64", "int64"),
    "xor": ("uint32", "int32", "uint64", "int64"),
}


def _seq(v) -> list:
    v = _unwrap(v)
    return [_unwrap(x) for x in v] if isinstance(v, (tuple, list)) else [v]


def _block_shape(block_shape, what="block_shape") -> tuple:
    out = []
    for i, b in enumerate(_seq(block_shape)):
        if isinstance(b, bool) or not isinstance(b, numbers.Integral):
            raise SemanticError(f"{what} element {i} must be a constexpr integer, got {b!r}")
        if b <= 0 or b & (b - 1):
            raise SemanticError(f"{what} element {i} must be a power of 2, got {b}")
        out.append(int(b))
    return tuple(out)


class PointerBlockOps:
    """Mixin of Semantic: make_block_ptr, advance, tensor descriptors and their loads and stores."""

    # ----------------------------------------------------------------------------- scalars
    def _index_scalar(self, v, dt, what: str) -> tensor:
        """A shape/stride/offset entry as a scalar of `dt` (int64 or int32), with Triton's checks."""
        v = _unwrap(v)
        if _is_py(v):
            if isinstance(v, float):
                raise SemanticError(f"{what} must be integers, got {v!r}")
            lo, hi = _I64 if dt == xl.int64 else _I32
            if not lo <= int(v) < hi:
                raise SemanticError(f"{what} must fit in {dt}, got {v}")
            return self.constant(int(v), dt)
        if not isinstance(v, tensor):
            raise SemanticError(f"{what} must be integers or integer scalars, got {v!r}")
        if v.numel != 1:
            raise SemanticError(f"{what} must be scalars, got a block of shape {list(v.shape)}")
        if not v.dtype.is_int():
            raise SemanticError(f"{what} must be integers, got {v.dtype}")
        if v.shape:
            v = self.reshape(v, ())
        if dt == xl.int32 and v.dtype.primitive_bitwidth == 64:
            raise SemanticError(f"{what} must be 32-bit (as in Triton): add a `.to(tl.int32)`, or index with "
                                "a block of pointers for 64-bit offsets")
        return self.cast(v, dt)

    def _offsets(self, offsets, rank, what="offsets") -> tuple:
        offs = _seq(offsets)
        if len(offs) != rank:
            raise SemanticError(f"expected {rank} {what} (one per dimension), got {len(offs)}")
        return tuple(self._index_scalar(o, xl.int32, what) for o in offs)

    def _scalar_pointer(self, base, what) -> tensor:
        base = _unwrap(base)
        if not isinstance(base, tensor) or not base.dtype.is_ptr() or base.shape:
            raise SemanticError(f"{what}: `base` must be a scalar pointer (not a block of pointers or a block "
                                f"pointer), got {base!r}")
        return base

    # ----------------------------------------------------------------------------- block pointers
    def make_block_ptr(self, base, shape, strides, offsets, block_shape, order) -> block_pointer:
        base = self._scalar_pointer(base, "make_block_ptr")
        if base.dtype.element_ty.is_bool():  # as Triton: a block of int1 is read and written as int8
            base = self.cast(base, pointer_type(xl.int8))
        bs = _block_shape(block_shape)
        order = _seq(order)
        if sorted(order) != list(range(len(order))):
            raise SemanticError(f"make_block_ptr: order must be a permutation of 0..{len(order) - 1}, got {order}")
        lists = {"shape": _seq(shape), "strides": _seq(strides), "offsets": _seq(offsets), "order": order}
        if not bs or any(len(v) != len(bs) for v in lists.values()):
            sizes = ", ".join(f"{k} {len(v)}" for k, v in lists.items())
            raise SemanticError(f"make_block_ptr: shape, strides, offsets, block_shape and order must have the "
                                f"same length (block_shape {len(bs)}, {sizes})")
        return block_pointer(base, [self._index_scalar(s, xl.int64, "shape") for s in lists["shape"]],
                             [self._index_scalar(s, xl.int64, "strides") for s in lists["strides"]],
                             self._offsets(offsets, len(bs)), bs, tuple(int(o) for o in order))

    def advance(self, bp, offsets) -> block_pointer:
        bp = _unwrap(bp)
        if not isinstance(bp, block_pointer):
            raise SemanticError(f"advance() needs a block pointer (from make_block_ptr), got {bp!r}")
        deltas = self._offsets(offsets, len(bp.block_shape))
        moved = [self.binary("add", o, d) for o, d in zip(bp.offsets, deltas)]
        return block_pointer(bp.base, bp.shape, bp.strides, moved, bp.block_shape, bp.order)

    def _boundary_dims(self, boundary_check, rank) -> tuple:
        dims = _seq(boundary_check) if _unwrap(boundary_check) not in (None, ()) else []
        for d in dims:
            if isinstance(d, bool) or not isinstance(d, numbers.Integral) or not 0 <= d < rank:
                raise SemanticError(f"boundary_check dimension {d!r} is out of range for a block of rank {rank}")
        if len(set(dims)) != len(dims):
            raise SemanticError(f"duplicate dimension in boundary_check {tuple(dims)}")
        return tuple(sorted(int(d) for d in dims))

    @staticmethod
    def _padding(padding_option) -> str:
        p = _unwrap(padding_option)
        if p not in ("", "zero", "nan", None):
            raise SemanticError(f"padding option {p!r} is not supported (use \"zero\" or \"nan\")")
        return p or ""

    def _tile(self, base, shape, strides, offsets, block_shape, checked) -> tuple:
        """(pointer block, mask or None) of the tile at `offsets`; `checked`: dims masked to [0, shape)."""
        rank = len(block_shape)
        total = mask = None
        for d, size in enumerate(block_shape):
            idx = self.binary("add", self.cast(offsets[d], xl.int64), self.cast(self.arange(0, size), xl.int64))
            inb = None
            if d in checked:  # 0 <= idx < shape[d], as one unsigned comparison
                inb = self.compare("lt", self.cast(idx, xl.uint64), self.cast(shape[d], xl.uint64))
            term = self._spread(self.binary("mul", idx, self.cast(strides[d], xl.int64)), d, rank)
            total = term if total is None else self.binary("add", total, term)
            if inb is not None:
                inb = self._spread(inb, d, rank)
                mask = inb if mask is None else self.binary("and", mask, inb)
        ptr = self.addptr(base, self.broadcast_to(total, block_shape))
        return ptr, (None if mask is None else self.broadcast_to(mask, block_shape))

    def _spread(self, x, d, rank) -> tensor:
        """A 1-D block along dimension `d` of a rank-`rank` block (size 1 elsewhere)."""
        for axis in range(rank):
            if axis != d:
                x = self.expand_dims(x, axis)
        return x

    def _fill(self, dt, padding, shape) -> tensor:
        if padding == "nan":
            if not dt.is_floating():
                raise SemanticError(f"padding option \"nan\" is not supported for integer blocks ({dt})")
            return self.full(shape, float("nan"), dt)
        return self.full(shape, 0, dt)

    def load_block_pointer(self, ptr, mask, other, cache, evict, volatile, boundary_check, padding_option):
        """`tl.load` of a block pointer, or the errors Triton gives for options a plain pointer does not take."""
        padding = self._padding(padding_option)
        ptr = _unwrap(ptr)
        if isinstance(ptr, tensor_descriptor):
            raise SemanticError("tl.load does not take a tensor descriptor: use desc.load(offsets)")
        if not isinstance(ptr, block_pointer):
            raise SemanticError("`padding_option` or `boundary_check` can only be given when loading through a "
                                "block pointer (make_block_ptr); with a block of pointers, use `mask` and `other`")
        if _unwrap(mask) is not None or _unwrap(other) is not None:
            raise SemanticError("`mask` and `other` cannot be given when loading through a block pointer; use "
                                "`boundary_check` and `padding_option`")
        dt = ptr.element_ty
        if padding == "nan" and not dt.is_floating():
            raise SemanticError(f"padding option \"nan\" is not supported for integer block pointers ({dt})")
        checked = self._boundary_dims(boundary_check, len(ptr.block_shape))
        p, m = self._tile(ptr.base, ptr.shape, ptr.strides, ptr.offsets, ptr.block_shape, checked)
        fill = self._fill(dt, padding, ptr.block_shape) if m is not None else None
        return self.load(p, m, fill, cache, evict, volatile)

    def store_block_pointer(self, ptr, value, mask, cache, evict, boundary_check) -> None:
        ptr = _unwrap(ptr)
        if isinstance(ptr, tensor_descriptor):
            raise SemanticError("tl.store does not take a tensor descriptor: use desc.store(offsets, value)")
        if not isinstance(ptr, block_pointer):
            raise SemanticError("`boundary_check` can only be given when storing through a block pointer "
                                "(make_block_ptr); with a block of pointers, use `mask`")
        if _unwrap(mask) is not None:
            raise SemanticError("`mask` cannot be given when storing through a block pointer; use `boundary_check`")
        value = self.to_tensor(_unwrap(value))
        if not value.shape:
            value = self.broadcast_to(value, ptr.block_shape)
        if value.shape != ptr.block_shape:
            raise SemanticError(f"the stored block has shape {list(value.shape)} but the block pointer's block "
                                f"shape is {list(ptr.block_shape)}")
        if value.dtype != ptr.element_ty:
            raise SemanticError(f"the stored block has element type {value.dtype} but the block pointer's is "
                                f"{ptr.element_ty} (as in Triton, cast it first)")
        checked = self._boundary_dims(boundary_check, len(ptr.block_shape))
        p, m = self._tile(ptr.base, ptr.shape, ptr.strides, ptr.offsets, ptr.block_shape, checked)
        self.store(p, value, m, cache, evict)

    # ----------------------------------------------------------------------------- descriptors
    def make_tensor_descriptor(self, base, shape, strides, block_shape, padding_option="zero") -> tensor_descriptor:
        base = self._scalar_pointer(base, "make_tensor_descriptor")
        shape, strides = _seq(shape), _seq(strides)
        ndim = len(shape)
        if not 1 <= ndim <= 5:
            raise SemanticError(f"a tensor descriptor has 1 to 5 dimensions, got {ndim}")
        if len(strides) != ndim:
            raise SemanticError(f"expected {ndim} strides, got {len(strides)}")
        bs = _block_shape(block_shape)
        if len(bs) != ndim:
            raise SemanticError(f"expected a block_shape of {ndim} dimensions, got {len(bs)}")
        elem = base.dtype.element_ty
        size = elem.primitive_bitwidth // 8  # (as Triton; `dtype.itemsize` calls the language's max())
        if bs[-1] * size < 16:
            raise SemanticError(f"a descriptor's block must span at least 16 bytes in the last dimension, got "
                                f"{bs[-1]} * {size} = {bs[-1] * size} bytes")
        if isinstance(strides[-1], tensor) or strides[-1] != 1:
            raise SemanticError(f"a tensor descriptor's last stride must be the constant 1, got {strides[-1]!r}")
        padding = self._padding(padding_option) or "zero"
        if padding == "nan" and not elem.is_floating():
            raise SemanticError(f"padding option \"nan\" is not supported for integer blocks ({elem})")
        shape = [self._descriptor_size(s) for s in shape]
        desc = tensor_descriptor(base, shape, [self._index_scalar(s, xl.int64, "strides") for s in strides], bs,
                                 padding)
        return self._with_handle(desc)

    def _descriptor_size(self, s) -> tensor:
        s = _unwrap(s)
        if isinstance(s, tensor):  # as Triton: any integer scalar, converted to int32
            if s.numel != 1 or not s.dtype.is_int():
                raise SemanticError(f"a descriptor's shape must be integer scalars, got {s!r}")
            return self.cast(self.reshape(s, ()) if s.shape else s, xl.int32)
        return self._index_scalar(s, xl.int32, "a descriptor's shape")

    def host_descriptor(self, spec: host_descriptor_type, base, shape, strides, host=None) -> tensor_descriptor:
        """The descriptor a kernel sees for a host `TensorDescriptor` argument (its parts are arguments;
        `host` names the base argument)."""
        return self._with_handle(tensor_descriptor(base, shape, strides[:-1] + [self.constant(1, xl.int64)],
                                                   spec.block_shape, spec.padding, host))

    # ----------------------------------------------------------------------------- native descriptors
    def _native(self, desc) -> bool:
        """Whether the target takes `desc`'s loads and stores as descriptor ops (bool blocks never: TMA
        moves bytes, and Triton keeps bools as i8 in memory)."""
        mb = getattr(self.codegen, "mb", None)
        return mb is not None and NATIVE in mb.capabilities and not desc.dtype.is_bool()

    def _with_handle(self, desc: tensor_descriptor) -> tensor_descriptor:
        """`desc`, with its `xb.make_tensor_descriptor` made here where the target takes descriptors."""
        if self._native(desc):
            desc.handle = self._make_handle(desc)
        return desc

    def _make_handle(self, desc: tensor_descriptor):
        """`xb.make_tensor_descriptor` of `desc`'s parts. Integer blocks carry their signedness in the type as
        Triton's do (signed `si`; unsigned `ui` for host descriptors, signless for in-kernel ones)."""
        et = desc.dtype
        elem = ir_type(et)
        if et.is_int() and et.is_int_signed():
            elem = ir.IntegerType.get_signed(et.primitive_bitwidth)
        elif et.is_int() and desc.host is not None:
            elem = ir.IntegerType.get_unsigned(et.primitive_bitwidth)
        block = ir.RankedTensorType.get(list(desc.block_shape), elem)
        return xb.make_tensor_descriptor(desc.base.handle, [s.handle for s in desc.shape],
                                         [s.handle for s in desc.strides], xb.tensordesc_type(block), desc.padding,
                                         desc.host)

    def _handle(self, desc: tensor_descriptor):
        """The descriptor value to access `desc` through; made again here when control flow rebuilt `desc`."""
        return desc.handle if desc.handle is not None else self._make_handle(desc)

    def _descriptor(self, desc, what) -> tensor_descriptor:
        desc = _unwrap(desc)
        if not isinstance(desc, tensor_descriptor):
            raise SemanticError(f"{what} needs a tensor descriptor (make_tensor_descriptor), got {desc!r}")
        return desc

    def descriptor_load(self, desc, offsets) -> tensor:
        desc = self._descriptor(desc, "load_tensor_descriptor")
        offs = self._offsets(offsets, len(desc.block_shape))
        if self._native(desc):
            h = xb.descriptor_load(self._handle(desc), [o.handle for o in offs], ir_type(desc.dtype, desc.block_shape))
            return tensor(h, desc.dtype, desc.block_shape)
        p, m = self._tile(desc.base, desc.shape, desc.strides, offs, desc.block_shape, range(len(offs)))
        return self.load(p, m, self._fill(desc.dtype, desc.padding, desc.block_shape), "", "", False)

    def _store_like(self, desc, offsets, value, what):
        desc = self._descriptor(desc, what)
        offs = self._offsets(offsets, len(desc.block_shape))
        value = _unwrap(value)
        if not isinstance(value, tensor) or value.shape != desc.block_shape:
            got = list(value.shape) if isinstance(value, tensor) else repr(value)
            raise SemanticError(f"{what}: the value must be a block of the descriptor's block shape "
                                f"{list(desc.block_shape)}, got {got}")
        if self._native(desc):
            return desc, value, offs, None
        p, m = self._tile(desc.base, desc.shape, desc.strides, offs, desc.block_shape, range(len(offs)))
        return desc, value, p, m

    def descriptor_store(self, desc, offsets, value) -> None:
        desc, value, p, m = self._store_like(desc, offsets, value, "descriptor store")
        value = self.cast(value, desc.dtype)
        if self._native(desc):
            xb.descriptor_store(self._handle(desc), value.handle, [o.handle for o in p])
            return
        self.store(p, value, m, "", "")

    def descriptor_atomic(self, kind, desc, offsets, value) -> None:
        desc, value, p, m = self._store_like(desc, offsets, value, f"descriptor atomic_{kind}")
        dt = desc.dtype
        native = self._native(desc)
        if kind in ("min", "max") and dt.name in ("fp16", "bf16") and not native:
            raise SemanticError(f"descriptor atomic_{kind} of {dt} needs native TMA (cuda from sm_90), which this "
                                "target lacks")
        if dt.name not in _DESC_ATOMIC_DTYPES[kind] + (("fp16", "bf16") if native and kind in ("min", "max") else ()):
            raise SemanticError(f"descriptor atomic_{kind} does not support {dt}")
        if value.dtype != dt:
            raise SemanticError(f"descriptor atomic_{kind}: the value has type {value.dtype} but the descriptor "
                                f"holds {dt}")
        if native:
            xb.descriptor_reduce(kind, self._handle(desc), value.handle, [o.handle for o in p])
            return
        self.atomic_rmw(kind, p, value, m, "relaxed", None)

    def _gather_tile(self, desc, x_offsets, y_offset, what):
        """(pointers, mask) of rows `x_offsets` x columns `y_offset + arange(block_shape[1])`."""
        desc = self._descriptor(desc, what)
        if len(desc.block_shape) != 2 or desc.block_shape[0] != 1:
            raise SemanticError(f"{what} needs a 2-D descriptor with block_shape [1, N], got "
                                f"{list(desc.block_shape)}")
        rows = _unwrap(x_offsets)
        if not isinstance(rows, tensor) or len(rows.shape) != 1 or not rows.dtype.is_int():
            raise SemanticError(f"{what}: x_offsets must be a 1-D block of integers, got {rows!r}")
        if rows.shape[0] < 8:
            raise SemanticError(f"{what} needs at least 8 rows, got {rows.shape[0]}")
        cols = desc.block_shape[1]
        min_cols = 32 // desc.dtype.primitive_bitwidth * 8
        if cols < min_cols:
            raise SemanticError(f"{what} of {desc.dtype} needs at least {min_cols} columns, got {cols}")
        y = self._index_scalar(y_offset, xl.int32, "y_offset")
        r = self.cast(rows, xl.int64)
        c = self.binary("add", self.cast(y, xl.int64), self.cast(self.arange(0, cols), xl.int64))
        shape = (rows.shape[0], cols)
        mask = self.binary("and", self._spread(self._inside(r, desc.shape[0]), 0, 2),
                           self._spread(self._inside(c, desc.shape[1]), 1, 2))
        off = self.binary("add", self._spread(self.binary("mul", r, desc.strides[0]), 0, 2),
                          self._spread(self.binary("mul", c, desc.strides[1]), 1, 2))
        return desc, self.addptr(desc.base, self.broadcast_to(off, shape)), self.broadcast_to(mask, shape)

    def _inside(self, idx, size) -> tensor:
        return self.compare("lt", self.cast(idx, xl.uint64), self.cast(self.cast(size, xl.int64), xl.uint64))

    def descriptor_gather(self, desc, x_offsets, y_offset) -> tensor:
        desc, p, m = self._gather_tile(desc, x_offsets, y_offset, "descriptor gather")
        return self.load(p, m, self._fill(desc.dtype, desc.padding, p.shape), "", "", False)

    def descriptor_scatter(self, desc, value, x_offsets, y_offset) -> None:
        desc, p, m = self._gather_tile(desc, x_offsets, y_offset, "descriptor scatter")
        value = _unwrap(value)
        if not isinstance(value, tensor) or value.shape != p.shape:
            got = list(value.shape) if isinstance(value, tensor) else repr(value)
            raise SemanticError(f"descriptor scatter: the value must be a block of shape {list(p.shape)}, got {got}")
        self.store(p, self.cast(value, desc.dtype), m, "", "")


def accesses_block_pointer(ptr, boundary_check, padding_option) -> bool:
    """Whether `tl.load`/`tl.store` goes through `PointerBlockOps` (a block pointer, or options only it takes)."""
    return is_aggregate(_unwrap(ptr)) or bool(_unwrap(boundary_check)) or bool(_unwrap(padding_option))

