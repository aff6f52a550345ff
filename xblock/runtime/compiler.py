"""`xblock.compile`: frontend, passes, then the target's stages, each cached by content."""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import re
import time
import warnings
from dataclasses import asdict, dataclass, field, fields

from .. import progress
from .._version import __version__
from ..backends import REFERENCE, all_option_names, exporting_targets, get_backend
from ..errors import (
    ArgumentError,
    CompilationError,
    CompileArgumentError,
    ConfigError,
    ExportError,
    OptionError,
    XBlockError,
    XBlockWarning,
    surface,
)
from ..frontend.source import KernelSource, is_jit_function, is_tuner, source_of, unwrap_function
from ..host import normalize_grid as _normalize_grid  # the name jit, grids, cost_model and numdiff import
from .cache import FileCache, record

_MEMORY: dict = {}  # full cache key -> CompiledKernel, the in-process layer


@dataclass
class Specialization:
    """What a compiled kernel is specialized on: runtime argument types, constexprs, alignment."""

    arg_types: dict  # name -> signature string ("*fp32", "i32")
    constexprs: dict  # name -> Python value
    divisibility: dict = field(default_factory=dict)  # name -> 16
    equal_to_1: tuple = ()

    def key(self) -> str:
        return repr((sorted(self.arg_types.items()), sorted((k, repr(v)) for k, v in self.constexprs.items()),
                     sorted(self.divisibility.items()), tuple(self.equal_to_1)))


@dataclass
class CompiledKernel:
    """A kernel compiled for one target: every stage's text (`asm`), metadata and a launcher."""

    name: str
    target: str
    asm: dict
    metadata: dict
    launcher: object = None
    backend: object = field(default=None, repr=False, compare=False)  # the target's Backend, resolved once

    def __repr__(self) -> str:  # the stages' text and binaries stay out of it (megabytes of .so bytes)
        md = self.metadata or {}
        stages = ", ".join(f"{k}: {len(v)} B" for k, v in self.asm.items())
        return (f"CompiledKernel({self.name!r}, target={self.target!r}, at {md.get('file')}:{md.get('line')}, "
                f"stages: {stages})")

    def run(self, grid, args) -> None:
        self.launcher(grid, args)

    def __getitem__(self, grid):
        return lambda *args: self.launcher(_normalize_grid(grid, {}), list(args))

    def export(self, directory) -> None:
        """Write a buildable project for this kernel (targets that support it, e.g. ascend)."""
        backend = self.backend or get_backend(self.target)
        if backend.export is None:
            md = self.metadata
            raise ExportError(f"{md.get('file')}:{md.get('line')}: {self.name}: target '{self.target}' cannot export "
                              f"a project (targets that can: {', '.join(exporting_targets())})")
        backend.export(self, directory)


def _global_names(code) -> set:
    """Names a code object (and the code nested in it) may read from its globals."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _global_names(const)
    return names


def dependency_digest(ks: KernelSource, seen=None) -> str:
    """Hash of a kernel's source, the helpers it calls and the global constants it reads.

    The names come from the code objects (no AST walk), so a warm cache hit stays cheap.
    """
    if seen is None:
        cached = getattr(ks, "_deps_digest", None)
        if cached is None:
            cached = ks._deps_digest = dependency_digest(ks, set())
        return cached
    seen.add(ks.fn)
    h = hashlib.sha256(ks.src.encode())
    glb = ks.globals
    for name in sorted(_global_names(ks.fn.__code__)):
        if name not in glb:
            continue
        v = glb[name]
        if is_jit_function(v) or inspect.isfunction(v):
            fn = unwrap_function(v)
            if fn not in seen:
                try:
                    h.update(dependency_digest(source_of(fn), seen).encode())
                except (OSError, TypeError):
                    pass
        elif isinstance(v, (int, float, str, bool, tuple)) or type(v).__name__ in ("dtype", "constexpr"):
            h.update(f"{name}={v!r}".encode())
    return h.hexdigest()


# The pinned MLIR bindings (pyproject.toml). A constant, not the installed version, so that a
# machine without MLIR (a GPU box running precompiled kernels) computes the same cache keys.
MLIR_BINDINGS = "xtc-mlir-python-bindings==22.1.8.4"


def _toolchain() -> str:
    return MLIR_BINDINGS


_SOURCE_DIGEST: str | None = None


def compiler_digest() -> str:
    """Hash of xblock's own sources, so a changed compiler never reuses stale cache entries."""
    global _SOURCE_DIGEST
    if _SOURCE_DIGEST is None:
        import pathlib

        root = pathlib.Path(__file__).resolve().parents[1]
        h = hashlib.sha256()
        for path in sorted(root.rglob("*.py")) + sorted(root.rglob("*.h")):
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
        _SOURCE_DIGEST = h.hexdigest()
    return _SOURCE_DIGEST


