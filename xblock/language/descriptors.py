"""Block pointers (`make_block_ptr`, `advance`) and tensor descriptors (`make_tensor_descriptor`).

Both are frontend values: Python objects holding the scalar blocks they are made of (base
pointer, shape, strides, offsets) and their static parts (block shape, order, padding). The
frontend lowers a load or store through one into `xb.load`/`xb.store` of a block of pointers with
a bounds mask, except for descriptors on a target that takes them (TMA: `xb.descriptor_load`, ...).
Loops, `if` and helper calls see them as
`aggregate`s: a list of parts (blocks) and a static key, both of which they carry or compare.
"""

from __future__ import annotations

from .core import _unwrap, block_type, builtin, pointer_type

__all__ = ["advance", "load_tensor_descriptor", "make_block_ptr", "make_tensor_descriptor",
           "store_tensor_descriptor", "tensor_descriptor", "tensor_descriptor_base"]


class aggregate:
    """A value made of blocks (`_part_names`: attributes holding a block or a tuple of blocks) and
    of static attributes (`_static_names`), which must be the same wherever control flow joins."""

    _part_names: tuple = ()
    _static_names: tuple = ()

    def _static(self) -> tuple:
        return tuple(getattr(self, n) for n in self._static_names)

    def _parts(self) -> list:
        return [getattr(self, n) for n in self._part_names]

    @classmethod
    def _rebuild(cls, static: tuple, parts: list):
        obj = cls.__new__(cls)
        for n, v in zip(cls._static_names, static):
            setattr(obj, n, v)
        for n, v in zip(cls._part_names, parts):
            setattr(obj, n, v)
        return obj


def is_aggregate(v) -> bool:
    return isinstance(v, aggregate)


class block_pointer(aggregate):
    """What `make_block_ptr` returns: a `block_shape` window at `offsets` into a tensor of `shape`
    and `strides` at `base` (shape/strides int64 and offsets int32 scalars, as in Triton)."""

    _part_names = ("base", "shape", "strides", "offsets")
    _static_names = ("block_shape", "order")

    def __init__(self, base, shape, strides, offsets, block_shape, order):
        self.base, self.shape, self.strides, self.offsets = base, tuple(shape), tuple(strides), tuple(offsets)
        self.block_shape, self.order = tuple(block_shape), tuple(order)

    @property
    def element_ty(self):
        return self.base.dtype.element_ty

    @property
    def dtype(self):
        """Its type as Triton gives it: a pointer to a block, `pointer_type(block_type(element, block_shape))`
        (`p.dtype.element_ty` is that block type; `x.to(p.dtype.element_ty)` converts to the element type)."""
        return pointer_type(block_type(self.element_ty, self.block_shape))

    type = dtype

    def __repr__(self) -> str:
        return f"block_pointer<{self.element_ty!r}{list(self.block_shape)}>"


class tensor_descriptor(aggregate):
    """A tensor in global memory seen as `block_shape` tiles (Triton's `tl.tensor_descriptor`):
    `base`, `shape` (int32 scalars) and `strides` (int64 scalars). Out-of-bounds elements read as
    zero (NaN with padding "nan") and are not written, as TMA does.

    `host` names the kernel argument of a host `TensorDescriptor` (its base part), None for one made
    in the kernel. On a target that takes descriptors natively, `handle` is the `xb.make_tensor_descriptor`
    value made where the descriptor was (None after control flow rebuilt it from its parts: it is
    made again where it is used)."""

    _part_names = ("base", "shape", "strides")
    _static_names = ("block_shape", "padding", "host")
    handle = None

    def __init__(self, base, shape, strides, block_shape, padding="zero", host=None):
        self.base, self.shape, self.strides = base, tuple(shape), tuple(strides)
        self.block_shape, self.padding, self.host = tuple(block_shape), padding, host

    @property
    def dtype(self):
        return self.base.dtype.element_ty

    @property
    def block_type(self):
        return block_type(self.dtype, self.block_shape)

    def __repr__(self) -> str:
        return f"tensor_descriptor<{self.dtype!r}{list(self.block_shape)}>"


tensor_descriptor_base = tensor_descriptor  # Triton's base class: the same thing here


