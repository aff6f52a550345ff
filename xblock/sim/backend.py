"""The 'sim' target: no stages after xb; the loader parses xb and runs it with numpy."""

from __future__ import annotations

import gc
import os
import pickle
from dataclasses import dataclass

import numpy as np

from ..backends.base import Backend, BaseOptions
from ..backends.common.extra_buffers import unique_buffers
from ..errors import ArgumentError, LaunchArgumentError, LaunchError, OptionError
from .memory import Memory


@dataclass(frozen=True)
class SimOptions(BaseOptions):
    """The simulator takes Triton's launch options and ignores them. Its own: `races`, what a
    write-write race of different values does: "error" (the default) stops the launch at the store's
    line, "warn" warns once per store line and goes on (the value stored last is kept: in one store, the
    highest program's; a GPU gives no order). Programs storing the same value to one element are never
    a race."""

    num_ctas: int = 1
    debug: bool = False
    races: str = "error"

    def __post_init__(self):
        if self.races not in ("error", "warn"):
            raise OptionError(f"races must be 'error' or 'warn', got {self.races!r}")


def _make_program(module, metadata) -> bytes:
    """The kernel as the simulator's Program, pickled: a warm cache runs it without MLIR."""
    from .convert import convert

    return pickle.dumps(convert(module), protocol=pickle.HIGHEST_PROTOCOL)


def _stages(options) -> dict:
    return {"simprog": _make_program}


_SCALAR = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
           "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "fp16": np.float16, "bf16": np.float32,
           "fp32": np.float32, "fp64": np.float64}


def _as_numpy(v):
    if isinstance(v, np.ndarray):
        return v
    if hasattr(v, "detach") and hasattr(v, "device"):
        if str(v.device) != "cpu":
            raise ArgumentError("the sim target runs on the host: pass CPU arrays or tensors")
        if str(v.dtype).startswith("torch.float8"):  # numpy has no float8: the ml_dtypes type of its bits
            import ml_dtypes

            return v.detach().view(__import__("torch").uint8).numpy().view(
                getattr(ml_dtypes, str(v.dtype)[len("torch."):]))
        return v.detach().numpy() if str(v.dtype) != "torch.bfloat16" else v.detach().view(
            __import__("torch").int16).numpy()
    raise ArgumentError(f"cannot pass {type(v).__name__} to a sim kernel")


def _load(asm: dict, metadata: dict, overrides: dict | None = None):
    """A launcher for the kernel; `overrides` (op name -> rule) replaces rules, for fault tests."""
    from .executor import NeedsSerial
    from .program import bind_rules
    from .rules import LAZY_RULES, SIM_RULES

    gc_was_enabled = gc.isenabled()
    gc.disable()  # unpickling allocates many small objects: collections would only slow it down
    try:
        program = pickle.loads(asm["simprog"])
    finally:
        if gc_was_enabled:
            gc.enable()
    bind_rules(program.body, {**SIM_RULES, **overrides} if overrides else SIM_RULES, LAZY_RULES)
    checking = [False]  # rules bound with the int32 overflow warnings (XBLOCK_SIM_OVERFLOW, read per launch)

    def check_overflow() -> None:
        want = os.environ.get("XBLOCK_SIM_OVERFLOW", "") not in ("", "0")
        if want != checking[0]:
            from .rules import overflow_rules

            extra = overflow_rules() if want else {}
            bind_rules(program.body, {**SIM_RULES, **extra, **(overrides or {})}, LAZY_RULES)
            checking[0] = want
    sigs = metadata["arg_types"]
    names = metadata["arg_names"]
    races = (metadata.get("options") or {}).get("races", "error")

    def launch(grid, args, buffers=()):
        """`buffers`: the `buffers=` launch option (runtime/args.py): arrays pointer tables point into."""
        check_overflow()
        if len(args) != len(sigs):
            raise LaunchError(metadata["file"], metadata["line"], metadata["name"],
                              f"expected {len(sigs)} runtime arguments, got {len(args)}")
        arrays, arr_names, vals = [], [], []
        for name, sig, v in zip(names, sigs, args):
            if sig.startswith("*"):
                vals.append(None)
                try:
                    arrays.append(_as_numpy(v))
                except ArgumentError as e:
                    raise LaunchArgumentError(metadata["file"], metadata["line"], metadata["name"], str(e)) from None
                arr_names.append(name)
            else:
                vals.append(np.array([v], dtype=_SCALAR[sig]))
        n_args = len(arrays)
        try:
            extra = [_as_numpy(b) for b in buffers]
        except ArgumentError as e:
            raise LaunchArgumentError(metadata["file"], metadata["line"], metadata["name"],
                                      f"buffers=: {e}") from None
        for k, b in unique_buffers(extra, arrays, list(arr_names), metadata):
            arrays.append(b)
            arr_names.append(f"buffers[{k}]")
        try:
            memory = _run(program, grid, arrays, arr_names, vals, serial=False, races=races, n_args=n_args)
        except NeedsSerial:  # programs wait for one another: start again from the caller's arrays
            memory = _run(program, grid, arrays, arr_names, vals, serial=True, races=races, n_args=n_args)
        written = sorted(memory.written)
        for i in written:
            if not arrays[i].flags.writeable:
                what = f"argument '{arr_names[i]}'" if i < n_args else arr_names[i]
                raise LaunchError(metadata["file"], metadata["line"], metadata["name"],
                                  f"{what} is read-only but the kernel writes to it")
        for i in written:  # only what the kernel wrote: read-only inputs stay valid
            np.copyto(arrays[i], memory.arrays[i])

    launch.takes_buffers = True
    return launch


def _run(program, grid, arrays, arr_names, vals, serial: bool, races: str = "error", n_args: int | None = None):
    """Run a launch on copies of the arrays (made on a buffer's first write); returns the memory.

    The arrays after the first `n_args` are the `buffers=` option's: no argument names them, pointers
    made from integers reach them. A launch that fails half-way leaves the caller's arrays untouched.
    """
    from .executor import Executor

    memory = Memory([np.ascontiguousarray(a) for a in arrays], arr_names, shared=True, n_args=n_args)
    memory.race_checks = not serial  # serial programs synchronize through atomics the sim cannot follow
    memory.races = races
    it = iter(range(len(arrays)))
    vals = [np.array([memory.base(next(it))], dtype=np.int64) if v is None else v for v in vals]
    Executor(program, memory, grid, serial=serial).run(vals)
    return memory


def _coverage():
    """Every op the simulator has a rule for; it refuses nothing."""
    from .rules import SIM_RULES

    return set(SIM_RULES), {}


# the simulator claims no arguments: it runs only when asked for by name
BACKEND = Backend("sim", SimOptions, _stages, _load, binary_stages=("simprog",), coverage=_coverage)
