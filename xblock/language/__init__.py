"""`import xblock.language as xl`: the block language, the same surface as `triton.language`."""

# isort: skip_file
from . import extra, math  # noqa: F401
from .core import *  # noqa: F401,F403
from .core import (  # noqa: F401
    PropagateNan,
    block_type,
    builtin,
    constexpr,
    dtype,
    is_builtin,
    pointer_type,
    range,
    static_range,
    tensor,
)
from .descriptors import *  # noqa: F401,F403

# written in the language itself: imported once every name above exists
from . import random, standard  # noqa: E402,F401
from .random import *  # noqa: E402,F401,F403
from .standard import *  # noqa: E402,F401,F403
