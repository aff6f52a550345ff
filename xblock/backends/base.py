"""The shape every backend shares: options, ordered stages keyed by file extension, a loader."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class BaseOptions:
    """Launch options every target accepts (Triton's names); targets ignore what they do not use."""

    num_warps: int = 4
    num_stages: int = 3


@dataclass
class Backend:
    """A target: its options class, its stages after `xb`, and how to load a compiled kernel.

    `stages(options)` returns an ordered dict ext -> fn(previous_stage_output, metadata) -> output.
    `load(asm, metadata)` returns a callable launcher(grid, args) for the compiled kernel.
    `toolchain_key()` names the versions of the external tools the stages depend on.
    """

    name: str
    options_cls: type
    stages: Callable
    load: Callable
    toolchain_key: Callable = field(default=lambda: "")
    binary_stages: tuple = ()
