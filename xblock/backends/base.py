"""The shape every backend shares: options, ordered stages keyed by file extension, a loader."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class BaseOptions:
    """Launch options every target accepts (Triton's names); targets ignore what they do not use."""

    num_warps: int = 4
    num_stages: int = 3


def _identity(x):
    return x


def _always_available() -> str | None:
    return None


@dataclass
class Backend:
    """A target: its options class, its stages after `xb`, and how to load a compiled kernel.

    Attributes:
        name: the target name.
        options_cls: frozen dataclass of the target's options.
        stages: `stages(options)` -> ordered dict ext -> fn(previous_output, metadata) -> output;
            the first fn receives the xb `ir.Module` after the passes.
        load: `load(asm, metadata)` -> launcher(grid, args) for a compiled kernel.
        toolchain_key: versions of the external tools the stages depend on (part of cache keys).
        binary_stages: the stage names whose output is bytes.
        availability: None when kernels can run here, else the reason they cannot.
        to_device / to_host: move a numpy array to the target's array type and back (for diff).
        export: `export(compiled_kernel, directory)` writes a buildable project, where supported.
    """

    name: str
    options_cls: type
    stages: Callable
    load: Callable
    toolchain_key: Callable = field(default=lambda: "")
    binary_stages: tuple = ()
    availability: Callable = _always_available
    to_device: Callable = _identity
    to_host: Callable = _identity
    export: Callable | None = None
