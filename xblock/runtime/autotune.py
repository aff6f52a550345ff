"""`xblock.autotune` and `xblock.heuristics`, for every target, with results persisted on disk.

They take Triton's arguments and follow Triton 3.6's semantics (`triton/runtime/autotuner.py`),
and `xblock.jit` turns a kernel decorated with `@triton.autotune`/`@triton.heuristics` (stacked
in any order over `@triton.jit`) into these wrappers, with the same configs and hooks.

The best config per (kernel, configs, target, device, key values) is stored as JSON under the
cache directory, so a later process reuses it without benchmarking again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import warnings
import weakref
from dataclasses import dataclass, field

import numpy as np

from .. import progress, testing
from ..backends import all_option_names, default_target, get_backend
from ..errors import (
    ArgumentError,
    CompilationError,
    ConfigError,
    KernelCallError,
    MetaParameterConflictError,
    XBlockError,
    XBlockWarning,
    at_kernel,
    surface,
)
from ..frontend.source import XBLOCK_TUNER, is_triton_tuner
from . import cost_model, pool
from .cache import cache_dir, configured_dir
from .compiler import CONFIG_LAUNCH_OPTIONS, config_values

jit = None  # xblock.jit: runtime/jit.py hands it over when it imports this module (see the end of jit.py)

_WARMUP_RUNS, _REP_RUNS = 1, 3  # benchmark runs per config when neither warmup/rep nor do_bench is given
_QUANTILES = (0.5, 0.2, 0.8)  # what Triton's autotuner asks a do_bench for


class AutotuneError(XBlockError, RuntimeError):
    """No config of an autotuned kernel can run: none compiles, or pruning left none."""


@dataclass
class Config:
    """One candidate: meta-parameters plus launch options (the arguments of `triton.Config`).

    Launch options (`num_warps`, `num_stages`, `num_ctas`, `maxnreg`, and any target option in
    `options`) apply on the targets that have them and are ignored on the others. Unlike
    `triton.Config`, an option left at None takes the target's default.
    """

    kwargs: dict
    num_warps: int | None = None
    num_stages: int | None = None
    num_ctas: int | None = None
    maxnreg: int | None = None
    pre_hook: object = None
    ir_override: object = None  # Triton's; refused (see compiler.config_values)
    options: dict = field(default_factory=dict)

    def all_kwargs(self) -> dict:
        out = dict(self.kwargs)
        for k in CONFIG_LAUNCH_OPTIONS:
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        out.update(self.options)
        return out

    def __hash__(self):
        try:
            return hash((tuple(self.all_kwargs().items()), self.pre_hook))
        except TypeError:  # an unhashable meta-parameter value
            return hash(repr(self))

    def __repr__(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.all_kwargs().items())


def _as_config(c):
    """A config as the tuner keeps it: Config objects (xblock's or Triton's) as given, dicts wrapped."""
    if isinstance(c, dict):
        return Config(dict(c))
    config_values(c, frozenset())  # refuses what xblock does not honour (ir_override, ...)
    return c


def _describe(c) -> str:
    """A stable text of a config (for the name of the file results are stored in)."""
    hook = c.pre_hook
    hook = "" if hook is None else f"{getattr(hook, '__module__', '')}.{getattr(hook, '__qualname__', hook)}"
    return repr(sorted((k, repr(v)) for k, v in c.all_kwargs().items())) + hook


def _best_so_far(timings: dict) -> str:
    """`best BLOCK=64, num_warps=4 (0.123 ms)`: the fastest config timed so far (progress text)."""
    timed = {c: t for c, t in timings.items() if t != float("inf")}
    if not timed:
        return "no config compiled yet"
    best = min(timed, key=timed.get)
    return f"best {best} ({timed[best] * 1e3:.3f} ms)"


def _key_value(v):
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        return (tuple(v.shape), str(v.dtype))
    return v


# ------------------------------------------------------------------ reset_to_zero / restore_value
def _zero(v, name):
    if isinstance(v, np.ndarray):
        v[...] = 0
    elif hasattr(v, "zero_"):  # torch
        v.zero_()
    else:
        raise ArgumentError(f"reset_to_zero: argument '{name}' is not a numpy array or a torch tensor")


def _save(v, name):
    if isinstance(v, np.ndarray):
        return v.copy()
    if hasattr(v, "clone"):  # torch
        return v.clone()
    raise ArgumentError(f"restore_value: argument '{name}' is not a numpy array or a torch tensor")


def _restore(v, saved):
    if isinstance(v, np.ndarray):
        v[...] = saved
    else:
        v.copy_(saved)


def _print_autotuning() -> bool:
    """XBLOCK_PRINT_AUTOTUNING=1, or Triton's knob (TRITON_PRINT_AUTOTUNING=1) where Triton is loaded."""
    if os.environ.get("XBLOCK_PRINT_AUTOTUNING", "") == "1":
        return True
    try:
        return bool(sys.modules["triton"].knobs.autotuning.print)
    except (KeyError, AttributeError):
        return os.environ.get("TRITON_PRINT_AUTOTUNING", "") == "1"


