"""The cuda stages after xb: ttir (our TTIR, parsed and optimized by Triton), ttgir, llir, ptx, cubin.

Each stage wraps the stage of the same name of Triton's NVIDIA backend (`CUDABackend.add_stages`),
run on TTIR that `lowering.emit_ttir` printed. Triton's own cache is not used: xblock caches every
stage. No GPU is needed; `arch` picks the target (sm_80, sm_90a, ...).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import tempfile

from ...errors import CompilationError
from .diagnostics import error_at, first_location
from .emit import TTIRDialect
from .options import CudaOptions

STAGES = ("ttir", "ttgir", "llir", "ptx", "cubin")


def triton_version() -> str:
    """The installed Triton's version, read without importing it (cache keys need no import)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("triton")
    except PackageNotFoundError:
        return "none"


def toolchain_key() -> str:
    return f"triton=={triton_version()}"


@contextlib.contextmanager
def _quiet_stderr():
    """Silence C++ diagnostics printed on fd 2 (a failed probe parse is expected)."""
    fd = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(fd, 2)
        os.close(fd)


def _parse(text: str, context, name: str = "kernel"):
    from triton._C.libtriton import ir

    d = tempfile.mkdtemp(prefix="xblock-ttir-")
    path = os.path.join(d, f"{name}.ttir")
    try:
        with open(path, "w") as f:
            f.write(text)
        module = ir.parse_mlir_module(path, context)
        module.context = context  # Triton's stages read it (as IRSource.make_ir sets it)
        return module
    finally:
        with contextlib.suppress(OSError):
            os.remove(path)
            os.rmdir(d)


_PROBE = ('"builtin.module"() ({\n  "tt.func"() ({\n  ^bb0(%arg0: !tt.ptr<f32>):\n'
          '    %0 = "tt.load"(%arg0) {cachePolicy = #tt.cache_policy<cache_modifier = cg, eviction_policy = '
          'evict_last>, operandSegmentSizes = array<i32: 1, 0, 0>} : (!tt.ptr<f32>) -> f32\n'
          '    "tt.return"() : () -> ()\n  }) {function_type = (!tt.ptr<f32>) -> (), sym_name = "probe"} '
          ': () -> ()\n}) : () -> ()\n')


@functools.lru_cache(maxsize=None)
def ttir_dialect() -> TTIRDialect:
    """The TTIR spellings of the installed Triton, found by letting its parser try the newer one."""
    ctx = _context()
    try:
        with _quiet_stderr():
            _parse(_PROBE, ctx, "probe")
        return TTIRDialect(cache_policy=True)
    except Exception:
        return TTIRDialect(cache_policy=False)


def _context():
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend

    ctx = ir.context()
    ir.load_dialects(ctx)
    make_backend(GPUTarget("cuda", 90, 32)).load_dialects(ctx)
    return ctx


class TritonPipeline:
    """One compile through Triton's NVIDIA stages; holds the Triton module between stages."""

    def __init__(self, options: CudaOptions):
        from triton.backends.compiler import GPUTarget, Language
        from triton.compiler.compiler import make_backend

        self.options = options
        self.target = GPUTarget("cuda", options.arch, 32)
        self.backend = make_backend(self.target)
        self.topts = self.backend.parse_options(options.triton_options())
        self.tstages: dict = {}
        self.backend.add_stages(self.tstages, self.topts, Language.TRITON)
        self.tmeta = {"target": self.target, **self.topts.__dict__, "triton_version": triton_version()}
        self.module = None
        self.context = None

    def _run(self, ext: str, prev, metadata: dict):
        if ext == "ttir":
            from .lowering import emit_ttir

            prev = emit_ttir(prev, ttir_dialect(), debug=self.options.debug)
        try:
            if ext == "ttir":
                return self._ttir(prev, metadata)
            if ext == "ttgir":
                self.module = self.tstages[ext](self.module, self.tmeta)
                return str(self.module)
            out = self.tstages[ext](self.module if ext == "llir" else prev, self.tmeta)
            if ext == "cubin":
                metadata["triton"] = json.loads(json.dumps(self.tmeta, default=vars))
                metadata["ptx_name"] = self.tmeta["name"]
            return out
        except CompilationError:
            raise
        except Exception as e:  # Triton's pass manager, LLVM or ptxas
            raise self._error(ext, e, metadata) from None

    def _ttir(self, text: str, metadata: dict) -> str:
        self.context = _context()
        self.module = _parse(text, self.context, metadata["name"])
        self.module = self.tstages["ttir"](self.module, self.tmeta)
        return str(self.module)

    def _error(self, ext: str, e: Exception, metadata: dict) -> CompilationError:
        msg = str(e).strip()
        where = first_location(msg)
        default = (metadata["file"], metadata["line"], 1)
        text = f"cuda: Triton's '{ext}' stage failed for kernel '{metadata['name']}' (sm_{self.options.arch}): {msg}"
        if where is None:
            return error_at("", text, default)
        return error_at(f'"{where[0]}":{where[1]}:{where[2]}', text, default)


def make_stages(options: CudaOptions) -> dict:
    """The ordered stages ext -> fn(previous output, metadata) of one compile.

    Cheap to call (the cache asks for the stage names on every lookup): Triton is imported and
    its backend set up when the first stage runs.
    """
    holder: list = []

    def stage(ext, prev, metadata):
        if not holder:
            holder.append(TritonPipeline(options))
        return holder[0]._run(ext, prev, metadata)

    return {ext: functools.partial(stage, ext) for ext in STAGES}