def build_options(backend, options: dict):
    names = {f.name for f in fields(backend.options_cls)}
    unknown = set(options) - names
    if unknown:
        raise OptionError(f"unknown option(s) for target '{backend.name}': {', '.join(sorted(unknown))} "
                          f"(it has: {', '.join(sorted(names))})")
    return backend.options_cls(**options)


def _key_path(file: str) -> str:
    """How the key names a kernel's file: relative to the working directory when it lies under it
    (a repository run from its root keys alike on every machine, so a cache compiled here runs on a
    machine without MLIR), else its absolute path."""
    path = os.path.abspath(file)
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if rel.startswith(os.pardir) else rel


def cache_key(ks: KernelSource, spec: Specialization, backend, opts, digest: str | None = None,
              transform=None, overrides=None) -> str:
    """The content key of one compiled specialization for `backend` (see docs/DESIGN.md, Cache)."""
    # the file and the def line: the compiled kernel's errors and warnings name them, so two kernels
    # alike in two places (a/k.py, b/k.py) are two entries
    where = f"{_key_path(ks.file)}:{ks.first_line}"
    key_src = "|".join([__version__, compiler_digest(), _toolchain(), backend.toolchain_key(), where,
                        digest or dependency_digest(ks), spec.key(), backend.name, repr(opts),
                        transform[0] if transform else "", _overrides_digest(overrides or {})])
    return hashlib.sha256(key_src.encode()).hexdigest()


def compile_specialization(ks: KernelSource, spec: Specialization, target: str, options: dict,
                           digest: str | None = None, transform=None) -> CompiledKernel:
    """Compile (or load from cache) one specialization of a kernel for `target`.

    `transform`, when given, is (name, fn): fn(module, metadata) rewrites the xb module after the
    passes (e.g. xb-record-values); its name is part of the cache key.
    """
    return _compile(ks, spec, get_backend(target), options, digest, transform)


def _compile(ks: KernelSource, spec: Specialization, backend, options: dict, digest: str | None = None,
             transform=None) -> CompiledKernel:
    """`compile_specialization` for the target's resolved `backend`, which every step below receives."""
    opts = build_options(backend, options)
    overrides = stage_overrides(ks.name)
    key = cache_key(ks, spec, backend, opts, digest, transform, overrides)
    ck = _MEMORY.get(key)
    if ck is None:
        asm, metadata = fetch_or_build(key, ks, spec, backend, opts, transform, overrides)
        ck = _MEMORY[key] = CompiledKernel(ks.name, backend.name, asm, metadata, backend.load(asm, metadata), backend)
    return ck


def is_compiled(ks: KernelSource, target: str, spec: Specialization, options: dict) -> bool:
    """Whether the kernel of this specialization is in this process or in the on-disk cache."""
    backend = get_backend(target)
    key = cache_key(ks, spec, backend, build_options(backend, options), None, None, stage_overrides(ks.name))
    return key in _MEMORY or (FileCache().path(key) / "manifest.json").exists()


def fetch_or_build(key, ks, spec, backend, opts, transform=None, overrides=None) -> tuple[dict, dict]:
    """(asm, metadata) of `key` for the target's `backend`: from the on-disk cache, or compiled and stored.

    Concurrent processes meet at the cache: the compile happens under the key's lock file, and a
    process that waited for the lock finds the entry the holder stored.
    """
    target = backend.name
    cache = FileCache()
    found = _lookup(cache, key, backend, opts)
    if found is None:
        with cache.lock(key):
            found = _lookup(cache, key, backend, opts)
            if found is None:
                start = time.perf_counter()
                with progress.step(f"compiling {ks.name} for {target}"):
                    asm, metadata = _build(ks, spec, backend, opts, transform, overrides)
                cache.put(key, {**asm, "metadata.json": json.dumps(metadata)})
                record("miss", ks.name, target, time.perf_counter() - start)
                return asm, metadata
    record("hit", ks.name, target)
    replay_warnings(found[1])
    return found


