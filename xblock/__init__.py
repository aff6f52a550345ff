"""xblock: a block-level kernel compiler for Python (Triton-compatible language, MLIR inside).

`import xblock` stays light: MLIR is imported only when something is compiled.
"""

__version__ = "0.1.0"

from . import language  # noqa: E402,F401
from .errors import CompilationError, ExecutionError, LaunchError, XBlockError  # noqa: E402,F401
from .runtime.jit import JITFunction, jit  # noqa: E402,F401


def cdiv(a: int, b: int) -> int:
    """Ceiling division of two Python integers (host-side helper, as triton.cdiv)."""
    return (a + b - 1) // b


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= n (host-side helper, as triton.next_power_of_2)."""
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def compile(fn, target: str = "sim", signature=None, constexprs=None, **options):
    """Compile a kernel for a target; see `xblock.runtime.compiler.compile`."""
    from .runtime.compiler import compile as _compile

    return _compile(fn, target=target, signature=signature, constexprs=constexprs, **options)


def diff(kernel, grid, *args, **kwargs):
    """Run a kernel on several targets and compare outputs; see `xblock.numdiff.diff`."""
    from .numdiff import diff as _diff

    return _diff(kernel, grid, *args, **kwargs)


def __getattr__(name):  # the autotuner and testing helpers load on first use
    if name in ("autotune", "heuristics", "Config"):
        from .runtime import autotune as _at

        return getattr(_at, name)
    if name == "testing":
        import importlib

        return importlib.import_module(".testing", __name__)
    raise AttributeError(f"module 'xblock' has no attribute {name!r}")
