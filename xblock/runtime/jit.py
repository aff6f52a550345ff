"""`@xblock.jit` and `kernel[grid](...)`: bind arguments, specialize, compile once, launch."""

from __future__ import annotations

import functools

from ..backends import all_option_names, default_target
from ..errors import LaunchError, XBlockError, surface
from ..frontend.source import XBLOCK_KERNEL, is_tuner, source_of, unwrap_function
from .args import ArgError, describe, describe_descriptor, from_dlpack, is_host_descriptor
from .compiler import Specialization, _normalize_grid, compile_specialization, dependency_digest


@functools.cache
def launch_option_names() -> frozenset:
    """Keyword arguments of a launch that are target options, not kernel arguments (every option
    some target reads; computed from the registry once)."""
    return all_option_names()


def _no_grid(grid):
    return None


def _grid1(g):
    x = g[0]
    return (x, 1, 1) if type(x) is int and x >= 0 else None


def _grid2(g):
    x, y = g
    return (x, y, 1) if type(x) is int and type(y) is int and x >= 0 and y >= 0 else None


def _grid3(g):
    x, y, z = g
    return g if type(x) is int and type(y) is int and type(z) is int and min(g) >= 0 else None


_FAST_GRIDS = {1: _grid1, 2: _grid2, 3: _grid3}  # tuples of ints: the common grids, checked without conversions


