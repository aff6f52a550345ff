"""The shape every backend shares: options, ordered stages keyed by file extension, a loader."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Callable


@dataclass(frozen=True)
class BaseOptions:
    """Launch options every target accepts (Triton's names); targets ignore what they do not use."""

    num_warps: int = 4
    num_stages: int = 3
    # Triton's FMA contraction of `a * b + c`. sim and cpu never contract it (they round the product, as
    # enable_fp_fusion=False does on cuda) and ascend's vector instructions round each product, so there
    # the option is accepted and has no effect (on ascend, scalar C++ is the device compiler's to contract)
    enable_fp_fusion: bool = True


def _identity(x):
    return x


def _always_available() -> str | None:
    return None


def _never_claims(args) -> bool:
    return False


def _no_capabilities(options) -> frozenset:
    return frozenset()


def _host_device(name: str) -> Callable[[], str]:
    return lambda: f"{name}-{os.cpu_count()}cpu"


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
        claims_arguments: `claims_arguments(args)` is True when the launch arguments belong to this
            target (torch CUDA tensors to cuda): the target used when a launch names none.
        device_name: `device_name()` names the device kernels run on here (autotune results are
            kept per target and device); by default the host and its core count.
        coverage: `coverage()` -> (ops with a lowering rule, {op: reason} the target refuses).
        profile: `profile(kernel, grid, *args, **meta)` -> a cost-model estimate, where the target has one.
        timed_by_model: True where kernels run here only on a model of the device, whose wall time says
            nothing of the device's: the autotuner ranks configs by `profile`'s estimate instead of timing them.
        roofline: `roofline()` -> the target's `common.roofline.Roofline` constants, with which the
            autotuner's cost model prices a kernel's counted work (where the target has no `profile`).
        capabilities: `capabilities(options)` -> names of the optional xb op families the target
            takes natively (`xb.NATIVE_OPS`: "tensor_descriptors"); the frontend lowers the others
            away before the target sees them.
        dot_precision: `dot_precision(input_precision)` -> the precision this target computes an f32
            `tl.dot` in, where it differs by design from the one asked (None: as asked); `xblock.diff`
            says so at the dot's line when the outputs differ.
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
    claims_arguments: Callable = _never_claims
    device_name: Callable | None = None
    coverage: Callable | None = None
    profile: Callable | None = None
    timed_by_model: bool = False
    roofline: Callable | None = None
    capabilities: Callable = _no_capabilities
    dot_precision: Callable | None = None

    def __post_init__(self):
        if self.device_name is None:
            self.device_name = _host_device(self.name)

    @property
    def option_names(self) -> frozenset:
        """The launch options this target reads (the fields of its options class)."""
        return frozenset(f.name for f in fields(self.options_cls))
