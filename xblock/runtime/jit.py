"""`@xblock.jit` and `kernel[grid](...)`: bind arguments, specialize, compile once, launch.

Once a kernel ran, `kernel[grid]` is the C helper's Launch (`fastpath.dispatch`): calling it binds
the arguments, computes one code per argument and finds a launch seen before in a memo without
running Python; any other launch comes back here (`_miss`). There, a launch first runs the kernel's
*binder*, a function generated once per kernel with the kernel's own signature: Python binds the
arguments (defaults, keywords), and the binder returns one code per argument (`fastpath`: the C
helper's, or the same computed in Python) plus the values. A launch whose codes were seen before
calls the launcher of that launch's kernel directly; any other goes through the full path (bind,
check, describe, compile or fetch), which remembers it, in both memos.
"""

from __future__ import annotations

import difflib
import functools
import keyword
import operator

from ..backends import all_option_names, default_target
from ..backends.common import services
from ..errors import (
    ConfigError,
    KernelCallError,
    LaunchArgumentError,
    LaunchError,
    OptionError,
    XBlockError,
    at_kernel,
    surface,
)
from ..frontend.source import XBLOCK_KERNEL, is_tuner, source_of, unwrap_function
from . import fastpath, tables
from .args import (
    BUFFERS_OPTION,
    ArgError,
    bucket_code,
    bucket_rule,
    describe,
    describe_descriptor,
    extra_buffers,
    from_dlpack,
    is_host_descriptor,
)
from .compiler import Specialization, _normalize_grid, compile_specialization, dependency_digest
from .grids import FAST_GRIDS, GridMemo, no_grid

MEMO_LIMIT = 4096  # remembered launch shapes per kernel; beyond, the memo starts again


@functools.cache
def launch_option_names() -> frozenset:
    """Keyword arguments of a launch that are target options, not kernel arguments (every option
    some target reads; computed from the registry once)."""
    return all_option_names()


def _resolves_tables(ck) -> bool:
    """Whether launches of `ck` resolve pointer tables from what the caller holds (runtime/tables.py):
    a kernel that makes pointers from integers, on a target whose launcher takes buffers=. Such
    launches always take the full path."""
    return bool(ck.metadata.get("int_pointers")) and getattr(ck.launcher, "takes_buffers", False)


def _picker(positions):
    """vals -> the runtime arguments at `positions`, as a tuple."""
    if not positions:
        return lambda vals: ()
    if len(positions) == 1:
        i = positions[0]
        return lambda vals: (vals[i],)
    return operator.itemgetter(*positions)


