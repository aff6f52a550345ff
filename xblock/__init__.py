"""xblock: a block-level kernel compiler for Python (Triton-compatible language, MLIR inside).

`import xblock` stays light: MLIR is imported only when something is compiled.
"""

from . import language  # noqa: E402,F401
from ._version import __version__  # noqa: F401
from .errors import CompilationError, ExecutionError, LaunchError, XBlockError  # noqa: E402,F401
from .host import cdiv, next_power_of_2  # noqa: E402,F401
from .numdiff import diff  # noqa: E402,F401
from .runtime.args import TensorDescriptor  # noqa: E402,F401
from .runtime.compiler import compile  # noqa: E402,F401
from .runtime.jit import JITFunction, jit  # noqa: E402,F401


def __getattr__(name):  # the autotuner and testing helpers load on first use
    if name in ("autotune", "heuristics", "Config"):
        from .runtime import autotune as _at

        return getattr(_at, name)
    if name == "profile":  # the Ascend cost model (backends/ascend/model/cost.py)
        from .backends.ascend.model.profile import profile

        return profile
    if name == "export":  # a launch as a buildable project with its own data (exporting.py)
        from .exporting import export

        return export
    if name == "testing":
        import importlib

        return importlib.import_module(".testing", __name__)
    raise AttributeError(f"module 'xblock' has no attribute {name!r}")