_WARNING = re.compile(r"^(.*):(\d+): (.*)$", re.S)


def replay_warnings(metadata: dict) -> None:
    """The warnings a kernel's compile gave (scalar fallbacks, ...), given again at their kernel lines
    when a process loads it from the cache: what the user sees does not depend on the cache."""
    for text in metadata.get("warnings") or ():
        m = _WARNING.match(text)
        if m:
            warnings.warn_explicit(m.group(3), XBlockWarning, m.group(1), int(m.group(2)))
        else:
            warnings.warn(text, XBlockWarning, stacklevel=3)


def _lookup(cache, key, backend, opts):
    files = cache.get(key)
    if files is None or not {"xb", "metadata.json", *backend.stages(opts)} <= set(files):
        return None
    metadata = json.loads(files.pop("metadata.json"))
    return {k: (v if k in backend.binary_stages else v.decode()) for k, v in files.items()}, metadata


def _build(ks, spec, backend, opts, transform=None, overrides=None):
    target = backend.name
    _require_mlir(ks, target)
    from ..passes import written_args

    progress.stage("xb")
    module = _frontend_and_passes(ks, spec, backend.capabilities(opts))
    metadata = {
        "name": ks.name, "target": target, "file": ks.file, "line": ks.abs_line(ks.tree.lineno),
        "arg_names": list(spec.arg_types),  # in parameter order, a host tensor descriptor's parts in its place
        "arg_types": list(spec.arg_types.values()),
        "constexprs": {k: repr(v) for k, v in spec.constexprs.items()}, "options": asdict(opts),
    }
    if transform is not None:
        from ..passes import verify

        with module.context, module.operation.location:
            transform[1](module, metadata)
        verify(module, transform[0])
    with module.context:  # after a transform, whose stores (xb-record-values' records) count too
        written_args.run(module, metadata)
    return run_stages(ks.name, backend, opts, module, metadata, overrides or {}), metadata


def _require_mlir(ks, target) -> None:
    try:
        import mlir.ir  # noqa: F401
    except ImportError as e:  # a deployment machine runs precompiled kernels only
        raise CompilationError(ks.file, ks.abs_line(ks.tree.lineno), 1,
                               f"{ks.name} is not in the cache for target '{target}' and compiling it needs the "
                               f"MLIR bindings, which are missing here ({e}); compile it where they are and "
                               "carry the cache (XBLOCK_CACHE_DIR) or a bundle (xblock cache export/import)") from None


def _frontend_and_passes(ks, spec, capabilities=frozenset()):
    """The xb module of one specialization, after the pass pipeline; `capabilities` are the optional
    xb op families the target takes (the frontend lowers the others away)."""
    from ..frontend.codegen import generate
    from ..frontend.types import parse_signature_type
    from ..passes import VerificationError, run_pipeline

    arg_types = {n: parse_signature_type(s) for n, s in spec.arg_types.items()}
    constexprs = dict(spec.constexprs)
    for n in spec.equal_to_1:
        constexprs.setdefault(n, 1)
    module = generate(ks, arg_types, constexprs, spec.divisibility, capabilities)
    try:
        with module.context:
            run_pipeline(module)
    except VerificationError as e:
        file, line, col = e.where or (ks.file, ks.abs_line(ks.tree.lineno), 1)
        src = ks.source_line(line - ks.first_line + 1) if file == ks.file else None
        raise CompilationError(file, line, col, str(e), src) from None
    return module


def run_stages(name: str, backend, opts, module, metadata: dict, overrides: dict) -> dict:
    """Run the target's stages in order; returns every stage's output by extension.

    A stage with an override (a hand-edited file, see `stage_overrides`) still runs, so that the
    metadata it records is there, but its output is replaced by the override, and every later
    stage consumes the edited text (Triton's resume from a given stage).
    """
    if "xb" in overrides:
        with module.context:
            module = _parse_xb(overrides["xb"])
    asm = {"xb": module.operation.get_asm(enable_debug_info=True)}
    _dump(name, "xb", asm["xb"])
    cur = module
    for ext, stage in backend.stages(opts).items():
        progress.stage(ext)
        cur = stage(cur, metadata)
        if ext in overrides:
            data = overrides[ext]
            cur = data if ext in backend.binary_stages else data.decode()
        asm[ext] = cur
        _dump(name, ext, cur)
    return asm