# ------------------------------------------------------------------------------ the kernel
class JITFunction:
    """A kernel: launch it with `kernel[grid](*args, **meta)`; compiled once per specialization.

    Args:
        fn: the kernel's Python function (or a `@triton.jit` kernel).
        do_not_specialize: parameters (names or indices) compiled for any value: no `== 1` and no
            `% 16` specialization of ints, no 16-byte alignment of pointers.
        do_not_specialize_on_alignment: parameters whose `% 16`/alignment is not specialized.
        buckets: {int parameter: "pow2" | [increasing bounds]}: the parameter is keyed by its bucket
            (its value rounded up to a power of two, or to the next bound) and never by its value;
            the kernel receives the true value. See docs/DESIGN.md, Specialization.
    """

    __xblock_kernel__ = True  # how the frontend recognizes a kernel without importing the runtime
    assert XBLOCK_KERNEL == "__xblock_kernel__"

    def __init__(self, fn, do_not_specialize=None, do_not_specialize_on_alignment=None, buckets=None, **_ignored):
        if do_not_specialize is None:  # a wrapped @triton.jit kernel keeps its own lists
            do_not_specialize = getattr(fn, "do_not_specialize", None)
        if do_not_specialize_on_alignment is None:
            do_not_specialize_on_alignment = getattr(fn, "do_not_specialize_on_alignment", None)
        self.fn = unwrap_function(fn)
        self.__name__ = self.fn.__name__
        self.__doc__ = self.fn.__doc__
        self.__wrapped__ = self.fn
        self._source = None
        self.do_not_specialize = set(do_not_specialize or ())  # names or indices, as Triton takes them
        self.do_not_specialize_on_alignment = set(do_not_specialize_on_alignment or ())
        try:
            self.buckets = {name: bucket_rule(name, rule) for name, rule in (buckets or {}).items()}
        except ConfigError as e:
            raise ConfigError(at_kernel(self.source, str(e))) from None
        self.kernels: dict = {}
        self._digest = None
        self._modes = None  # parameter -> fastpath mode (0 all, 1 no alignment, 2 none), once resolved
        self._binder = None  # see _make_binder
        self._fast = _Memo()  # launch codes -> (launcher, runtime argument picker, CompiledKernel)
        self._dispatch = None  # the C memo of launches (fastpath.dispatch), made with the binder
        self._grids = None

    @property
    def source(self):
        if self._source is None:
            self._source = source_of(self.fn)
        return self._source

    def __repr__(self) -> str:
        return f"JITFunction({self.fn.__module__}:{self.__name__})"

    def __getitem__(self, grid):
        if self._dispatch is not None:
            return self._dispatch[grid]
        run = self.run

        def launch(*args, **kwargs):
            try:
                return run(*args, grid=grid, **kwargs)
            except XBlockError as e:  # shown from here: no frame of xblock's below the user's call
                raise surface(e) from None

        return launch

    def __call__(self, *args, **kwargs):
        raise KernelCallError(at_kernel(self.source, f"{self.__name__} is a kernel: launch it with "
                                                     f"{self.__name__}[grid](...)"))

    def _error(self, msg, cls=LaunchError) -> LaunchError:
        ks = self.source
        return cls(ks.file, ks.abs_line(ks.tree.lineno), self.__name__, msg)

    # -------------------------------------------------------------------------- specialization policy
    def modes(self) -> dict:
        """parameter -> what of its value is specialized (fastpath.MODES), from do_not_specialize*."""
        if self._modes is None:
            params = self.source.params
            modes = {}
            for what, mode in (("do_not_specialize_on_alignment", 1), ("do_not_specialize", 2)):
                for item in sorted(getattr(self, what), key=repr):
                    name = params[item] if type(item) is int and -len(params) <= item < len(params) else item
                    if name not in params:
                        raise self._error(f"{what} names {item!r}, which is not a parameter of the kernel")
                    modes[name] = max(modes.get(name, 0), mode)
            for name in self.buckets:
                if name not in params or name in self.source.constexpr_params:
                    raise self._error(f"buckets names '{name}', which is not a non-constexpr parameter of the kernel")
            self._modes = modes
        return self._modes

    def key_value(self, name: str, value):
        """What autotuning keys on for argument `name`: its bucket when it has one, else the value."""
        rule = self.buckets.get(name)
        return rule(value) if rule is not None and type(value) is int else value

    def bind(self, args, kwargs) -> dict:
        ks = self.source
        params = ks.params
        if len(args) > len(params):
            raise self._error(f"takes {len(params)} arguments but {len(args)} were given")
        bound = dict(zip(params, args))
        for k, v in kwargs.items():
            if k not in params:
                close = difflib.get_close_matches(k, [*params, *sorted(all_option_names())], n=1)
                raise self._error(f"got an unexpected argument '{k}'" + (f"; did you mean '{close[0]}'?" if close
                                                                          else ""))
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
        modes = self.modes()
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
            mode = modes.get(p, 0)
            bucket = self.buckets.get(p)
            for name, sig, flag, value in parts:
                if mode == 2 or (mode == 1 and flag == "D") or (bucket is not None and flag == "1"):
                    flag = "D" if bucket is not None and mode == 0 and value % 16 == 0 else ""
                arg_types[name] = sig
                if flag == "D":
                    div[name] = 16
                elif flag == "1":
                    ones.append(name)
                runtime.append(value)
                key.append((sig, flag) if bucket is None else (sig, flag, "bucket", self.key_value(p, value)))
        return tuple(key), Specialization(arg_types, constexprs, div, tuple(ones)), runtime

    # -------------------------------------------------------------------------- the hot path
    def _make_binder(self):
        """`binder(*args, **kwargs) -> (codes, values, options)`, generated with the kernel's signature.

        None when the signature cannot be written back as Python (then every launch is a full one).
        """
        ks = self.source
        params = ks.params
        if any(not p.isidentifier() or keyword.iskeyword(p) or p.startswith("_xb") for p in params):
            return None
        spec, spec_no_align, spec_none = fastpath.spec_functions()
        ns = {"_xb_cx": fastpath.constexpr_code, "_xb_s0": spec, "_xb_s1": spec_no_align, "_xb_s2": spec_none}
        modes = self.modes()
        sig, codes = [], []
        for i, p in enumerate(params):
            if p in ks.defaults:
                ns[f"_xb_d{i}"] = ks.defaults[p]
                sig.append(f"{p}=_xb_d{i}")
            else:
                sig.append(p)
            if p in ks.constexpr_params:
                codes.append(f"{p} if {p}.__class__ is int else _xb_cx({p})")
            elif p in self.buckets:
                ns[f"_xb_b{i}"] = bucket_code(self.buckets[p], modes.get(p, 0))
                codes.append(f"_xb_b{i}({p})")
            else:
                codes.append(f"_xb_s{modes.get(p, 0)}({p})")
        names = ", ".join(params) + ("," if len(params) == 1 else "")
        src = (f"def binder({', '.join(sig + ['**_xb_opts'])}):\n"
               f"    return ({', '.join(codes)}{',' if len(codes) == 1 else ''}), ({names}), _xb_opts\n")
        exec(compile(src, f"<xblock binder of {self.__name__}>", "exec"), ns)
        return ns["binder"]

    def run(self, *args, grid, target=None, **kwargs):
        if BUFFERS_OPTION in kwargs and BUFFERS_OPTION not in self.source.params:
            # a launch option, not a compile option (args.py, buffers=): always the full path, never memoized
            buffers = kwargs.pop(BUFFERS_OPTION)
            return self._run_full(args, grid, target, dict(kwargs), buffers)
        binder = self._binder
        if binder is not None:
            try:
                codes, vals, opts = binder(*args, **kwargs)
                fkey = (codes, target, tuple(opts.items())) if opts else (codes, target)
                hit = self._fast.get(fkey)
            except Exception:  # a binding error, an unhashable value, an argument without a code: the full path says
                fkey = hit = None
            if hit is not None:
                launcher, pick, ck = hit
                grid3 = FAST_GRIDS.get(len(grid), no_grid)(grid) if type(grid) is tuple else None
                if grid3 is None:
                    try:  # a callable, numpy ints: converted; a bad grid: the full path reports it
                        grid3 = self._grids.grid(grid, vals) if callable(grid) else _normalize_grid(grid, None)
                    except Exception:
                        grid3 = None
                if grid3 is not None:
                    try:
                        launcher(grid3, pick(vals))
                    except XBlockError as e:
                        raise surface(e) from None
                    return ck
        ck = self._run_full(args, grid, target, dict(kwargs))
        if binder is None:  # the first launch: the source is parsed now, make the binder
            self._binder = binder = self._make_binder()
            self._grids = GridMemo(self.source.params)
            if binder is None:
                return ck
            self._dispatch = self._fast.dispatch = self._make_dispatch()
            try:
                codes, vals, opts = binder(*args, **kwargs)
                fkey = (codes, target, tuple(opts.items())) if opts else (codes, target)
                hash(fkey)
            except Exception:
                return ck
        if fkey is not None and not _resolves_tables(ck):
            self._remember(fkey, ck, vals)
        return ck

    def _make_dispatch(self):
        """The C memo of this kernel's launches (None without the C helper, or with bucketed parameters,
        whose codes the binder computes in Python)."""
        if self.buckets:
            return None
        ks = self.source
        modes = self.modes()
        codes = [fastpath.CONSTEXPR if p in ks.constexpr_params else modes.get(p, 0) for p in ks.params]
        options = {"target", *(n for n in launch_option_names() if n not in ks.params)}
        return fastpath.dispatch(self, ks.params, codes, ks.defaults, options, JITFunction._miss,
                                 JITFunction._grid_miss, XBlockError, surface)

    def _miss(self, key, grid, args, kwargs):
        """A launch the C memo does not have: the Python path, then the C memo learns it (key not None)."""
        try:
            ck = self.run(*args, grid=grid, **kwargs)
        except XBlockError as e:  # shown from here: no frame of xblock's below the user's call
            raise surface(e) from None
        if key is not None and self._dispatch is not None and not _resolves_tables(ck):
            self._dispatch.learn(key, ck)
        return ck

    def _grid_miss(self, grid, vals):
        """(grid3, positions of the values it read or None) of a callable grid, for the C memo."""
        return self._grids.grid(grid, vals), self._grids.positions(grid)

    def _remember(self, fkey, ck, vals) -> None:
        if len(self._fast) > MEMO_LIMIT:
            self._fast.clear()
        cx = self.source.constexpr_params
        positions = [i for i, (p, v) in enumerate(zip(self.source.params, vals)) if p not in cx and v is not None]
        self._fast[fkey] = (ck.launcher, _picker(positions), ck)

    def _run_full(self, args, grid, target, kwargs, buffers=None):
        try:
            ck, bound, runtime = self._specialize_and_compile(args, target, kwargs)
            try:
                grid = _normalize_grid(grid, bound)
            except (TypeError, ValueError, KeyError) as e:
                raise self._error(f"bad grid: {e}") from None
            if buffers is not None:
                self._launch_with_buffers(ck, grid, runtime, buffers)
            elif _resolves_tables(ck):
                held = tables.resolve(runtime, tables.caller_frame())
                if held:
                    tables.warn_resolved(ck.metadata, len(held))
                ck.launcher(grid, runtime, buffers=tuple(held))
            else:
                ck.launcher(grid, runtime)
        except XBlockError as e:
            raise surface(e) from None
        return ck

    def _launch_with_buffers(self, ck, grid, runtime, buffers) -> None:
        """A launch with `buffers=[...]` (args.py): on targets whose launcher takes it, else refused."""
        if not getattr(ck.launcher, "takes_buffers", False):
            raise self._error(f"the launch option buffers= is not taken by target '{ck.target}': it names host "
                              "arrays that pointer tables point into, for the host targets (sim, cpu, ascend's "
                              "CPU model); on a GPU the kernel reads the addresses itself: drop buffers=",
                              LaunchArgumentError)
        try:
            extra = extra_buffers(buffers)
        except ArgError as e:
            raise self._error(str(e), LaunchArgumentError) from None
        ck.launcher(grid, runtime, buffers=extra)

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

    def plan(self, args, target, kwargs):
        """(target, Specialization, options) a launch with these arguments compiles, without compiling."""
        names = launch_option_names()
        kwargs = dict(kwargs)
        options = {k: kwargs.pop(k) for k in list(kwargs) if k in names and k not in self.source.params}
        _, spec, runtime = self.specialize(self.bind(args, kwargs))
        return target or default_target(runtime), spec, options

    def _specialize_and_compile(self, args, target, kwargs):
        """(CompiledKernel, bound arguments, runtime arguments) of one launch."""
        names = launch_option_names()
        options = {k: kwargs.pop(k) for k in list(kwargs) if k in names and k not in self.source.params}
        if BUFFERS_OPTION not in self.source.params:  # warmup(..., buffers=[...]): not part of the compile
            kwargs.pop(BUFFERS_OPTION, None)
        bound = self.bind(args, kwargs)
        key, spec, runtime = self.specialize(bound)
        if target is None:
            target = default_target(runtime)
        full_key = (target, key, tuple(sorted(options.items())))
        ck = self.kernels.get(full_key)
        if ck is None:
            if self._digest is None:
                self._digest = dependency_digest(self.source)
            try:
                ck = compile_specialization(self.source, spec, target, options, self._digest)
            except OptionError as e:  # num_warps=3, soc="910Z": the launch's, at the kernel's def line
                raise self._error(str(e), LaunchArgumentError) from None
            self.kernels[full_key] = ck
        return ck, bound, runtime