class JITFunction:
    """A kernel: launch it with `kernel[grid](*args, **meta)`; compiled once per specialization."""

    __xblock_kernel__ = True  # how the frontend recognizes a kernel without importing the runtime
    assert XBLOCK_KERNEL == "__xblock_kernel__"

    def __init__(self, fn, do_not_specialize=(), **_ignored):
        self.fn = unwrap_function(fn)
        self.__name__ = self.fn.__name__
        self.__doc__ = self.fn.__doc__
        self.__wrapped__ = self.fn
        self._source = None
        self.do_not_specialize = set(do_not_specialize)
        self.kernels: dict = {}
        self._digest = None
        self._fast: dict = {}  # launch shape (see _fast_key) -> (CompiledKernel, runtime arg positions)
        self._cx_pos = None  # per parameter: is it a constexpr (known once the source is parsed)
        self._cx_names: set = set()
        self._min_args = 0

    @property
    def source(self):
        if self._source is None:
            self._source = source_of(self.fn)
        return self._source

    def __repr__(self) -> str:
        return f"JITFunction({self.fn.__module__}:{self.__name__})"

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            try:
                return self.run(*args, grid=grid, **kwargs)
            except XBlockError as e:  # shown from here: no frame of xblock's below the user's call
                raise surface(e) from None

        return launch

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"{self.__name__} is a kernel: launch it with {self.__name__}[grid](...)")

    def _error(self, msg) -> LaunchError:
        ks = self.source
        return LaunchError(ks.file, ks.abs_line(ks.tree.lineno), self.__name__, msg)

    def bind(self, args, kwargs) -> dict:
        ks = self.source
        params = ks.params
        if len(args) > len(params):
            raise self._error(f"takes {len(params)} arguments but {len(args)} were given")
        bound = dict(zip(params, args))
        for k, v in kwargs.items():
            if k not in params:
                raise self._error(f"got an unexpected argument '{k}'")
            if k in bound:
                raise self._error(f"got multiple values for argument '{k}'")
            bound[k] = v
        for p in ks.pointer_params:  # first: a shifted binding shows here, before a missing argument
            v = bound.get(p)
            if isinstance(v, (bool, int, float)):
                raise self._error(f"argument '{p}' is used as a pointer but got {type(v).__name__} {v!r}"
                                  f"{_binding(params, bound)}")
        for p in params:
            if p not in bound:
                if p in ks.defaults:
                    bound[p] = ks.defaults[p]
                else:
                    raise self._error(f"missing argument '{p}'{_binding(params, bound)}")
        return bound

    def specialize(self, bound: dict):
        """(cache key, Specialization, runtime args in order) of one launch."""
        ks = self.source
        constexprs, arg_types, div, ones, runtime, key = {}, {}, {}, [], [], []
        for p in ks.params:
            v = bound[p]
            if p in ks.constexpr_params or v is None:
                constexprs[p] = v
                key.append(("c", repr(v)))
                continue
            try:
                if is_host_descriptor(v):  # its base, shape and strides are arguments; its type a constexpr
                    constexprs[p], parts = describe_descriptor(p, v, ks.params)
                    key.append(("c", repr(constexprs[p])))
                else:
                    v = from_dlpack(v)
                    parts = [(p, *describe(p, v), v)]
            except ArgError as e:
                raise self._error(str(e)) from None
            for name, sig, flag, value in parts:
                if p in self.do_not_specialize:
                    flag = ""
                arg_types[name] = sig
                if flag == "D":
                    div[name] = 16
                elif flag == "1":
                    ones.append(name)
                runtime.append(value)
                key.append((sig, flag))
        return tuple(key), Specialization(arg_types, constexprs, div, tuple(ones)), runtime

    def _fast_key(self, args, kwargs, target):
        """A key of everything specialization and target choice read from this launch, or None.

        Covers launches whose tensors have `data_ptr` (torch) and whose keywords are constexprs or
        launch options; anything else takes the full path of `run`.
        """
        cx = self._cx_pos
        if cx is None or len(args) > len(cx):
            return None
        parts = [target]
        append = parts.append
        for c, v in zip(cx, args):
            t = type(v)
            if c or v is None:
                append((t, v))
            elif t is int:
                append((v == 1, v & 15 == 0, -0x80000000 <= v < 0x80000000, 0 <= v < 0x100000000))
            elif t is float or t is bool:
                append(t)
            else:
                try:  # a tensor: what describe() and the targets' claims read
                    append((t, v.dtype, v.data_ptr() & 15 == 0, True if v.is_cuda else str(v.device),
                            v.is_contiguous()))
                except AttributeError:
                    return None
        for k, v in kwargs.items():
            if k not in self._cx_names:
                return None
            append((k, type(v), v))
        return tuple(parts)

    def _remember(self, fkey, ck, args) -> None:
        if len(self._fast) > 1024:
            self._fast.clear()
        self._fast[fkey] = (ck, tuple(i for i, v in enumerate(args) if not self._cx_pos[i] and v is not None))

    def run(self, *args, grid, target=None, **kwargs):
        if self._cx_pos is None and self._source is not None:
            ks = self._source
            self._cx_pos = [p in ks.constexpr_params for p in ks.params]
            self._cx_names = set(ks.constexpr_params) | launch_option_names()
            runtime_pos = [i for i, c in enumerate(self._cx_pos) if not c]
            self._min_args = runtime_pos[-1] + 1 if runtime_pos else 0
        try:
            fkey = self._fast_key(args, kwargs, target)
            hit = self._fast.get(fkey) if fkey is not None else None
        except (TypeError, AttributeError):  # an unhashable constexpr: the full path says what is wrong
            fkey = hit = None
        if hit is not None and type(grid) is tuple:
            grid3 = _FAST_GRIDS.get(len(grid), _no_grid)(grid)
            if grid3 is not None:
                ck, positions = hit
                try:
                    ck.launcher(grid3, [args[i] for i in positions])
                except XBlockError as e:
                    raise surface(e) from None
                return ck
        ck = self._run_full(args, grid, target, dict(kwargs))
        if fkey is not None and len(args) >= self._min_args:  # every runtime argument is positional
            self._remember(fkey, ck, args)
        return ck

    def _run_full(self, args, grid, target, kwargs):
        try:
            ck, bound, runtime = self._specialize_and_compile(args, target, kwargs)
            try:
                grid = _normalize_grid(grid, bound)
            except (TypeError, ValueError, KeyError) as e:
                raise self._error(f"bad grid: {e}") from None
            ck.launcher(grid, runtime)
        except XBlockError as e:
            raise surface(e) from None
        return ck

    def warmup(self, *args, target=None, grid=None, **kwargs):
        """Compile exactly the specialization `kernel[grid](*args, **kwargs)` would, without running.

        Args:
            *args, **kwargs: the launch's arguments (arrays, scalars, constexprs, target options).
            target: the target (default: the one the arguments imply, as a launch does).
            grid: accepted for Triton's signature; not needed to compile.
        Returns:
            The CompiledKernel (its `asm`, `metadata` and launcher).
        """
        try:
            return self._specialize_and_compile(args, target, dict(kwargs))[0]
        except XBlockError as e:
            raise surface(e) from None

    def _specialize_and_compile(self, args, target, kwargs):
        """(CompiledKernel, bound arguments, runtime arguments) of one launch."""
        names = launch_option_names()
        options = {k: kwargs.pop(k) for k in list(kwargs) if k in names and k not in self.source.params}
        bound = self.bind(args, kwargs)
        key, spec, runtime = self.specialize(bound)
        if target is None:
            target = default_target(runtime)
        full_key = (target, key, tuple(sorted(options.items())))
        ck = self.kernels.get(full_key)
        if ck is None:
            if self._digest is None:
                self._digest = dependency_digest(self.source)
            ck = compile_specialization(self.source, spec, target, options, self._digest)
            self.kernels[full_key] = ck
        return ck, bound, runtime


def _show(v) -> str:
    shape = getattr(v, "shape", None)
    if shape is not None and hasattr(v, "dtype"):
        return f"{type(v).__name__}({str(v.dtype).replace('torch.', '')}{list(shape)})"
    return repr(v) if len(repr(v)) <= 40 else type(v).__name__


def _binding(params, bound: dict) -> str:
    """What each parameter received, so a shifted binding is visible in the error."""
    return "; bound: " + ", ".join(f"{p}={_show(bound[p])}" if p in bound else f"{p}=<missing>" for p in params)


def jit(fn=None, **kwargs):
    """Decorate a kernel (or wrap an existing @triton.jit kernel or plain function).

    A kernel wrapped in @autotune/@heuristics (xblock's or Triton's) gives xblock's wrapper of it.
    """
    if fn is None:
        return lambda f: JITFunction(f, **kwargs)
    if isinstance(fn, JITFunction):
        return fn
    if is_tuner(fn):
        return _autotune.wrap(fn)
    return JITFunction(fn, **kwargs)


# autotune.py builds the kernels inside its wrappers with `jit`, handed over here: it does not
# import this module, which imports it (above) to wrap @autotune/@heuristics kernels.
from . import autotune as _autotune  # noqa: E402

_autotune.jit = jit