def _parse_xb(data: bytes):
    from mlir import ir

    return ir.Module.parse(data.decode())  # in the xb context, where the dialect is loaded


def stage_overrides(name: str) -> dict:
    """Hand-edited stages of kernel `name`: `$XBLOCK_OVERRIDE_DIR/<name>.<ext>` -> bytes.

    The files have the names `XBLOCK_DUMP_DIR` writes, so dump, edit, and point
    `XBLOCK_OVERRIDE_DIR` at the edited files: that stage's text is used and the later ones re-run.
    """
    import os

    root = os.environ.get("XBLOCK_OVERRIDE_DIR")
    if not root or not os.path.isdir(root):
        return {}
    prefix = name + "."
    return {f[len(prefix):]: open(os.path.join(root, f), "rb").read()
            for f in sorted(os.listdir(root)) if f.startswith(prefix)}


def _overrides_digest(overrides: dict) -> str:
    if not overrides:
        return ""
    h = hashlib.sha256()
    for ext, data in sorted(overrides.items()):
        h.update(ext.encode() + b"\0" + hashlib.sha256(data).digest())
    return "override:" + h.hexdigest()


def _dump(name: str, ext: str, data) -> None:
    """Write a stage to $XBLOCK_DUMP_DIR/<kernel>.<ext> when that variable is set."""
    import os

    root = os.environ.get("XBLOCK_DUMP_DIR")
    if root:
        os.makedirs(root, exist_ok=True)
        with open(os.path.join(root, f"{name}.{ext}"), "wb") as f:
            f.write(data if isinstance(data, bytes) else str(data).encode())


def parse_signature(ks: KernelSource, signature, constexprs) -> Specialization:
    """Triton-style `signature` (dict or list of "*fp32", "i32", "constexpr") and constexprs."""
    constexprs = dict(constexprs or {})
    if signature is None:
        raise ArgumentError("compile() needs a signature, e.g. {'x_ptr': '*fp32', 'n': 'i32'}")
    if isinstance(signature, (list, tuple)):
        runtime = [p for p in ks.params if p not in ks.constexpr_params and p not in constexprs]
        if len(signature) == len(ks.params):
            signature = dict(zip(ks.params, signature))
        elif len(signature) == len(runtime):
            signature = dict(zip(runtime, signature))
        else:
            raise ArgumentError(f"the signature lists {len(signature)} types for {len(ks.params)} parameters "
                                f"({len(runtime)} of them not constexpr)")
    unknown = set(signature) - set(ks.params)
    if unknown:
        raise ArgumentError(f"signature names unknown parameters: {', '.join(sorted(unknown))}")
    unknown = set(constexprs) - set(ks.params)
    if unknown:
        raise ArgumentError(f"constexprs name unknown parameters: {', '.join(sorted(unknown))}")
    arg_types = {}
    for p in ks.params:
        s = signature.get(p)
        if p in ks.constexpr_params or s == "constexpr":
            if p not in constexprs:
                if p in ks.defaults:
                    constexprs[p] = ks.defaults[p]
                else:
                    raise ArgumentError(f"constexpr parameter '{p}' needs a value in constexprs")
            continue
        if p in constexprs:
            continue
        if s is None:
            raise ArgumentError(f"parameter '{p}' is missing from the signature")
        try:
            from ..frontend.types import parse_signature_type
        except ImportError:  # no MLIR (running precompiled kernels): the cache key checks the types
            parse_signature_type = str
        parse_signature_type(s)
        arg_types[p] = s
    return Specialization(arg_types, constexprs)


