"""User-facing errors: every one names the kernel's file and line."""

from __future__ import annotations

import os


class XBlockError(Exception):
    """Base class of xblock's user-facing errors."""


class XBlockWarning(UserWarning):
    """A warning about the user's kernel, shown at the kernel's line (`warnings.warn_explicit`)."""


class CompilationError(XBlockError):
    """A kernel cannot be compiled; rendered `file.py:LINE:COL: message`, the line and a caret."""

    def __init__(self, file: str, line: int, col: int, message: str, source_line: str | None = None):
        self.file, self.line, self.col, self.message = file, line, col, message
        self.source_line = source_line
        super().__init__(self.render())

    def render(self) -> str:
        head = f"{self.file}:{self.line}:{self.col}: {self.message}"
        if self.source_line is None:
            return head
        src = self.source_line.rstrip("\n")
        return f"{head}\n{src}\n{' ' * max(self.col - 1, 0)}^"


class LaunchError(XBlockError):
    """Bad arguments at launch; names the kernel and its definition line. User arrays are untouched."""

    def __init__(self, file: str, line: int, kernel: str, message: str):
        self.file, self.line, self.kernel, self.message = file, line, kernel, message
        super().__init__(f"{file}:{line}: {kernel}: {message}")


class ExecutionError(XBlockError):
    """A kernel failed while running (out-of-bounds access, race, device assert), at a kernel line."""


# Misuse of xblock's API. Each class also derives from the builtin exception that xblock raised
# before it had its own types, so `except TypeError` (or ValueError, ...) around a call still works.
class ArgumentError(XBlockError, TypeError):
    """An argument an xblock function cannot take: not a kernel, a bad signature, an unsupported dtype,
    an array argument that is not an array."""


class OptionError(ArgumentError):
    """A target option the target does not have, or a value it refuses (`num_warps=3`, `soc="910Z"`)."""


class ConfigError(ArgumentError):
    """An autotune Config, `@autotune`/`@heuristics`/`@jit` argument or `compile(config=...)` that xblock
    cannot honour (a feature it lacks, a name that is not a parameter of the kernel)."""


class MetaParameterConflictError(XBlockError, ValueError):
    """A launch gives a value to a meta-parameter that the autotune config sets (Triton's ValueError)."""


class CompileArgumentError(CompilationError, TypeError):
    """`xblock.compile` called with arguments that do not fit the kernel (signature, constexprs, config,
    options), rendered at the kernel's `def` line."""


class LaunchArgumentError(LaunchError, TypeError):
    """A launch argument or option the kernel's target cannot take (a GPU tensor on a host target,
    `num_warps=3`), at the kernel's `def` line."""


class GridError(XBlockError, ValueError):
    """A launch grid that is not 1 to 3 non-negative integers within CUDA's limits."""


class KernelCallError(XBlockError, RuntimeError):
    """A kernel called like a Python function (launch it with `kernel[grid](...)`), or a language
    builtin (`xl.load`, ...) called outside a kernel."""


class DtypeError(XBlockError, ValueError):
    """A dtype asked for what it does not have (`xl.int32.fp_mantissa_width`)."""


class UnknownDtypeError(DtypeError, AssertionError):
    """A dtype name the language does not have (`xl.dtype("fp33")`); still an AssertionError, as
    Triton's `assert name in ...` there."""


class BundleError(XBlockError, ValueError):
    """A file that is not a cache bundle xblock can import (`xblock cache import`)."""


class UnknownNameError(XBlockError, ValueError):
    """A name that does not exist (a demo example, a case of a kernel file); the message lists those that do."""


class ExportError(XBlockError, NotImplementedError):
    """A compiled kernel whose target cannot write a project (`CompiledKernel.export`)."""



# how to go on, in every host target's message for an address that no buffer of the launch holds
# (runtime/tables.py: the default resolution found no array the caller holds there either)
BUFFERS_HINT = ("if it points into an array the launch does not pass (a pointer table of data_ptr() / "
                "arr.ctypes.data addresses), keep that array in a variable of the launching code (the "
                "launch then finds it), or name it with the launch option buffers=[...], e.g. "
                "kernel[grid](..., buffers=[a0, b0, c0])")


def at_kernel(source, message: str) -> str:
    """`message` about kernel `source` (a frontend KernelSource), rendered as LaunchError renders its
    messages: `file.py:LINE: name: message`, LINE the kernel's `def` line."""
    return f"{source.file}:{source.abs_line(source.tree.lineno)}: {source.name}: {message}"


def debug() -> bool:
    return os.environ.get("XBLOCK_DEBUG", "") not in ("", "0")


def surface(err: XBlockError):
    """Drop compiler-internal frames from a user-facing error unless XBLOCK_DEBUG=1."""
    if debug():
        return err
    return err.with_traceback(None)
