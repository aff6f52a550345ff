"""Compile specializations in worker processes; the on-disk cache is where the results meet.

A worker resolves the kernel from its module (by name, the way pickle finds functions), compiles
one specialization through `compiler.fetch_or_build` (under the key's lock file, so no key is
compiled twice at once) and returns the key it stored. The process that asked loads the entry
from the cache like any other hit. Workers are spawned (no fork: MLIR's threads and the cpu
target's launch pool do not survive a fork), at most one per core, and kept for the process.
"""

from __future__ import annotations

import concurrent.futures as cf
import importlib
import importlib.util
import multiprocessing
import os
import sys
import threading
import time

from ..frontend.source import source_of, unwrap_function

# Workers start once two compiles here show that the rest would take longer than this, serially
# (spawning them costs about a second: the cheap compiles of the sim are done faster here).
POOL_MIN_S = float(os.environ.get("XBLOCK_POOL_MIN_S", "2.0"))
_ENV = ("XBLOCK_CACHE_DIR", "XBLOCK_OVERRIDE_DIR", "XBLOCK_DUMP_DIR")  # what a compile reads from the environment
_POOL: list = []  # [(executor, workers)]
_LOCK = threading.Lock()


def workers() -> int:
    """How many processes compile at once, this one included: XBLOCK_COMPILE_WORKERS, else one per
    core (1: compile here only)."""
    env = os.environ.get("XBLOCK_COMPILE_WORKERS")
    if env:
        return max(1, int(env))
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def kernel_ref(fn):
    """(module, qualname, file) from which a worker finds kernel `fn`, or None when it cannot."""
    plain = unwrap_function(fn)
    module, qualname = plain.__module__, plain.__qualname__
    if "<" in qualname or module is None:
        return None
    if module == "__main__" and not getattr(sys.modules.get("__main__"), "__file__", None):
        return None  # an interactive session: a spawned worker cannot import it
    try:
        same = unwrap_function(_resolve(module, qualname, None)) is plain
    except Exception:  # not a kernel under that name
        return None
    return (module, qualname, getattr(sys.modules.get(module), "__file__", None)) if same else None


def _resolve(module: str, qualname: str, file):
    """The object `module.qualname`; a module that is not importable by name (a file the CLI
    loaded) is loaded from `file`, as the CLI did."""
    obj = sys.modules.get(module)
    if obj is None:
        try:
            obj = importlib.import_module(module)
        except ImportError:
            if not file:
                raise
            spec = importlib.util.spec_from_file_location(module, file)
            obj = importlib.util.module_from_spec(spec)
            sys.modules[module] = obj
            spec.loader.exec_module(obj)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def executor(n: int):
    """The process's pool of (at least) `n` compile workers, spawned as tasks arrive."""
    with _LOCK:
        if _POOL and _POOL[0][1] >= n:
            return _POOL[0][0]
        if _POOL:
            _POOL.pop()[0].shutdown(wait=False, cancel_futures=True)
        ex = cf.ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn"),
                                    initializer=_init_worker)
        _POOL.append((ex, n))
        return ex


def shutdown() -> None:
    """Stop the workers (they are also stopped at exit)."""
    with _LOCK:
        while _POOL:
            _POOL.pop()[0].shutdown(wait=True, cancel_futures=True)


def _init_worker() -> None:
    """In a new worker: what every compile imports and computes first, before the first task."""
    os.environ["XBLOCK_COMPILE_WORKERS"] = "1"  # a worker never starts workers of its own
    os.environ["XBLOCK_QUIET"] = "1"  # nor shows progress: the process that asked for the compile does
    try:
        from ..backends import all_option_names
        from .compiler import compiler_digest

        all_option_names()
        compiler_digest()
        import mlir.ir  # noqa: F401

        from .. import passes  # noqa: F401
        from ..frontend import codegen  # noqa: F401
    except ImportError:
        pass  # the task reports what is missing


def environment() -> dict:
    """The variables a compile reads, as this process sees them (the cache directory resolved)."""
    from .cache import configured_dir

    env = {k: os.environ.get(k) for k in _ENV}
    env["XBLOCK_CACHE_DIR"] = str(configured_dir())
    return env


def compile_task(ref, spec, target: str, options: dict, env: dict):
    """In a worker: compile one specialization into the cache; returns its key, or ("error", text)."""
    from ..errors import XBlockError
    from .compiler import build_options, cache_key, fetch_or_build, stage_overrides

    for k, v in env.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    try:
        ks = source_of(_resolve(*ref))
        from ..backends import get_backend

        backend = get_backend(target)
        opts = build_options(backend, options)
        overrides = stage_overrides(ks.name)
        key = cache_key(ks, spec, backend, opts, None, None, overrides)
        fetch_or_build(key, ks, spec, backend, opts, None, overrides)
        return key
    except (XBlockError, TypeError, ValueError, OSError, ImportError, AttributeError) as e:
        return ("error", f"{type(e).__name__}: {e}")


def compile_all(n: int, here, plan, fn):
    """Yield (i, CompilationError or None, workers still compiling) for i in range(n), as each item's
    kernel is ready.

    `here(i)` compiles item i in this process (or loads it from the cache, where a worker put it);
    `plan(i)` gives its (target, Specialization, options) for a worker; `fn` is the kernel. Items
    compile here, in order, until two compiles show that the rest would take longer than
    POOL_MIN_S; the rest then go to workers (in order), while this process benchmarks what is
    ready and compiles, from the end, items no worker has started.
    """
    from ..errors import CompilationError

    ref = kernel_ref(fn) if workers() > 1 and _shared_cache() else None
    jobs: dict = {}
    took: list = []
    todo = list(range(n))
    while todo:
        i = next((i for i in todo if i not in jobs or jobs[i].done()), None)
        if i is None:
            i = next((i for i in reversed(todo) if jobs[i].cancel()), None)
            if i is None:
                cf.wait([jobs[j] for j in todo], return_when=cf.FIRST_COMPLETED)
                continue
        todo.remove(i)
        start = time.perf_counter()
        try:
            here(i)
            error = None
        except CompilationError as e:
            error = e
        if ref is not None and not jobs and todo:
            if time.perf_counter() - start > 0.02:  # a compile, not a cache hit
                took.append(time.perf_counter() - start)
            if len(took) >= 2 and min(took) * len(todo) > POOL_MIN_S:
                jobs = _submit(todo, plan, ref, source_of(fn))
                ref = None if not jobs else ref
        yield i, error, any(not f.done() for f in jobs.values())


def _shared_cache() -> bool:
    from .cache import FileCache

    return FileCache().writable  # where workers and this process meet


def _submit(items, plan, ref, ks) -> dict:
    """{item: future} of the items whose kernels are compiled nowhere yet; {} when under two."""
    from ..errors import XBlockError
    from .compiler import is_compiled

    missing = []
    for i in items:
        try:
            target, spec, options = plan(i)
        except (XBlockError, TypeError, ValueError):
            continue  # compiled here, where the error is reported
        if not is_compiled(ks, target, spec, options):
            missing.append((i, target, spec, options))
    if len(missing) < 2:
        return {}
    try:
        ex = executor(min(workers() - 1, len(missing)))
        env = environment()
        return {i: ex.submit(compile_task, ref, spec, target, options, env) for i, target, spec, options in missing}
    except (OSError, RuntimeError):  # no processes to be had: compile here
        return {}