def _no_pre_hook(kwargs, reset_only=False):
    return 0


def _no_post_hook(kwargs, exception):
    return 0


class _Tuner:
    """What Autotuner and Heuristics share: the kernel they wrap, its source, launch syntax."""

    __xblock_tuner__ = True  # how the frontend recognizes the wrappers without importing the runtime
    assert XBLOCK_TUNER == "__xblock_tuner__"

    @property
    def source(self):
        return self.fn.source

    @property
    def arg_names(self) -> list:
        return self.fn.source.params

    @property
    def base_fn(self):
        """The plain Python function at the bottom of the stack of wrappers."""
        return self.fn.source.fn

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            try:
                return self.run(*args, grid=grid, **kwargs)
            except XBlockError as e:  # shown from here, as JITFunction's launches: no frame of xblock's
                raise surface(e) from None

        return launch

    def __call__(self, *args, **kwargs):
        raise KernelCallError(at_kernel(self.source, f"{self.__name__} is a kernel: launch it with "
                                                     f"{self.__name__}[grid](...)"))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.fn!r})"

    def key_value(self, name: str, value):
        """What autotuning keys on for argument `name` (its bucket, see JITFunction.key_value)."""
        return self.fn.key_value(name, value)

    def resolve(self, args, meta: dict):
        """(the kernel under the wrappers, the meta-parameters a launch with `args` and `meta` gives it):
        what `xblock.profile` prices, one launch of one config."""
        raise AutotuneError(at_kernel(self.source, f"{self.__name__} is autotuned: xblock.profile prices one "
                                                   f"config; profile the kernel under @autotune with its "
                                                   f"meta-parameters"))

    def _check_names(self, what, names) -> None:
        params = self.fn.source.params
        bad = [n for n in names if n not in params]
        if bad:
            raise ConfigError(at_kernel(self.source, f"{what} names {', '.join(map(repr, bad))}, which "
                                        f"{'is' if len(bad) == 1 else 'are'} not a parameter of the kernel"))


