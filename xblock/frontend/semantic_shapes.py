"""Semantics of the shape ops that move elements between blocks: join, split, cat, gather,
histogram and `item` (a mixin of `Semantic`). Checks and shapes follow Triton 3.6's semantic layer."""

from __future__ import annotations

from .. import language as xl
from ..dialects import xb
from ..language.core import _unwrap, tensor
from .types import SemanticError, _is_py, ir_type


class ShapeOps:
    """Builders for join/split/cat/gather/histogram; `self` is the `Semantic` instance."""

    def _same_type_pair(self, a, b, what: str) -> tuple[tensor, tensor]:
        a, b = _unwrap(a), _unwrap(b)
        if _is_py(a) and _is_py(b):
            a = self.to_tensor(a)
        a = self.to_tensor(a, b.dtype if isinstance(b, tensor) and _is_py(a) else None)
        b = self.to_tensor(b, a.dtype if _is_py(b) else None)
        if a.dtype != b.dtype:
            raise SemanticError(f"{what} needs two blocks of one dtype, got {a.dtype} and {b.dtype}")
        return a, b

    def join(self, a, b) -> tensor:
        a, b = self._same_type_pair(a, b, "join")
        shape = self.broadcast_shapes(a.shape, b.shape)
        scalar = not shape
        if scalar:  # two scalars: a block of shape [2], joined as blocks of shape [1]
            shape = (1,)
        a, b = self.broadcast_to(a, shape), self.broadcast_to(b, shape)
        out = shape + (2,)
        r = tensor(xb.join(a.handle, b.handle, ir_type(a.dtype, out)), a.dtype, out)
        return self.reshape(r, (2,)) if scalar else r

    def split(self, x) -> tuple[tensor, tensor]:
        x = self.to_tensor(x)
        if not x.shape or x.shape[-1] != 2:
            raise SemanticError(f"split needs a block whose last dimension is 2, got shape {list(x.shape)}")
        if len(x.shape) == 1:  # two scalars, as Triton returns them
            lo, hi = self.split(self.reshape(x, (1, 2)))
            return self.item(lo), self.item(hi)
        shape = x.shape[:-1]
        lo, hi = xb.split(x.handle, ir_type(x.dtype, shape))
        return tensor(lo, x.dtype, shape), tensor(hi, x.dtype, shape)

    def item(self, x) -> tensor:
        """A block of one element as a scalar (Triton's `x.item()` / unsplat)."""
        x = self.to_tensor(x)
        if not x.shape:
            return x
        if x.numel != 1:
            raise SemanticError(f"item() needs a block of one element, got shape {list(x.shape)}")
        if isinstance(x.dtype, xl.pointer_type):
            raise SemanticError("a block of one pointer cannot become a scalar pointer (item(), or split of a "
                                "block of 2 pointers): keep it a block, or split the offsets instead")
        x = self.reshape(x, (1,))
        # a reduction of one element is that element: max keeps -0.0, NaN and every integer
        return self.reduce_kind("max", x, 0, False, widen=False)

    def cat(self, a, b, can_reorder) -> tensor:
        a, b = self._same_type_pair(a, b, "cat")
        if not _unwrap(can_reorder):
            raise SemanticError("cat needs can_reorder=True, as in Triton 3.6 (the order of the result's "
                                "elements is the target's choice); use join/reshape to keep an order")
        if len(a.shape) != 1 or a.shape != b.shape:
            raise SemanticError(f"cat needs two 1-D blocks of one shape, got {list(a.shape)} and {list(b.shape)}")
        shape = (2 * a.shape[0],)
        return tensor(xb.cat(a.handle, b.handle, ir_type(a.dtype, shape)), a.dtype, shape)

    def gather(self, src, index, axis) -> tensor:
        src, index = self.to_tensor(src), self.to_tensor(index)
        axis = _unwrap(axis)
        if not index.dtype.is_int():
            raise SemanticError(f"gather index must be an integer block, got {index.dtype}")
        rank = len(src.shape)
        if rank == 0 or len(index.shape) != rank:
            raise SemanticError(f"gather source and index must be blocks of one rank, got shapes "
                                f"{list(src.shape)} and {list(index.shape)}")
        if not isinstance(axis, int) or not -rank <= axis < rank:
            raise SemanticError(f"gather axis {axis!r} out of range for a block of rank {rank}")
        axis %= rank
        for d in range(rank):
            if d != axis and index.shape[d] != src.shape[d]:
                raise SemanticError(f"gather index shape {list(index.shape)} must equal the source shape "
                                    f"{list(src.shape)} except along axis {axis}")
        if index.dtype.primitive_bitwidth != 32:
            index = self.cast(index, xl.int32)
        return tensor(xb.gather(src.handle, index.handle, axis, ir_type(src.dtype, index.shape)),
                      src.dtype, index.shape)

    # ---------------------------------------------------------------------------------- native sort
    def sorts_natively(self, x, k=None) -> bool:
        """Whether tl.sort/tl.topk of `x` is one `xb.sort` (the target declares the "sort" capability,
        and `x` is in the op's domain: float16/float32 rows of a multiple of 32 elements, at most 4096)."""
        x, k = _unwrap(x), _unwrap(k)
        mb = getattr(self.codegen, "mb", None)
        if mb is None or "sort" not in mb.capabilities or not isinstance(x, tensor) or not x.shape:
            return False
        n = x.shape[-1]
        return x.dtype in (xl.float16, xl.float32) and n % 32 == 0 and n <= 4096 and (k is None or 0 < k <= n)

    def native_sort(self, x, k=None, descending=0) -> tensor:
        """`x` sorted along its last dimension by one `xb.sort`, its first `k` elements per row."""
        x, k, descending = _unwrap(x), _unwrap(k), _unwrap(descending)
        shape = tuple(x.shape[:-1]) + (x.shape[-1] if k is None else k,)
        return tensor(xb.sort(x.handle, bool(descending), shape[-1], ir_type(x.dtype, shape)), x.dtype, shape)

    def histogram(self, x, num_bins, mask=None) -> tensor:
        x = self.to_tensor(x)
        num_bins = _unwrap(num_bins)
        if len(x.shape) != 1 or not x.dtype.is_int() or x.dtype.is_bool():
            raise SemanticError(f"histogram needs a 1-D integer block, got {x.type}")
        if not isinstance(num_bins, int) or num_bins < 1:
            raise SemanticError(f"histogram num_bins must be a positive constexpr integer, got {num_bins!r}")
        mask = _unwrap(mask)
        if mask is not None:
            mask = self.to_tensor(mask)
            if not mask.dtype.is_bool():
                raise SemanticError(f"histogram mask must be a bool block, got {mask.dtype}")
            mask = self.broadcast_to(mask, x.shape)
        if x.dtype.primitive_bitwidth == 64:  # out-of-bin values must not wrap into a bin when narrowed
            inside = self.binary("and", self.compare("ge", x, self.constant(0, x.dtype)),
                                 self.compare("lt", x, self.constant(num_bins, x.dtype)))
            mask = inside if mask is None else self.binary("and", mask, inside)
        if x.dtype.primitive_bitwidth != 32:
            x = self.cast(x, xl.int32 if x.dtype.is_int_signed() else xl.uint32)
        shape = (num_bins,)
        h = xb.histogram(x.handle, num_bins, ir_type(xl.int32, shape), mask.handle if mask is not None else None)
        return tensor(h, xl.int32, shape)

    # ----------------------------------------------------------------------------- not supported
    def map_elementwise(self, fn) -> tensor:
        name = getattr(fn, "__name__", None) or getattr(getattr(fn, "fn", None), "__name__", "the function")
        raise SemanticError(f"map_elementwise ({name} applied lane by lane, with control flow per element) is not "
                            "supported by xblock yet: write the branches as block operations with tl.where")

    def inline_asm_elementwise(self) -> tensor:
        raise SemanticError("inline_asm_elementwise is not supported by xblock: its PTX runs on NVIDIA GPUs only, "
                            "and xblock compiles each kernel for every target; write the operation with tl ops")
