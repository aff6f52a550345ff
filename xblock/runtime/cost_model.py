"""The autotuner's own cost model: rank configs before compiling them, keep the best `top_k`.

`xblock.autotune(configs, key, prune_configs_by={"perf_model": "xblock", "top_k": k})` names it
where Triton takes a function. Each config is priced by its target:
- a target with a `profile` (ascend's per-pipe model) runs it: the kernel is compiled and run on
  the AscendC CPU model, which is what benchmarking it there costs anyway;
- a target with a `roofline` (cpu, cuda) builds the xb IR of the config's specialization (the
  frontend and the xb passes, a few ms; no backend compile), counts its bytes, lane ops and dot
  flops per program (`passes/work_counts.py`), evaluates the grid, and prices the launch with
  the target's constants (`backends/common/roofline.py`).
A target that runs kernels only on a model of its device (`timed_by_model`: ascend) is also
"benchmarked" with its estimate (`model_seconds`): the autotuner runs each config once on the model
and ranks the estimates, never the host's wall time.
What the model cannot price (a while loop, a loop bound read from memory, a target without a
model, no MLIR here) keeps every config, with a note; it is never an error.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from ..backends import all_option_names, get_backend
from ..errors import CompilationError, XBlockError
from .compiler import _frontend_and_passes, _normalize_grid

MODEL = "xblock"  # the perf_model value that names this model


class Unrankable(Exception):
    """The model cannot price the configs; `where` is (file, line) when an op of the kernel is why."""

    def __init__(self, reason: str, where=("", 0)):
        super().__init__(reason)
        self.reason, self.where = reason, where


@dataclass
class Ranking:
    """What the model did: `estimates` (config -> seconds; inf where the config does not build),
    `kept` in the model's order, `pruned`, and `note` (why every config was kept, when it could
    not rank them)."""

    model: str
    estimates: dict = field(default_factory=dict)
    kept: list = field(default_factory=list)
    pruned: list = field(default_factory=list)
    note: str = ""
    where: tuple = ("", 0)
    compiled: bool = False  # whether pricing compiled the configs (a target's own model runs them)
    seconds: float = 0.0  # the time the model took

    def report(self) -> str:
        if self.note:
            return f"cost model: {self.note}; autotuning all {len(self.kept)} configs"

        def show(cs):
            return "; ".join(f"{c} ({ms_text(self.estimates.get(c))})" for c in cs)

        return (f"cost model ({self.model}, {self.seconds:.2f} s) kept {len(self.kept)} of "
                f"{len(self.kept) + len(self.pruned)} configs: "
                f"{show(self.kept)}\n  pruned{'' if self.compiled else ' without compiling'}: {show(self.pruned)}")


def ms_text(t) -> str:
    """A time in seconds as shown in reports: `0.0123 ms`, or why there is none."""
    return "?" if t is None else "does not build" if math.isinf(t) else f"{t * 1e3:.4f} ms"


def top_k_count(top_k, n: int) -> int:
    """How many configs `top_k` keeps of `n` (Triton's rule: an int, or a share when a float <= 1)."""
    if isinstance(top_k, float) and top_k <= 1.0:
        return max(1, int(n * top_k))
    return max(1, int(top_k))


def rank(tuner, configs: list, args, kwargs: dict, grid, target: str, top_k) -> Ranking:
    """Price `configs` of `tuner` (an Autotuner) for this launch and keep the best `top_k`.

    Args:
        tuner: the Autotuner (its kernel, hooks, and how a config becomes launch keywords).
        configs: the configs left by the user's pruning.
        args, kwargs: the launch's positional arguments and keywords (without the configs' values).
        grid: the launch's grid (a tuple or a callable of the meta-parameters).
        target: the target the launch runs on.
        top_k: the count (or share of the tuner's configs) to keep.
    Returns:
        The Ranking; every config is kept when the model cannot price them.
    """
    keep = top_k_count(top_k, len(tuner.configs))
    backend = get_backend(target)
    compiled = backend.profile is not None
    name = f"{target} cost model" if compiled else f"{target} roofline"
    if len(configs) <= keep:
        return Ranking(name, kept=list(configs), compiled=compiled)
    start = time.perf_counter()
    try:
        price = _pricer(tuner, backend, args, kwargs, grid, target)
        estimates = {c: price(c) for c in configs}
    except Unrankable as e:
        return Ranking(name, kept=list(configs), note=e.reason, where=e.where, compiled=compiled)
    except Exception as e:  # noqa: BLE001  the model only prunes: a failure of its own keeps every config
        return Ranking(name, kept=list(configs), compiled=compiled,
                       note=f"internal error of the cost model ({type(e).__name__}: {e})")
    if all(math.isinf(t) for t in estimates.values()):  # none builds: compiling them says why
        return Ranking(name, estimates, kept=list(configs), note="no config builds", compiled=compiled)
    order = sorted(configs, key=lambda c: estimates[c])
    return Ranking(name, estimates, kept=order[:keep], pruned=order[keep:], compiled=compiled,
                   seconds=time.perf_counter() - start)


def _pricer(tuner, backend, args, kwargs, grid, target):
    if backend.profile is not None:
        return lambda c: _profiled(tuner, backend, c, args, kwargs, grid, target)
    if backend.roofline is None:
        raise Unrankable(f"target '{target}' has no cost model")
    try:
        import mlir.ir  # noqa: F401
    except ImportError:
        raise Unrankable("the cost model reads the kernel's IR, which needs the MLIR bindings") from None
    roofline = backend.roofline()
    return lambda c: _roofline_seconds(tuner, roofline, c, args, kwargs, grid, target)


def _roofline_seconds(tuner, roofline, config, args, kwargs, grid, target) -> float:
    """The roofline time of one config: its specialization's xb IR, counted, over its grid."""
    from ..passes import work_counts

    fn = tuner.fn
    kw = tuner._meta(config, kwargs, target)
    names, params = all_option_names(), fn.source.params
    for k in [k for k in kw if k in names and k not in params]:  # launch options: not the kernel's
        kw.pop(k)
    try:
        bound = fn.bind(args, kw)
        _, spec, runtime = fn.specialize(bound)
        grid3 = _normalize_grid(grid, bound)
        module = _frontend_and_passes(fn.source, spec)
    except CompilationError:
        return math.inf
    except XBlockError as e:  # a launch that would fail anyway: compiling it says so
        raise Unrankable(f"the launch cannot be planned ({str(e).splitlines()[0]})") from None
    ints = {i: v for i, v in enumerate(runtime) if type(v) is int}
    try:
        work = work_counts.count(module, ints, grid3)
    except work_counts.Uncountable as e:
        raise Unrankable(f"the work of {fn.__name__} cannot be counted before it runs: {e.reason}", e.where) from None
    return roofline.seconds(work)


def _profiled(tuner, backend, config, args, kwargs, grid, target) -> float:
    """The target's own estimate of one config (it compiles and runs the kernel, with the tuner's hooks)."""
    meta = tuner._meta(config, kwargs, target)
    full = {**dict(zip(tuner.arg_names, args)), **meta}
    if config.pre_hook is not None:
        config.pre_hook(full)
    tuner.pre_hook(full)
    try:
        estimate = model_seconds(backend, tuner.fn, grid, args, meta)
    except CompilationError:
        estimate = math.inf
    except XBlockError as e:
        raise Unrankable(f"the {target} cost model cannot price it ({str(e).splitlines()[0]})") from None
    finally:
        tuner.post_hook(full, exception=None)
    return estimate


def times_by_model(target: str) -> bool:
    """Whether autotuning on `target` ranks configs by its cost model instead of timing them (a target
    that runs kernels only on a model of its device, with a `profile`)."""
    backend = get_backend(target)
    return backend.timed_by_model and backend.profile is not None


def model_seconds(backend, fn, grid, args, meta: dict) -> float:
    """The target's estimate, in seconds, of `fn[grid](*args, **meta)`: one run on its model, which
    writes what the launch writes."""
    return backend.profile(fn, grid, *args, **meta).estimate_us * 1e-6