class Autotuner(_Tuner):
    """Launch wrapper: picks the fastest config for each value of `key`, then launches with it.

    Arguments and semantics are those of `triton.autotune` (see `autotune`); `best_config` is the
    config of the latest launch, `cache` maps each key to its config, `configs_timings` holds the
    timings of the latest tuning.
    """

    def __init__(self, fn, configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None,
                 pre_hook=None, post_hook=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None,
                 cache_results=False):
        if use_cuda_graph:
            raise ConfigError(at_kernel(jit(fn).source, "autotune(use_cuda_graph=True) is not supported by xblock "
                                        "(deprecated in Triton); pass do_bench= to time configs another way"))
        self.fn = jit(fn)
        self.__name__ = self.fn.__name__
        self.configs = [_as_config(c) for c in configs] or [Config({})]
        self.keys = list(key)
        self.reset_to_zero = list(reset_to_zero or ())
        self.restore_value = list(restore_value or ())
        prune = dict(prune_configs_by or {})
        unknown = set(prune) - {"perf_model", "top_k", "early_config_prune"}
        if unknown:
            raise ConfigError(at_kernel(self.source, f"prune_configs_by key(s) not supported by xblock: "
                                        f"{', '.join(sorted(unknown))} (known: early_config_prune, perf_model, top_k)"))
        self.perf_model = prune.get("perf_model")
        if isinstance(self.perf_model, str) and self.perf_model != cost_model.MODEL:
            raise ConfigError(at_kernel(self.source, f"prune_configs_by perf_model={self.perf_model!r}: a function of "
                                        f"the arguments and meta-parameters, or {cost_model.MODEL!r} (xblock's cost "
                                        "model of the target)"))
        self.configs_top_k = prune.get("top_k", 1.0)
        self.early_config_prune = prune.get("early_config_prune")
        # As Triton: a user's pre_hook/post_hook replaces the ones reset_to_zero/restore_value make.
        self.user_defined_pre_hook = pre_hook is not None
        self.user_defined_post_hook = post_hook is not None
        if pre_hook is not None:
            self.pre_hook = pre_hook
        elif self.reset_to_zero or self.restore_value:
            self.pre_hook = self._reset_and_save
        else:
            self.pre_hook = _no_pre_hook
        if post_hook is not None:
            self.post_hook = post_hook
        elif self.restore_value:
            self.post_hook = self._restore
        else:
            self.post_hook = _no_post_hook
        self.restore_copies: dict = {}
        self.num_warmups, self.num_reps = warmup, rep  # milliseconds, as Triton's (deprecated there)
        self.do_bench = do_bench  # do_bench(kernel_call, quantiles) -> time or [times], as Triton's
        self.cache_results = cache_results  # xblock always stores results (per target and device)
        self.cache: dict = {}
        self.best_config = None
        self.configs_timings: dict = {}
        self.bench_time = 0.0
        self.model_ranking = None  # what the cost model did at the latest tuning (perf_model="xblock")
        self._checked = False
        self._split: dict = {}  # (id(config), target) -> (config, meta-parameters, launch options)

    # ---------------------------------------------------------------------------- hooks
    def _reset_and_save(self, kwargs, reset_only=False):
        for name in self.reset_to_zero:
            _zero(kwargs[name], name)
        if not reset_only:
            self.restore_copies = {name: _save(kwargs[name], name) for name in self.restore_value}

    def _restore(self, kwargs, exception):
        for name in self.restore_value:
            _restore(kwargs[name], self.restore_copies[name])
        self.restore_copies = {}

    # ---------------------------------------------------------------------------- launch
    def _check(self) -> None:
        if not self._checked:
            self._check_names("autotune key", self.keys)
            self._check_names("reset_to_zero", self.reset_to_zero)
            self._check_names("restore_value", self.restore_value)
            self._checked = True

    def _meta(self, config, kwargs, target) -> dict:
        """The keyword arguments of a launch with `config` on `target`."""
        split = self._split.get((id(config), target))
        if split is None or split[0] is not config:
            split = self._split[(id(config), target)] = (
                config, *config_values(config, get_backend(target).option_names))
        _, meta, options = split
        conflicts = sorted((kwargs.keys() & meta.keys()) | (kwargs.keys() & options.keys()))
        if conflicts:
            raise MetaParameterConflictError(at_kernel(self.source, f"Conflicting meta-parameters: "
                                                       f"{', '.join(conflicts)}. Make sure that you don't re-define "
                                                       "auto-tuned symbols."))
        return {**kwargs, **meta, **options}

    def _key(self, nargs, kwargs) -> tuple:
        """As Triton: the values of the `key` arguments, then the dtypes of all arguments; then the
        launch options given (ascend's `soc`, say: the best config of one SoC is not another's)."""
        args = {**nargs, **kwargs}
        key = [_key_value(self.fn.key_value(k, args[k])) for k in self.keys if k in args]
        key += [str(v.dtype) for v in args.values() if hasattr(v, "dtype")]
        key += [f"{k}={kwargs[k]!r}" for k in sorted(kwargs) if k in all_option_names() and k not in self.arg_names]
        return tuple(key)

    def run(self, *args, grid, target=None, **kwargs):
        self._check()
        nargs = dict(zip(self.arg_names, args))
        if target is None:
            target = default_target([v for v in (*args, *kwargs.values()) if hasattr(v, "shape")])
        if len(self.configs) > 1:
            key = self._key(nargs, kwargs)
            config = self.cache.get((target, key))
            if config is None:
                config = self.cache[(target, key)] = self._tune(key, args, nargs, kwargs, grid, target)
        else:  # as Triton: one config is not benchmarked
            config = self.configs[0]
        self.best_config = config
        meta = self._meta(config, kwargs, target)
        if config.pre_hook is not None:
            config.pre_hook({**nargs, **meta})
        try:
            return self.fn.run(*args, grid=grid, target=target, **meta)
        except CompilationError as e:
            if len(self.configs) > 1:
                raise
            raise AutotuneError(f"{self.__name__}: no autotune config compiles for target '{target}':\n{e}") from None

    def _compile_all(self, configs, args, kwargs, target):
        """Yield (config, CompilationError or None, workers still compiling) as each config's kernel
        is ready: compiled here or, once that looks worth it, in worker processes (`pool`)."""
        metas = [self._meta(c, kwargs, target) for c in configs]

        def here(i):
            self.fn.warmup(*args, target=target, **metas[i])

        def plan(i):
            return self.fn.plan(args, target, metas[i])

        for i, error, busy in pool.compile_all(len(configs), here, plan, self.fn):
            yield configs[i], error, busy

    def _compile_and_bench(self, configs, args, nargs, kwargs, grid, target, step=progress.NULL) -> dict:
        """Timing of every config (inf when it does not compile); raises AutotuneError when none does.

        Each config is benchmarked as soon as its kernel is ready, while workers compile the others.
        Timings taken while workers still compiled share the cores with them: those close to the
        best are taken again at the end (not a cost model's estimates: the host's load is no part of them).
        """
        timings, first, busy = {}, None, []
        for c, error, compiling in self._compile_all(configs, args, kwargs, target):
            if error is not None:
                timings[c], first = float("inf"), first or error
            else:
                timings[c] = self._bench(args, nargs, kwargs, c, grid, target)
                if compiling:
                    busy.append(c)
            step.advance(_best_so_far(timings))
        if first is not None and all(t == float("inf") for t in timings.values()):
            raise AutotuneError(f"{self.__name__}: no autotune config compiles for target '{target}'; "
                                f"the first error:\n{first}") from None
        best = min(timings.values())
        for c in busy if not self._modelled(target) else ():
            if timings[c] <= 2 * best:
                timings[c] = self._bench(args, nargs, kwargs, c, grid, target)
        return timings

    def prune_configs(self, kwargs, nargs=None) -> list:
        """early_config_prune, then perf_model's top_k, as Triton does."""
        nargs = nargs or {}
        pruned = self.configs
        if self.early_config_prune:
            pruned = self.early_config_prune(self.configs, nargs, **kwargs)
            if not pruned:
                raise AutotuneError("No valid autotuner configs after pruning. "
                                    "`early_config_prune` should return at least one config.")
            pruned = [_as_config(c) for c in pruned]
        if self.perf_model and self.perf_model != cost_model.MODEL:  # xblock's model prunes in _tune
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = int(len(self.configs) * top_k)
            elif not isinstance(top_k, int):
                raise ConfigError(at_kernel(self.source, "Error while pruning configs, top_k must be either "
                                            "1) a float <= 1.0 or 2) an int"))
            if len(pruned) > top_k:
                est = [self.perf_model(**nargs, **kwargs, **c.all_kwargs()) for c in pruned]
                order = sorted(range(len(pruned)), key=lambda i: est[i])
                pruned = [pruned[i] for i in order[:top_k]]
        if not pruned:
            raise AutotuneError(f"{self.__name__}: no autotune config left after pruning (top_k={self.configs_top_k})")
        return pruned

    def _tune(self, key, args, nargs, kwargs, grid, target):
        pruned = self.prune_configs(kwargs, nargs)
        skey = repr(key)
        saved = self._load(target)
        if skey in saved:
            config = self._decode(saved[skey])
            if config is not None:
                return config
        pruned = self._model_prune(pruned, args, kwargs, grid, target)
        start = time.time()
        with progress.step(f"autotuning {self.__name__} on {target}", total=len(pruned)) as step:
            timings = self._compile_and_bench(pruned, args, nargs, kwargs, grid, target, step)
            best = min(pruned, key=lambda c: timings[c])
            how = ", estimated by the cost model" if self._modelled(target) else ""
            step.done(f"autotuned {self.__name__} on {target}: {len(pruned)} configs in {time.time() - start:.1f} s, "
                      f"best {best} ({timings[best] * 1e3:.3f} ms{how})")
        self.bench_time = time.time() - start
        self.configs_timings = timings
        self.pre_hook({**nargs, **self._meta(best, kwargs, target)}, reset_only=True)
        code = self._encode(best)
        if code is not None:
            saved[skey] = code
            self._save(target, saved)
        if _print_autotuning():
            print(f"xblock autotuning for function {self.__name__} on {target},\nwith key as {key},\n"
                  f"finished after {self.bench_time:.2f}s,\nbest config selected: {best};")
            if self._modelled(target):
                print(f"timings are {target} cost-model estimates, not measurements: "
                      + "; ".join(f"{c}: {cost_model.ms_text(t)}" for c, t in timings.items()))
        return best

    def _model_prune(self, configs, args, kwargs, grid, target) -> list:
        """The cost model's best `top_k` of `configs` (perf_model="xblock"), ranked before any compile and
        reported; all of them, with a warning, where the model cannot rank them."""
        if self.perf_model != cost_model.MODEL:
            return configs
        top_k = self.configs_top_k
        if isinstance(top_k, bool) or not (isinstance(top_k, int) or (isinstance(top_k, float) and top_k <= 1.0)):
            raise ConfigError(at_kernel(self.source, "Error while pruning configs, top_k must be either "
                                        "1) a float <= 1.0 or 2) an int"))
        with progress.step(f"ranking {len(configs)} configs of {self.__name__} on {target} with the cost model"):
            ranking = self.model_ranking = cost_model.rank(self, configs, args, kwargs, grid, target, top_k)
        if ranking.note:
            file, line = ranking.where
            if not line:
                ks = self.source
                file, line = ks.file, ks.abs_line(ks.tree.lineno)
            warnings.warn_explicit(f"{self.__name__}: {ranking.report()}", XBlockWarning, file, line)
        elif ranking.pruned:
            progress.note(f"{self.__name__} on {target}: {ranking.report()}")
        if _print_autotuning() and (ranking.note or ranking.pruned):
            print(f"xblock autotuning for function {self.__name__} on {target}: {ranking.report()}")
        return ranking.kept

    def _modelled(self, target) -> bool:
        """Whether configs are ranked by the target's cost model, not timed (no do_bench given, and a
        target that runs kernels only on a model of its device: `cost_model.times_by_model`)."""
        return self.do_bench is None and cost_model.times_by_model(target)

    def _kernel_call(self, config, full_nargs, launch):
        """One benchmark run: `launch()` between the config's pre_hook and the tuner's hooks."""

        def kernel_call():
            if config.pre_hook is not None:
                config.pre_hook(full_nargs)
            self.pre_hook(full_nargs)
            try:
                launch()
            except Exception as e:
                try:
                    self.post_hook(full_nargs, exception=e)
                finally:
                    raise
            self.post_hook(full_nargs, exception=None)

        return kernel_call

    def _bench(self, args, nargs, kwargs, config, grid, target) -> float:
        meta = self._meta(config, kwargs, target)
        full_nargs = {**nargs, **meta}
        if self._modelled(target):
            return self._estimate(args, config, full_nargs, meta, grid, target)
        kernel_call = self._kernel_call(config, full_nargs,
                                        lambda: self.fn.run(*args, grid=grid, target=target, **meta))
        if self.do_bench is not None:
            t = self.do_bench(kernel_call, quantiles=_QUANTILES)
            return float(t[0] if isinstance(t, (list, tuple)) else t)
        warmup, rep = _WARMUP_RUNS, _REP_RUNS
        if self.num_warmups is not None or self.num_reps is not None:  # budgets in ms, as Triton's
            t0 = time.perf_counter()
            kernel_call()
            est_ms = max((time.perf_counter() - t0) * 1e3, 1e-3)
            warmup = max(1, int((self.num_warmups if self.num_warmups is not None else 25) / est_ms))
            rep = max(1, int((self.num_reps if self.num_reps is not None else 100) / est_ms))
        return testing.do_bench(kernel_call, warmup=warmup, rep=rep)["median"]

    def _estimate(self, args, config, full_nargs, meta, grid, target) -> float:
        """The cost model's time of `config` (seconds): one run on the target's model, with the hooks
        (or the estimate perf_model="xblock" made of it in this tuning, from the same run)."""
        ranked = self.model_ranking.estimates.get(config) if self.model_ranking is not None else None
        if ranked is not None and ranked != float("inf"):
            return ranked
        out = []
        backend = get_backend(target)
        self._kernel_call(config, full_nargs,
                          lambda: out.append(cost_model.model_seconds(backend, self.fn, grid, args, meta)))()
        return out[0]

    def warmup(self, *args, target=None, grid=None, **kwargs):
        """Compile the kernel for every config left after pruning (Triton's `warmup`), without running.

        Returns:
            The list of CompiledKernels; its `metadata` and `asm` are the first one's, for callers
            that expect one kernel (their arguments and written outputs are the same for all).
        """
        self._check()
        nargs = dict(zip(self.arg_names, args))
        if target is None:
            target = default_target([v for v in (*args, *kwargs.values()) if hasattr(v, "shape")])
        configs = self.prune_configs(kwargs, nargs)
        if grid is not None:  # the cost model needs the grid; without it, every config is compiled
            configs = self._model_prune(configs, args, kwargs, grid, target)
        for _, error, _ in self._compile_all(configs, args, kwargs, target):
            if error is not None:
                raise error
        return _Compiled(self.fn.warmup(*args, target=target, grid=grid, **self._meta(c, kwargs, target))
                         for c in configs)

    def best_config_for(self, key_values, target):
        """The config chosen for `key_values` (the key of `_key`) on `target` in this process, or None."""
        return self.cache.get((target, tuple(key_values)))

    # ---------------------------------------------------------------------------- persistence
    def _store(self, target, root=None):
        """The file of this kernel's choices on `target` (under `root`, by default where the cache writes)."""
        text = self.fn.source.src + repr(self.keys) + "".join(_describe(c) for c in self.configs)
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        device = get_backend(target).device_name().replace(" ", "_").replace("/", "_")
        return (root or cache_dir()) / "autotune" / f"{self.__name__}-{digest}-{target}-{device}.json"

    def _load(self, target) -> dict:
        """The stored choices: those of a read-only cache (a deployed bundle) under this process's."""
        out: dict = {}
        for root in dict.fromkeys((configured_dir(), cache_dir())):
            try:
                found = json.loads(self._store(target, root).read_text())
            except (OSError, ValueError):
                continue
            if isinstance(found, dict):
                out.update(found)
        return out

    def _save(self, target, saved) -> None:
        """Add `saved` to the stored choices (merged with what another process stored meanwhile)."""
        path = self._store(target)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                current = json.loads(path.read_text())
            except (OSError, ValueError):
                current = {}
            tmp.write_text(json.dumps({**(current if isinstance(current, dict) else {}), **saved}))
            os.replace(tmp, path)
        except OSError:  # a cache that cannot be written: the result still holds for this process
            pass

    def _encode(self, config):
        """How a chosen config is stored: its index in `configs`, else its values (none with a pre_hook)."""
        for i, c in enumerate(self.configs):
            if c is config:
                return i
        if config.pre_hook is not None:
            return None
        meta, options = config_values(config, all_option_names())
        return {"kwargs": meta, "options": options}

    def _decode(self, code):
        if isinstance(code, int) and 0 <= code < len(self.configs):
            return self.configs[code]
        if isinstance(code, dict) and isinstance(code.get("kwargs"), dict):
            opts = dict(code.get("options") or {})
            launch = {k: opts.pop(k) for k in CONFIG_LAUNCH_OPTIONS if k in opts}
            return Config(code["kwargs"], **launch, options=opts)
        return None