class _Memo(dict):
    """The Python hot path's memo; clearing it clears the C memo too (`dispatch`), so that the next
    launch of each kind takes the full path again."""

    def __init__(self):
        super().__init__()
        self.dispatch = None

    def clear(self) -> None:
        super().clear()
        if self.dispatch is not None:
            self.dispatch.clear()


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

    Keyword arguments: `do_not_specialize`, `do_not_specialize_on_alignment` (as Triton's) and
    `buckets` (see JITFunction). A kernel wrapped in @autotune/@heuristics (xblock's or Triton's)
    gives xblock's wrapper of it.
    """
    if fn is None:
        return lambda f: jit(f, **kwargs)
    if isinstance(fn, JITFunction) and not kwargs:
        return fn
    if is_tuner(fn):
        return _autotune.wrap(fn)
    return JITFunction(fn.fn if isinstance(fn, JITFunction) else fn, **kwargs)


# autotune.py builds the kernels inside its wrappers with `jit`, handed over here: it does not
# import this module, which imports it (above) to wrap @autotune/@heuristics kernels.
from . import autotune as _autotune  # noqa: E402

_autotune.jit = jit
# backends that take a plain function where they need a kernel (cuda's precompile, ascend's profile)
# wrap it with this `jit`, handed down to them: they import nothing of the runtime
services.hand_down(jit=jit)