# The launch options of an autotune Config (Triton's names): each target reads the ones it has.
CONFIG_LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def config_values(config, option_names) -> tuple[dict, dict]:
    """(meta-parameters, launch options) an autotune Config gives a launch on one target.

    `config` is an `xblock.Config`, a `triton.Config` or a dict of meta-parameters. Launch options
    the target does not have (`option_names`, the backend's) are dropped, never an error; an option
    no target has, or a Config feature xblock does not honour, is a ConfigError (a TypeError) naming it.
    """
    if isinstance(config, dict):
        return dict(config), {}
    if not hasattr(config, "kwargs"):
        raise ConfigError(f"expected an xblock.Config, a triton.Config or a dict, got {config!r}")
    if getattr(config, "ir_override", None) is not None:
        raise ConfigError("Config(ir_override=...) is not supported by xblock; to replace a stage by hand, "
                          "use XBLOCK_DUMP_DIR and XBLOCK_OVERRIDE_DIR")
    known = {"kwargs", "pre_hook", "ir_override", "options", *CONFIG_LAUNCH_OPTIONS}
    extra = sorted(k for k, v in vars(config).items() if k not in known and v not in (None, 0, False))
    if extra:
        raise ConfigError(f"Config attribute(s) not supported by xblock: {', '.join(extra)}")
    options = {k: getattr(config, k) for k in CONFIG_LAUNCH_OPTIONS if getattr(config, k, None) is not None}
    more = dict(getattr(config, "options", None) or {})
    if more:
        unknown = set(more) - all_option_names()
        if unknown:
            raise ConfigError(f"Config option(s) no target has: {', '.join(sorted(unknown))}")
    options.update(more)
    return dict(config.kwargs), {k: v for k, v in options.items() if k in option_names}


def _autotuned(fn):
    """The outermost autotuner (xblock's or Triton's) in a stack of kernel wrappers, or None."""
    while fn is not None and not hasattr(fn, "configs"):
        fn = getattr(fn, "fn", None)
    return fn


def _with_config(fn, config, backend, constexprs, options) -> tuple[dict, dict]:
    """constexprs and options of `compile(..., config=...)`: the Config's, then the explicit ones."""
    if isinstance(config, int) and not isinstance(config, bool):
        tuner = _autotuned(fn)
        if tuner is None:
            raise ConfigError(f"config={config} is an index into the autotune configs, but the kernel has none")
        if not -len(tuner.configs) <= config < len(tuner.configs):
            raise ConfigError(f"config={config} is out of range: the kernel has {len(tuner.configs)} autotune configs")
        config = tuner.configs[config]
    meta, opts = config_values(config, backend.option_names)
    constexprs = dict(constexprs or {})
    clash = sorted(k for k in meta.keys() & constexprs.keys() if constexprs[k] != meta[k])
    if clash:
        raise ConfigError(f"constexprs and config= give different values to: {', '.join(clash)}")
    return {**meta, **constexprs}, {**opts, **options}  # explicit launch options win over the Config's


def compile(fn, target: str = REFERENCE, signature=None, constexprs=None, config=None,
            **options) -> CompiledKernel:
    """Compile a kernel (an @xblock.jit, @triton.jit or plain function) for `target`.

    Args:
        fn: the kernel; also one wrapped in @autotune/@heuristics (xblock's or Triton's).
        target: a registered target (`xblock.backends.targets()`); by default the simulator.
        signature: parameter name -> Triton type string ("*fp16", "i32", "fp32", "constexpr").
        constexprs: parameter name -> value for constexpr parameters.
        config: an autotune Config (xblock's or Triton's), or an index into the kernel's autotune
            configs: it supplies meta-parameters and launch options (the ones `target` has).
        **options: target options (num_warps, num_stages, arch, soc, ...).
    Returns:
        A CompiledKernel whose `asm` holds every stage.
    """
    try:
        ks = source_of(fn)
        def_line = ks.tree.lineno  # not a kernel, or a lambda: an ArgumentError here
    except XBlockError as e:
        raise surface(e) from None
    try:
        backend = None
        if config is not None:
            backend = get_backend(target)
            constexprs, options = _with_config(fn, config, backend, constexprs, options)
        spec = parse_signature(ks, signature, constexprs)
        return _compile(ks, spec, backend or get_backend(target), options)
    except CompilationError as e:
        raise surface(e) from None
    except TypeError as e:  # the signature, constexprs, config or options: at the kernel's def line
        msg = str(e)
        if config is None and "needs a value in constexprs" in msg and is_tuner(fn):
            msg += (" (the kernel is wrapped in @autotune/@heuristics, which set meta-parameters at launch: "
                    "give them in constexprs, or pass config=INDEX or a Config)")
        raise surface(CompileArgumentError(ks.file, ks.abs_line(def_line), 1, msg, ks.source_line(def_line))) from None
    except XBlockError as e:  # an unknown or unavailable target, a missing toolchain
        raise surface(e) from None