class _Compiled(list):
    """The kernels `Autotuner.warmup` compiled, one per config; `metadata`/`asm` are the first's."""

    @property
    def metadata(self):
        return self[0].metadata

    @property
    def asm(self):
        return self[0].asm


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None, pre_hook=None,
             post_hook=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None, cache_results=False):
    """Decorator: choose the fastest of `configs` per value of the `key` arguments (any target).

    The arguments are `triton.autotune`'s, with its semantics:
        configs: `xblock.Config`s (or `triton.Config`s, or dicts of meta-parameters).
        key: argument names; a change of their values (and of any argument's dtype) tunes again.
        prune_configs_by: {'early_config_prune': fn(configs, named_args, **kwargs) -> configs,
            'perf_model': fn(**args, **meta) -> estimated time, 'top_k': int, or float <= 1 (a share)}.
            perf_model='xblock' is xblock's cost model of the target (`runtime/cost_model.py`): the
            configs are ranked from their xb IR (cpu, cuda: a roofline of bytes and flops over the
            grid) or the target's own estimate (ascend), and only the best top_k are compiled and
            benchmarked; the pruned ones are reported (progress, XBLOCK_PRINT_AUTOTUNING=1) and in
            `model_ranking`. A kernel it cannot count keeps every config, with a warning.
        reset_to_zero / restore_value: array arguments (numpy or torch) zeroed before each
            benchmark run (and once after tuning) / restored after each benchmark run.
        pre_hook(kwargs, reset_only=False) / post_hook(kwargs, exception): replace the hooks
            reset_to_zero and restore_value make.
        warmup, rep: time budgets of the benchmark, in ms (default: a few runs).
        do_bench: do_bench(kernel_call, quantiles) -> time (or [median, ...]). Without it, a target
            that runs kernels only on a model of its device (ascend: `Backend.timed_by_model`) is
            not timed: each config runs once on the model and its cost-model estimate ranks it.
        cache_results: accepted; xblock always stores results, per target and device.
        use_cuda_graph: not supported (an error).
    Launch options of a config (num_warps, num_stages, num_ctas, maxnreg) apply on the targets
    that have them and are ignored elsewhere.
    """
    return lambda fn: Autotuner(fn, configs, key, prune_configs_by, reset_to_zero, restore_value, pre_hook,
                                post_hook, warmup, rep, use_cuda_graph, do_bench, cache_results)


