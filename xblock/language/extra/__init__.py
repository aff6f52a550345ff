"""`xl.extra`: vendor-neutral stand-ins for `triton.language.extra.*` (libdevice)."""

from . import libdevice  # noqa: F401

cuda = libdevice  # `tl.extra.cuda.libdevice.tanh` and `xl.extra.cuda.libdevice.tanh` both resolve