class host_descriptor_type:
    """The static part of a host `TensorDescriptor` kernel argument (in the specialization key):
    element type signature ("fp16"), block shape and padding. The launcher passes its base, shape
    and strides as the runtime arguments `arg_names(param)`."""

    def __init__(self, elem: str, block_shape, padding: str = "zero"):
        self.elem, self.block_shape, self.padding = elem, tuple(int(b) for b in block_shape), padding

    @staticmethod
    def arg_names(param: str, ndim: int) -> list:
        return ([f"{param}_base"] + [f"{param}_shape{i}" for i in range(ndim)]
                + [f"{param}_stride{i}" for i in range(ndim)])

    def __repr__(self) -> str:
        pad = "" if self.padding == "zero" else f",{self.padding}"
        return f"tensordesc<{self.elem}{list(self.block_shape)}{pad}>"

    def __eq__(self, other) -> bool:
        return isinstance(other, host_descriptor_type) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))


# ---------------------------------------------------------------------------------------------
# Builtins


@builtin
def make_block_ptr(base, shape, strides, offsets, block_shape, order, _semantic=None):
    """A pointer to the `block_shape` block at `offsets` of the tensor (`shape`, `strides`) at `base`.

    `order` (the memory order of the dimensions) is a layout hint and does not change values.
    """
    return _semantic.make_block_ptr(base, shape, strides, offsets, block_shape, order)


@builtin
def advance(base, offsets, _semantic=None):
    """The block pointer `base` moved by `offsets` (one per dimension); `base` is unchanged."""
    return _semantic.advance(base, offsets)


@builtin
def make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero", _semantic=None):
    """A descriptor of the tensor (`shape`, `strides`) at `base`, loaded and stored in `block_shape` tiles.

    The last stride must be 1 and a tile row at least 16 bytes, as Triton requires.
    """
    return _semantic.make_tensor_descriptor(base, shape, strides, block_shape, _unwrap(padding_option))


@builtin
def load_tensor_descriptor(desc, offsets, _semantic=None):
    """`desc.load(offsets)`."""
    return _semantic.descriptor_load(desc, offsets)


@builtin
def store_tensor_descriptor(desc, offsets, value, _semantic=None):
    """`desc.store(offsets, value)`."""
    return _semantic.descriptor_store(desc, offsets, value)


@builtin
def _desc_load(desc, offsets, _semantic=None):
    """The tile at `offsets`; elements out of bounds read as zero (NaN with padding "nan")."""
    return _semantic.descriptor_load(desc, offsets)


@builtin
def _desc_store(desc, offsets, value, _semantic=None):
    """Store the tile at `offsets`; elements out of bounds are not written."""
    return _semantic.descriptor_store(desc, offsets, value)


def _desc_atomic(kind):
    def impl(desc, offsets, value, _semantic=None):
        return _semantic.descriptor_atomic(kind, desc, offsets, value)

    impl.__name__ = impl.__qualname__ = "atomic_" + kind
    impl.__doc__ = f"Atomic {kind} of the tile at `offsets` (out-of-bounds elements untouched); returns None."
    return builtin(impl)


@builtin
def _desc_gather(desc, x_offsets, y_offset, _semantic=None):
    """Rows `x_offsets` of a 2-D descriptor, `block_shape[1]` columns from `y_offset`."""
    return _semantic.descriptor_gather(desc, x_offsets, y_offset)


@builtin
def _desc_scatter(desc, value, x_offsets, y_offset, _semantic=None):
    """Store `value` into rows `x_offsets` of a 2-D descriptor, from column `y_offset`."""
    return _semantic.descriptor_scatter(desc, value, x_offsets, y_offset)


@builtin
def _bp_store(pointer, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy="",
              _semantic=None):
    return _semantic.store(pointer, value, mask, cache_modifier, eviction_policy, boundary_check)


# Methods (`bp.advance(...)`, `desc.load(...)`): builtins the frontend binds to the value they are read from.
block_pointer.advance = advance
block_pointer.store = _bp_store
tensor_descriptor.load, tensor_descriptor.store = _desc_load, _desc_store
tensor_descriptor.gather, tensor_descriptor.scatter = _desc_gather, _desc_scatter
for _kind in ("add", "min", "max", "and", "or", "xor"):
    setattr(tensor_descriptor, "atomic_" + _kind, _desc_atomic(_kind))