class Heuristics(_Tuner):
    """Launch wrapper: sets meta-parameters to functions of the other arguments (as triton.heuristics).

    Each function gets a dict of the launch's arguments (parameters bound by position or keyword,
    defaults, and the values of the functions before it) and its result replaces any value given.
    """

    def __init__(self, fn, values: dict):
        self.fn = jit(fn)
        self.values = dict(values)
        self.__name__ = self.fn.__name__
        self._checked = False

    def _fill(self, args, kwargs) -> dict:
        if not self._checked:
            self._check_names("heuristics", list(self.values))
            self._checked = True
        named = {**self.fn.source.defaults, **dict(zip(self.arg_names, args)), **kwargs}
        for name, heur in self.values.items():
            kwargs[name] = named[name] = heur(named)
        return kwargs

    def run(self, *args, grid, target=None, **kwargs):
        return self.fn.run(*args, grid=grid, target=target, **self._fill(args, kwargs))

    def warmup(self, *args, target=None, grid=None, **kwargs):
        """Compile what a launch with these arguments would (see JITFunction.warmup)."""
        return self.fn.warmup(*args, target=target, grid=grid, **self._fill(args, kwargs))

    def plan(self, args, target, kwargs):
        """What a launch with these arguments compiles (see JITFunction.plan)."""
        return self.fn.plan(args, target, self._fill(args, dict(kwargs)))

    def resolve(self, args, meta: dict):
        meta = self._fill(args, dict(meta))
        return self.fn.resolve(args, meta) if isinstance(self.fn, _Tuner) else (self.fn, meta)


def heuristics(values: dict):
    """Decorator: `values` maps a meta-parameter name to a function of the arguments (a dict)."""
    return lambda fn: Heuristics(fn, values)


# ------------------------------------------------------------------ Triton's wrappers
_WRAPPED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Triton object -> its xblock wrapper


def wrap(obj):
    """xblock's wrapper of a kernel decorated with @autotune/@heuristics (xblock's or Triton's)."""
    if isinstance(obj, _Tuner):
        return obj
    if not is_triton_tuner(obj):
        raise TypeError(f"internal error: expected an @autotune or @heuristics kernel, got {obj!r}")
    try:
        return _WRAPPED[obj]
    except (KeyError, TypeError):
        pass
    if type(obj).__name__ == "Heuristics":
        out = Heuristics(obj.fn, obj.values)
    else:
        out = _from_triton_autotuner(obj)
    try:
        _WRAPPED[obj] = out
    except TypeError:  # not weakly referenceable: wrap it anew next time
        pass
    return out


def _from_triton_autotuner(t) -> Autotuner:
    """Triton's Autotuner, read attribute by attribute (Triton 3.6), as xblock's."""
    timed = getattr(t, "num_warmups", None) is not None or getattr(t, "num_reps", None) is not None
    if getattr(t, "use_cuda_graph", False):
        raise ConfigError(at_kernel(jit(t.base_fn).source, "autotune(use_cuda_graph=True) is not supported by "
                                    "xblock (deprecated in Triton); pass do_bench= to time configs another way"))
    prune = {}
    if getattr(t, "early_config_prune", None) is not None:
        prune["early_config_prune"] = t.early_config_prune
    if getattr(t, "perf_model", None) is not None:
        prune["perf_model"] = t.perf_model
        prune["top_k"] = t.configs_top_k
    return Autotuner(
        t.fn, t.configs, t.keys, prune_configs_by=prune or None,
        reset_to_zero=getattr(t, "reset_to_zero", None), restore_value=getattr(t, "restore_value", None),
        # Triton's own hooks for reset_to_zero/restore_value handle torch tensors only: xblock makes its own
        pre_hook=t.pre_hook if getattr(t, "user_defined_pre_hook", False) else None,
        post_hook=t.post_hook if getattr(t, "user_defined_post_hook", False) else None,
        warmup=getattr(t, "num_warmups", None), rep=getattr(t, "num_reps", None),
        # with warmup/rep, Triton's _do_bench is its own GPU timer: xblock times within those budgets
        do_bench=None if timed else getattr(t, "_do_bench", None),
        cache_results=getattr(t, "cache_results", False))
